"""The gateway table beside the client's server table, in JSON and TOML."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpkit.gateway import GatewayConfigError, load_gateway_config

TOML = """
[mcpServers.time]
command = "uvx"
args = ["mcp-server-time"]

[mcpServers.docs]
url = "https://example.com/mcp"

[gateway]
name = "tools"
max_concurrent = 4
output_cap = 50000

[gateway.names]
"time/get_current_time" = "now"

[gateway.servers.docs]
max_concurrent = 1

[gateway.restart]
max_restarts = 2
backoff = 0.1
"""


def test_toml_config(tmp_path: Path) -> None:
    path = tmp_path / "servers.toml"
    path.write_text(TOML, encoding="utf-8")
    config = load_gateway_config(path)
    assert set(config.servers) == {"time", "docs"}
    assert config.name == "tools" and config.names == {"time/get_current_time": "now"}
    assert config.concurrency("docs") == 1 and config.concurrency("time") == 4
    assert config.output_cap == 50000
    assert config.supervision.max_restarts == 2 and config.supervision.backoff == 0.1
    assert config.supervision.window == 60.0


def test_plain_mcpservers_file_needs_no_gateway_table(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}))
    config = load_gateway_config(path)
    assert config.name == "gateway" and config.output_cap is None and config.concurrency("time") == 16


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"nmae": "x"}, "unknown keys nmae"),
        ({"max_concurrent": 0}, "'max_concurrent' must be a positive number"),
        ({"max_concurrent": 1.5}, "whole number"),
        ({"servers": {"nope": {}}}, "no server 'nope'"),
        ({"names": {"time/x": 3}}, "'names' must map"),
        ({"restart": {"backoff": -1}}, "'backoff' must be a positive number"),
        ({"name": ""}, "'name' must be a non-empty string"),
    ],
)
def test_mistakes_are_named(tmp_path: Path, table: dict[str, object], message: str) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx"}}, "gateway": table}))
    with pytest.raises(GatewayConfigError, match=message):
        load_gateway_config(path)


def test_codex_and_vscode_shapes(tmp_path: Path) -> None:
    codex = tmp_path / "config.toml"
    codex.write_text(
        '[mcp_servers.time]\ncommand = "uvx"\nargs = ["mcp-server-time"]\n\n[gateway]\nname = "codexgw"\n',
        encoding="utf-8",
    )
    config = load_gateway_config(codex)
    assert set(config.servers) == {"time"} and config.name == "codexgw"
    vscode = tmp_path / "mcp.json"
    vscode.write_text(
        json.dumps(
            {
                "servers": {"time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}},
                "gateway": {"names": {"time/get_current_time": "now"}},
            }
        )
    )
    config = load_gateway_config(vscode)
    assert config.servers["time"].command == ["uvx", "mcp-server-time"]
    assert config.names == {"time/get_current_time": "now"}
