"""Archive web app benchmark: request times of search, facet and timeline pages, and first paint.

    python bench/archive_web.py --posts 100000            # ~1 min on 2 cores
    python bench/archive_web.py --posts 1000000 --workdir /var/tmp/web1m   # keeps the data

Posts come from bench/archive.py's generator (Twilog CSV, imported by ``import_csv``: the
store's bulk path), then spread over platforms, accounts, languages and media by one UPDATE so
every facet has several values. The app runs under uvicorn on loopback; each request is timed
from the client (so the figures include HTTP on loopback: an upper bound of the server's own
time). Requests are the JSON mirror of each page, which does all of a page's work but the
template. The goal is p95 <= 100 ms at a million posts on this 2-core machine.

First paint: Debian's chromium (when installed) loads the search page for a query and reports
``first-contentful-paint``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mcpkit.archive.api import ArchiveAPI  # noqa: E402
from mcpkit.archive.importers import import_csv  # noqa: E402
from mcpkit.archive.store import Store  # noqa: E402
from mcpkit.archive.web.access import WebAccess  # noqa: E402
from mcpkit.archive.web.app import build_app  # noqa: E402
from mcpkit.archive.web.views import Views  # noqa: E402
from tests.archive.web.test_app import RunningApp, free_port  # noqa: E402


def _generator() -> Any:
    """bench/archive.py's ``write_export`` (one generator for every archive benchmark)."""
    spec = importlib.util.spec_from_file_location("bench_archive", REPO / "bench" / "archive.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.write_export


def build(workdir: Path, posts: int) -> Path:
    db = workdir / f"web-{posts}.db"
    if db.exists():
        return db
    csv_path = workdir / f"web-{posts}.csv"
    started = time.perf_counter()
    _generator()(csv_path, posts)
    store = Store(db)
    try:
        import_csv(csv_path, store)
        with store.transaction() as conn:
            conn.execute(
                "UPDATE posts SET "
                "platform = CASE WHEN post_id % 5 = 0 THEN 'mastodon' WHEN post_id % 17 = 0 THEN 'bluesky' ELSE 'x' END, "
                "account = CASE WHEN post_id % 5 = 0 THEN '@me@example.social' ELSE '@me' END, "
                "lang = CASE post_id % 3 WHEN 0 THEN 'ja' WHEN 1 THEN 'en' ELSE '' END, "
                "has_media = (post_id % 9 = 0), "
                "kind = CASE WHEN kind = 'post' AND post_id % 4 = 0 THEN 'reply' ELSE kind END"
            )
    finally:
        store.close()
    print(f"built {posts:,} posts in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return db


REQUESTS: dict[str, list[str]] = {
    "search": [
        "/api/search?q=python",
        "/api/search?q=coffee",
        "/api/search?q=" + urllib.parse.quote("らーめん"),
        "/api/search?q=" + urllib.parse.quote("東京"),
        "/api/search?q=zzzq",
        "/api/search?q=python+coffee",
        "/api/search?q=coffee&month=2022-03",
        "/api/search?q=release&lang=ja&media=1",
        "/api/search?q=python&offset=30",
        # what is sent as the first characters are typed: one character, then two
        "/api/search?q=" + urllib.parse.quote("猫"),
        "/api/search?q=c",
        "/api/search?q=co",
        "/api/search?q=" + urllib.parse.quote("東"),
    ],
    "facets": [
        "/api/search",
        "/api/search?kind=all",
        "/api/search?month=2023",
        "/api/search?month=2023-06&platform=mastodon",
        "/api/search?lang=ja&media=1",
        "/api/search?kind=reply&account=%40me",
        "/api/search?offset=3000",
    ],
    "timeline": [
        "/api/timeline",
        "/api/timeline?kind=all",
        "/api/timeline?platform=mastodon&lang=en",
        "/api/on-this-day?day=06-15",
    ],
}


def timed(base: str, path: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(base + path, timeout=120) as response:
        response.read()
    return (time.perf_counter() - started) * 1000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


PAINT = """() => new Promise(resolve => {
  new PerformanceObserver(list => {
    const entry = list.getEntriesByName('first-contentful-paint')[0];
    if (entry) resolve(entry.startTime);
  }).observe({type: 'paint', buffered: true});
  setTimeout(() => resolve(null), 10000);
})"""


def first_paint(base: str) -> float | None:
    chromium = Path("/usr/bin/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not chromium.exists():
        return None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        try:
            paints = []
            for query in ("coffee", "python", "東京"):
                page = browser.new_page()
                page.goto(base + "/?q=" + urllib.parse.quote(query))
                page.wait_for_load_state("load")
                paint = page.evaluate(PAINT)
                if paint is not None:
                    paints.append(float(paint))
                page.close()
            return statistics.median(paints) if paints else None
        finally:
            browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--posts", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5, help="times each request is repeated")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the data here (default: a temp dir)")
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args(argv)
    workdir = opts.workdir or Path(tempfile.mkdtemp(prefix="mcpkit-web-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    db = build(workdir, opts.posts)
    api = ArchiveAPI.open(db)
    port = free_port()
    views = Views(api)
    app = build_app(api, WebAccess.for_bind("127.0.0.1", port, None), views=views)
    base = f"http://127.0.0.1:{port}"
    report: dict[str, Any] = {"posts": opts.posts}
    try:
        with RunningApp(app, "127.0.0.1", port):
            started = time.perf_counter()
            timed(base, "/api/timeline")  # builds the facet columns (once per archive generation)
            report["columns_build_ms"] = round((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            views.warm()  # and the text search's tails (the app starts both when it starts)
            report["warm_ms"] = round((time.perf_counter() - started) * 1000)
            # the first time each request is made (a search's matches are then kept for its
            # pages and facet changes), then again as a running app answers them
            first = [timed(base, path) for paths in REQUESTS.values() for path in paths]
            firsts = first[: len(REQUESTS["search"])]
            report["search_first_time"] = {
                "requests": len(firsts),
                "p50_ms": round(percentile(firsts, 0.5), 1),
                "p95_ms": round(percentile(firsts, 0.95), 1),
                "max_ms": round(max(firsts), 1),
            }
            for group, paths in REQUESTS.items():
                times = [timed(base, path) for _ in range(opts.rounds) for path in paths]
                report[group] = {
                    "requests": len(times),
                    "p50_ms": round(percentile(times, 0.5), 1),
                    "p95_ms": round(percentile(times, 0.95), 1),
                    "max_ms": round(max(times), 1),
                }
            slowest = sorted(
                (
                    (statistics.median(timed(base, p) for _ in range(3)), p)
                    for ps in REQUESTS.values()
                    for p in ps
                ),
                reverse=True,
            )[:3]
            report["slowest"] = [{"path": p, "median_ms": round(t, 1)} for t, p in slowest]
            paint = first_paint(base)
            report["first_contentful_paint_ms"] = None if paint is None else round(paint)
    finally:
        api.close()
    if opts.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(
            f"archive web app, {opts.posts:,} posts (facet columns built in {report['columns_build_ms']} ms,"
            f" then text tails in {report['warm_ms']} ms)"
        )
        for group in ("search_first_time", *REQUESTS):
            r = report[group]
            print(
                f"  {group:9s} p50 {r['p50_ms']:7.1f} ms   p95 {r['p95_ms']:7.1f} ms   max {r['max_ms']:7.1f} ms   ({r['requests']} requests)"
            )
        for item in report["slowest"]:
            print(f"  slowest: {item['path']}  {item['median_ms']} ms")
        paint = report["first_contentful_paint_ms"]
        print(
            f"  first contentful paint in chromium: {'n/a (no chromium)' if paint is None else f'{paint} ms'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
