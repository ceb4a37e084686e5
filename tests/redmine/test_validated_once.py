"""Arguments are validated once, by the server: a handler gets them coerced, whatever form they came in.

Redmine's handlers used to check every id and flag a second time (``args.num``, ``as_bool``...),
with messages of their own. Now they read the values the server coerced and validated. So the
forms models send (``"12"`` for 12, ``"yes"`` for true, ``"1,2"`` for a list, ``null`` for an
optional argument left out) must lead to exactly the same Redmine requests and the same answer
as the canonical JSON values: the property below checks that for every tool.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.redmine.support import Recorder, arguments_for, make_server

RECORDER = Recorder()
SERVER = make_server(RECORDER)
TOOL_NAMES = sorted(t.name for t in SERVER.tools)
_WORDS = {True: ["true", "True", "yes", "on", "1"], False: ["false", "FALSE", "no", "off", "0"]}


def sloppy(schema: Mapping[str, Any], value: Any, data: st.DataObject) -> Any:
    """``value`` as a model might send it for ``schema``: text for numbers and flags, lists as text."""
    kind = schema.get("type")
    if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return data.draw(st.sampled_from([str(value), f" {value} ", value]))
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value) if math.isfinite(value) else value
    if kind == "boolean" and isinstance(value, bool):
        return data.draw(st.sampled_from(_WORDS[value]))
    if kind == "array" and isinstance(value, list):
        items = schema.get("items") if isinstance(schema.get("items"), Mapping) else {}
        forms = [json.dumps(value)]
        if items.get("type") == "integer" and value and all(type(v) is int for v in value):
            forms.append(",".join(str(v) for v in value))
        if len(value) == 1 and items.get("type") in ("integer", "boolean"):
            forms.append(value[0])
        return data.draw(st.sampled_from(forms))
    if kind == "object" and isinstance(value, dict):
        return json.dumps(value)
    return value


def call(name: str, args: dict[str, Any]) -> tuple[bool, str, list[tuple[str, str, bytes]]]:
    RECORDER.requests.clear()
    RECORDER.written.clear()
    result = anyio.run(SERVER.call, name, args)
    text = "".join(getattr(c, "text", "") for c in result.content)
    sent = [(r.method, str(r.url), r.content) for r in RECORDER.requests]
    return bool(result.is_error), text, sent


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_a_sloppy_form_reaches_redmine_exactly_as_the_canonical_value(name: str) -> None:
    spec = next(t for t in SERVER.tools if t.name == name)
    properties = spec.input_schema.get("properties", {})
    required = set(spec.input_schema.get("required", []))

    @settings(
        max_examples=8,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(args=arguments_for(spec.input_schema), data=st.data())
    def run(args: dict[str, Any], data: st.DataObject) -> None:
        loose = {key: sloppy(properties[key], value, data) for key, value in args.items()}
        for key in sorted(set(properties) - required - set(args)):
            if data.draw(st.booleans()):
                loose[key] = None  # "left out", as models often say it
        call(name, args)  # warms what the server remembers (the key owner, known ids), so both calls see it
        strict_error, strict_text, strict_sent = call(name, args)
        loose_error, loose_text, loose_sent = call(name, loose)
        assert loose_error == strict_error, (args, loose, strict_text, loose_text)
        assert loose_sent == strict_sent
        if not strict_error:
            assert loose_text == strict_text

    run()
