"""What a client sees through a real gateway child: names, capabilities, adapted definitions,
arguments put back, quarantine, validated results, meta-tools, the output cap, status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit.client import JsonRpcError, Session
from mcpkit.compat import lint
from tests.gateway.support import (
    everything_server,
    flaky,
    gateway_session,
    run_cli,
    time_server,
    write_config,
)

pytestmark = [pytest.mark.slow]


def text(raw: dict[str, Any]) -> str:
    return "\n".join(str(c.get("text")) for c in raw.get("content", []))


async def call(session: Session, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return await session.request("tools/call", {"name": name, "arguments": args or {}})


def test_names_json_is_stable_when_a_server_is_added(tmp_path: Path) -> None:
    one = write_config(tmp_path / "one.json", {"flaky": flaky()}, {"names": {"flaky/echo": "say"}})
    two = write_config(
        tmp_path / "two.json", {"flaky": flaky(), "flaky2": flaky()}, {"names": {"flaky/echo": "say"}}
    )
    first = run_cli("gateway", "names", "--json", "--config", str(one))
    assert first.returncode == 0, first.stderr
    before = json.loads(first.stdout)
    assert before["say"] == {"server": "flaky", "tool": "echo"}
    assert before["flaky_sleep"] == {"server": "flaky", "tool": "sleep"}
    after = json.loads(run_cli("gateway", "names", "--json", "--config", str(two)).stdout)
    assert {k: v for k, v in after.items() if v["server"] == "flaky"} == before
    assert after["flaky2_echo"] == {"server": "flaky2", "tool": "echo"}


def test_status_reports_health_and_quarantine(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "gw.json",
        {
            "flaky": flaky(),
            "gone": {"command": "/nonexistent/server"},
            "mute": {"command": "sleep", "args": ["300"]},  # never answers initialize
            "nolist": flaky("--mute-list"),  # answers initialize, never tools/list
        },
        {"connect_timeout": 2},
    )
    done = run_cli("gateway", "status", "--json", "--config", str(config))
    assert done.returncode == 1  # a server is down
    data = json.loads(done.stdout)
    servers = {s["server"]: s for s in data["servers"]}
    assert servers["flaky"]["state"] == "ready" and servers["flaky"]["tools"] == 14
    assert servers["gone"]["state"] in ("failed", "unhealthy") and servers["gone"]["error"]
    # Ready once every server answered or failed: the mute one fails at its connect timeout.
    assert servers["mute"]["state"] == "failed"
    assert "no answer to initialize within 2 s" in servers["mute"]["error"]
    assert servers["nolist"]["state"] == "failed"
    assert "no answer to tools/list within 2 s" in servers["nolist"]["error"]
    strict = data["profiles"]["openai-strict"]["quarantined"]
    assert "flaky_tags" in strict and "additionalProperties" in strict["flaky_tags"]
    assert data["profiles"]["gemini"]["quarantined"].keys() == {"flaky_tree"}


def test_a_bad_config_is_a_usage_error(tmp_path: Path) -> None:
    bad = write_config(tmp_path / "gw.json", {"my-a": flaky(), "my_a": flaky()})
    done = run_cli("gateway", "names", "--config", str(bad))
    assert done.returncode == 2 and "share the tool prefix" in done.stderr


@pytest.mark.anyio
@pytest.mark.thirdparty
async def test_capabilities_are_only_what_is_served(tmp_path: Path) -> None:
    async with gateway_session(write_config(tmp_path / "a.json", {"flaky": flaky()})) as session:
        assert session.capabilities == {"tools": {"listChanged": True}}
    # mcp-server-time declares prompts and resources but has none: still not declared.
    async with gateway_session(write_config(tmp_path / "b.json", {"time": time_server()})) as session:
        assert session.capabilities == {"tools": {"listChanged": True}}


@pytest.mark.anyio
@pytest.mark.thirdparty
async def test_resources_and_prompts_are_forwarded_namespaced(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"everything": everything_server()})
    async with gateway_session(config) as session:
        assert {"tools", "prompts", "resources"} <= set(session.capabilities)
        resources = (await session.request("resources/list", {}))["resources"]
        assert resources and all(r["name"].startswith("everything_") for r in resources)
        read = await session.request("resources/read", {"uri": resources[0]["uri"]})
        assert read["contents"][0]["uri"] == resources[0]["uri"]
        templates = (await session.request("resources/templates/list", {}))["resourceTemplates"]
        assert templates and all(t["name"].startswith("everything_") for t in templates)
        made = templates[0]["uriTemplate"].split("{")[0] + "7"  # a URI no list names
        assert (await session.request("resources/read", {"uri": made}))["contents"]
        prompts = (await session.request("prompts/list", {}))["prompts"]
        simple = next(p for p in prompts if p["name"].startswith("everything_simple"))
        got = await session.request("prompts/get", {"name": simple["name"], "arguments": {}})
        assert got["messages"]


@pytest.mark.anyio
async def test_claude_desktop_sees_adapted_tools_and_arguments_go_back(tmp_path: Path) -> None:
    async with gateway_session(
        write_config(tmp_path / "gw.json", {"flaky": flaky()}), client_name="claude-ai"
    ) as s:
        tools = await s.list_tools()
        profiles = ["mcp-spec", "claude-desktop-2025", "claude"]
        assert [f for f in lint(tools, profiles, server_name="gateway") if f.severity == "error"] == []
        choice = next(t for t in tools if t["name"] == "flaky_choice")
        assert choice["inputSchema"]["properties"]["value"]["type"] == "string"
        # The model sends text for the widened parameter; the downstream gets a number again.
        assert text(await call(s, "flaky_choice", {"value": "5"})) == "int:5"
        assert text(await call(s, "flaky_choice", {"value": "true"})) == "bool:True"


@pytest.mark.anyio
async def test_quarantined_tools_are_hidden_and_refused_with_the_reason(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"flaky": flaky()})
    async with gateway_session(config, "--profile", "openai-strict") as session:
        names = {t["name"] for t in await session.list_tools()}
        assert "flaky_tags" not in names and "flaky_echo" in names
        refused = await call(session, "flaky_tags", {"tags": {"a": "b"}})
        assert refused["isError"] is True and "quarantined" in text(refused)
        # openai-strict's nulls for "left out" are dropped before the downstream sees them.
        assert text(await call(session, "flaky_tree", {"root": None})) == "{}"


@pytest.mark.anyio
async def test_invalid_results_become_errors_naming_the_downstream(tmp_path: Path) -> None:
    async with gateway_session(write_config(tmp_path / "gw.json", {"flaky": flaky()})) as session:
        bad = await call(session, "flaky_badresult")
        assert bad["isError"] is True
        assert text(bad).startswith("Server flaky returned an invalid result for badresult:")
        # listing's array outputSchema was dropped for the client; its array structuredContent too.
        listing = await call(session, "flaky_listing")
        assert "structuredContent" not in listing and text(listing) == "[1, 2, 3]"


@pytest.mark.anyio
async def test_meta_tools_reach_every_tool_over_the_limit(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"bulk": flaky("--many", "45")})
    async with gateway_session(config, client_name="cursor-vscode") as session:
        names = [t["name"] for t in await session.list_tools()]
        assert names == ["search_tools", "describe_tool", "call_tool"]
        found = text(await call(session, "search_tools", {"query": "trivial", "limit": 5}))
        assert found.startswith("45 tools match") and "offset=5" in found
        described = json.loads(text(await call(session, "describe_tool", {"name": "bulk_echo"})))
        assert described["inputSchema"]["required"] == ["text"]
        echoed = await call(session, "call_tool", {"name": "bulk_echo", "arguments": '{"text": "hi"}'})
        assert text(echoed) == "hi"
        wrong = await call(session, "call_tool", {"name": "bulk_echo", "arguments": "{not json"})
        assert wrong["isError"] is True and "JSON" in text(wrong)


@pytest.mark.anyio
async def test_output_cap_cuts_with_a_pointer_to_the_rest(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"flaky": flaky()}, {"output_cap": 2000})
    async with gateway_session(config) as session:
        assert "readmore" in {t["name"] for t in await session.list_tools()}
        whole = "\n".join(f"line {i:04d}" for i in range(1000))
        got, raw = "", await call(session, "flaky_long", {"lines": 1000})
        for _ in range(20):
            part = text(raw)
            body, _, tail = part.rpartition("\n[")
            got += body if tail.startswith(("cut:", "end:")) else part
            if not tail.startswith("cut:"):
                break
            pointer = tail.split("readmore with id=")[1]
            key, offset = pointer.rstrip("]").split(" and offset=")
            raw = await call(session, "readmore", {"id": key, "offset": int(offset)})
        assert got == whole


@pytest.mark.anyio
@pytest.mark.thirdparty
async def test_a_servers_sampling_request_reaches_the_client(tmp_path: Path) -> None:
    from mcpkit.client import ClientHandlers

    asked: list[dict[str, Any]] = []

    async def model(params: dict[str, Any]) -> dict[str, Any]:
        """Stands in for the client's LLM (a hosted model cannot run here)."""
        asked.append(params)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "the client's model says hi"},
            "model": "stand-in",
        }

    config = write_config(tmp_path / "gw.json", {"everything": everything_server()})
    args = {"prompt": "say hi", "maxTokens": 20}
    async with gateway_session(config, handlers=ClientHandlers(sampling=model)) as session:
        answered = await call(session, "everything_trigger_sampling_request", args)
    assert answered.get("isError") is not True, answered
    assert "the client's model says hi" in text(answered)
    assert asked and asked[0]["messages"][0]["content"]["text"].endswith("say hi")
    async with gateway_session(config) as session:  # a client without a model: refused, saying why
        refused = await call(session, "everything_trigger_sampling_request", args)
    assert "sampling" in text(refused), text(refused)


