"""Secrets in definitions: credentials written into what a server lists.

Tool, prompt and resource definitions go to every client that connects and are read by the
model, so an API key in a description, a default or an example is disclosed to both (and to
every log that records ``tools/list``). The patterns are the published shapes of common
credentials (cloud, code hosting, AI and payment providers, private keys, JSON Web Tokens,
bearer tokens, passwords in URLs) and, after a word such as ``api_key`` or ``password``, a
long value that looks random. A finding names the kind and where it is, never the secret:
only its first four characters and its length.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from mcpkit.check.model import CheckFinding, CheckReport

_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
        ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})\b"),
        ("an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("an OpenAI API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"),
        ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        ("a Stripe secret key", r"\b(?:sk|rk)_live_[0-9A-Za-z]{20,}"),
        ("a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}"),
        ("a password in a URL", r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:(?P<value>[^/\s:@]{6,})@"),
        ("a bearer token", r"\bBearer\s+(?P<value>[A-Za-z0-9._~+/-]{20,}=*)"),
        (
            "a credential",
            r"(?i)\b(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret[_-]?key|client[_-]?secret"
            r"|password|passwd|token)\b[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9_\-./+=]{16,})",
        ),
    )
)

_PLACEHOLDER = re.compile(
    r"(?i)your|example|placeholder|redacted|changeme|dummy|sample|xxxx|\*\*\*|\.\.\.|<|>|\{|\}|0000000"
)
MIN_ENTROPY = 3.0
"""Bits per character below which a value after ``password=`` is a word, not a secret."""


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _looks_random(value: str) -> bool:
    return (
        not _PLACEHOLDER.search(value)
        and _entropy(value) >= MIN_ENTROPY
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )


def find_secrets(text: str) -> list[tuple[str, str]]:
    """``(kind, secret)`` for every credential in ``text`` (placeholders and plain words skipped)."""
    out: list[tuple[str, str]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _SHAPES:
        for match in pattern.finditer(text):
            span = match.span("value") if "value" in pattern.groupindex else match.span()
            if any(a < span[1] and span[0] < b for a, b in taken):
                continue  # already reported as a more specific kind
            secret = text[span[0] : span[1]]
            if "value" in pattern.groupindex and not _looks_random(secret):
                continue
            if _PLACEHOLDER.search(secret) and kind != "a private key":
                continue
            taken.append(span)
            out.append((kind, secret))
    return out


def _strings(value: Any, pointer: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """Every string in a JSON value, keys of objects included, with its JSON pointer."""
    if depth > 40:
        return
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for key, sub in value.items():
            token = str(key).replace("~", "~0").replace("/", "~1")
            yield f"{pointer}/{token}", str(key)
            yield from _strings(sub, f"{pointer}/{token}", depth + 1)
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from _strings(sub, f"{pointer}/{i}", depth + 1)


def redact(secret: str) -> str:
    """The first four characters and the length: enough to find it, not enough to use it."""
    return f"{secret[:4]}…, {len(secret)} characters"


def check_secrets(listed: dict[str, list[Any]], report: CheckReport) -> None:
    """Report credentials in the definitions of every list (tools, prompts, resources, templates)."""
    for kind, items in listed.items():
        for index, item in enumerate(items):
            if not isinstance(item, dict):  # a broken server's list: the schema checks say so
                continue
            label = item.get("name") or item.get("uri") or item.get("uriTemplate") or f"#{index}"
            seen: set[str] = set()
            for pointer, text in _strings(item, ""):
                for what, secret in find_secrets(text):
                    if secret in seen:
                        continue
                    seen.add(secret)
                    report.add(
                        CheckFinding(
                            "secret-in-definition",
                            "error",
                            "security",
                            f"{what} ({redact(secret)}) in the {kind[:-1] if kind.endswith('s') else kind} "
                            f"definition at {pointer or '/'}",
                            "Remove it from the definition and revoke it: every client and the model "
                            "have read it. Take credentials from the environment.",
                            tool=str(label) if kind == "tools" else None,
                            pointer=pointer if kind == "tools" else f"/{kind}/{label}{pointer}",
                        )
                    )
