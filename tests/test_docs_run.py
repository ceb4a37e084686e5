"""Every fenced block of README.md and docs/*.md, run as written (one case per block, id page:line).

Docs drifted from the code while nothing ran them: an example server whose handler returned
nothing answered -32603 where the README promised an isError result, a documented option was
"No such option", a documented search found nothing on the sample it was written for, an
``await`` on a synchronous method was a TypeError. Each block here is run the way a reader
would: shell lines in a sandbox that looks like a checkout (tests/docs/sandbox.py), python
blocks in a subprocess (top-level ``await`` allowed), config snippets through the project's own
loaders, servers started, checked by a real MCP client, and stopped. What cannot run here
says why in tests/docs/plan.py or in a ``<!-- docs-test: ... -->`` comment on the page.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sys
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs import plan as plans
from tests.docs.blocks import Block, all_blocks
from tests.docs.sandbox import RUN_PYTHON, Sandbox, port_locks, wait_for_port
from tests.integration.redmine.redmine_session import RedmineEnv, rest
from tests.support.env import REPO, THIRD_PARTY, require

BLOCKS = all_blocks(REPO)
SAMPLE = REPO / "src" / "mcpkit" / "archive" / "data" / "sample_twilog.csv"


def _redmine_env() -> dict[str, str]:
    env_file = REPO / ".redmine" / "env"
    values: dict[str, str] = {}
    if env_file.exists():
        for line in env_file.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep:
                values[key.strip()] = value.strip().strip("'\"")
    return values


def _redmine_up(values: dict[str, str]) -> bool:
    import urllib.request

    if "REDMINE_URL" not in values:
        return False
    try:
        with urllib.request.urlopen(values["REDMINE_URL"] + "/", timeout=10):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def _sandbox(block: Block, plan: plans.Plan, tmp_path: Path) -> Iterator[Sandbox]:
    extra: dict[str, str] = {}
    templating: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        if "redmine" in plan.needs:
            values = _redmine_env()
            require(_redmine_up(values), "no local Redmine answers (scripts/redmine-up.sh starts one)")
            extra |= {
                "DOCS_REDMINE_URL": values["REDMINE_URL"],
                "DOCS_REDMINE_API_KEY": values["REDMINE_API_KEY"],
            }
            templating |= {k: values[k] for k in ("REDMINE_URL", "REDMINE_API_KEY")}
        if "third-party" in plan.needs:
            require(
                (THIRD_PARTY / "venv" / "bin" / "mcp-server-time").exists(),
                "third-party MCP servers not installed (make third-party)",
            )
        if "llm" in plan.needs:
            from tests.archive.fake_llm import MODEL, running

            _, url = stack.enter_context(running())
            extra |= {"MCPKIT_ENRICH_URL": url, "MCPKIT_ENRICH_MODEL": MODEL}
        stack.enter_context(port_locks(plan.ports))
        box = Sandbox(tmp_path / "box", extra)
        stack.callback(box.close)
        shutil.copy(SAMPLE, box.root / "twilog.csv")
        for name, text in (*plans.DEFAULT_FILES, *plan.files):
            target = box.home / name if name == "mcp.json" else box.root / name
            if name.startswith("~/"):
                target = box.home / name[2:]
                target.parent.mkdir(parents=True, exist_ok=True)
            for key, value in templating.items():
                text = text.replace("{" + key + "}", value)
            target.write_text(text)
        for line, port in plan.background:
            box.background(line)
            assert wait_for_port(port), f"{line} did not listen on {port}:\n{box.background_log()}"
        for line in plan.setup:
            done = box.run(line)
            if plans.line_rule(plan, line).action == "daemon":
                box.on_close(plans.line_rule(plan, line).reason)
            assert done.returncode == 0, f"set-up failed: {line}\n{done.stdout}{done.stderr}"
        yield box


def _transcript(box: Sandbox) -> str:
    return "\n".join(box.transcript[-6:])[-6000:]


def _run_shell(block: Block, plan: plans.Plan, box: Sandbox) -> None:
    ran = 0
    skipped: list[str] = []
    for command in plans.commands_of(block):
        line = command.line
        for old, new in plan.subst:
            line = line.replace(old, new)
        rule = plans.line_rule(plan, line)
        if rule.action == "skip":
            skipped.append(f"{line.split('#')[0].strip()}: {rule.reason}")
            continue
        ran += 1
        if rule.action == "stdio":
            done = box.probe("--", "bash", "-c", line)
        elif rule.action == "http":
            server = box.background(line)
            done = box.probe("--url", rule.url, *rule.probe)
            assert server.poll() is None, f"{line} exited early:\n{box.background_log()}"
        else:
            stdin = (
                command.stdin
                if command.stdin is not None
                else (rule.reason if rule.action == "stdin" else None)
            )
            done = box.run(line, stdin=stdin)
            if rule.action == "daemon":
                box.on_close(rule.reason)
        assert done.returncode in rule.rc, f"{block.id}: {line}\n{_transcript(box)}"
        promised = re.search(r"#.*?(\d+) tools", line)
        if promised and rule.action in {"stdio", "http"}:  # "mcpkit redmine mcp   # 78 tools over stdio"
            assert f"{promised[1]} tools" in done.stdout, f"{block.id}: {line}\n{_transcript(box)}"
        printed = " ".join(done.stdout.split())
        missing = [s for s in command.shown if "..." not in s and " ".join(s.split()) not in printed]
        assert not missing, (
            f"{block.id}: {line} did not print what the page shows: {missing}\n{_transcript(box)}"
        )
        if rule.stdout:
            assert _matches(rule.stdout, done.stdout), (
                f"{block.id}: {line} printed nothing expected\n{_transcript(box)}"
            )
    if not ran:
        pytest.skip("; ".join(skipped))


def _matches(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


def _python_source(block: Block, plan: plans.Plan) -> str:
    """The block, after the blocks it continues: ``<!-- docs-test: continues -->`` is the page's
    previous python block, ``continues="from x import"`` the last earlier one starting so."""
    chain = [block]
    page = [b for b in BLOCKS if b.page == block.page and b.lang == "python"]
    while "continues" in chain[0].directive:
        start = chain[0].directive["continues"]  # empty: the page's previous python block
        earlier = [b for b in page[: page.index(chain[0])] if b.first_line.startswith(start)]
        assert earlier, f"{chain[0].id} continues no earlier python block starting {start!r}"
        chain.insert(0, earlier[-1])
    return plan.prelude + "\n".join(b.text for b in chain)


def _run_python(block: Block, plan: plans.Plan, box: Sandbox) -> None:
    script = box.root / "block.py"
    script.write_text(_python_source(block, plan))
    if plan.kind == "server":
        done = box.probe(*plan.probe, "--", sys.executable, str(script))
    else:
        done = box.run(f"{sys.executable} {RUN_PYTHON} block.py")
    assert done.returncode == 0, f"{block.id}\n{_transcript(box)}"


def _check_config(block: Block, box: Sandbox) -> None:
    """A config snippet must parse, and one naming servers must load with the project's loaders."""
    from mcpkit.client import load_config

    data = json.loads(block.text) if block.lang == "json" else tomllib.loads(block.text)
    suffix = ".json" if block.lang == "json" else ".toml"
    if not {"mcpServers", "servers", "mcp_servers"} & set(data):
        return
    path = box.root / (".vscode/mcp.json" if "servers" in data else f"config{suffix}")
    path.parent.mkdir(exist_ok=True)
    path.write_text(block.text)
    (box.root / ".env").write_text("")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DOCS_TOKEN", "docs-test-token")
        servers = load_config(path)
        assert servers, f"{block.id}: no server read"
        if "gateway" in data:
            from mcpkit.gateway import load_gateway_config

            load_gateway_config(path)


