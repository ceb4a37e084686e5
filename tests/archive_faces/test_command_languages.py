"""Issue 40 point 7, the data and server commands: ``import``, ``embed``, ``enrich``, ``start``,
``stop``, ``status`` and the shell's help print English unless ``--lang ja`` or a Japanese
locale asks for Japanese; their ``--json`` output is the same in both.

Real commands through typer's runner on real archive files (a Twilog CSV the test writes), a
real background server for start/stop, and the local fake of a hosted LLM API for enrich.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mcpkit.archive import messages as m
from mcpkit.archive.shell import TOP_MAX, TOP_MIN
from tests.archive.fake_llm import MODEL, running
from tests.archive.helpers import row, write_csv
from tests.archive_faces.conftest import Ran, cli, free_port

JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
ENGLISH = {"LANG": "C.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}
JAPANESE_LOCALE = {"LANG": "ja_JP.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}
POSTS = [row(1, "alice", "coffee in the rain"), row(2, "alice", "tea at noon"), row(3, "bob", "BROKEN post")]

LANGUAGE_CASES = [
    pytest.param([], ENGLISH, "en", id="default-english"),
    pytest.param(["--lang", "ja"], ENGLISH, "ja", id="flag-japanese"),
    pytest.param([], JAPANESE_LOCALE, "ja", id="locale-japanese"),
    pytest.param(["--lang", "en"], JAPANESE_LOCALE, "en", id="flag-english-over-locale"),
]


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _speaks(ran: Ran, lang: str, *, stream: str = "stdout") -> None:
    """Every line the command printed on ``stream`` is in ``lang`` (paths and names aside)."""
    lines = _lines(getattr(ran, stream))
    assert lines, ran
    for line in lines:
        assert bool(JAPANESE.search(line)) == (lang == "ja"), (lang, line)


@pytest.mark.parametrize(("options", "env", "lang"), LANGUAGE_CASES)
def test_import_embed_and_their_failures_speak_the_chosen_language(
    tmp_path: Path, options: list[str], env: dict[str, str], lang: m.Lang
) -> None:
    export = write_csv(tmp_path / "e.csv", POSTS)
    db = str(tmp_path / "a.db")
    done = cli("import", str(export), "--db", db, *options, env=env)
    assert done.returncode == 0, done.stderr
    expected = m.IMPORT_LINE(
        lang, head="Twilog CSV", kinds=m.POSTS_READ(lang, count=3), new="3", updated="0", unchanged="0"
    )
    assert _lines(done.stdout) == [f"{export}: {expected}"]
    _speaks(done, lang)

    done = cli("embed", "--db", db, *options, env=env)
    assert done.returncode == 0, done.stderr
    line = _lines(done.stdout)[0]
    model = line.rsplit("(", 1)[1].removesuffix(")")
    assert line == m.EMBED_DONE(lang, space="content", embedded=3, already=0, empty=0, model=model)
    _speaks(done, lang)
    assert m.LOADING_MODEL(lang, model=model) in _lines(done.stderr)

    for failing, code in (
        (["embed", "--db", str(tmp_path / "none.db")], 1),
        (["embed", "--space", "nowhere", "--db", db], 2),
        (["import", str(export), "--handle", "alice.bsky.social", "--db", db], 2),
        (["enrich", "--db", str(tmp_path / "none.db")], 1),
    ):
        done = cli(*failing, *options, env=env)
        assert done.returncode == code, (failing, done)
        assert len(_lines(done.stderr)) == 1, (failing, done.stderr)
        assert done.stderr.startswith("error: ")
        _speaks(Ran(0, done.stderr.removeprefix("error: "), ""), lang)


def test_the_json_outputs_do_not_change_with_the_language(tmp_path: Path) -> None:
    export = write_csv(tmp_path / "e.csv", POSTS)
    reports = []
    for options, env in (([], ENGLISH), (["--lang", "ja"], JAPANESE_LOCALE)):
        db = tmp_path / f"{len(reports)}.db"
        done = cli("import", str(export), "--db", str(db), "--json", *options, env=env)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report.pop("db") == str(db)
        reports.append(report)
    assert reports[0] == reports[1]


@pytest.mark.slow
@pytest.mark.parametrize(("options", "env", "lang"), LANGUAGE_CASES[:3])
def test_enrich_speaks_the_chosen_language(
    tmp_path: Path, options: list[str], env: dict[str, str], lang: m.Lang
) -> None:
    db = str(tmp_path / "a.db")
    assert cli("import", str(write_csv(tmp_path / "e.csv", POSTS)), "--db", db).returncode == 0
    with running() as (_, url):
        args = ["--endpoint", url, "--model", MODEL, "--db", db, "--no-embed", *options]
        plan = cli("enrich", *args, "--dry-run", env=env)
        assert plan.returncode == 0, plan.stderr
        _speaks(plan, lang)
        done = cli("enrich", *args, env=env)
    assert done.returncode == 0, done.stderr
    _speaks(done, lang)
    _speaks(done, lang, stream="stderr")  # the endpoint's reason itself is quoted as it came
    failed = _lines(done.stderr)
    why = m.MALFORMED_TWICE(lang, detail="")
    assert len(failed) == 2 and failed[0].startswith(m.POST_FAILED(lang, id=3, reason=why))
    assert failed[1] == m.POSTS_FAILED(lang, count="1")
    done = cli("enrich", "--endpoint", "http://127.0.0.1:9/v1", "--db", db, *options, env=env)
    assert done.returncode == 1 and len(_lines(done.stderr)) == 1, done.stderr
    unreachable = m.ENDPOINT_UNREACHABLE(lang, endpoint="http://127.0.0.1:9/v1", detail="")
    assert done.stderr.startswith(
        f"error: {m.CLI_FAILED(lang, action=m.ENRICH_ACTION(lang), reason=unreachable)}"
    )


@pytest.mark.slow
@pytest.mark.parametrize(("options", "env", "lang"), LANGUAGE_CASES[:3])
def test_start_status_and_stop_speak_the_chosen_language(
    tmp_path: Path, options: list[str], env: dict[str, str], lang: m.Lang
) -> None:
    db = str(tmp_path / "a.db")
    assert cli("import", str(write_csv(tmp_path / "e.csv", POSTS)), "--db", db).returncode == 0
    port = free_port()
    env = {
        **env,
        "MCPKIT_ARCHIVE_STATE": str(tmp_path / "state"),
        "MCPKIT_ARCHIVE_URL": f"ws://127.0.0.1:{port}",
    }
    started = cli("start", "--port", str(port), "--db", db, *options, env=env)
    assert started.returncode == 0, started.stderr
    try:
        info = json.loads(cli("status", "--json", env=env).stdout)
        _speaks(started, lang)
        assert _lines(started.stdout) == [
            m.SERVER_STARTED(lang, url=info["url"], pid=info["pid"], log=info["log"])
        ]
        status = cli("status", *options, env=env)
        assert status.returncode == 0, status.stderr
        served = m.STATUS_RUNNING(lang, url=info["url"], pid=info["pid"], db=info["server"]["db"])
        assert _lines(status.stdout)[0] == served
        again = cli("start", "--port", str(port), "--db", db, *options, env=env)
        assert again.returncode == 1 and len(_lines(again.stderr)) == 1
        _speaks(Ran(0, again.stderr.removeprefix("error: "), ""), lang)
    finally:
        stopped = cli("stop", *options, env=env)
    assert stopped.returncode == 0, stopped.stderr
    _speaks(stopped, lang)
    assert _lines(stopped.stdout) == [m.SERVER_STOPPED(lang, pid=info["pid"])]
    after = cli("status", *options, env=env)
    assert after.returncode == 1 and _lines(after.stdout) == [m.STATUS_NOT_RUNNING(lang)]
    none = cli("stop", *options, env=env)
    assert none.returncode == 1 and none.stderr == f"error: {m.NO_SERVER_RUNNING(lang)}\n"


@pytest.mark.parametrize(("options", "env", "lang"), LANGUAGE_CASES)
def test_the_shell_help_and_its_own_lines_speak_the_chosen_language(
    tmp_path: Path, options: list[str], env: dict[str, str], lang: m.Lang
) -> None:
    db = str(tmp_path / "a.db")
    export = write_csv(tmp_path / "e.csv", [*POSTS, row(4, "bob", "more tea")])
    assert cli("import", str(export), "--db", db).returncode == 0
    typed = "/help\n/next\n/d 4\n/nothing\n/top 0\n/d 2-x\n/user min=0\n/top 1\n| tea\nrainy walk\n"
    done = cli("shell", "--db", db, *options, env=env, input=typed)
    assert done.returncode == 0, done.stderr
    assert m.SHELL_HELP(lang) in done.stdout
    for line in (
        m.SHELL_BANNER(lang),
        m.SHELL_NO_MORE(lang),
        m.SHELL_NO_SUCH_RESULT(lang, n=4),
        m.SHELL_UNKNOWN_COMMAND(lang, command="/nothing"),
        m.SHELL_USAGE(lang, detail=m.SHELL_TOP_USAGE(lang, low=TOP_MIN, high=TOP_MAX)),
        m.SHELL_USAGE(lang, detail=m.SHELL_NOT_A_RANGE(lang, part="'2-x'")),
        m.SHELL_USAGE(lang, detail=m.SHELL_MIN_MAX_USAGE(lang)),
        m.SHELL_PAGE(lang, shown=1, total=2),
        m.SHELL_ERROR(lang, detail=""),  # a search by meaning of an archive not embedded yet
    ):
        assert line in done.stdout, (line, done.stdout)
    # the rest is the commands' own words (top: 1) and the posts, in English here
    assert bool(JAPANESE.search(done.stdout)) == (lang == "ja")


@pytest.mark.parametrize(("options", "env", "lang"), LANGUAGE_CASES)
def test_the_query_commands_say_which_archive_answers_in_the_chosen_language(
    tmp_path: Path, options: list[str], env: dict[str, str], lang: m.Lang
) -> None:
    db = tmp_path / "a.db"
    assert cli("import", str(write_csv(tmp_path / "e.csv", POSTS)), "--db", str(db)).returncode == 0
    done = cli("stats", *options, env={**env, "MCPKIT_ARCHIVE_DB": str(db)})
    assert done.returncode == 0, done.stderr
    assert _lines(done.stderr) == [
        m.NO_SERVER_ANSWERS(lang, url="ws://127.0.0.1:9"),  # the conftest's closed port
        m.IN_PROCESS(lang, path=db),
    ]
    missing = tmp_path / "none.db"
    done = cli("users", "--db", str(missing), *options, env=env)
    assert done.returncode == 1 and done.stderr == f"error: {m.NO_ARCHIVE(lang, path=missing)}\n"


@pytest.mark.anyio
@pytest.mark.parametrize(("options", "locale", "lang"), [([], "C.UTF-8", "en"), (["--lang", "ja"], "C.UTF-8", "ja"),
                                                        ([], "ja_JP.UTF-8", "ja")])  # fmt: skip
async def test_a_fresh_install_says_how_to_import_in_the_chosen_language(
    tmp_path: Path, options: list[str], locale: str, lang: m.Lang
) -> None:
    from tests.archive_faces.test_first_run import _env, session_of

    db = tmp_path / "fresh" / "archive.db"
    env = _env(tmp_path, LANG=locale, LC_ALL="", LC_MESSAGES="")
    async with session_of(["--db", str(db), *options], env) as session:
        result = await session.call_tool("get_database_stats", {})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    reason = m.FIRST_RUN_MISSING(lang, path=db)
    assert text == m.TOOL_ERROR(lang, action=m.DATABASE_STATS_ACTION(lang), reason=reason)
