"""The gateway's stdio fast lane (mcpkit.gateway.stdio_front), against a real gateway child.

Each scenario is sent as raw JSON-RPC lines to a gateway with the lane on and to one with it
off (``"fast_lane": false``): the answers must be the same, the lane must really have carried
the plain calls (the fixture server reports the ids it was called with: the lane's start at
9e15), and everything else must still take the SDK's path.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from mcpkit.client._raw import RAW_ID_BASE
from tests.gateway.support import INITIALIZE, flaky, gateway_argv, gateway_env, write_config

pytestmark = pytest.mark.anyio


class Wire:
    """A gateway child spoken to in raw JSON-RPC lines; answers are kept by id."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self.answers: dict[Any, dict[str, Any]] = {}
        self.lines: dict[Any, bytes] = {}
        """Each answer as the bytes of its line."""
        self.notifications: list[dict[str, Any]] = []
        self._arrived = anyio.Event()
        self.closed = anyio.Event()
        self.reading = anyio.Event()
        """Cleared, the test stops reading the gateway's stdout (a client that reads nothing)."""
        self.reading.set()

    async def send(self, *messages: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        data = "".join(json.dumps(m) + "\n" for m in messages)
        await self.process.stdin.send(data.encode())

    async def read(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        try:
            while True:
                await self.reading.wait()
                try:
                    chunk = await self.process.stdout.receive()
                except anyio.EndOfStream:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    message = json.loads(line)
                    if "id" in message and "method" not in message:
                        key = (isinstance(message["id"], str), message["id"])
                        assert key not in self.answers, f"answered twice: {message}"
                        self.answers[key] = message
                        self.lines[key] = line
                    elif "method" in message and "id" not in message:
                        self.notifications.append(message)
                    self._arrived.set()
                    self._arrived = anyio.Event()
        finally:
            self.closed.set()
            self._arrived.set()

    async def answer(self, request_id: Any, timeout: float = 30) -> dict[str, Any]:
        key = (isinstance(request_id, str), request_id)
        with anyio.fail_after(timeout):
            while key not in self.answers:
                if self.closed.is_set():
                    raise AssertionError(f"the gateway closed stdout before answering {request_id!r}")
                await self._arrived.wait()
        return self.answers[key]

    async def call(self, request_id: Any, name: str, arguments: Any = None, **params: Any) -> dict[str, Any]:
        await self.send(call(request_id, name, arguments, **params))
        return await self.answer(request_id)

    async def handshake(self, client: str = "claude-ai") -> None:
        init = {**INITIALIZE, "id": "init"}
        init["params"] = {**init["params"], "clientInfo": {"name": client, "version": "1"}}
        await self.send(init)
        await self.answer("init")
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
        await self.answer("list")

    async def stats(self) -> dict[str, Any]:
        """The fixture server's counters (its stats tool): calls active, cancelled, ..."""
        got = await self.call(f"stats-{len(self.answers)}", "flaky_stats", {})
        stats: dict[str, Any] = json.loads(got["result"]["content"][0]["text"])
        return stats

    async def until_running(self, count: int = 1) -> None:
        """Until the server runs ``count`` sleep calls (an event to wait on, not a time window:
        on a loaded machine a call may take seconds to get there)."""
        with anyio.fail_after(60):
            while (await self.stats())["active"] < count:
                await anyio.sleep(0.05)

    async def seen_ids(self) -> list[int]:
        """The JSON-RPC ids the fixture server was last called with (its stats tool)."""
        got = await self.call(f"stats-{len(self.answers)}", "flaky_stats", {})
        ids: list[int] = json.loads(got["result"]["content"][0]["text"])["ids"]
        return ids[:-1]  # without the stats call itself


def call(request_id: Any, name: str, arguments: Any = None, **params: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, **params}
    if arguments is not None:
        body["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": body}


@asynccontextmanager
async def wire(config: Path) -> AsyncIterator[Wire]:
    async with await anyio.open_process(
        gateway_argv(config), env={**__import__("os").environ, **gateway_env()}, stderr=None
    ) as process:
        w = Wire(process)
        async with anyio.create_task_group() as tg:
            tg.start_soon(w.read)
            try:
                yield w
            finally:
                assert process.stdin is not None
                await process.stdin.aclose()
                with anyio.move_on_after(20):
                    await process.wait()
                tg.cancel_scope.cancel()


def configs(tmp_path: Path, **gateway: Any) -> dict[bool, Path]:
    """The same gateway config with the fast lane on and off."""
    return {
        lane: write_config(tmp_path / f"lane-{lane}.json", {"flaky": flaky()}, {**gateway, "fast_lane": lane})
        for lane in (True, False)
    }


READMORE = re.compile(r'"id": ?"[0-9a-f]{16,}"|id [0-9a-f]{16,}|[0-9a-f]{32}')


def comparable(message: dict[str, Any]) -> Any:
    """An answer with the parts that differ on every run (readmore ids) blanked."""
    return json.loads(READMORE.sub("<id>", json.dumps(message, sort_keys=True)))


SCENARIO: list[tuple[str, Any]] = [
    ("flaky_echo", {"text": 'héllo "quoted" \n and <xml> & ☃'}),
    ("flaky_echo", {"text": 12}),  # a number where a string is declared: sent as its text
    ("flaky_choice", {"value": "5"}),  # widened to a string for Claude Desktop, restored to 5
    ("flaky_choice", {"value": "true"}),
    ("flaky_echo", {}),  # missing required argument: the server's own answer
    ("flaky_tags", {"tags": {"a": "b"}}),
    ("flaky_listing", {}),  # an array output schema the client was never shown: kept as text
    ("flaky_badresult", {}),  # an invalid result: one line naming the server
    ("flaky_long", {"lines": 3000}),  # over the output cap: a pointer to readmore
    ("flaky_nope", {}),  # unknown: the SDK's path answers
    ("flaky_tree", {"root": {}}),  # quarantined for this client: the SDK's path answers
    ("flaky_echo", None),  # no arguments at all
    ("flaky_odd", {}),  # a lone surrogate (U+FFFD in its place) and floats the SDK spells its way
    ("flaky_fail", {"code": -32000}),  # a server's own error codes, not the SDK's "closed"
    ("flaky_fail", {"code": -32001}),  # ... or "timed out"
    ("flaky_fail", {"code": -32602}),
]
BYTE_EQUAL = range(12, 16)
"""The scenario's calls whose answers must be equal to the byte (the others may carry ids)."""


async def test_plain_calls_take_the_lane_and_get_the_sdk_paths_answers(tmp_path: Path) -> None:
    answers: dict[bool, list[Any]] = {}
    lines: dict[bool, list[bytes]] = {}
    for lane, config in configs(tmp_path, output_cap=20000).items():
        async with wire(config) as w:
            await w.handshake()
            got = []
            for i, (name, arguments) in enumerate(SCENARIO):
                got.append(comparable(await w.call(i + 1, name, arguments)))
            answers[lane] = got
            lines[lane] = [w.lines[(False, i + 1)] for i in BYTE_EQUAL]
            ids = await w.seen_ids()
            relayed = [i for i in ids if i >= RAW_ID_BASE]
            if lane:  # every call that reached the server came by the lane
                assert ids and relayed == ids, ids
            else:
                assert ids and not relayed, ids
    for (name, arguments), fast, sdk in zip(SCENARIO, answers[True], answers[False], strict=True):
        assert fast == sdk, f"{name} {arguments}"
    texts = [a["result"]["content"][0]["text"] for a in answers[True]]
    assert texts[0] == 'héllo "quoted" \n and <xml> & ☃' and texts[1] == "12"
    assert texts[2] == "int:5" and texts[3] == "bool:True"
    assert answers[True][7]["result"]["isError"] and "flaky returned an invalid result" in texts[7]
    assert "readmore" in json.dumps(answers[True][8])
    assert lines[True] == lines[False]
    odd = answers[True][12]["result"]
    assert odd["content"][0]["text"] == "a\ufffdb" and b'"small":1e-7' in lines[True][0]
    for answer in answers[True][13:16]:  # the server's error, not a crash or a timeout
        assert answer["result"]["isError"] and "the tool failed" in answer["result"]["content"][0]["text"]


async def test_a_servers_own_tool_name_is_answered_with_the_gateways_name(tmp_path: Path) -> None:
    """Servers' texts name their own tools ("call get_x with offset=..."): a model that follows
    one is told the name the tool has here."""
    async with wire(configs(tmp_path)[True]) as w:
        await w.handshake()
        got = (await w.call(1, "echo", {"text": "a"}))["result"]
        unknown = (await w.call(2, "no_such_tool", {}))["result"]
    assert got["isError"] and got["content"][0]["text"] == (
        "Unknown tool 'echo'; on this gateway it is called 'flaky_echo'."
    )
    assert unknown["isError"] and "tools/list has the tools" in unknown["content"][0]["text"]


async def test_string_and_number_ids_are_different_calls(tmp_path: Path) -> None:
    config = configs(tmp_path, max_concurrent=200)[True]
    async with wire(config) as w:
        await w.handshake()
        await w.send(*(call(i, "flaky_echo", {"text": f"n{i}"}) for i in range(60)))
        await w.send(*(call(str(i), "flaky_echo", {"text": f"s{i}"}) for i in range(60)))
        for i in range(60):
            assert (await w.answer(i))["result"]["content"][0]["text"] == f"n{i}"
            assert (await w.answer(str(i)))["result"]["content"][0]["text"] == f"s{i}"
        assert all(i >= RAW_ID_BASE for i in await w.seen_ids())


async def test_calls_over_the_servers_limit_wait_on_the_sdks_path(tmp_path: Path) -> None:
    """The lane never waits: a call finding every slot taken goes the SDK's way, which queues
    for a slot; the limit holds across both ways."""
    config = configs(tmp_path, max_concurrent=2)[True]
    async with wire(config) as w:
        await w.handshake()
        await w.send(*(call(i, "flaky_sleep", {"seconds": 0.2}) for i in range(6)))
        for i in range(6):
            assert (await w.answer(i))["result"]["content"][0]["text"] == "slept 0.2"
        stats = json.loads((await w.call("st", "flaky_stats", {}))["result"]["content"][0]["text"])
    assert stats["max_active"] == 2  # the limit was reached, and held


async def test_a_cancelled_call_is_stopped_on_the_server_and_not_answered(tmp_path: Path) -> None:
    config = configs(tmp_path)[True]
    async with wire(config) as w:
        await w.handshake()
        await w.send(call("slow", "flaky_sleep", {"seconds": 600}))
        await w.until_running()
        await w.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": "slow", "reason": "x"},
            }
        )
        with anyio.fail_after(60):
            while (await w.stats())["cancelled"] < 1:
                await anyio.sleep(0.05)
        # Answers go out in the order the server gave them: one more call answered after the
        # cancellation took effect means no answer to the cancelled call is on its way.
        await w.call("after", "flaky_echo", {"text": "x"})
        assert (False, "slow") not in w.answers and (True, "slow") not in w.answers


