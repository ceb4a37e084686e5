"""The evaluation corpus: judged topic posts among everyday filler and hub-like short posts.

Built the same on every machine (a fixed random generator), written as a Twilog CSV and
imported and embedded through the archive's own paths (``import_csv``, ``embed_missing``), so
what is measured is what a user's archive does.

* topic posts (:mod:`tests.search_quality.topics`), the only posts any query is judged to want;
* near misses: posts sharing a topic's words but not its subject;
* filler: everyday posts in Japanese and English made from phrases that belong to no topic;
* hubs: very short and boilerplate posts as real exports have them ("ツイートのテスト",
  "おはよう", "test", check-ins), several times each. With plain cosine these are the
  nearest posts to queries nothing answers (measured in bench/quality.py).
"""

from __future__ import annotations

import csv
import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.search_quality.topics import NO_ANSWER, TOPICS

USERS = ("kenji_travel", "alice_reads", "bob_codes", "mika_cafe", "taro_dev", "sora_photo", "lena_runs")

HUBS: tuple[tuple[str, int], ...] = (
    ("ツイートのテスト", 3),
    ("テスト", 5),
    ("テスト投稿です", 2),
    ("test", 3),
    ("test tweet", 2),
    ("おはよう", 8),
    ("おやすみ", 8),
    ("草", 4),
    ("w", 3),
    ("なるほど", 3),
    ("はい", 3),
    ("ok", 2),
    ("hello world", 2),
    ("Twilogに登録しました。", 1),
    ("I'm at Starbucks", 2),
    ("#nowplaying", 3),
    ("(自動投稿)", 2),
    ("…", 2),
)
"""Short and boilerplate posts and how many times each occurs."""

_JA_WHEN = ("今朝は", "昼休みに", "夕方", "夜に", "週末は", "仕事帰りに", "久しぶりに", "")
_JA_DID = (
    "洗濯物を干した", "駅前のスーパーに寄った", "昼寝をした", "友達と電話した",
    "コンビニでおにぎりを買った", "会議が長引いた", "メールの返信に追われた", "映画を観た",
    "髪を切った", "銀行に行った", "図書館で本を借りた", "お茶を淹れた", "宅配便を受け取った",
    "傘を忘れた", "バスに乗り遅れた", "新しい靴下を買った", "母に電話した", "公園を散歩した",
    "ドラマの最終回を観た", "手帳を整理した", "財布を家に忘れた", "布団を干した",
    "郵便局で荷物を出した", "近所の神社にお参りした", "アイロンがけをした", "鍋でうどんを煮た",
    "写真を整理した", "カーテンを洗った", "日記を書いた", "散髪の予約をした",
)  # fmt: skip
_JA_FELT = (
    "疲れた。", "楽しかった。", "まあまあ。", "明日も頑張ろう。", "眠い。", "いい一日だった。",
    "なんだかなあ。", "のんびりできた。", "ちょっと寒い。", "",
)  # fmt: skip
_EN_WHEN = ("This morning I", "At lunch I", "After work I", "Tonight I", "On Sunday I", "Finally", "Just")
_EN_DID = (
    "did the laundry", "stopped by the grocery store", "took a long nap", "called an old friend",
    "grabbed a sandwich", "sat through a long meeting", "answered emails all day", "watched a movie",
    "got a haircut", "went to the bank", "borrowed books from the library", "made some tea",
    "picked up a package", "forgot my umbrella", "missed the bus", "bought new socks",
    "called my mom", "walked around the park", "watched the season finale", "cleaned out my inbox",
    "left my wallet at home", "repainted the fence", "mailed a letter", "ironed my shirts",
    "sorted old photos", "wrote in my journal", "fixed a squeaky door", "returned a library book",
)  # fmt: skip
_EN_FELT = (
    "Tired.", "Fun day.", "Not bad.", "Back at it tomorrow.", "So sleepy.", "Good day overall.",
    "Meh.", "Pretty relaxing.", "Bit chilly today.", "",
)  # fmt: skip


