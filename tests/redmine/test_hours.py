"""Hours in every form Redmine reads (issue 39 point 6): ``1:30``, ``1h30``, ``90m``, ``1,5`` ...

The property tests build a value from hours and minutes, write it every way Redmine's time
form accepts, and expect the same number; where Redmine is installed (``make redmine-up``),
random hour-like text is read by Redmine's own parser (``String#to_hours``, run in a ruby
child process) and by this server's, and the two must agree.
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.hours import EXAMPLES, hours
from tests.redmine.support import Recorder, make_server

REDMINE_PARSER = Path("/usr/share/redmine/lib/redmine/core_ext/string/conversions.rb")
RUBY_LOOP = """
require ARGV[0]
String.include Redmine::CoreExt::String::Conversions
STDOUT.sync = true
STDIN.each_line do |line|
  value = JSON.parse(line).to_hours
  puts JSON.generate(value.nil? || value.nan? || value.infinite? ? nil : value)
end
"""


def spellings(h: int, m: int) -> list[str]:
    """``h`` hours and ``m`` minutes, written every way Redmine's time form takes them."""
    out = [f"{h}:{m:02d}", f"{h}:{m}", f"{h}h{m}", f"{h}h {m}m", f"{h} hours {m} min", f"{h}H{m}M"]
    out += [f"{h * 60 + m}m", f"{h * 60 + m} min"]
    if m == 0:
        out += [f"{h}h", f"{h} hours", f"{h}", f"{h}.0", f"{h},0"]
    if m == 30:
        out += [f"{h}.5", f"{h},5", f"{h}.5h", f"{h},5h"]
    return out


@settings(max_examples=200, deadline=None)
@given(h=st.integers(0, 200), m=st.sampled_from([0, 5, 15, 30, 45, 59]), pad=st.sampled_from(["", " ", "\t"]))
def test_every_spelling_of_a_time_is_its_hours(h: int, m: int, pad: str) -> None:
    for text in spellings(h, m):
        assert math.isclose(hours(pad + text + pad), h + m / 60, rel_tol=1e-12), text


@settings(max_examples=200, deadline=None)
@given(value=st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_numbers_and_their_text_are_themselves(value: float) -> None:
    assert hours(value) == value
    assert hours(repr(value)) == value
    assert hours(repr(value).replace(".", ",")) == value


@pytest.mark.parametrize("bad", ["abc", "", "1h30x", "1.", "-1", "-1:30", "1:30h", "h", "0x1A", "1\n2", True])
def test_what_is_no_hours_is_refused_in_one_line_with_an_example(bad: object) -> None:
    with pytest.raises(ValidationError) as info:
        hours(bad)
    message = str(info.value)
    assert "\n" not in message and message.startswith("hours: ") and EXAMPLES in message


@pytest.fixture(scope="module")
def redmine_parser() -> Iterator[subprocess.Popen[str]]:
    """Redmine's own hours parser in a ruby child process, reading one JSON string a line."""
    if not REDMINE_PARSER.exists():
        pytest.skip("Redmine is not installed here (make redmine-up installs it)")
    child = subprocess.Popen(
        ["ruby", "-rjson", "-e", RUBY_LOOP, str(REDMINE_PARSER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield child
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()


def redmine_reads(child: subprocess.Popen[str], text: str) -> float | None:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(json.dumps(text) + "\n")
    child.stdin.flush()
    value = json.loads(child.stdout.readline())
    return None if value is None else float(value)


HOURLIKE = st.text(
    alphabet=st.sampled_from(list("0123456789") * 3 + list(" hHmMiInoursOURS:.,_e+-\t")), max_size=12
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(HOURLIKE, st.builds(lambda h, m: f"{h}h{m}", st.integers(0, 99), st.integers(0, 999))))
def test_this_server_reads_hours_as_redmine_does(redmine_parser: subprocess.Popen[str], text: str) -> None:
    theirs = redmine_reads(redmine_parser, text)
    try:
        ours: float | None = hours(text)
    except ValidationError:
        ours = None
    if theirs is not None and theirs < 0:
        assert ours is None  # refused on purpose: Redmine would reject the record anyway
    else:
        assert ours == theirs, text


def test_create_time_entry_sends_the_hours_a_colon_means() -> None:
    recorder = Recorder()
    server = make_server(recorder)
    for given_, sent in (("1:30", 1.5), ("1h 15m", 1.25), ("90m", 1.5), ("2,5", 2.5), (2, 2.0)):
        recorder.requests.clear()
        anyio.run(server.call, "create_time_entry", {"issue_id": 5, "hours": given_})
        posted = [r for r in recorder.requests if r.method == "POST"]
        assert json.loads(posted[0].content)["time_entry"]["hours"] == sent


def test_a_bad_hours_value_sends_nothing() -> None:
    recorder = Recorder()
    server = make_server(recorder)
    result = anyio.run(server.call, "create_time_entry", {"issue_id": 5, "hours": "an hour"})
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert result.is_error and "hours: 'an hour' is not a number of hours" in text and "1:30" in text
    assert not [r for r in recorder.requests if r.method in ("POST", "PUT")]


def test_estimated_hours_take_the_same_forms() -> None:
    recorder = Recorder()
    server = make_server(recorder)
    result = anyio.run(
        server.call, "create_issue", {"project": "p", "subject": "s", "estimated_hours": "2h30"}
    )
    assert not result.is_error, result
    posted = [r for r in recorder.requests if r.method == "POST" and r.url.path.endswith("/issues.json")]
    assert json.loads(posted[0].content)["issue"]["estimated_hours"] == 2.5