@pytest.mark.anyio
@pytest.mark.thirdparty
async def test_a_servers_roots_request_gets_the_clients_roots(tmp_path: Path) -> None:
    """server-everything's get-roots-list, through the gateway, lists the roots of the client in
    front (not the gateway's none); a changed root list reaches the server too."""
    from mcpkit.client import ClientHandlers

    roots: list[dict[str, str]] = [{"uri": (tmp_path / "project").as_uri(), "name": "project"}]

    async def client_roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": list(roots)}

    config = write_config(tmp_path / "gw.json", {"everything": everything_server()})
    handlers = ClientHandlers(roots_from=client_roots)
    async with gateway_session(config, handlers=handlers) as session:
        listed = text(await call(session, "everything_get_roots_list"))
        assert (tmp_path / "project").as_uri() in listed, listed
        roots.append({"uri": (tmp_path / "second").as_uri(), "name": "second"})
        await session.notify("notifications/roots/list_changed")
        for _ in range(100):  # the server asks again when told; then its tool shows both
            listed = text(await call(session, "everything_get_roots_list"))
            if (tmp_path / "second").as_uri() in listed:
                break
            await anyio.sleep(0.05)
        assert (tmp_path / "second").as_uri() in listed, listed
    async with gateway_session(config) as session:  # a client with no roots: the server sees none
        listed = text(await call(session, "everything_get_roots_list"))
    assert "project" not in listed


