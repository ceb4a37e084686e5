"""Kind filters at ten million posts: one relation bit test per post against the kind code
lookup the archive did before posts kept a set of relations (schema 7).

    .venv/bin/python bench/archive_kind_filter.py [POSTS]

Prints the best of seven runs of each and their ratio; the default filter's check for direct
posts (which hides nothing where no post is direct) separately.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from mcpkit.archive.filters import AUTHORED, PostFilter
from mcpkit.archive.posts import KINDS, VISIBILITIES
from mcpkit.archive.store import facet_mask


def best(run: Callable[[], object], times: int = 7) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        spent.append(time.perf_counter() - start)
    return min(spent) * 1000


def main(count: int) -> None:
    rng = np.random.default_rng(1)
    codes = rng.integers(0, len(KINDS), count).astype(np.uint8)
    relations = (1 << codes).astype(np.uint8)
    relations[rng.random(count) < 0.05] |= 1 << KINDS.index("like")
    others = np.zeros(count, np.uint8), np.zeros(count, np.int32), np.zeros(count, bool)
    visibilities = np.zeros(count, np.uint8)
    authored = [KINDS.index(k) for k in ("post", "reply", "quote")]

    def before() -> object:  # schema 7: one kind code per post, one table lookup
        table = np.zeros(256, bool)
        table[authored] = True
        return table[codes]

    def now(post_filter: PostFilter) -> Callable[[], object]:
        return lambda: facet_mask(relations, others[0], others[1], others[2], visibilities, (), post_filter)

    old = best(before)
    new = best(now(AUTHORED))
    like = best(now(PostFilter(kinds=frozenset({"like"}))))
    direct = best(lambda: np.any(visibilities == VISIBILITIES.index("direct")))
    print(f"{count:,} posts")
    print(f"  authored kinds, kind codes (before): {old:7.1f} ms")
    print(f"  authored kinds, relation bits:       {new:7.1f} ms  ({new / old:.2f}x)")
    print(f"  --kind like, relation bits:          {like:7.1f} ms  ({like / old:.2f}x)")
    print(f"  any direct post (default filter):    {direct:7.1f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000)