@dataclass(frozen=True)
class Judged:
    """A query, its class, and the post ids judged to answer it (empty for ``none``)."""

    query: str
    query_class: str
    relevant: frozenset[int]
    topic: str = ""


@dataclass(frozen=True)
class Corpus:
    """Rows written, the judged queries, and which post ids are hubs."""

    rows: tuple[tuple[int, str, str], ...]  # (post_id, user, text)
    queries: tuple[Judged, ...]
    hub_ids: frozenset[int]


def _filler(rng: random.Random, count: int) -> Iterator[str]:
    for _ in range(count):
        if rng.random() < 0.6:
            parts = [f"{rng.choice(_JA_WHEN)}{rng.choice(_JA_DID)}。" for _ in range(rng.randint(1, 2))]
            yield "".join(parts) + rng.choice(_JA_FELT)
        else:
            parts = [f"{rng.choice(_EN_WHEN)} {rng.choice(_EN_DID)}." for _ in range(rng.randint(1, 2))]
            yield (" ".join(parts) + " " + rng.choice(_EN_FELT)).strip()


def build_corpus(filler: int = 2800) -> Corpus:
    """Every post and judged query, shuffled so no ranking can lean on id order."""
    rng = random.Random(20261122)
    texts: list[tuple[str, str]] = []  # (kind, text): kind is a topic key, "hub" or ""
    for topic in TOPICS:
        texts += [(topic.key, post) for post in topic.posts]
        texts += [("", post) for post in topic.near_misses]
    for text, times in HUBS:
        texts += [("hub", text)] * times
    texts += [("", text) for text in _filler(rng, filler)]
    rng.shuffle(texts)
    rows: list[tuple[int, str, str]] = []
    by_topic: dict[str, set[int]] = {}
    hubs: set[int] = set()
    for index, (kind, text) in enumerate(texts):
        post_id = 1_700_000_000_000_000_000 + index * 7919
        # the same text from one user twice is one post to the archive's dedup: a hub repeats
        # across users, as boilerplate does
        user = USERS[index % len(USERS)] if kind != "hub" else USERS[len(rows) % len(USERS)]
        rows.append((post_id, user, text))
        if kind == "hub":
            hubs.add(post_id)
        elif kind:
            by_topic.setdefault(kind, set()).add(post_id)
    queries = [
        Judged(query, query_class, frozenset(by_topic[topic.key]), topic.key)
        for topic in TOPICS
        for query_class, query in topic.queries
    ]
    queries += [Judged(query, "none", frozenset()) for query in NO_ANSWER]
    return Corpus(tuple(rows), tuple(queries), frozenset(hubs))


def write_csv(corpus: Corpus, path: Path) -> Path:
    """The corpus as a Twilog export (upstream's five quoted fields, no header)."""
    start = dt.datetime(2022, 1, 1, 8, 0, 0)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL)
        for index, (post_id, user, text) in enumerate(corpus.rows):
            moment = start + dt.timedelta(minutes=397 * index)
            url = f"https://x.com/{user}/status/{post_id}"
            writer.writerow([str(post_id), url, moment.strftime("%Y-%m-%d %H:%M:%S"), text, "1"])
    return path


def build_archive(directory: Path, corpus: Corpus | None = None) -> tuple[Path, Corpus]:
    """Import and embed the corpus (default model) into ``directory/quality.db``."""
    from mcpkit.archive.embedders import create_embedder
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.importers import import_csv
    from mcpkit.archive.store import Store

    corpus = corpus or build_corpus()
    db = directory / "quality.db"
    store = Store(db)
    try:
        import_csv(write_csv(corpus, directory / "quality.csv"), store)
        embed_missing(store, "content", create_embedder(None))
    finally:
        store.close()
    return db, corpus
