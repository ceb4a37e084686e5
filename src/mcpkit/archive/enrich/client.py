"""One enrichment request to an OpenAI-compatible chat-completions endpoint, with retries.

The ``openai`` client library speaks the protocol (ollama, llama.cpp's server, vLLM and OpenAI
all accept it); this module decides what to do when a request fails:

* 429 and 5xx, timeouts and refused connections are retried with exponential backoff and
  jitter, up to ``max_attempts``. ``Retry-After`` is a floor, not the whole wait: a server
  answering ``Retry-After: 0`` was retried at once, six times in a row, by every worker in
  step, and the post failed in milliseconds; the backoff and a random part are always added;
* an answer that is not the JSON asked for is asked again once, then the post is failed;
* a 400 fails that post only; 401, 403 and 404 (wrong key, wrong model, wrong URL) stop the
  whole run, since every other post would fail the same way.

The API key comes from ``MCPKIT_ENRICH_API_KEY`` or ``OPENAI_API_KEY`` and never appears in a
message or a log line.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
import openai

from mcpkit.archive import messages as m
from mcpkit.archive.enrich.prompt import (
    RESPONSE_FORMAT,
    Enrichment,
    MalformedAnswerError,
    messages_for,
    parse_answer,
)
from mcpkit.archive.errors import ArchiveError
from mcpkit.archive.messages import Wording

__all__ = [
    "DEFAULT_ENDPOINT",
    "DEFAULT_MODEL",
    "EndpointError",
    "EnrichClient",
    "PostFailedError",
    "Reply",
    "api_key_from",
]

DEFAULT_ENDPOINT = "http://127.0.0.1:11434/v1"
"""ollama's OpenAI-compatible endpoint."""
DEFAULT_MODEL = "qwen3:4b"
"""The small local model upstream suggests for enrichment."""
ENV_KEYS = ("MCPKIT_ENRICH_API_KEY", "OPENAI_API_KEY")


class EndpointError(Wording, ArchiveError):
    """The endpoint cannot serve this run at all (unreachable, wrong key, unknown model)."""


class PostFailedError(Wording, ArchiveError):
    """This post could not be enriched; the message says why (recorded, reported, retried
    on the next run)."""


@dataclass(frozen=True, slots=True)
class Reply:
    enrichment: Enrichment
    prompt_tokens: int
    completion_tokens: int
    attempts: int


def api_key_from(environ: Mapping[str, str]) -> str | None:
    """The first key set among :data:`ENV_KEYS` in ``environ`` (the CLI passes its environment)."""
    for name in ENV_KEYS:
        value = environ.get(name)
        if value:
            return value
    return None


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds the endpoint asked to wait (``Retry-After`` as seconds or an HTTP date)."""
    value = exc.response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


class EnrichClient:
    """Enriches one text per :meth:`enrich` call; safe to call concurrently."""

    def __init__(
        self,
        endpoint: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_attempts: int = 6,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
    ) -> None:
        self.endpoint = endpoint
        self.model = model
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        # the library's own retries are off: this class decides (and counts) them
        self._client = openai.AsyncOpenAI(
            base_url=endpoint,
            api_key=api_key or "no-key",  # local servers want none
            timeout=timeout,
            max_retries=0,
        )

    async def aclose(self) -> None:
        await self._client.close()

    def _delay(self, attempt: int, asked: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1``: at least half the exponential
        backoff, at least what the endpoint ``asked`` (up to ``max_backoff``), plus up to half
        the backoff at random, so concurrent workers do not retry in step."""
        base = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        floor = max(base / 2, min(asked, self.max_backoff) if asked is not None else 0.0)
        return floor + random.random() * base / 2

    async def enrich(self, text: str) -> Reply:
        """The enrichment of ``text``; raises :class:`PostFailedError` or :class:`EndpointError`."""
        malformed_left = 1
        attempt = 0
        while True:
            attempt += 1
            try:
                # the generic post of the client library (its documented way to send a body as
                # is): the typed ``chat.completions.create`` re-walks the JSON schema and builds
                # pydantic models for every request, two thirds of the pipeline's CPU time
                response = await self._client.post(
                    "/chat/completions",
                    cast_to=httpx2.Response,
                    body={
                        "model": self.model,
                        "messages": messages_for(text),
                        "response_format": RESPONSE_FORMAT,
                        "temperature": 0,
                    },
                )
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise EndpointError(
                    m.ENDPOINT_REFUSED, endpoint=self.endpoint, status=exc.status_code
                ) from None
            except openai.NotFoundError as exc:
                raise EndpointError(
                    m.ENDPOINT_NO_MODEL,
                    endpoint=self.endpoint,
                    status=exc.status_code,
                    model=repr(self.model),
                ) from None
            except (openai.RateLimitError, openai.InternalServerError, openai.APIStatusError) as exc:
                status = exc.status_code
                if status != 429 and status < 500:
                    raise PostFailedError(m.ENDPOINT_ANSWERED, status=status, detail=_short(exc)) from None
                if attempt >= self.max_attempts:
                    raise PostFailedError(m.ENDPOINT_ANSWERED_TIMES, status=status, times=attempt) from None
                await asyncio.sleep(self._delay(attempt, _retry_after(exc)))
                continue
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                if attempt >= self.max_attempts:
                    raise EndpointError(
                        m.ENDPOINT_UNREACHABLE, endpoint=self.endpoint, detail=_short(exc)
                    ) from None
                await asyncio.sleep(self._delay(attempt, None))
                continue
            answer = _json(response)
            try:
                enrichment = parse_answer(_answer_text(answer))
            except MalformedAnswerError as exc:
                if malformed_left:
                    malformed_left -= 1
                    continue
                raise PostFailedError(m.MALFORMED_TWICE, detail=exc) from None
            usage = answer.get("usage") if isinstance(answer, dict) else None
            usage = usage if isinstance(usage, dict) else {}
            return Reply(
                enrichment,
                _count(usage.get("prompt_tokens")),
                _count(usage.get("completion_tokens")),
                attempt,
            )


def _json(response: httpx2.Response) -> Any:
    try:
        return response.json()
    except ValueError:  # a 200 that is not JSON (a proxy's page): a malformed answer
        return None


def _answer_text(answer: Any) -> str | None:
    """``choices[0].message.content`` of a chat completion, or None."""
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None
    return content if isinstance(content, str) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]
