"""Which compat profiles a connecting client gets, from the ``clientInfo.name`` it sends.

The names are what clients really send (docs/gateway.md keeps the table with the evidence
for each row). Matching is exact first, then by prefix; an unknown name gets
:data:`SAFE_SET`, the profiles every known client needs at once, never no adaptation (but no
tool-count limit: see :func:`has_tool_budget`).
``openai-strict`` is in no automatic row (no client is known to send strict schemas from MCP
tools); ``--profile openai-strict`` forces it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcpkit.compat import PROFILES


@dataclass(frozen=True)
class ClientRow:
    """One row of the table: the name sent, the client, the profiles it gets, the evidence."""

    name: str
    client: str
    profiles: tuple[str, ...]
    evidence: str


CLIENTS: tuple[ClientRow, ...] = (
    ClientRow(
        "claude-ai",
        "Claude Desktop and claude.ai",
        ("mcp-spec", "claude-desktop-2025", "claude"),
        "initialize requests captured in many public server logs and test scripts",
    ),
    ClientRow("claude-code", "Claude Code", ("mcp-spec", "claude"), "public client tables of MCP servers"),
    ClientRow("codex-mcp-client", "OpenAI Codex CLI", ("mcp-spec", "openai"), "public client tables"),
    ClientRow(
        "gemini-cli-mcp-client",
        "gemini-cli",
        ("mcp-spec", "gemini"),
        "gemini-cli packages/core/src/tools/mcp-client.ts",
    ),
    ClientRow(
        "cursor-vscode", "Cursor", ("mcp-spec", "cursor"), "server logs; not published by Cursor, a guess"
    ),
    ClientRow(
        "Visual Studio Code", "VS Code Copilot agent mode", ("mcp-spec", "vscode"), "server logs; unverified"
    ),
    ClientRow("mcp-inspector", "MCP Inspector", ("mcp-spec",), "varies by version"),
    ClientRow("inspector-client", "MCP Inspector", ("mcp-spec",), "varies by version"),
)

SAFE_SET: tuple[str, ...] = (
    "mcp-spec",
    "claude-desktop-2025",
    "claude",
    "openai",
    "gemini",
    "cursor",
    "vscode",
)
"""For a client we do not know: every known client's rules at once (``openai-strict`` excepted,
whose all-required, nullable schemas contradict Gemini's and Claude Desktop's)."""

PREFIXES: tuple[tuple[str, str], ...] = (
    ("claude-code", "claude-code"),
    ("claude", "claude-ai"),
    ("codex", "codex-mcp-client"),
    ("gemini", "gemini-cli-mcp-client"),
    ("cursor", "cursor-vscode"),
    ("visual studio code", "Visual Studio Code"),
    ("vscode", "Visual Studio Code"),
    ("mcp-inspector", "mcp-inspector"),
    ("inspector", "inspector-client"),
)


def has_tool_budget(profiles: tuple[str, ...]) -> bool:
    """Whether a client with this profile set is known to limit its tool count.

    :data:`SAFE_SET` is what a client nobody knows gets: its tools are adapted to every known
    client's schema rules at once, but no known client's tool *limit* is imposed on it. An
    unknown client (the MCP Inspector over HTTP without ``?client=``) used to get the three
    meta-tools instead of 65 tools because Cursor, one member of the set, keeps only 40;
    a client that names itself (or a ``--profile``/``?profile=`` that has a limit) still
    gets the meta-tools when it is over its limit.
    """
    return profiles != SAFE_SET


def profiles_for(client_name: str | None, forced: str | None = None) -> tuple[str, ...]:
    """The profile set for a client: ``forced`` (a profile name) wins, then the table, then SAFE_SET."""
    if forced and forced != "auto":
        return ("mcp-spec", forced) if forced != "mcp-spec" else ("mcp-spec",)
    row = match(client_name)
    return row.profiles if row is not None else SAFE_SET


def match(client_name: str | None) -> ClientRow | None:
    """The table row for ``client_name``: exact name, else a known prefix (case-insensitive)."""
    if not client_name:
        return None
    for row in CLIENTS:
        if row.name == client_name:
            return row
    lowered = client_name.strip().lower()
    for prefix, name in PREFIXES:
        if lowered.startswith(prefix):
            return next(r for r in CLIENTS if r.name == name)
    return None


def check_forced(profile: str) -> None:
    """Raise ValueError for a ``--profile`` that is neither ``auto`` nor a known profile."""
    if profile != "auto" and profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; known: auto, {', '.join(PROFILES)}")


def markdown_table() -> str:
    """The client table for docs/gateway.md (a test keeps the doc identical)."""
    lines = ["| name sent | client | profiles | evidence |", "|---|---|---|---|"]
    for row in CLIENTS:
        lines.append(f"| `{row.name}` | {row.client} | {', '.join(row.profiles)} | {row.evidence} |")
    lines.append(
        f"| anything else | unknown | {', '.join(SAFE_SET)} | the strictest safe set, no tool limit |"
    )
    return "\n".join(lines)
