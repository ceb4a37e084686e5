"""``mcpkit package``: write every install channel of mcpkit's servers into one folder.

The folder (``packaging/`` in the repository) holds, per server, the registry's ``server.json``,
the Claude Desktop extension's source (``mcpb/``: pack it with ``mcpb pack``) and the Agent
Plugin (``plugin/``), plus ``install.md``, the README's per-client lines. ``--check`` writes
nothing and exits 1 when the folder (or the README block) differs from what this release
derives, so a change to a server's command or variables cannot leave a channel behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mcpkit.cli_kit import fail

BEGIN = "<!-- channels: begin (written by `mcpkit package --readme README.md`) -->"
END = "<!-- channels: end -->"


def splice(readme: str, block: str) -> str:
    """``readme`` with the text between its channel markers replaced by ``block``."""
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the README has no {BEGIN!r} ... {END!r} block")
    return readme[: start + len(BEGIN)] + "\n" + block + readme[end:]


def register(app: typer.Typer) -> None:
    @app.command("package")
    def package_cmd(
        out: Annotated[Path, typer.Argument(help="Folder to write the channels into.")] = Path("packaging"),
        readme: Annotated[
            Path | None, typer.Option("--readme", help="Also rewrite this README's install block.")
        ] = None,
        check: Annotated[
            bool, typer.Option("--check", help="Write nothing; exit 1 if anything differs.")
        ] = False,
    ) -> None:
        """Write the registry entries, Claude Desktop extensions, Agent Plugins and install lines."""
        from mcpkit.channels.render import channel_files, install_lines

        wanted = {out / name: text for name, text in channel_files().items()}
        if readme is not None:
            try:
                current = readme.read_text(encoding="utf-8")
                wanted[readme] = splice(current, install_lines())
            except (OSError, ValueError) as exc:
                fail(f"cannot update {readme}: {exc}")
        stale = [
            path
            for path, text in wanted.items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text
        ]
        if check:
            for path in stale:
                typer.echo(f"out of date: {path}", err=True)
            if stale:
                fail(f"{len(stale)} file(s) differ: run `mcpkit package {out}` to write them")
            typer.echo(f"{len(wanted)} files up to date")
            return
        for path in stale:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted[path], encoding="utf-8")
        typer.echo(f"wrote {len(stale)} of {len(wanted)} files under {out}")
