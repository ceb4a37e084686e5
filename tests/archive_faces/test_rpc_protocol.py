"""Property tests of the JSON-RPC envelope parser: it never raises and classifies correctly."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcpkit.archive.rpc.protocol import (
    Invalid,
    Request,
    dumps,
    error_message,
    parse_message,
    request_message,
    result_message,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
ids = st.none() | st.integers() | st.text(max_size=10)
params = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


@given(st.text() | st.binary())
def test_any_bytes_parse_without_raising(raw: str | bytes) -> None:
    incoming = parse_message(raw)
    assert incoming.items
    for item in incoming.items:
        assert isinstance(item, (Request, Invalid))


@given(json_values)
def test_any_json_is_classified(value: Any) -> None:
    incoming = parse_message(json.dumps(value))
    if isinstance(value, list) and value:
        assert incoming.batch and len(incoming.items) == len(value)
    else:
        assert not incoming.batch and len(incoming.items) == 1


@given(st.text(min_size=1, max_size=20), params, ids)
def test_request_roundtrip(method: str, p: dict[str, Any], req_id: int | str | None) -> None:
    item = parse_message(dumps(request_message(method, p, req_id))).items[0]
    assert item == Request(method=method, params=p, id=req_id, notification=False)


@given(st.text(min_size=1, max_size=20), params)
def test_notification_has_no_id(method: str, p: dict[str, Any]) -> None:
    item = parse_message(dumps({"jsonrpc": "2.0", "method": method, "params": p})).items[0]
    assert isinstance(item, Request) and item.notification


@given(ids, json_values, st.none() | st.booleans())
def test_result_envelope(req_id: Any, result: Any, more: bool | None) -> None:
    msg = json.loads(dumps(result_message(req_id, result, more=more)))
    assert msg["jsonrpc"] == "2.0" and msg["id"] == req_id and msg["result"] == result
    assert ("more" in msg) == (more is not None)


@given(ids, st.integers(), st.text())
def test_error_envelope(req_id: Any, code: int, message: str) -> None:
    msg = json.loads(dumps(error_message(req_id, code, message)))
    assert msg == {"jsonrpc": "2.0", "id": req_id, "error": {"code": code, "message": message}}
