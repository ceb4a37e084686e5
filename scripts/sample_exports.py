#!/usr/bin/env python3
"""Write sample exports to try ``mcpkit archive import`` with, in the current directory:

* ``sample-x-archive.zip``: the X archive of @alice_reads, one of the accounts of the shipped
  Twilog sample (src/mcpkit/archive/data/sample_twilog.csv): her posts with the same ids, some
  of them replies in a thread, a picture with its alt text, and likes of other accounts' posts;
  importing it beside the Twilog CSV shows the merge (each post once, the X archive's reply
  targets and picture added to the Twilog rows);
* ``sample-mastodon.tar.gz``: a Mastodon archive of @alice@example.social with a few toots, a
  boost and a like;
* ``sample-bluesky.car``: the Bluesky repository of the same person, a few posts (one a reply,
  one with a link), a repost and a like; the CAR names her only by her DID, so it is imported
  with ``--handle alice.bsky.social``.

The files are written the way X, Mastodon and a Bluesky server write them, by the project's
own format fixtures
(tests/export_fixtures), so what the tests read is what the sample shows.

    python scripts/sample_exports.py [DIR]
"""

from __future__ import annotations

import csv
import html
import sys
from importlib import resources
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
ACCOUNT = "alice_reads"


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path.cwd()
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO))
    from tests.export_fixtures import bluesky, mastodon
    from tests.export_fixtures.x_archive import XLike, XMedia, XTweet, write_x_archive

    sample = Path(str(resources.files("mcpkit.archive") / "data" / "sample_twilog.csv"))
    with open(sample, encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream))
    own = [r for r in rows if r[4] == "1" and f"/{ACCOUNT}/status/{r[0]}" in r[1]]
    liked = [r for r in rows if r[4] == "2" and f"/{ACCOUNT}/" not in r[1]]
    tweets: list[XTweet] = []
    for number, (post_id, _url, created, content, _kind) in enumerate(sorted(own)):
        text = html.unescape(content)
        if number in (1, 2):  # a thread: the next two posts reply to the first
            tweets.append(XTweet(post_id, text, created, reply_to=tweets[0].id))
        elif number == 3:
            tweets.append(
                XTweet(post_id, text, created, media=(XMedia("photo", "SaMpLe1", "a cat asleep on books"),))
            )
        else:
            tweets.append(XTweet(post_id, text, created))
    likes = [XLike(r[0], html.unescape(r[3]), r[1]) for r in sorted({r[0]: r for r in liked}.values())]
    x_path = write_x_archive(out / "sample-x-archive.zip", tweets[::-1], likes, account=ACCOUNT)

    toots = [
        mastodon.note(
            1,
            mastodon.mastodon_html("Reading on the train again. It's the best part of the day."),
            published="2024-05-01T08:00:00Z",
        ),
        mastodon.note(
            2,
            mastodon.mastodon_html("Finished a novel about a lighthouse keeper.\n\nQuietly wonderful."),
            published="2024-05-03T21:30:00Z",
            in_reply_to=mastodon.status_uri(1),
        ),
        mastodon.note(
            3,
            mastodon.mastodon_html("The cat is asleep on the to-read pile."),
            published="2024-05-04T07:15:00Z",
            summary="cat pictures",
        ),
        mastodon.announce(
            4, "https://other.example/users/bob/statuses/777", published="2024-05-05T12:00:00Z"
        ),
    ]
    archive = mastodon.Archive(toots, likes=["https://other.example/users/bob/statuses/900"])
    m_path = mastodon.write_archive(out / "sample-mastodon.tar.gz", archive)
    repo = bluesky.Repository(_skeets(bluesky))
    b_path = bluesky.write_car(out / "sample-bluesky.car", repo)
    print(
        f"wrote {x_path.name} ({len(tweets)} posts, {len(likes)} likes), {m_path.name} ({len(toots)} items) "
        f"and {b_path.name} ({len(repo.records)} records)"
    )
    return 0


def _skeets(bluesky: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """The Bluesky sample's records: posts, a reply to the first, a repost and a like."""
    post, first = "app.bsky.feed.post", "3ksample00001"
    text, facets, _ = bluesky.text_with_links(
        [("A review of the lighthouse novel: ", "https://example.org/reviews/lighthouse-keeper")]
    )
    other = bluesky.post_uri("3kother000001", bluesky.OTHER)
    return {
        (post, first): {
            "$type": post,
            "text": "Moved my reading notes here.",
            "createdAt": "2024-06-01T09:00:00Z",
        },
        (post, "3ksample00002"): {
            "$type": post,
            "text": "Today's book: a lighthouse keeper and a cat.",
            "reply": {
                "root": bluesky.strong_ref(bluesky.post_uri(first)),
                "parent": bluesky.strong_ref(bluesky.post_uri(first)),
            },
            "langs": ["en"],
            "createdAt": "2024-06-01T09:05:00Z",
        },
        (post, "3ksample00003"): {
            "$type": post,
            "text": text,
            "facets": facets,
            "createdAt": "2024-06-02T18:00:00Z",
        },
        ("app.bsky.feed.repost", "3ksample00004"): {
            "$type": "app.bsky.feed.repost",
            "subject": bluesky.strong_ref(other),
            "createdAt": "2024-06-03T10:00:00Z",
        },
        ("app.bsky.feed.like", "3ksample00005"): {
            "$type": "app.bsky.feed.like",
            "subject": bluesky.strong_ref(other),
            "createdAt": "2024-06-03T10:01:00Z",
        },
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
