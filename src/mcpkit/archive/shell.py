"""``mcpkit archive shell``: upstream's interactive search with its slash commands.

Type a query to search; slash commands change settings or the view. Line editing and history
come from the standard library's ``readline`` (history kept in the state directory). The shell
talks to the one API through the same port as every face, so it works in-process or against
a running server alike.

Commands (upstream's set): /help /? /user /date /top /mode /view normal|list|detail /next
/details|/d 1-3,7 /exit /quit /q; and mcpkit's filters /kind /platform /account /media /visibility
(searches cover posts, replies and quotes until /kind says otherwise).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpkit.archive import messages as m
from mcpkit.archive.filters import (
    parse_accounts,
    parse_has_media,
    parse_kinds,
    parse_platforms,
    parse_visibilities,
    request_filters,
)
from mcpkit.archive.messages import Lang, Wording
from mcpkit.archive.methods import METHODS
from mcpkit.archive.rpc.api_protocol import ArchiveAPIProtocol
from mcpkit.archive.texts import collapse_blank_lines, match_note, post_author, post_head, post_marks
from mcpkit.errors import ValidationError
from mcpkit.jsonrpc import error_fields

VIEWS = ("normal", "list", "detail")
TOP_MIN, TOP_MAX = METHODS["search_similar"].param("top_k").bounds
MODES = METHODS["search_similar"].param("mode").choices
FETCH = TOP_MAX  # one search fetches the most the API returns; /next pages through them
HELP = m.SHELL_HELP.en
"""The English help (``/help`` prints :data:`~mcpkit.archive.messages.SHELL_HELP` in the shell's language)."""


class ShellUsageError(Wording, ValidationError):
    """A slash command with arguments it cannot use (its line in the shell's language)."""


def parse_ranges(spec: str) -> list[int]:
    """``"1-3,7"`` -> ``[1, 2, 3, 7]``: positive numbers and inclusive ranges, order kept, no repeats."""
    out: list[int] = []
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise ShellUsageError(m.SHELL_NOT_A_RANGE, part=repr(part))
        a, b = int(low), int(high) if dash else int(low)
        if a < 1 or b < a:
            raise ShellUsageError(m.SHELL_BAD_RANGE, part=repr(part))
        for n in range(a, b + 1):
            if n not in out:
                out.append(n)
    if not out:
        raise ShellUsageError(m.SHELL_GIVE_NUMBERS)
    return out


@dataclass
class ShellState:
    top: int = 10
    mode: str = "content"
    weights: list[float] | None = None
    view: str = "normal"
    includes: list[str] = field(default_factory=list)
    excludes: list[str] = field(default_factory=list)
    threshold_min: int | None = None
    threshold_max: int | None = None
    date_from: str | None = None
    date_to: str | None = None
    kind: list[str] = field(default_factory=list)  # empty: the authored kinds
    platform: list[str] = field(default_factory=list)
    account: list[str] = field(default_factory=list)
    has_media: bool | None = None
    visibility: list[str] = field(default_factory=list)  # empty: every one but direct
    results: list[dict[str, Any]] = field(default_factory=list)
    shown: int = 0

    def settings(self) -> dict[str, Any]:
        user: dict[str, Any] = {}
        if self.includes:
            user["includes"] = self.includes
        if self.excludes:
            user["excludes"] = self.excludes
        if self.threshold_min is not None:
            user["threshold_min"] = self.threshold_min
        if self.threshold_max is not None:
            user["threshold_max"] = self.threshold_max
        out: dict[str, Any] = {"top_k": FETCH}
        if user:
            out["user_filter"] = user
        dates = {k: v for k, v in (("from", self.date_from), ("to", self.date_to)) if v}
        if dates:
            out["date_filter"] = dates
        return out

    def filters(self) -> dict[str, Any]:
        """mcpkit's filter keys of the search (``kind`` always: the authored kinds by default)."""
        return request_filters(self.kind, self.platform, self.account, self.has_media, self.visibility)


class Shell:
    """The command loop, separated from the terminal so tests can drive it line by line."""

    def __init__(
        self, api: ArchiveAPIProtocol, write: Callable[[str], None] = print, lang: Lang = "en"
    ) -> None:
        self.api = api
        self.write = write
        self.lang = lang
        self.state = ShellState()

    async def handle(self, line: str) -> bool:
        """Run one input line; ``False`` means leave."""
        line = line.strip()
        if not line:
            return True
        if not line.startswith("/"):
            await self.search(line)
            return True
        command, _, rest = line.partition(" ")
        rest = rest.strip()
        try:
            return await self._command(command.lower(), rest)
        except ShellUsageError as exc:
            self.write(m.SHELL_USAGE(self.lang, detail=exc.text(self.lang)))
            return True

    async def _command(self, command: str, rest: str) -> bool:
        s = self.state
        if command in ("/exit", "/quit", "/q"):
            return False
        if command in ("/help", "/?"):
            self.write(m.SHELL_HELP(self.lang))
        elif command == "/top":
            if not rest.isdigit() or not TOP_MIN <= int(rest) <= TOP_MAX:
                raise ShellUsageError(m.SHELL_TOP_USAGE, low=TOP_MIN, high=TOP_MAX)
            s.top = int(rest)
            self.write(f"top: {s.top}")
        elif command == "/view":
            if rest not in VIEWS:
                raise ShellUsageError(m.VERBATIM, text="/view normal|list|detail")
            s.view = rest
            self.write(f"view: {s.view}")
            if s.results:
                self._show(max(0, s.shown - s.top), s.shown)
        elif command == "/mode":
            self._set_mode(rest)
        elif command == "/user":
            self._set_user(rest)
        elif command == "/date":
            self._set_date(rest)
        elif command in ("/kind", "/platform", "/account", "/media", "/visibility"):
            self._set_filter(command[1:], rest)
        elif command == "/next":
            if s.shown >= len(s.results):
                self.write(m.SHELL_NO_MORE(self.lang))
            else:
                start = s.shown
                s.shown = min(len(s.results), start + s.top)
                self._show(start, s.shown)
        elif command in ("/details", "/d"):
            for n in parse_ranges(rest):
                if n > len(s.results):
                    self.write(m.SHELL_NO_SUCH_RESULT(self.lang, n=n))
                    continue
                self._detail(n, s.results[n - 1])
        else:
            self.write(m.SHELL_UNKNOWN_COMMAND(self.lang, command=command))
        return True

    def _set_mode(self, rest: str) -> None:
        parts = rest.split()
        if not parts or parts[0] not in MODES:
            raise ShellUsageError(m.VERBATIM, text="/mode " + "|".join(MODES) + " [w1,w2,w3]")
        weights = None
        if len(parts) > 1:
            try:
                weights = [float(w) for w in parts[1].split(",")]
            except ValueError:
                raise ShellUsageError(m.SHELL_WEIGHTS_USAGE) from None
        self.state.mode, self.state.weights = parts[0], weights
        self.write(f"mode: {self.state.mode}" + (f" weights {weights}" if weights else ""))

    def _set_user(self, rest: str) -> None:
        s = self.state
        if rest == "clear":
            s.includes, s.excludes, s.threshold_min, s.threshold_max = [], [], None, None
        for token in rest.split() if rest != "clear" else []:
            key, eq, value = token.partition("=")
            if eq and key in ("min", "max"):
                if not value.isdigit() or int(value) < 1:
                    raise ShellUsageError(m.SHELL_MIN_MAX_USAGE)
                if key == "min":
                    s.threshold_min = int(value)
                else:
                    s.threshold_max = int(value)
            elif token.startswith("-"):
                s.excludes = [u for u in token[1:].split(",") if u]
            else:
                s.includes = [u for u in token.split(",") if u]
        self.write(
            f"users: includes={s.includes or '-'} excludes={s.excludes or '-'} "
            f"min={s.threshold_min or '-'} max={s.threshold_max or '-'}"
        )

    def _set_filter(self, name: str, rest: str) -> None:
        """``/kind``, ``/platform``, ``/account``, ``/media``, ``/visibility``: checked here as
        the API reads them."""
        s = self.state
        value = "" if rest.lower() in ("clear", "any") else rest
        try:
            if name == "kind":
                parse_kinds(value or None)
                s.kind = [v.strip() for v in value.split(",") if v.strip()]
            elif name == "platform":
                parse_platforms(value or None)
                s.platform = [v.strip() for v in value.split(",") if v.strip()]
            elif name == "account":
                parse_accounts(value or None)
                s.account = [v.strip() for v in value.split(",") if v.strip()]
            elif name == "visibility":
                parse_visibilities(value or None)
                s.visibility = [v.strip() for v in value.split(",") if v.strip()]
            else:
                s.has_media = parse_has_media(value or None)
        except ValidationError as exc:
            raise ShellUsageError(m.VERBATIM, text=str(exc)) from None
        media = {None: "any", True: "yes", False: "no"}[s.has_media]
        self.write(
            f"kind: {','.join(s.kind) or 'post,reply,quote'}  platform: {','.join(s.platform) or 'any'}  "
            f"account: {','.join(s.account) or 'any'}  media: {media}"
            + (f"  visibility: {','.join(s.visibility)}" if s.visibility else "")
        )

    def _set_date(self, rest: str) -> None:
        s = self.state
        if rest == "clear":
            s.date_from = s.date_to = None
        elif rest:
            # "YYYY-MM-DD HH:MM:SS" holds a space: join a date with a following time.
            words = rest.split()
            values: list[str] = []
            for word in words:
                if values and ":" in word and " " not in values[-1]:
                    values[-1] += " " + word
                else:
                    values.append(word)
            if len(values) > 2:
                raise ShellUsageError(m.VERBATIM, text="/date FROM [TO]")
            s.date_from = values[0] if values[0] != "-" else None
            s.date_to = values[1] if len(values) > 1 and values[1] != "-" else None
        self.write(m.SHELL_DATES(self.lang, start=s.date_from or "-", end=s.date_to or "-"))

    async def search(self, query: str) -> None:
        s = self.state
        params: dict[str, Any] = {"query": query, "settings": s.settings(), "mode": s.mode, **s.filters()}
        if s.weights is not None:
            params["weights"] = s.weights
        try:
            s.results = list(await self.api.call("search_similar", params) or [])
        except Exception as exc:
            fields = error_fields(exc)
            self.write(m.SHELL_ERROR(self.lang, detail=fields[1] if fields else exc))
            return
        s.shown = min(len(s.results), s.top)
        if not s.results:
            self.write(m.NO_RESULTS(self.lang))
            return
        note = match_note(s.results, self.lang).strip()  # no hit is a real match: say so first
        if note:
            self.write(note)
        self._show(0, s.shown)
        if s.shown < len(s.results):
            self.write(m.SHELL_PAGE(self.lang, shown=s.shown, total=len(s.results)))

    def _show(self, start: int, end: int) -> None:
        for n in range(start + 1, end + 1):
            result = self.state.results[n - 1]
            post = result.get("post") or {}
            score = result.get("score", 0.0)
            body = collapse_blank_lines(str(post.get("content", "")))
            if self.state.view == "list":
                first = body.replace("\n", " ")
                author = post_author(post, self.lang)
                self.write(f"{n:3d}. [{score:.3f}] {author}{post_marks(post)} {first[:60]}")
            elif self.state.view == "detail":
                self._detail(n, result)
            else:
                self.write(f"{n:3d}. [{score:.3f}] {post_head(post, self.lang)}{post_marks(post)}")
                for line in body.split("\n"):
                    self.write(f"     {line}")

    def _detail(self, n: int, result: dict[str, Any]) -> None:
        post = result.get("post") or {}
        self.write(
            f"{n:3d}. [{result.get('score', 0.0):.5f}] {post_head(post, self.lang)}" + post_marks(post)
        )
        self.write(f"     {post.get('url', '')}")
        if post.get("content_warning"):
            self.write("     " + m.SHELL_CW(self.lang, text=post["content_warning"]))
        for line in str(post.get("content", "")).split("\n"):
            self.write(f"     {line}")
        for key in ("summary", "reasoning"):
            if post.get(key):
                self.write(f"     {key}: {post[key]}")
        if post.get("tags"):
            self.write("     " + m.SHELL_TAGS(self.lang, tags=", ".join(map(str, post["tags"]))))


def _setup_readline(history: Path) -> Callable[[], None]:
    """Enable line editing and persistent history when ``readline`` exists; returns the saver."""
    try:
        import readline
    except ImportError:  # pragma: no cover - Windows without pyreadline
        return lambda: None
    with contextlib.suppress(OSError):
        readline.read_history_file(history)
    readline.set_history_length(1000)

    def save() -> None:
        with contextlib.suppress(OSError):
            history.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(history)

    return save


def run_shell(
    api: ArchiveAPIProtocol, *, history: Path, banner: Iterable[str] = (), lang: Lang = "en"
) -> None:
    """The interactive loop on this terminal (or on piped stdin, one line per command)."""
    save = _setup_readline(history)
    shell = Shell(api, lang=lang)
    for line in banner:
        print(line)
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                line = input("search> ")
            except EOFError:
                print()
                break
            except KeyboardInterrupt:
                print()
                continue
            if not loop.run_until_complete(shell.handle(line)):
                break
    finally:
        save()
        closer = getattr(api, "aclose", None)
        if closer is not None:
            loop.run_until_complete(closer())
        loop.close()
