"""Sealed state (task handles, ``requestState``): any holder of the key opens it, nothing else does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.gateway import GatewayConfigError, load_gateway_config
from mcpkit.gateway.sealing import Sealer, read_keys
from mcpkit.jsonrpc import JsonRpcError

OLD = b"o" * 32
NEW = b"n" * 32
OTHER = b"x" * 32
DATA = {"server": "slow", "taskId": "abc-123", "owner": "caller"}


class Clock:
    """A clock the test moves by hand: expiry without waiting."""

    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def refused(sealer: Sealer, token: str) -> str:
    with pytest.raises(JsonRpcError) as info:
        sealer.open(token, "taskId")
    assert info.value.code == -32602
    assert "\n" not in info.value.message and info.value.message.startswith("taskId: ")
    return info.value.message


def test_another_replica_with_the_key_opens_it() -> None:
    token = Sealer((NEW,), "tools").seal(DATA, ttl=60)
    assert token.startswith("s1.")
    assert Sealer((NEW,), "tools").open(token, "taskId") == DATA


def test_a_foreign_key_is_refused() -> None:
    token = Sealer((OTHER,), "tools").seal(DATA, ttl=60)
    assert "not sealed by this gateway" in refused(Sealer((NEW, OLD), "tools"), token)


def test_another_gateway_of_the_same_key_is_refused() -> None:
    token = Sealer((NEW,), "elsewhere").seal(DATA, ttl=60)
    assert "'elsewhere'" in refused(Sealer((NEW,), "tools"), token)


def test_expired_is_refused_in_one_line() -> None:
    clock = Clock()
    sealer = Sealer((NEW,), "tools", now=clock)
    token = sealer.seal(DATA, ttl=30)
    clock.t += 30
    assert sealer.open(token, "taskId") == DATA  # never shorter than asked
    clock.t += 2
    assert "expired at" in refused(sealer, token)


def test_rotation_new_key_first_old_still_opens() -> None:
    old_token = Sealer((OLD,), "tools").seal(DATA, ttl=60)
    rotated = Sealer((NEW, OLD), "tools")
    assert rotated.open(old_token, "taskId") == DATA
    new_token = rotated.seal(DATA, ttl=60)
    assert Sealer((NEW,), "tools").open(new_token, "taskId") == DATA  # the first key seals
    refused(Sealer((OLD,), "tools"), new_token)  # a replica not yet given the new key


@pytest.mark.parametrize("token", ["", "abc", "s1.", "s1..", "s1.e30.AAAA", "s1.e30.AAAA.x", "s1.é.é"])
def test_garbage_is_refused(token: str) -> None:
    refused(Sealer((NEW,), "tools"), token)


@given(
    data=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8,
    ),
    where=st.integers(min_value=0),
    replacement=st.characters(codec="utf-8"),
)
def test_any_character_changed_is_refused(data: object, where: int, replacement: str) -> None:
    sealer = Sealer((NEW,), "tools")
    token = sealer.seal(data, ttl=60)
    assert sealer.open(token, "taskId") == data
    i = where % len(token)
    if token[i] == replacement:
        return
    refused(sealer, token[:i] + replacement + token[i + 1 :])


@given(extra=st.text(min_size=1, max_size=4), cut=st.integers(min_value=1, max_value=8))
def test_cut_or_lengthened_is_refused(extra: str, cut: int) -> None:
    sealer = Sealer((NEW,), "tools")
    token = sealer.seal(DATA, ttl=60)
    refused(sealer, token + extra)
    refused(sealer, token[:-cut])


def test_keys_from_env_and_file(tmp_path: Path) -> None:
    (tmp_path / "key").write_bytes(OLD + b"\n")
    keys = read_keys(["env:K", f"file:{tmp_path / 'key'}"], {"K": NEW.decode()})
    assert keys == (NEW, OLD)
    with pytest.raises(GatewayConfigError, match="the variable K is not set"):
        read_keys(["env:K"], {})
    with pytest.raises(GatewayConfigError, match="at least 32 bytes") as info:
        read_keys(["env:K"], {"K": "short-secret"})
    assert "short-secret" not in str(info.value)  # the key itself never in an error
    with pytest.raises(GatewayConfigError, match="cannot read it"):
        read_keys([f"file:{tmp_path / 'missing'}"], {})


def test_config_state_keys(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    table = {"state_keys": ["env:NEW", "file:/etc/old.key"]}
    path.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx"}}, "gateway": table}))
    assert load_gateway_config(path).state_keys == ("env:NEW", "file:/etc/old.key")
    for bad in (["NEW"], "env:NEW", [3], ["env:"]):
        path.write_text(
            json.dumps({"mcpServers": {"time": {"command": "uvx"}}, "gateway": {"state_keys": bad}})
        )
        with pytest.raises(GatewayConfigError, match="state_keys"):
            load_gateway_config(path)
    path.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx"}}}))
    assert load_gateway_config(path).state_keys == ()
