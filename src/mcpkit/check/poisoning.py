"""Tool-poisoning heuristics: what a tool definition says to the model behind the user's back.

A tool description is read by the model, not by the user who approved the server. Attacks
reported against MCP (Invariant Labs' "tool poisoning" and "tool shadowing") hide text the
user does not see (zero-width and tag characters, bidi controls) or address the model
directly ("ignore previous instructions", "do not tell the user"), or tell it how to use a
different tool. These are heuristics, so every finding is a warning with the matched text.
Descriptions of properties are read too: the model sees them all.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from mcpkit.check.model import CheckFinding, CheckReport

# Zero-width and invisible formatting characters, and the Unicode "tag" block (U+E0000..E007F)
# that can spell whole hidden sentences.
_HIDDEN = re.compile("[\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff\U000e0000-\U000e007f]")
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_INSTRUCTIONS = [
    r"ignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier) (?:instructions|prompts?|rules)",
    r"disregard (?:all |any )?(?:the )?(?:previous|prior|above) (?:instructions|rules)",
    r"(?:do not|don't|never) (?:tell|inform|mention (?:this )?to|notify|alert) the user",
    r"without (?:telling|informing|notifying) the user",
    r"(?:do not|don't) (?:mention|reveal|disclose) (?:this|that|these instructions)",
    r"the user (?:must|should) not (?:know|see|be told)",
    r"<\s*(?:important|system|secret|instructions?)\s*>",
    r"\byou are now\b",
    r"\bsystem prompt\b",
    r"(?:read|send|upload|include) (?:the )?(?:contents of )?~?/?\.ssh\b",
    r"\bid_rsa\b",
    r"\bmcp\.json\b|\bclaude_desktop_config\.json\b",
]
_INSTRUCTION = re.compile("|".join(f"(?:{p})" for p in _INSTRUCTIONS), re.IGNORECASE)
_COMMAND_WORDS = re.compile(
    r"\b(?:always|never|must|before (?:using|calling)|whenever|when (?:using|calling)|"
    r"(?:also|secretly) (?:send|copy|bcc|forward|include))\b",
    re.IGNORECASE,
)
WELL_KNOWN_TOOLS = frozenset(
    {
        "read_file",
        "write_file",
        "edit_file",
        "list_directory",
        "send_email",
        "send_message",
        "execute_command",
        "run_command",
        "run_terminal_cmd",
        "git_commit",
        "git_push",
        "create_pull_request",
        "fetch",
        "browser_navigate",
    }
)
"""Names of tools that popular servers (filesystem, git, GitHub, mail, shell, fetch, browsers)
offer: a description that instructs the model about one of them is shadowing another server."""


def check_poisoning(tools: list[dict[str, Any]], report: CheckReport) -> None:
    """Report hidden text, bidi controls, model-directed instructions and shadowing."""
    names = {str(t.get("name")) for t in tools if t.get("name")}
    for tool in tools:
        name = str(tool.get("name"))
        for pointer, text in _texts(tool):
            _hidden(report, name, pointer, text)
            _instructions(report, name, pointer, text)
            if pointer.endswith("description"):
                _shadowing(report, name, pointer, text, (names | WELL_KNOWN_TOOLS) - {name})


def _texts(tool: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(pointer, text) of the name, the title, the description and every description in the schema."""
    for key in ("name", "title", "description"):
        if isinstance(tool.get(key), str):
            yield f"/{key}", tool[key]
    schema = tool.get("inputSchema")
    if isinstance(schema, dict):
        yield from _schema_texts(schema, "/inputSchema", 0)


def _schema_texts(node: Any, pointer: str, depth: int) -> Iterator[tuple[str, str]]:
    if depth > 12 or not isinstance(node, dict):
        return
    for key in ("description", "title"):
        if isinstance(node.get(key), str):
            yield f"{pointer}/{key}", node[key]
    props = node.get("properties")
    if isinstance(props, dict):
        for prop, sub in props.items():
            yield from _schema_texts(sub, f"{pointer}/properties/{prop}", depth + 1)
    for key in ("items", "additionalProperties"):
        yield from _schema_texts(node.get(key), f"{pointer}/{key}", depth + 1)


def _hidden(report: CheckReport, tool: str, pointer: str, text: str) -> None:
    hidden = _HIDDEN.findall(text)
    if hidden:
        codes = ", ".join(sorted({f"U+{ord(c):04X}" for c in hidden}))
        report.add(
            CheckFinding(
                "poisoning-hidden-text",
                "warning",
                "security",
                f"{len(hidden)} invisible character(s) ({codes}) in {pointer.rsplit('/', 1)[-1]}"
                + (f"; hidden text reads {_tag_text(text)!r}" if _tag_text(text) else ""),
                "Remove invisible characters: the user cannot see what they say to the model.",
                tool=tool,
                pointer=pointer,
            )
        )
    bidi = _BIDI.findall(text)
    if bidi:
        codes = ", ".join(sorted({f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in bidi}))
        report.add(
            CheckFinding(
                "poisoning-bidi",
                "warning",
                "security",
                f"bidirectional control character(s) {codes} in {pointer.rsplit('/', 1)[-1]}",
                "Remove bidi controls: they make the text read differently to a person and to a model.",
                tool=tool,
                pointer=pointer,
            )
        )


def _tag_text(text: str) -> str:
    """What Unicode tag characters spell (they mirror ASCII at U+E0000)."""
    return "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)


def _instructions(report: CheckReport, tool: str, pointer: str, text: str) -> None:
    found = _INSTRUCTION.search(text)
    if found:
        report.add(
            CheckFinding(
                "poisoning-instructions",
                "warning",
                "security",
                f"the {pointer.rsplit('/', 1)[-1]} speaks to the model past the user: {_around(text, found)!r}",
                "Describe what the tool does; never tell the model to hide things or override its instructions.",
                tool=tool,
                pointer=pointer,
            )
        )


def _shadowing(report: CheckReport, tool: str, pointer: str, text: str, others: set[str]) -> None:
    for other in sorted(others, key=len, reverse=True):
        if len(other) < 4:
            continue
        hit = re.search(rf"(?<![\w-]){re.escape(other)}(?![\w-])", text)
        if hit is None:
            continue
        sentence = _sentence(text, hit.start(), hit.end())
        if _COMMAND_WORDS.search(sentence):
            report.add(
                CheckFinding(
                    "poisoning-shadowing",
                    "warning",
                    "security",
                    f"the description tells the model how to use another tool, {other!r}: {sentence!r}",
                    "A tool's description should describe that tool only.",
                    tool=tool,
                    pointer=pointer,
                )
            )
            return


def _sentence(text: str, start: int, end: int) -> str:
    left = max(text.rfind(".", 0, start), text.rfind("\n", 0, start)) + 1
    stops = [i for i in (text.find(".", end), text.find("\n", end)) if i >= 0]
    right = min(stops) if stops else len(text)
    return " ".join(text[left:right].split())[:200]


def _around(text: str, match: re.Match[str]) -> str:
    return " ".join(text[max(0, match.start() - 30) : match.end() + 30].split())