async def test_a_server_that_stops_reading_never_stalls_the_gateway(tmp_path: Path) -> None:
    """A frozen server's stdin fills up: calls to it wait (on the SDK's path, within their
    deadline), while the gateway keeps reading its client (a ping is answered meanwhile) and
    each call gets exactly one answer, even one that timed out while its request was still
    queued; having read nothing for a call's whole timeout, the server is restarted as hung."""
    config = configs(tmp_path, call_timeout=1.5)[True]
    big = "x" * 300_000  # more than a pipe holds
    async with wire(config) as w:
        await w.handshake()
        await w.send(call("frozen", "flaky_freeze", {"seconds": 2.5}))
        await anyio.sleep(0.3)  # the server is frozen now
        await w.send(*(call(f"big{i}", "flaky_echo", {"text": big}) for i in range(3)))
        await w.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
        assert (await w.answer("ping"))["result"] == {}
        assert (True, "frozen") not in w.answers  # answered while the server was still frozen
        results = [await w.answer(key) for key in ("frozen", "big0", "big1", "big2")]
        # It read nothing for a whole call timeout: it may have been replaced as hung; calls
        # are answered again once it is back (or at once, if it thawed first).
        with anyio.fail_after(60):
            while True:
                after = await w.call(f"after{len(w.answers)}", "flaky_echo", {"text": "fine"})
                if after["result"]["content"][0]["text"] == "fine":
                    break
                assert "restarting" in after["result"]["content"][0]["text"], after
                await anyio.sleep(0.1)
    for result in results:  # the answer, the timeout, or the restart: one each (Wire refuses a second)
        text = result["result"]["content"][0]["text"]
        assert text in ("thawed", big) or "did not answer" in text or "restarting" in text, text[:200]


