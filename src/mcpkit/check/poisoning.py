"""Tool-poisoning heuristics: what a tool definition says to the model behind the user's back.

A tool description is read by the model, not by the user who approved the server. Attacks
reported against MCP (Invariant Labs' "tool poisoning" and "tool shadowing") hide text the
user does not see (zero-width and tag characters, bidi controls) or address the model
directly ("ignore previous instructions", "do not tell the user"), or tell it how to use a
different tool. Descriptions of properties are read too: the model sees them all.

What is aimed at the model past the user is an error: instructions to override its own
rules, hide things from the user or read credential files; text spelled in invisible tag
characters; any hidden or bidi character in a text that also instructs the model; a
description that tells the model how to use a tool of another server or to send data
elsewhere. Instructions are searched for with the invisible characters taken out, so a
zero-width space inside "ignore previous instructions" does not hide it. Weaker signs (an
``<IMPORTANT>`` tag, "system prompt", a lone zero-width space, guidance about the server's
own tools) stay warnings with the matched text.
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
    r"(?:read|send|upload|include|pass|cat) (?:the )?(?:contents of )?~?/?\.ssh\b",
    r"\bid_(?:rsa|ed25519|ecdsa)\b",
    r"~?/?\.aws/credentials\b",
]
"""Phrases that address the model past the user: an error wherever they appear."""
_INSTRUCTION = re.compile("|".join(f"(?:{p})" for p in _INSTRUCTIONS), re.IGNORECASE)
_SUSPICIOUS = re.compile(
    "|".join(
        f"(?:{p})"
        for p in (
            r"<\s*(?:important|system|secret|instructions?)\s*>",
            r"\byou are now\b",
            r"\bsystem prompt\b",
            r"\bmcp\.json\b|\bclaude_desktop_config\.json\b",
        )
    ),
    re.IGNORECASE,
)
"""Signs that honest descriptions also show now and then: a warning unless hidden."""
_EXFILTRATION = re.compile(
    r"\bbcc\b|\b(?:send|forward|copy|upload|post|report)\b[^.\n]{0,60}(?:[\w.+-]+@[\w-]+\.[\w.]+|https?://)",
    re.IGNORECASE,
)
"""Sending data somewhere the user did not ask for: an address or a URL after a sending verb."""
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
            instructs = _instructions(report, name, pointer, text)
            _hidden(report, name, pointer, text, instructs)
            if pointer.endswith("description"):
                _shadowing(report, name, pointer, text, names - {name}, WELL_KNOWN_TOOLS - names)


def visible(text: str) -> str:
    """``text`` as a person reads it: invisible and bidi characters removed, tag text spelled out."""
    return _BIDI.sub("", _HIDDEN.sub("", text)) + (" " + _tag_text(text) if _tag_text(text) else "")


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


def _hidden(report: CheckReport, tool: str, pointer: str, text: str, instructs: bool) -> None:
    """Invisible and bidi characters: an error when they spell text or sit beside instructions."""
    field = pointer.rsplit("/", 1)[-1]
    hidden = _HIDDEN.findall(text)
    if hidden:
        codes = ", ".join(sorted({f"U+{ord(c):04X}" for c in hidden}))
        spelled = _tag_text(text)
        aimed = bool(spelled) or instructs
        report.add(
            CheckFinding(
                "poisoning-hidden-text",
                "error" if aimed else "warning",
                "security",
                f"{len(hidden)} invisible character(s) ({codes}) in {field}"
                + (f"; hidden text reads {spelled!r}" if spelled else "")
                + ("; the same text instructs the model" if instructs else ""),
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
                "error" if instructs else "warning",
                "security",
                f"bidirectional control character(s) {codes} in {field}"
                + ("; the same text instructs the model" if instructs else ""),
                "Remove bidi controls: they make the text read differently to a person and to a model.",
                tool=tool,
                pointer=pointer,
            )
        )


def _tag_text(text: str) -> str:
    """What Unicode tag characters spell (they mirror ASCII at U+E0000)."""
    return "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)


def _instructions(report: CheckReport, tool: str, pointer: str, text: str) -> bool:
    """Report what the text tells the model; True when it gives it instructions of either kind."""
    plain = visible(text)
    field = pointer.rsplit("/", 1)[-1]
    found = _INSTRUCTION.search(plain)
    if found:
        report.add(
            CheckFinding(
                "poisoning-instructions",
                "error",
                "security",
                f"the {field} speaks to the model past the user: {_around(plain, found)!r}",
                "Describe what the tool does; never tell the model to hide things or override its instructions.",
                tool=tool,
                pointer=pointer,
            )
        )
        return True
    sign = _SUSPICIOUS.search(plain)
    if sign:
        hidden = plain != text
        report.add(
            CheckFinding(
                "poisoning-suspicious",
                "error" if hidden else "warning",
                "security",
                f"the {field} addresses the model: {_around(plain, sign)!r}"
                + ("; with hidden characters in the same text" if hidden else ""),
                "Describe what the tool does in plain words; tags and role talk are for prompts, not tools.",
                tool=tool,
                pointer=pointer,
            )
        )
        return True
    return False


def _shadowing(
    report: CheckReport, tool: str, pointer: str, text: str, own: set[str], foreign: frozenset[str]
) -> None:
    """A description that tells the model how to use another tool.

    The server's own tools are often named honestly ("always call list_projects first"): a
    warning. A tool of another server, or any instruction that sends data to an address or a
    URL, is the shadowing attack itself: an error.
    """
    plain = visible(text)
    for other in sorted(own | foreign, key=len, reverse=True):
        if len(other) < 4:
            continue
        hit = re.search(rf"(?<![\w-]){re.escape(other)}(?![\w-])", plain)
        if hit is None:
            continue
        sentence = _sentence(plain, hit.start(), hit.end())
        if _COMMAND_WORDS.search(sentence):
            leaks = _EXFILTRATION.search(sentence) is not None
            elsewhere = other in foreign
            report.add(
                CheckFinding(
                    "poisoning-shadowing",
                    "error" if leaks or elsewhere else "warning",
                    "security",
                    "the description tells the model how to use "
                    + ("a tool of another server" if elsewhere else "another tool")
                    + f", {other!r}"
                    + (", and to send data elsewhere" if leaks else "")
                    + f": {sentence!r}",
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
