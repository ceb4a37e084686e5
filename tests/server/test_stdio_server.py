"""The example server over real stdio: honest capabilities, valid results, clean shutdown."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.raw_stdio import RawStdioClient

ECHO = [sys.executable, "examples/echo_server.py"]


def test_tools_only_server_declares_exactly_tools() -> None:
    with RawStdioClient(ECHO) as client:
        reply = client.initialize()
        assert reply["result"]["capabilities"] == {"tools": {"listChanged": False}}
        assert reply["result"]["serverInfo"]["name"] == "mcpkit-echo"


def test_undeclared_capabilities_answer_method_not_found() -> None:
    with RawStdioClient(ECHO) as client:
        client.initialize()
        completion = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "n", "value": ""}}
        for method, params in (
            ("resources/list", {}),
            ("prompts/list", {}),
            ("resources/templates/list", {}),
            ("completion/complete", completion),
            ("logging/setLevel", {"level": "info"}),
        ):
            reply = client.request(method, params)
            assert reply["error"]["code"] == -32601, (method, reply)


def test_capabilities_grow_only_with_what_is_served() -> None:
    with RawStdioClient([*ECHO, "--resources", "--prompts"]) as client:
        caps = client.initialize()["result"]["capabilities"]
        assert set(caps) == {"tools", "resources", "prompts"}
        resources = client.request("resources/list", {})["result"]["resources"]
        assert [r["uri"] for r in resources] == ["mcpkit://readme"]
        # Declaring resources owes an answer to templates too: none served, an empty list.
        templates = client.request("resources/templates/list", {})["result"]
        assert templates["resourceTemplates"] == []
        read = client.request("resources/read", {"uri": "mcpkit://readme"})["result"]
        assert "echo" in read["contents"][0]["text"]
        prompt = client.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})["result"]
        assert "Ada" in prompt["messages"][0]["content"]["text"]
    with RawStdioClient([*ECHO, "--resources"]) as client:
        assert set(client.initialize()["result"]["capabilities"]) == {"tools", "resources"}


def test_tool_list_carries_annotations_and_schemas() -> None:
    with RawStdioClient(ECHO) as client:
        client.initialize()
        tools = {t["name"]: t for t in client.request("tools/list", {})["result"]["tools"]}
        assert set(tools) == {"echo", "add", "user-label", "divide", "crash"}
        assert tools["echo"]["annotations"]["readOnlyHint"] is True
        assert tools["crash"]["annotations"] == {
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": True,
        }
        assert tools["add"]["outputSchema"]["required"] == ["sum"]
        assert tools["echo"]["inputSchema"]["required"] == ["text"]


def _call(client: RawStdioClient, name: str, arguments: object) -> dict[str, object]:
    reply = client.request("tools/call", {"name": name, "arguments": arguments})
    assert "result" in reply, reply
    result = reply["result"]
    assert isinstance(result, dict)
    return result


def test_calls_and_errors_are_results() -> None:
    with RawStdioClient(ECHO) as client:
        client.initialize()
        ok = _call(client, "echo", {"text": "héllo <&>"})
        assert ok["content"] == [{"type": "text", "text": "héllo <&>"}]
        assert not ok.get("isError")

        added = _call(client, "add", {"a": "2", "b": " 40 "})
        assert added["structuredContent"] == {"sum": 42.0}
        assert added["content"][0]["text"] == "42"

        me = _call(client, "user-label", {"user": "me"})
        assert me["content"][0]["text"] == "you"
        bad_user = _call(client, "user-label", {"user": "someone"})
        assert bad_user["isError"] is True
        assert "'someone'" in bad_user["content"][0]["text"]
        assert "'me', 'current'" in bad_user["content"][0]["text"]

        zero = _call(client, "divide", {"a": 1, "b": 0})
        assert zero["isError"] is True
        assert zero["content"][0]["text"] == "Cannot divide by zero: give a divisor other than 0"

        crashed = _call(client, "crash", {})
        text = crashed["content"][0]["text"]
        assert crashed["isError"] is True
        assert "RuntimeError" in text and "secret" not in text and "Traceback" not in text
        assert "\n" not in text

        unknown = _call(client, "nope", {})
        assert unknown["isError"] is True and "Unknown tool 'nope'" in unknown["content"][0]["text"]

        missing = _call(client, "echo", {})
        assert missing["isError"] is True
        assert "text is required" in missing["content"][0]["text"]

        wrong_type = _call(client, "divide", {"a": "x", "b": 1})
        assert wrong_type["isError"] is True and "a:" in wrong_type["content"][0]["text"]

        extra = _call(client, "echo", {"text": "x", "txet": "y"})
        assert extra["isError"] is True and "'txet'" in extra["content"][0]["text"]
    assert "Traceback" in client.stderr  # the crash's traceback went to the log, not the client


@pytest.mark.parametrize(
    ("env", "hidden"),
    [
        ({"MCPKIT_READ_ONLY": "1"}, {"crash"}),
        ({"MCPKIT_TOOLS_EXCLUDE": "math"}, {"add", "divide"}),
        ({"MCPKIT_TOOLS_INCLUDE": "math"}, {"echo", "user-label", "crash"}),
        ({"MCPKIT_TOOLS_ALLOW": "echo, add"}, {"user-label", "divide", "crash"}),
        (
            {"MCPKIT_TOOLS_ALLOW": "echo,add,divide", "MCPKIT_TOOLS_EXCLUDE": "math"},
            {"add", "divide", "user-label", "crash"},
        ),
    ],
)
def test_filters_hide_and_refuse(env: dict[str, str], hidden: set[str]) -> None:
    with RawStdioClient(ECHO, env=env) as client:
        client.initialize()
        names = {t["name"] for t in client.request("tools/list", {})["result"]["tools"]}
        assert names == {"echo", "add", "user-label", "divide", "crash"} - hidden
        for name in hidden:
            refused = _call(client, name, {})
            assert refused["isError"] is True
            assert "not available" in refused["content"][0]["text"]


def test_unknown_category_warns() -> None:
    with RawStdioClient(ECHO, env={"MCPKIT_TOOLS_INCLUDE": "maths", "MCPKIT_LOG": "warning"}) as client:
        client.initialize()
        assert client.request("tools/list", {})["result"]["tools"] == []
        client.close()
    assert "unknown category 'maths'" in client.stderr


def test_allow_list_names_a_hidden_tool_and_warns_of_unknown_names() -> None:
    with RawStdioClient(ECHO, env={"MCPKIT_TOOLS_ALLOW": "echo,ehco", "MCPKIT_LOG": "warning"}) as client:
        client.initialize()
        names = [t["name"] for t in client.request("tools/list", {})["result"]["tools"]]
        assert names == ["echo"]
        refused = _call(client, "add", {"a": 1, "b": 2})
        assert refused["isError"] is True
        assert "MCPKIT_TOOLS_ALLOW" in refused["content"][0]["text"]
        client.close()
    assert "unknown tool 'ehco'" in client.stderr


def test_stdin_close_exits_cleanly() -> None:
    client = RawStdioClient(ECHO)
    client.initialize()
    assert client.close() == 0
    assert "Traceback" not in client.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_exits_cleanly(signum: int) -> None:
    with RawStdioClient(ECHO) as client:
        client.initialize()
        client.proc.send_signal(signum)
        deadline = time.monotonic() + 10
        while client.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.proc.returncode == 0
        assert "Traceback" not in client.stderr


def test_requests_piped_from_a_file_are_all_answered(tmp_path: Path) -> None:
    """End of stdin stops the server only after what was already read has been answered."""
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    lines += [
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": f"t{i}"}},
        }
        for i in range(1, 21)
    ]
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with requests.open("rb") as stdin:
        done = subprocess.run(ECHO, stdin=stdin, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.decode().splitlines())}
    assert sorted(answers) == list(range(21))
    assert all(answers[i]["result"]["content"][0]["text"] == f"t{i}" for i in range(1, 21))