def _run_workflow(block: Block, box: Sandbox) -> None:
    """The CI workflow's own check step, run here as the page says it runs in this repository."""
    steps = [
        line.split("run:", 1)[1].strip() for line in block.text.splitlines() if "run: mcpkit check" in line
    ]
    assert steps, f"{block.id}: no mcpkit check step"
    github_env = box.root / "github-env"
    github_env.write_text("")
    box.env["GITHUB_ENV"] = str(github_env)
    for line in steps:
        done = box.run(line)
        assert done.returncode == 0, f"{block.id}: {line}\n{_transcript(box)}"
        assert "failed=1" not in github_env.read_text(), (
            f"{block.id}: the check found errors\n{_transcript(box)}"
        )
        report = box.root / "mcp-check.sarif"
        assert json.loads(report.read_text())["version"] == "2.1.0"


def _cases() -> list[object]:
    cases: list[object] = []
    for block in BLOCKS:
        why = plans.known_failure(block)
        marks = [pytest.mark.xfail(reason=why, strict=False)] if why else []
        cases.append(pytest.param(block, id=block.id, marks=marks))
    return cases


def _check_synopsis(block: Block, box: Sandbox) -> None:
    """Each line's command takes every option the line shows (its ``--help`` lists it)."""
    previous: list[str] = []
    for line in plans.commands_of(block):
        text = line.line.split("#")[0]
        command = text.split("[")[0].strip()
        options = re.findall(r"(--[a-z][a-z-]*)", text)
        if "same options" in text:
            options += previous
        shown = box.run(f"{command} --help")
        assert shown.returncode == 0, _transcript(box)
        accepted = set(re.findall(r"--[a-z][a-z-]*", shown.stdout))
        missing = sorted(set(options) - accepted)
        assert not missing, f"{block.id}: {command} does not take {missing}"
        previous = options


