"""What the model is asked for each post, and how its answer is read.

The shape is upstream's (twilog-search enriched posts with Gemini's batch API or a local
model): ``reasoning`` (a short analysis), ``summary`` (one line of at most 30 characters) and
``tags`` (topics), all in Japanese, requested as JSON-schema structured output. The prompt is
versioned: changing it (``PROMPT_VERSION``) makes every post due for enrichment again, the same
as a change of the post's text.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from mcpkit.archive.errors import ArchiveError

__all__ = [
    "PROMPT_VERSION",
    "RESPONSE_FORMAT",
    "SUMMARY_MAX",
    "Enrichment",
    "MalformedAnswerError",
    "content_hash",
    "messages_for",
    "parse_answer",
]

PROMPT_VERSION = "1"
SUMMARY_MAX = 30

SYSTEM_PROMPT = """与えられた投稿の内容を分析し、JSON で答えてください。

- reasoning: 投稿の内容についての短い検討（日本語）
- summary: 一行の要約（日本語、30文字以内）
- tags: 投稿の主な話題や分野を表すタグの配列（例: プログラミング、機械学習、日常、思考、技術解説）

書かれていないことは推測しないでください。タグが決められないときは空の配列にしてください。"""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "summary": {"type": "string", "maxLength": SUMMARY_MAX},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["reasoning", "summary", "tags"],
    "additionalProperties": False,
}

RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "post_enrichment", "schema": SCHEMA, "strict": True},
}


class MalformedAnswerError(ArchiveError):
    """The model's answer is not the JSON object asked for."""


@dataclass(frozen=True, slots=True)
class Enrichment:
    reasoning: str
    summary: str
    tags: tuple[str, ...]

    def tags_json(self) -> str:
        return json.dumps(list(self.tags), ensure_ascii=False)


def content_hash(text: str) -> str:
    """What identifies a post's text for enrichment: re-enrich when it changes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def messages_for(text: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"### 投稿\n{text}"},
    ]


def parse_answer(answer: str | None) -> Enrichment:
    """The enrichment in a model's answer; a summary over 30 characters is cut to 30 (the
    schema asks for at most 30, and small models overshoot by a word)."""
    if not answer:
        raise MalformedAnswerError("the answer is empty")
    text = answer.strip()
    if text.startswith("```"):  # some local models fence JSON despite the schema
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise MalformedAnswerError(f"the answer is not JSON: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise MalformedAnswerError("the answer is not a JSON object")
    reasoning, summary, tags = data.get("reasoning"), data.get("summary"), data.get("tags")
    if not isinstance(reasoning, str) or not isinstance(summary, str):
        raise MalformedAnswerError("the answer lacks a reasoning or summary text")
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise MalformedAnswerError("the answer's tags are not a list of texts")
    return Enrichment(
        reasoning.strip(), summary.strip()[:SUMMARY_MAX], tuple(t.strip() for t in tags if t.strip())
    )
