"""The profile and rule tables as Markdown, generated from :data:`PROFILES`.

``docs/toolkit-compat.md`` embeds this output and a test keeps the two identical, so the
documentation cannot drift from the rules the code enforces.
"""

from __future__ import annotations

from mcpkit.compat._profiles import DEFAULT_PROFILES, PROFILES


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table() -> str:
    """One table of profiles, then one table of rules per profile."""
    lines = ["| profile | client | rules | what it is |", "|---|---|---|---|"]
    for profile in PROFILES.values():
        default = " (default)" if profile.name in DEFAULT_PROFILES else ""
        default += "" if profile.in_use else " (by name only)"
        lines.append(
            f"| `{profile.name}`{default} | {_cell(profile.client)} | {len(profile.rules)} | "
            f"{_cell(profile.description)} |"
        )
    for profile in PROFILES.values():
        lines += ["", f"### `{profile.name}`", ""]
        lines += ["| rule | severity | client | citation | what the client does | what adapt does |"]
        lines += ["|---|---|---|---|---|---|"]
        for rule in profile.rules:
            lines.append(
                f"| `{rule.id}` | {rule.severity} | {_cell(rule.client)} | {_cell(rule.citation)} | "
                f"{_cell(rule.summary)} | {_cell(rule.adapt or 'none')} |"
            )
    return "\n".join(lines) + "\n"
