"""Threads: a post in its conversation, from the archive's own posts.

What a thread is here: the chain of self-replies the post belongs to (its author answering
themselves, walked through ``reply_to`` both ways among the archived posts, in time order),
plus the post that chain replies to when the archive has it (someone else's post the author
answered, or a post the author liked). Replies by others are not in an export of one account,
so they are not looked for.

A post is named the way people have it at hand: an X id or the URL of a post (x.com,
twitter.com), an ``at://`` URI or a bsky.app URL, a Mastodon object URI or its web URL, or the
archive's own id. Lookups go by primary key where the form allows (:func:`post_key`); anything
else is looked up by stored source id and URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcpkit.archive.errors import ArchiveError
from mcpkit.archive.filters import account_key
from mcpkit.archive.posts import AUTHORED_KINDS, post_key
from mcpkit.archive.store import Store
from mcpkit.archive.store._queries import ThreadNode
from mcpkit.errors import ValidationError

__all__ = ["MAX_THREAD_POSTS", "PostNotFoundError", "Thread", "candidate_keys", "find_post", "walk"]

MAX_THREAD_POSTS = 10_000
"""Posts one walk visits at most (a thread longer than this is cut, not followed forever)."""

_X_URL = re.compile(r"^https?://(?:www\.|mobile\.)?(?:twitter\.com|x\.com)/[^/]+/status(?:es)?/(\d+)")
_BSKY_URL = re.compile(r"^https?://(?:www\.)?bsky\.app/profile/(did:[^/]+)/post/([^/?#]+)")
_INTEGER = re.compile(r"-?\d+")


class PostNotFoundError(ArchiveError):
    """No archived post answers to the reference given."""


@dataclass(frozen=True, slots=True)
class Thread:
    """The posts of a conversation the archive holds.

    ``posts`` is the self-reply chain in time order, the asked-for post among them at
    ``focus``; ``parent`` the post the chain replies to when archived; ``parent_ref`` what the
    chain's first post replies to (``""`` when it replies to nothing), archived or not.
    """

    focus: int
    posts: tuple[ThreadNode, ...]
    parent: ThreadNode | None
    parent_ref: str
    truncated: bool = False

    @property
    def focus_offset(self) -> int:
        return next(i for i, node in enumerate(self.posts) if node.post_id == self.focus)


def candidate_keys(reference: str) -> list[int]:
    """Archive keys ``reference`` can name, most likely first (none: look it up by text)."""
    text = reference.strip()
    if _INTEGER.fullmatch(text):
        number = int(text)
        return [number] if -(2**63) <= number < 2**63 else []
    match = _X_URL.match(text)
    if match:
        return [int(match.group(1))]
    if text.startswith("at://"):
        return [post_key("bluesky", text)]
    match = _BSKY_URL.match(text)
    if match:
        return [post_key("bluesky", f"at://{match.group(1)}/app.bsky.feed.post/{match.group(2)}")]
    if text.startswith(("https://", "http://")):
        return [post_key("mastodon", text)]
    return []


def find_post(store: Store, reference: str) -> ThreadNode:
    """The archived post ``reference`` names; :class:`PostNotFoundError` when there is none."""
    text = reference.strip() if isinstance(reference, str) else ""
    if not text:
        raise ValidationError("Invalid params: id is required (an X id, a post URL or an at:// URI)")
    keys = candidate_keys(text)
    found = store.thread_nodes(keys) if keys else {}
    for key in keys:
        if key in found:
            return found[key]
    post_id = store.post_id_by_reference(text)
    node = store.thread_nodes([post_id]).get(post_id) if post_id is not None else None
    if node is None:
        raise PostNotFoundError(f"no post {text} in the archive")
    return node


def _parent_key(node: ThreadNode) -> int | None:
    """The archive key of the post ``node`` replies to (``None``: no reply, or no such key)."""
    if not node.reply_to:
        return None
    if node.platform == "x":
        return int(node.reply_to) if node.reply_to.isdigit() and len(node.reply_to) < 20 else None
    return post_key(node.platform, node.reply_to)


def _same_author(a: ThreadNode, b: ThreadNode) -> bool:
    if a.platform != b.platform:
        return False
    if a.user and b.user:
        return a.user.lower() == b.user.lower()
    return bool(a.account) and account_key(a.account) == account_key(b.account)


def _in_chain(node: ThreadNode, focus: ThreadNode) -> bool:
    return node.kind in AUTHORED_KINDS and _same_author(node, focus)


def walk(store: Store, focus: ThreadNode) -> Thread:
    """The thread of ``focus``: up through its self-replied ancestors, down through every
    self-reply hanging off the chain, at most :data:`MAX_THREAD_POSTS` posts."""
    chain: dict[int, ThreadNode] = {focus.post_id: focus}
    parent: ThreadNode | None = None
    top = focus
    truncated = False
    if focus.kind in AUTHORED_KINDS:
        while len(chain) < MAX_THREAD_POSTS:
            key = _parent_key(top)
            above = store.thread_nodes([key]).get(key) if key is not None else None
            if above is None or above.post_id in chain:
                break
            if not _in_chain(above, focus):
                parent = above
                break
            chain[above.post_id] = above
            top = above
        frontier = list(chain.values())
        while frontier and not truncated:
            fresh: list[ThreadNode] = []
            for node in store.replies_to(focus.platform, [n.source_form for n in frontier]):
                if node.post_id in chain or not _in_chain(node, focus):
                    continue
                if len(chain) >= MAX_THREAD_POSTS:
                    truncated = True
                    break
                chain[node.post_id] = node
                fresh.append(node)
            frontier = fresh
        truncated = truncated or len(chain) >= MAX_THREAD_POSTS
    elif (key := _parent_key(focus)) is not None:
        parent = store.thread_nodes([key]).get(key)
    ordered = sorted(chain.values(), key=lambda n: (n.ts is None, n.ts or 0, n.post_id))
    return Thread(focus.post_id, tuple(ordered), parent, top.reply_to, truncated)
