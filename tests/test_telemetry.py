"""mcpkit.telemetry in process: when tracing is on, and the /metrics exposition for any names."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from mcpkit.telemetry import CallCounts, configured

SAMPLE = re.compile(
    r'^(mcpkit_gateway_\w+)\{server="((?:[^"\\\n]|\\.)*)",tool="((?:[^"\\\n]|\\.)*)",'
    r'outcome="(ok|error)"\} (\S+)$'
)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), value)


def test_on_only_with_an_endpoint_and_the_sdk_not_disabled() -> None:
    assert not configured({})
    assert not configured({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "})
    assert configured({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert not configured({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_SDK_DISABLED": "TRUE"})


calls = st.lists(
    st.tuples(st.text(min_size=1, max_size=12), st.text(min_size=1, max_size=12), st.booleans()),
    max_size=20,
)


@given(calls)
def test_the_exposition_reads_back_as_the_calls_counted(made: list[tuple[str, str, bool]]) -> None:
    counts = CallCounts()
    for server, tool, error in made:
        counts.add(server, tool, error, 0.5)
    text = counts.exposition()
    assert text.endswith("\n")
    read: dict[tuple[str, str, str], int] = {}
    for line in text[:-1].split("\n"):  # Prometheus splits on \n only (splitlines would on \x1e)
        if line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) mcpkit_gateway_\w+ ", line), line
            continue
        match = SAMPLE.match(line)
        assert match, f"not a Prometheus sample line: {line!r}"
        name, server, tool, outcome, value = match.groups()
        key = (_unescape(server), _unescape(tool), outcome)
        if name == "mcpkit_gateway_calls_total":
            read[key] = int(value)
        else:
            assert float(value) == 0.5 * sum(1 for s, t, e in made if (s, t, "error" if e else "ok") == key)
    expected: dict[tuple[str, str, str], int] = {}
    for server, tool, error in made:
        key = (server, tool, "error" if error else "ok")
        expected[key] = expected.get(key, 0) + 1
    assert read == expected