async def test_a_client_that_stops_reading_can_still_cancel_a_lane_call(tmp_path: Path) -> None:
    """Unread answers pile up on stdout: new calls go the SDK's way meanwhile, but the
    cancellation of a call the lane already carries must still reach the server."""
    config = configs(tmp_path)[True]
    async with wire(config) as w:
        await w.handshake()
        await w.send(call("slow", "flaky_sleep", {"seconds": 600}))
        await w.until_running()
        w.reading = anyio.Event()  # the client stops reading
        await w.send(*(call(f"long{i}", "flaky_long", {"lines": 20_000}) for i in range(8)))
        await anyio.sleep(1)  # about 2 MB of answers now wait, unread
        await w.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": "slow", "reason": "x"},
            }
        )
        await anyio.sleep(0.5)
        w.reading.set()
        for i in range(8):
            assert "line 19999" in (await w.answer(f"long{i}"))["result"]["content"][0]["text"]
        stats = json.loads((await w.call("st", "flaky_stats", {}))["result"]["content"][0]["text"])
        assert stats["cancelled"] == 1
        assert (True, "slow") not in w.answers


async def test_timeouts_and_crashes_read_as_on_the_sdk_path(tmp_path: Path) -> None:
    answers: dict[bool, list[Any]] = {}
    for lane, config in configs(tmp_path, call_timeout=0.5).items():
        async with wire(config) as w:
            await w.handshake()
            timed_out = await w.call("t", "flaky_sleep", {"seconds": 5})
            crashed = await w.call("c", "flaky_crash", {})
            answers[lane] = [timed_out, crashed]
    assert answers[True] == answers[False]
    timed_out, crashed = (a["result"]["content"][0]["text"] for a in answers[True])
    assert timed_out == (
        "Server flaky did not answer sleep in time: tools/call timed out after 0.5 s (cancelled on the server)"
    )
    assert crashed.startswith("Server flaky failed on crash: ") and "code 3" in crashed, crashed


