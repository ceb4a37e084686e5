"""How each fenced block of the docs is run, and why a few are not.

A block runs as written. The sandbox (``sandbox.py``) supplies what a reader has at hand: the
shipped sample export as ``twilog.csv``, a ``servers.json`` / ``servers.toml`` of real servers,
``uvx``/``npx`` that start the servers ``make test`` installed, the real local Redmine in
place of ``https://redmine.example.com``. What cannot run here says why, one line per case.

Lines of a shell block run one at a time in one sandbox (exports carry over), so a page's
``import`` then ``embed`` then ``search`` is one story. A line that starts a server that runs
until stopped is started, checked by a real MCP client, and stopped (``Line.action``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tests.docs.blocks import Block


@dataclass(frozen=True)
class Line:
    """What to do with the command lines that ``pattern`` finds (re.search)."""

    pattern: str
    action: str = "run"  # run | skip | stdio | http | stdin | daemon
    reason: str = ""  # skip: why; stdin: the input; daemon: the command that stops it
    url: str = ""  # http: where the probe connects
    rc: tuple[int, ...] = (0,)
    stdout: str = ""  # a regex the output must contain (what the page promises it shows)
    probe: tuple[str, ...] = ()  # extra probe arguments (--call NAME --args JSON, --bearer-env)


@dataclass(frozen=True)
class Plan:
    """What one block needs around it; blocks without an entry run with the defaults."""

    kind: str = (
        "run"  # run | shell (any fence) | skip | output | config | workflow | server | tool-xml | synopsis
    )
    reason: str = ""
    setup: tuple[str, ...] = ()  # command lines run first, in the sandbox
    background: tuple[tuple[str, int], ...] = ()  # (command line, port it serves) kept running
    ports: tuple[int, ...] = ()  # fixed ports the block uses: one such block at a time
    subst: tuple[tuple[str, str], ...] = ()  # placeholders of the page -> the sandbox's values
    needs: tuple[str, ...] = ()  # redmine | third-party | llm
    files: tuple[tuple[str, str], ...] = ()  # extra files: (path, text with {REDMINE_URL} etc.)
    lines: tuple[Line, ...] = ()
    prelude: str = ""  # python: what the page's prose says the free names are
    probe: tuple[str, ...] = ()  # server: probe arguments


ARCHIVE_PORT = 8765
HTTP_PORT = 8000

# Placeholders a reader replaces with their own values; the sandbox's are the local Redmine's.
REDMINE = (
    ("REDMINE_URL=https://redmine.example.com", "REDMINE_URL=$DOCS_REDMINE_URL"),
    ("REDMINE_API_KEY=...", "REDMINE_API_KEY=$DOCS_REDMINE_API_KEY"),
)

TIME_JSON = '{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}\n'
TIME_TOML = '[mcpServers.time]\ncommand = "uvx"\nargs = ["mcp-server-time"]\n'
TIME_AND_EVERYTHING = (
    '{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]},\n'
    '  "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}},\n'
    ' "gateway": {"names": {"time/get_current_time": "now"}}}\n'
)
REDMINE_MCP_JSON = (
    '{"mcpServers": {"redmine": {"command": "mcpkit", "args": ["redmine", "mcp"],\n'
    '  "env": {"REDMINE_URL": "{REDMINE_URL}", "REDMINE_API_KEY": "{REDMINE_API_KEY}"}}}}\n'
)
DEFAULT_FILES = (
    ("servers.json", TIME_JSON),
    ("servers.toml", TIME_TOML),
    # the reader's default config file (docs/client.md), for `--server time` without --config
    ("~/.config/mcpkit/servers.toml", TIME_TOML),
)
ECHO_HTTP = (f"python examples/echo_server.py --transport http --port {HTTP_PORT}", HTTP_PORT)

# Lines that mean the same on every page.
COMMON: tuple[Line, ...] = (
    Line(r"^make test\b", "skip", "the whole suite, which this test is part of"),
    Line(r"^claude mcp add\b", "skip", "needs Claude Code's own CLI (claude), not installed here"),
    Line(r"^ollama pull\b", "skip", "needs ollama and a model download; the LLM is the tests' fake here"),
    Line(r"^pip install\b", "skip", "needs PyPI; the suite runs on the editable install (make test)"),
    Line(r"^sudo scripts/redmine-up\.sh", "skip", "needs root; make test runs it before the suite"),
    Line(r"^\.venv/bin/pytest\b", "skip", "runs tests of this suite, which run in the suite itself"),
    Line(r"mcpkit archive shell\b", "stdin", "/help\n/exit\n"),
    # exit 1 is "findings at the --fail-on level", a graded report; 2 is "could not check"
    Line(r"^mcpkit check\b.*>", rc=(0, 1)),
    Line(r"^mcpkit check\b", rc=(0, 1), stdout=r"\S"),
    Line(r"mcpkit archive start\b", "daemon", "mcpkit archive stop"),
    Line(r"mcpkit archive serve\b", "skip", "a foreground server; the same server is started by start"),
    Line(r"mcpkit archive mcp\b.*--transport http", "http", url=f"http://127.0.0.1:{HTTP_PORT}/mcp"),
    Line(r"mcpkit archive mcp\b", "stdio"),
    Line(r"mcpkit redmine mcp\b.*--transport http", "http", url=f"http://127.0.0.1:{HTTP_PORT}/mcp"),
    Line(r"mcpkit redmine mcp\b", "stdio"),
    Line(r"^\$?\s*mcpkit gateway --config \S+$", "stdio"),
    Line(
        r"^mcpkit gateway --config .*--transport http.*--token-env",
        "http",
        url=f"http://127.0.0.1:{HTTP_PORT}/mcp",
        probe=("--bearer-env", "GATEWAY_TOKEN"),
    ),
    Line(r"^mcpkit gateway --config .*--transport http", "http", url=f"http://127.0.0.1:{HTTP_PORT}/mcp"),
)

LINT_TOOLS = (
    "from mcpkit.tools import ToolSpec, params as p\n"
    "async def handler(args):\n    return 'ok'\n"
    "tools = [ToolSpec('list_issues', 'List issues (by status_id).',\n"
    "    p.object_schema({'status': p.string('status_id or open')}), handler)]\n"
    "tool = tools[0]\n"
)

PLANS: dict[tuple[str, str], Plan] = {
    ("README.md", "make demo"): Plan(ports=(ARCHIVE_PORT,)),
    ("docs/archive.md", "make demo"): Plan(kind="shell", ports=(ARCHIVE_PORT,)),
    ("README.md", "mcpkit archive import twilog.csv"): Plan(
        ports=(ARCHIVE_PORT,),
        needs=("llm",),
        lines=(
            Line(r"archive search .*--user", stdout=r"@\w"),
            Line(r"archive search", stdout=r"@\w"),
            Line(r"archive text \"", stdout=r"@\w"),
        ),
    ),
    ("README.md", "export REDMINE_URL"): Plan(ports=(HTTP_PORT,), subst=REDMINE, needs=("redmine",)),
    ("README.md", "mcpkit tools -- uvx mcp-server-time"): Plan(
        ports=(HTTP_PORT, 8080),
        needs=("redmine", "third-party"),
        background=(ECHO_HTTP, ("python -m http.server --bind 127.0.0.1 8080", 8080)),
        files=(("mcp.json", REDMINE_MCP_JSON),),
        lines=(Line(r"^mcpkit shell --url", "stdin", "list\n"),),
    ),
    ("README.md", "from mcpkit.client import connect, ToolError"): Plan(needs=("third-party",)),
    ("README.md", "mcpkit gateway --config servers.json"): Plan(
        ports=(HTTP_PORT,), needs=("third-party",), setup=("export GATEWAY_TOKEN=docs-test-token",)
    ),
    ("README.md", "claude mcp add archive"): Plan(),
    ("README.md", "uvx --from 'mcpkit-suite[archive]' mcpkit archive import"): Plan(
        setup=("python scripts/sample_exports.py",),
        lines=(Line(r"archive search", stdout=r"@\w"),),
    ),
    ("README.md", "from mcpkit.server import build_server, serve"): Plan(
        kind="server", probe=("--call", "show_user", "--args", '{"id": "current"}', "--expect-error")
    ),
    ("README.md", "set -a; . .redmine/env; set +a"): Plan(
        needs=("redmine",),
        setup=("mcpkit archive import twilog.csv --db archive.db",),
        subst=(("--archive-db DB", "--archive-db archive.db"),),
        lines=(
            Line(
                r"bench/redmine_overhead\.py",
                "skip",
                "a benchmark of minutes, run by hand on a quiet machine",
            ),
            Line(
                r"bench/gateway_overhead\.py",
                "skip",
                "a benchmark of minutes, run by hand on a quiet machine",
            ),
            Line(r"bench/enrich\.py", "skip", "a benchmark of minutes, run by hand on a quiet machine"),
        ),
    ),
    # docs/architecture.md: pictures of the code, checked by tests/test_architecture.py
    ("docs/architecture.md", "src/mcpkit/"): Plan(kind="output", reason="the layout; test_architecture"),
    ("docs/architecture.md", "cli "): Plan(kind="output", reason="the import picture; test_architecture"),
    ("docs/architecture.md", "gateway: mcp."): Plan(kind="output", reason="SDK imports; test_architecture"),
    ("docs/architecture.md", "client --initialize"): Plan(kind="output", reason="a picture of a call"),
    ("docs/archive.md", "mcpkit archive import twilog.csv"): Plan(ports=(ARCHIVE_PORT,), needs=("llm",)),
    # A synopsis: every option it shows must be one the command takes ("same options": the line above's)
    ("docs/archive.md", "mcpkit archive serve [--host"): Plan(kind="synopsis"),
    ("docs/archive.md", "mcpkit archive mcp"): Plan(
        ports=(ARCHIVE_PORT, HTTP_PORT),
        setup=("mcpkit archive import twilog.csv", "mcpkit archive start"),
        lines=(Line(r"--url ws|--websocket|^mcpkit archive mcp +#", "stdio"),),
    ),
    ("docs/archive.md", "ollama pull"): Plan(
        ports=(ARCHIVE_PORT,),
        needs=("llm",),
        setup=("mcpkit archive import twilog.csv", "mcpkit archive embed"),
    ),
    ("docs/client.md", "import anyio"): Plan(needs=("third-party",)),
    ("docs/client.md", "from mcpkit.client import Pool"): Plan(needs=("third-party",)),
    ("docs/client.md", "2026-11-22T22:07:23.905Z"): Plan(kind="output", reason="what --trace prints"),
    ("docs/client.md", "$ mcpkit tools -- uvx mcp-server-time"): Plan(
        ports=(HTTP_PORT,), needs=("third-party",), background=(ECHO_HTTP,)
    ),
    ("docs/client.md", "$ mcpkit check -- uvx mcp-server-time"): Plan(
        ports=(HTTP_PORT,),
        needs=("third-party",),
        background=(ECHO_HTTP,),
        setup=("cp examples/echo_server.py my_server.py",),
    ),
    ("docs/client.md", "$ mcpkit check --baseline"): Plan(needs=("third-party",)),
    ("docs/client.md", "# .github/workflows/mcp-check.yml"): Plan(kind="workflow"),
    ("docs/gateway.md", "$ mcpkit gateway --config servers.json"): Plan(
        ports=(HTTP_PORT,), needs=("third-party",), files=(("servers.json", TIME_AND_EVERYTHING),)
    ),
    ("docs/gateway.md", "$ mcpkit gateway names"): Plan(
        needs=("third-party",), files=(("servers.json", TIME_AND_EVERYTHING),)
    ),
    ("docs/gateway.md", "$ mcpkit gateway status"): Plan(
        needs=("third-party",), files=(("servers.json", TIME_AND_EVERYTHING),)
    ),
    ("docs/gateway.md", "$ export GATEWAY_TOKEN"): Plan(ports=(HTTP_PORT,), needs=("third-party",)),
    ("docs/redmine.md", "pip install"): Plan(ports=(HTTP_PORT,), subst=REDMINE, needs=("redmine",)),
    ("docs/redmine.md", "Updated issue 9"): Plan(kind="output", reason="what a tool answers"),
    ("docs/redmine.md", "Nothing was sent"): Plan(kind="output", reason="what a tool answers"),
    # What delete_issue answers without confirm, asked of the real Redmine for one of its issues:
    # the page's elements and attributes must be the tool's.
    ("docs/redmine.md", "<response><status>preview"): Plan(
        kind="tool-xml", needs=("redmine",), probe=("delete_issue", '{"id": ISSUE}')
    ),
    ("docs/redmine.md", "list_issues {"): Plan(kind="output", reason="a transcript of tool calls"),
    ("docs/redmine.md", "sudo scripts/redmine-up.sh"): Plan(),
    ("docs/redmine.md", "[Unit]"): Plan(kind="skip", reason="a systemd unit: needs systemd and root"),
    ("docs/redmine.md", "upstream mcpkit_redmine"): Plan(kind="skip", reason="an nginx site: needs nginx"),
    ("docs/redmine.md", "set -a; . .redmine/env; set +a"): Plan(
        needs=("redmine",),
        lines=(
            Line(
                r"redmine_overhead\.py +#", "skip", "a benchmark of minutes, run by hand on a quiet machine"
            ),
            Line(r"--url http://127\.0\.0\.1:3001", "skip", "needs the Puma Redmine of redmine-team.sh"),
        ),
    ),
    ("docs/toolkit.md", "from mcpkit.results import Element, Window"): Plan(kind="server"),
    ("docs/toolkit.md", "async def reindex"): Plan(
        prelude="from mcpkit.tools import ToolContext\ntotal = 3\n",
    ),
    ("docs/toolkit-compat.md", "from mcpkit.compat import lint, DEFAULT_PROFILES"): Plan(
        prelude=LINT_TOOLS,
    ),
    ("docs/toolkit-compat.md", "from mcpkit.compat import adapt, adapt_all"): Plan(
        prelude=LINT_TOOLS,
    ),
}

# Blocks known to fail today because the code or the page is being changed by another part of
# issue 24 (page, first line -> what fails and whose it is). Non-strict: the day it passes, the
# entry is stale and should go (the lead removes it once the part lands).
KNOWN_FAILURES: dict[tuple[str, str], str] = {}

RUNNABLE = {"bash", "sh", "console", "python", "json", "toml", "yaml"}


def known_failure(block: Block) -> str | None:
    for (page, start), why in KNOWN_FAILURES.items():
        if page == block.page and block.first_line.startswith(start):
            return why
    return None


def plan_for(block: Block) -> Plan:
    """The block's entry (by page and first line), its page directive, or the defaults."""
    for (page, start), plan in PLANS.items():
        if page == block.page and block.first_line.startswith(start):
            return plan
    directive = block.directive
    if "skip" in directive:
        return Plan(kind="skip", reason=directive.get("reason", ""))
    if "output" in directive:
        return Plan(kind="output", reason=directive.get("reason", "what a command prints"))
    if block.lang in {"json", "toml"}:
        return Plan(kind="config")
    return Plan()


def line_rule(plan: Plan, line: str) -> Line:
    for rule in (*plan.lines, *COMMON):
        if re.search(rule.pattern, line):
            return rule
    return Line(".*")


@dataclass
class Command:
    line: str
    stdin: str | None = None
    shown: list[str] = field(default_factory=list)  # output lines the page shows under a $ line


def commands_of(block: Block) -> list[Command]:
    """The command lines of a shell block: continuation lines joined; for console blocks the
    ``$ `` lines, with the ``mcp> `` lines after one as its input."""
    raw = block.text.replace("\\\n", " ").split("\n")
    found: list[Command] = []
    if block.lang == "console":
        for line in raw:
            if line.startswith("$ "):
                found.append(Command(line[2:].strip()))
            elif found and line.startswith("mcp> "):
                found[-1].stdin = (found[-1].stdin or "") + line[5:] + "\n"
            elif found and line.strip():
                found[-1].shown.append(line)
        return found
    return [Command(line.strip()) for line in raw if line.strip() and not line.lstrip().startswith("#")]
