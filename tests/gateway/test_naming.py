"""Public names: valid under every profile, stable, collision-free, overridable (property tests)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.compat import PROFILES, lint
from mcpkit.gateway import GatewayConfigError, NameMap
from mcpkit.gateway.naming import name_budget, public_name, server_prefix

tool_names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=90
)
server_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_.\-]{0,20}", fullmatch=True)


def _name_errors(name: str, gateway: str) -> list[str]:
    tool = {"name": name, "description": "x", "inputSchema": {"type": "object", "properties": {}}}
    return [
        f"{f.profile}:{f.rule}"
        for f in lint([tool], list(PROFILES), server_name=gateway)
        if "name" in f.rule and f.tool is not None
    ]


@settings(max_examples=200, deadline=None)
@given(server=server_names, tool=tool_names, gateway=st.sampled_from(["gateway", "gw", "my-company-tools"]))
def test_every_public_name_passes_every_profile(server: str, tool: str, gateway: str) -> None:
    name = public_name(server_prefix(server), tool, name_budget(gateway))
    assert _name_errors(name, gateway) == []


@settings(max_examples=100, deadline=None)
@given(
    tools=st.dictionaries(server_names, st.lists(tool_names, max_size=8, unique=True), min_size=1, max_size=4)
)
def test_names_are_unique_and_do_not_depend_on_other_servers(tools: dict[str, list[str]]) -> None:
    try:
        names = NameMap(tools, "gateway", {})
    except GatewayConfigError:
        return  # two servers with the same prefix: refused, tested below
    table = names.assign(tools)
    assert len(table) == sum(len(v) for v in tools.values())
    for server, listed in tools.items():
        alone = NameMap([server], "gateway", {}).assign({server: listed})
        assert {n: r for n, r in table.items() if r.server == server} == alone


def test_plain_names_stay_readable() -> None:
    table = NameMap(["time", "my-server"], "gateway", {}).assign(
        {"time": ["get_current_time"], "my-server": ["list-items", "a.b", "a_b", "a-b"]}
    )
    assert set(table) == {
        "time_get_current_time",
        "myserver_list_items",
        "myserver_a_b",  # the tool really called a_b keeps the clean name
        "myserver_a_b_" + table_hash("a.b"),
        "myserver_a_b_" + table_hash("a-b"),
    }
    assert table["myserver_a_b"].tool == "a_b"
    assert table["myserver_list_items"].tool == "list-items"


def table_hash(tool: str) -> str:
    from mcpkit.compat import name_hash

    return name_hash(tool)


def test_long_names_keep_their_start_and_fit() -> None:
    budget = name_budget("gateway")
    name = public_name("archive", "search_posts_by_meaning_with_filters_and_a_very_long_tail", budget)
    assert len(name) <= budget and name.startswith("archive_search_posts")


def test_overrides_win_and_are_checked() -> None:
    names = NameMap(["time"], "gateway", {"time/get_current_time": "now"})
    assert names.assign({"time": ["get_current_time", "convert_time"]}) == {
        "now": names.assign({"time": ["get_current_time"]})["now"],
        "time_convert_time": names.assign({"time": ["convert_time"]})["time_convert_time"],
    }
    with pytest.raises(GatewayConfigError, match="characters outside"):
        NameMap(["time"], "gateway", {"time/get_current_time": "now.please"})
    with pytest.raises(GatewayConfigError, match="does not start with a configured server"):
        NameMap(["time"], "gateway", {"clock/x": "now"})


def test_colliding_prefixes_are_a_config_error() -> None:
    with pytest.raises(GatewayConfigError, match="share the tool prefix"):
        NameMap(["my-server", "my_server"], "gateway", {})


def test_a_long_gateway_name_is_refused() -> None:
    with pytest.raises(GatewayConfigError, match="too long"):
        name_budget("x" * 60)