def _xml_shape(text: str) -> set[str]:
    """Element paths and their attribute names: what a page's example of a tool's XML promises."""
    import xml.etree.ElementTree as ET

    shape: set[str] = set()

    def walk(element: ET.Element, path: str) -> None:
        here = f"{path}/{element.tag}"
        shape.add(here)
        shape.update(f"{here}@{name}" for name in element.attrib)
        for child in element:
            walk(child, here)

    walk(ET.fromstring(text.split("?>", 1)[-1].strip()), "")
    return shape


def _check_tool_xml(block: Block, plan: plans.Plan, box: Sandbox) -> None:
    """Ask the real Redmine's tool for the answer the page shows, and compare their shapes.

    The issue asked about is the check's own, in a project made for it and removed after:
    other tests' issues come and go with their projects, and a fresh Redmine holds none (the
    check used to take whichever issue it found, and failed when it ran with none left)."""
    env = RedmineEnv(url=box.env["DOCS_REDMINE_URL"], admin_key=box.env["DOCS_REDMINE_API_KEY"], user_key="")
    ident = f"docs-preview-{uuid.uuid4().hex[:10]}"
    project = rest(env, "POST", "projects.json", {"project": {"name": "Doc preview", "identifier": ident}})
    try:
        made = rest(
            env,
            "POST",
            "issues.json",
            {"issue": {"project_id": project["project"]["id"], "subject": "Crash on save"}},
        )
        tool, args = plan.probe[0], plan.probe[1].replace("ISSUE", str(made["issue"]["id"]))
        answer = box.run(f"mcpkit call {tool} --args '{args}' -- mcpkit redmine mcp")
        assert answer.returncode == 0, _transcript(box)
        assert _xml_shape(block.text) == _xml_shape(answer.stdout), (
            f"{block.id}: the page is not what {tool} prints"
        )
    finally:
        rest(env, "DELETE", f"projects/{ident}.json")


@pytest.mark.slow
@pytest.mark.parametrize("block", _cases())
def test_the_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    plan = plans.plan_for(block)
    if plan.kind in {"skip", "output"}:
        assert plan.reason, f"{block.id}: a block that is not run must say why"
        pytest.skip(f"{plan.kind}: {plan.reason}")
    if plan.kind == "run" and block.lang not in plans.RUNNABLE and not block.directive:
        pytest.fail(
            f"{block.id}: a {block.lang or 'plain'} block with no plan: add one in tests/docs/plan.py"
        )
    with _sandbox(block, plan, tmp_path) as box:
        if plan.kind == "config":
            _check_config(block, box)
        elif plan.kind == "synopsis":
            _check_synopsis(block, box)
        elif plan.kind == "tool-xml":
            box.env |= {
                "REDMINE_URL": box.env["DOCS_REDMINE_URL"],
                "REDMINE_API_KEY": box.env["DOCS_REDMINE_API_KEY"],
            }
            _check_tool_xml(block, plan, box)
        elif plan.kind == "workflow":
            _run_workflow(block, box)
        elif block.lang == "python":
            _run_python(block, plan, box)
        else:
            _run_shell(block, plan, box)


def test_every_plan_names_a_block_that_exists() -> None:
    """A plan whose block was edited away would silently stop applying."""
    starts = {(b.page, b.first_line) for b in BLOCKS}
    keys = [*plans.PLANS, *plans.KNOWN_FAILURES]
    stale = [key for key in keys if not any(p == key[0] and f.startswith(key[1]) for p, f in starts)]
    assert stale == []


@pytest.mark.slow
def test_the_sandbox_leaves_no_process_behind(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    server = box.background("sleep 300 & sleep 300")
    box.close()
    assert server.poll() is not None
    deadline = time.monotonic() + 60  # a guard against hangs: ended processes are reaped by init
    while _alive_in_group(server.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive_in_group(server.pid)


def _alive_in_group(pgid: int) -> bool:
    """Processes of the group that are not zombies waiting for init to reap them."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False
