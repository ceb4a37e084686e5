"""When two exports hold the same post: which value of each field the archive keeps.

People import several exports of one account (an older and a newer X archive, the Twilog CSV
of the same account) and expect each post once, as complete as any of them has it. Each
export knows different things: a Twilog CSV has no reply target, an X archive without
``note-tweet.js`` has a long post's text cut with ``…``, a like has no text at all in some X
archives. So the archive keeps, field by field, the richer value:

* a value over an empty one;
* for the text, the whole text over one that is the same text cut with ``…``;
* the media of both (the same picture, by URL or path, once, each of its fields filled);
* every relation the owner has to the post (:func:`~mcpkit.archive.posts.joined_relations`:
  written, reposted, liked, bookmarked), the post's kind being the first of them in the order
  the account wrote (a reply and a quote say more than a post), a repost, a bookmark, a like;
* the more closed of two visibilities (a post once seen as followers-only stays so);
* otherwise, between a record of a real export and a Twilog row, the export's (it has the
  post's own time and links expanded); between two of the same level, what is stored stays
  (re-importing changes nothing).

Between two Twilog rows upstream's rule stays as it always was for the row's fields: the larger
log_type wins, and on a tie what came first; the relations of both are kept. A Twilog-only
archive therefore answers upstream's requests exactly as before.
"""

from __future__ import annotations

import dataclasses

from mcpkit.archive.posts import (
    Media,
    Post,
    closest_visibility,
    joined_relations,
    kind_of,
    log_type_of_kind,
    primary_kind,
    relations_of,
)

__all__ = ["EXPORT_FIELDS", "is_cut", "merge_media", "merge_posts", "normalized", "stored_kind"]

_ELLIPSIS = "…"

EXPORT_FIELDS = (
    "source_id",
    "account",
    "reply_to",
    "thread_root",
    "quote_of",
    "repost_of",
    "content_warning",
    "lang",
)
"""The text fields an export fills beside Twilog's six (columns of ``posts`` of the same name)."""
_PLAIN_FIELDS = ("user", "timestamp", "url", *EXPORT_FIELDS)


def normalized(post: Post, account: str = "") -> Post:
    """``post`` as the store keeps it: its relations and kind spelled out, the export's account
    when the record names none, and a log_type that agrees with the kind for records of real
    exports (a Twilog row keeps its own: it decides between Twilog rows)."""
    kind, log_type, relations = stored_kind(post)
    if (
        kind == post.kind
        and log_type == post.log_type
        and relations == post.relations
        and (post.account or not account)
    ):
        return post
    return dataclasses.replace(
        post, kind=kind, log_type=log_type, relations=relations, account=post.account or account
    )


def stored_kind(post: Post) -> tuple[str, int, int]:
    """The kind, log_type and relations the store keeps for ``post`` (see :func:`normalized`)."""
    relations = relations_of(post)
    if not relations:  # a kind no release names: kept as it is
        return kind_of(post), post.log_type, 0
    kind = primary_kind(relations)
    return kind, post.log_type if _is_twilog(post) else log_type_of_kind(kind), relations


def _is_twilog(post: Post) -> bool:
    """A Twilog row: its id is the key, it has no source id of its own."""
    return post.source_id == ""


def merge_posts(stored: Post, incoming: Post) -> Post:
    """The post the archive keeps when it holds ``stored`` and an export brings ``incoming``
    (both :func:`normalized`, same ``post_id``); ``stored`` itself when nothing changes."""
    if stored == incoming:
        return stored
    relations = joined_relations(relations_of(stored), relations_of(incoming))
    kind = primary_kind(relations) if relations else stored.kind
    visibility = closest_visibility(stored.visibility, incoming.visibility)
    if _is_twilog(stored) and _is_twilog(incoming):
        chosen = incoming if incoming.log_type > stored.log_type else stored
        merged = dataclasses.replace(chosen, kind=kind, relations=relations, visibility=visibility)
        return stored if merged == stored else merged
    first, second = (
        (incoming, stored) if _is_twilog(stored) and not _is_twilog(incoming) else (stored, incoming)
    )
    values: dict[str, object] = {
        name: getattr(first, name) or getattr(second, name) for name in _PLAIN_FIELDS
    }
    media = merge_media(first.media, second.media)
    merged = dataclasses.replace(
        stored,
        content=_merge_text(first.content, second.content),
        kind=kind,
        log_type=log_type_of_kind(kind) if relations else stored.log_type,
        relations=relations,
        visibility=visibility,
        media=media,
        **values,  # type: ignore[arg-type]
    )
    return stored if merged == stored else merged


def is_cut(short: str, full: str) -> bool:
    """Whether ``short`` is ``full`` cut short and ended with ``…`` (X cuts long posts and
    retweets so; the cut may fall after a space, which X then drops)."""
    if not short.endswith(_ELLIPSIS) or len(short) > len(full):
        return False
    head = short[: -len(_ELLIPSIS)].rstrip()
    return full != short and full.startswith(head)


def _merge_text(first: str, second: str) -> str:
    if not first or first == second:
        return second or first
    if not second:
        return first
    if is_cut(first, second):
        return second
    return first


def merge_media(first: tuple[Media, ...], second: tuple[Media, ...]) -> tuple[Media, ...]:
    """Both lists, ``first``'s order first; an item of ``second`` that is one of ``first``'s
    (same URL, or same path, or the very same item when it has neither) fills that item's
    empty fields instead of being added, so merging again adds nothing.

    An item that some item it matches already holds whole changes nothing: an export may list
    one picture twice (once without its alt text, once without its URL), and filling the first
    item sharing its path with it would change the archive on every re-import."""
    if not second or first == second:
        return first or second
    merged = list(first)
    for item in second:
        matches = [index for index, have in enumerate(merged) if _same_media(have, item)]
        if any(_filled(merged[index], item) == merged[index] for index in matches):
            continue
        if matches:
            merged[matches[0]] = _filled(merged[matches[0]], item)
        else:
            merged.append(item)
    return tuple(merged)


def _same_media(have: Media, item: Media) -> bool:
    return (
        item == have or bool(item.url and item.url == have.url) or bool(item.path and item.path == have.path)
    )


def _filled(have: Media, item: Media) -> Media:
    """``have`` with its empty fields taken from ``item``."""
    return Media(
        type=have.type or item.type,
        path=have.path or item.path,
        url=have.url or item.url,
        alt=have.alt or item.alt,
    )
