#!/usr/bin/env python3
"""Write the sample Twilog archive that mcpkit ships (src/mcpkit/archive/data/sample_twilog.csv).

Run once; the output is committed. Deterministic (fixed seed), so re-running yields the same
file byte for byte. The archive is invented: four users posting in Japanese and English about
a handful of topics, with multi-line posts, HTML entities (as Twilog exports them), URLs,
@mentions, hashtags, and likes (log_type 2) and bookmarks (log_type 3) of each other's posts.
"""

from __future__ import annotations

import csv
import datetime as dt
import html
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "mcpkit" / "archive" / "data" / "sample_twilog.csv"

TOPICS: dict[str, list[str]] = {
    "cats": [
        "うちの猫が窓辺で日向ぼっこしている。気持ちよさそうに寝ている。",
        "猫がキーボードの上で寝てしまって仕事にならない。",
        "朝五時に猫に起こされた。ごはんの催促がすごい。",
        "猫の爪切りに成功した。今日一番の達成感。",
        "新しい猫じゃらしを買ったら一瞬で壊された。",
        "My cat has claimed the sunny spot by the window again.",
        "The cat knocked my coffee off the desk & looked proud of it.",
        "Cats sleep sixteen hours a day and still seem tired.",
    ],
    "coffee": [
        "朝のコーヒーを淹れる時間が一日で一番好き。",
        "浅煎りの豆を買ってみた。酸味が華やかで美味しい。",
        "ハンドドリップの湯温を88度にしたら味がまろやかになった。",
        "カフェで作業すると捗る気がする。気のせいかもしれない。",
        "Trying a light roast from Ethiopia this week. Fruity &amp; bright.",
        "Pour-over at 92 degrees tastes much better than boiling water.",
    ],
    "python": [
        "Pythonの型ヒントを全部付けたらmypyが大量のエラーを出してきた。",
        "asyncioのキャンセル処理、いまだに難しいと感じる。",
        "SQLiteのFTS5でtrigram検索を試した。日本語でもちゃんと動く。",
        "numpyのargpartitionで上位k件を取ると全ソートより速い。",
        "テストが通らないと思ったらタイムゾーンの問題だった。",
        "Refactored the parser today. Tests went from 40 s to 3 s.",
        "Wrote a property-based test with hypothesis and it found a bug in five seconds.",
        "TIL: if x &lt; 0 and y &gt; 0 is not the same as x*y &lt; 0 when zero is involved.",
        "JSON-RPC over WebSocket is a nice fit for a local search server.",
    ],
    "travel": [
        "京都の紅葉を見に行った。人は多いけれど本当にきれいだった。",
        "北海道で食べた味噌ラーメンが忘れられない。",
        "新幹線の窓から富士山が見えた。晴れていてラッキー。",
        "沖縄の海は透明度が高くて魚がたくさん見えた。",
        "旅先で雨に降られたけれど、美術館でゆっくり過ごせた。",
        "Kyoto in autumn: the maple leaves were unreal.",
        "Took the night train to Sapporo. Slept badly, worth it anyway.",
    ],
    "books": [
        "積読が五十冊を超えた。読むより買う方が速い。",
        "村上春樹の短編を読み返している。何度読んでも新しい発見がある。",
        "技術書は紙で読みたい派。付箋をたくさん貼るので。",
        "Finished &quot;The Remains of the Day&quot; on the train. Quietly devastating.",
        "My to-read pile is now taller than the cat.",
        "Reading a book about the history of Unicode. Surprisingly gripping.",
    ],
    "weather": [
        "今日は朝から大雨。傘を忘れてびしょ濡れになった。",
        "梅雨明けしたらしい。いきなり真夏の暑さ。",
        "雪が積もった。子どもの頃みたいにわくわくする。",
        "台風が近づいている。ベランダの植木鉢を片付けた。",
        "Heavy rain all morning and I forgot my umbrella, of course.",
        "First snow of the year! Everything is quiet.",
    ],
    "music": [
        "久しぶりにピアノを弾いた。指が全然動かない。",
        "ライブに行ってきた。生の音はやっぱり違う。",
        "作業用BGMはいつも同じアルバムになってしまう。",
        "Practising the same four bars of Chopin for a week now.",
        "Live music after two years. My ears are still ringing.",
    ],
}

USERS = {
    "hanako_dev": (["python", "coffee", "cats", "books"], "ja"),
    "kenji_travel": (["travel", "weather", "music", "coffee"], "ja"),
    "alice_reads": (["books", "cats", "coffee", "music"], "en"),
    "bob_codes": (["python", "travel", "weather", "cats"], "mix"),
}

TAGS = {
    "cats": " #猫のいる暮らし",
    "python": " #python",
    "travel": " #旅行",
    "books": " #読書",
    "coffee": " #coffee",
    "weather": " #天気",
    "music": " #music",
}

EXTRAS = [
    "{tag}",
    "{tag}",
    " https://example.com/blog/{n}",
    " @{other} わかる",
    " @{other} same here",
    "",
    "",
    "",
    "",
    "",
]


def is_japanese(text: str) -> bool:
    return any("\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" for ch in text)


def pick_sentences(rng: random.Random, topic: str, lang: str) -> list[str]:
    pool = TOPICS[topic]
    if lang == "ja":
        pool = [s for s in pool if is_japanese(s)] or pool
    elif lang == "en":
        pool = [s for s in pool if not is_japanese(s)] or pool
    count = rng.choices([1, 2, 3], weights=[6, 3, 1])[0]
    return rng.sample(pool, min(count, len(pool)))


def main() -> int:
    rng = random.Random(20261122)
    start = dt.datetime(2024, 1, 1, 8, 0, 0)
    rows: list[list[str]] = []
    own: list[tuple[int, str, str, str, str]] = []
    post_id = 1742000000000000000
    moment = start
    for n in range(330):
        user = rng.choice(list(USERS))
        topics, lang = USERS[user]
        topic = rng.choice(topics)
        sentences = pick_sentences(rng, topic, lang)
        joiner = rng.choice(["\n", "\n", "\n\n", " "])
        content = joiner.join(sentences)
        other = rng.choice([u for u in USERS if u != user])
        content += rng.choice(EXTRAS).format(n=n, other=other, tag=TAGS[topic])
        moment += dt.timedelta(minutes=rng.randint(60, 2400))
        post_id += rng.randint(10**12, 10**13)
        url = f"https://x.com/{user}/status/{post_id}"
        stamp = moment.strftime("%Y-%m-%d %H:%M:%S")
        # Twilog exports keep the HTML entities of the original; sentences above already carry
        # some (&amp; &lt; &gt; &quot;), the rest gets & and < escaped the way Twitter did.
        stored = content if "&" in content else html.escape(content, quote=False)
        own.append((post_id, url, stamp, stored, user))
        rows.append([str(post_id), url, stamp, stored, "1"])
    # Likes and bookmarks: other users' posts appear again with log_type 2 or 3 (a later row
    # with a larger log_type wins on import); a few are both liked and bookmarked.
    for post in rng.sample(own, 60):
        rows.append([str(post[0]), post[1], post[2], post[3], rng.choice(["2", "3"])])
    for post in rng.sample(own, 8):
        rows.append([str(post[0]), post[1], post[2], post[3], "2"])
        rows.append([str(post[0]), post[1], post[2], post[3], "3"])
    rows.sort(key=lambda r: (r[2], r[0], r[4]))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows ({len(own)} posts) to {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