@pytest.mark.parametrize("lane", [True, False])
async def test_calls_asking_for_progress_get_it(tmp_path: Path, lane: bool) -> None:
    """Such calls take the SDK's path both in front and behind, where progress is relayed in
    order: every notification before the answer (the last one says done)."""
    config = configs(tmp_path)[lane]
    async with wire(config) as w:
        await w.handshake()
        got = await w.call("p", "flaky_sleep", {"seconds": 0.3}, _meta={"progressToken": "tok"})
        assert got["result"]["content"][0]["text"] == "slept 0.3"
        progress = [n["params"] for n in w.notifications if n["method"] == "notifications/progress"]
        assert progress and all(p["progressToken"] == "tok" for p in progress)
        assert progress[-1]["progress"] == progress[-1]["total"]  # none overtaken by the answer


async def test_a_call_before_the_handshake_is_answered_as_the_sdk_answers_it(tmp_path: Path) -> None:
    answers = {}
    for lane, config in configs(tmp_path).items():
        async with wire(config) as w:
            await w.send(call(1, "flaky_echo", {"text": "early"}))
            answers[lane] = await w.answer(1)
    assert answers[True] == answers[False]


@pytest.mark.parametrize("lane", [True, False])
async def test_calls_read_before_stdin_closes_are_all_answered(tmp_path: Path, lane: bool) -> None:
    """``gateway < requests.jsonl``: everything read is answered before the gateway stops."""
    config = configs(tmp_path)[lane]
    init = {**INITIALIZE, "id": "init"}
    lines = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines.append({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
    lines += [call(i, "flaky_sleep", {"seconds": 0.3}) for i in range(10)]
    data = "".join(json.dumps(m) + "\n" for m in lines).encode()
    done = await anyio.run_process(
        [*gateway_argv(config)], input=data, env={**__import__("os").environ, **gateway_env()}, check=False
    )
    answered = {json.loads(line).get("id") for line in done.stdout.splitlines() if line.strip()}
    assert answered >= {"init", "list", *range(10)}, answered
    assert done.returncode == 0, done.stderr[-2000:]


def test_lane_is_on_by_default_and_can_be_turned_off(tmp_path: Path) -> None:
    from mcpkit.gateway.config import GatewayConfigError, load_gateway_config

    on = write_config(tmp_path / "on.json", {"flaky": flaky()})
    off = write_config(tmp_path / "off.json", {"flaky": flaky()}, {"fast_lane": False})
    bad = write_config(tmp_path / "bad.json", {"flaky": flaky()}, {"fast_lane": "no"})
    assert load_gateway_config(on).fast_lane is True
    assert load_gateway_config(off).fast_lane is False
    with pytest.raises(GatewayConfigError, match="fast_lane"):
        load_gateway_config(bad)


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("stdio process groups")
