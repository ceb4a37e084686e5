"""Trim a Mastodon ``outbox.json`` to what the judged set ships (see README.md in this folder).

    python tests/search_quality/real/trim.py SOURCE_FOLDER DEST.tar.gz

SOURCE_FOLDER holds the export's ``outbox.json`` and ``actor.json``; DEST is a tar.gz as Mastodon
writes one (``outbox.json`` first), which is what a person downloads and imports.

Kept: every public or unlisted ``Create`` (its Note's id, url, dates, reply target, content
warning and HTML content, as the export wrote them) and every public ``Announce`` (a boost:
only the boosted post's URI, as in the export). Left out: direct and followers-only posts (a
published archive is no reason to ship private conversations), media attachments (their files are
not shipped), tags and the ``contentMap`` copy of the content, signatures, reply
collections and conversation ids. Nothing is rewritten.
"""

from __future__ import annotations

import argparse
import io
import json
import tarfile
from pathlib import Path
from typing import Any

PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
KEPT_OBJECT = ("id", "type", "summary", "inReplyTo", "published", "url", "attributedTo", "to", "cc")
KEPT_OBJECT_TAIL = ("sensitive", "content")


def is_public(activity: dict[str, Any]) -> bool:
    addressed = [*(activity.get("to") or []), *(activity.get("cc") or [])]
    return PUBLIC in addressed


def trimmed(activity: dict[str, Any]) -> dict[str, Any] | None:
    if not is_public(activity):
        return None
    head = {key: activity[key] for key in ("id", "type", "actor", "published", "to", "cc") if key in activity}
    obj = activity.get("object")
    if activity.get("type") == "Announce" and isinstance(obj, str):
        return {**head, "object": obj}
    if activity.get("type") != "Create" or not isinstance(obj, dict) or not is_public(obj):
        return None
    note = {key: obj[key] for key in (*KEPT_OBJECT, *KEPT_OBJECT_TAIL) if key in obj}
    note["attachment"] = []
    return {**head, "object": note}


ACTOR_KEYS = ("@context", "id", "type", "preferredUsername", "name", "url", "outbox", "published")


def trim(source: Path, dest: Path) -> int:
    """Write ``dest`` (a tar.gz) from the export in the folder ``source``; the items kept."""
    outbox = json.loads((source / "outbox.json").read_text(encoding="utf-8"))
    actor = json.loads((source / "actor.json").read_text(encoding="utf-8"))
    items = [kept for item in outbox["orderedItems"] if (kept := trimmed(item)) is not None]
    out = {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": "outbox.json",
        "type": "OrderedCollection",
        "totalItems": len(items),
        "orderedItems": items,
    }
    files = {
        "outbox.json": json.dumps(out, ensure_ascii=False, separators=(",", ":")),
        "actor.json": json.dumps({k: actor[k] for k in ACTOR_KEYS if k in actor}, ensure_ascii=False),
    }
    with tarfile.open(dest, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            archive.addfile(info, io.BytesIO(data))
    return len(items)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("source", type=Path)
    parser.add_argument("dest", type=Path)
    args = parser.parse_args()
    print(f"{trim(args.source, args.dest)} items kept")


if __name__ == "__main__":
    main()