@pytest.mark.anyio
@pytest.mark.thirdparty
async def test_log_messages_are_forwarded_at_the_clients_level(tmp_path: Path) -> None:
    """server-everything, asked to, logs once at once and then every 5 s at a random level.
    Through the gateway the client sets the level (it reaches the server), and gets the
    messages with the server's name in ``logger``."""
    messages: list[dict[str, Any]] = []

    async def on_notification(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message" and "-level message" in str(params.get("data")):
            messages.append(params)

    config = write_config(tmp_path / "gw.json", {"everything": everything_server(), "flaky": flaky()})
    async with gateway_session(config, on_notification=on_notification) as session:
        assert "logging" in session.capabilities
        assert await session.request("logging/setLevel", {"level": "debug"}) == {}
        await call(session, "everything_toggle_simulated_logging")
        with anyio.fail_after(30):
            while not messages:
                await anyio.sleep(0.05)
        assert messages[0]["logger"].startswith("everything"), messages
        await session.request("logging/setLevel", {"level": "emergency"})
        messages.clear()
        await anyio.sleep(10.5)  # two more messages at random levels: 7 in 8 chances each to be cut
        assert all(m["level"] == "emergency" for m in messages), messages
        await call(session, "everything_toggle_simulated_logging")


@pytest.mark.anyio
@pytest.mark.thirdparty
async def test_completions_reach_the_server_that_owns_the_prompt_or_template(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", {"everything": everything_server(), "flaky": flaky()})
    async with gateway_session(config) as session:
        assert "completions" in session.capabilities
        prompts = {p["name"] for p in (await session.request("prompts/list", {}))["prompts"]}
        assert "everything_completable_prompt" in prompts
        got = await session.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "everything_completable_prompt"},
                "argument": {"name": "department", "value": "Eng"},
            },
        )
        assert "Engineering" in got["completion"]["values"]
        templates = (await session.request("resources/templates/list", {}))["resourceTemplates"]
        uri = templates[0]["uriTemplate"]
        got = await session.request(
            "completion/complete",
            {"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": "resourceId", "value": "1"}},
        )
        assert isinstance(got["completion"]["values"], list)
        with pytest.raises(JsonRpcError, match="Unknown prompt"):
            await session.request(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "no_such_prompt"},
                    "argument": {"name": "x", "value": ""},
                },
            )
    # a gateway whose servers offer no prompts or resources declares no completions
    async with gateway_session(write_config(tmp_path / "f.json", {"flaky": flaky()})) as session:
        assert "completions" not in session.capabilities


@pytest.mark.anyio
@pytest.mark.thirdparty
async def test_resource_subscriptions_reach_the_owner_and_updates_the_client(tmp_path: Path) -> None:
    """server-everything, asked to, sends ``resources/updated`` for each subscribed URI at once
    and every 5 s; through the gateway the subscription reaches it and the updates come back."""
    updated: list[str] = []

    async def on_notification(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/resources/updated":
            updated.append(str(params.get("uri")))

    config = write_config(tmp_path / "gw.json", {"everything": everything_server(), "flaky": flaky()})
    async with gateway_session(config, on_notification=on_notification) as session:
        assert session.capabilities["resources"].get("subscribe") is True
        uri = (await session.request("resources/list", {}))["resources"][0]["uri"]
        assert await session.request("resources/subscribe", {"uri": uri}) == {}
        await call(session, "everything_toggle_subscriber_updates")
        with anyio.fail_after(30):
            while uri not in updated:
                await anyio.sleep(0.05)
        assert await session.request("resources/unsubscribe", {"uri": uri}) == {}
        with pytest.raises(JsonRpcError, match="not found"):
            await session.request("resources/subscribe", {"uri": "demo://no/such/resource"})
        await call(session, "everything_toggle_subscriber_updates")
