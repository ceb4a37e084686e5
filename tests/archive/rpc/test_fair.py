"""Fair under load, over real WebSocket connections: idle sockets never lock out an active
client, and other clients' batches never stand between a client and its one search."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.importers import import_csv
from mcpkit.archive.rpc import RpcServer, RpcServerOptions
from mcpkit.archive.rpc.fair import FairLimiter
from mcpkit.archive.store import Store
from tests.archive.helpers import row, write_csv
from tests.archive_faces.tiny_api import TinyAPI
from tests.archive_faces.wire import raw_connect, recv_json, rpc, send_json

pytestmark = pytest.mark.anyio

WORDS = ["cat", "dog", "rain", "tea", "train", "river", "night", "book", "code", "sky"]


@pytest.fixture
def tiny_api() -> TinyAPI:
    return TinyAPI()


@pytest.fixture(scope="module")
def text_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few thousand posts, so a text search does real FTS work."""
    folder = tmp_path_factory.mktemp("fair")
    rows = [
        row(i, f"user{i % 7}", " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 12)) + f" #{i}")
        for i in range(1, 4001)
    ]
    store = Store(folder / "fair.db")
    try:
        import_csv(write_csv(folder / "posts.csv", rows), store)
    finally:
        store.close()
    return folder / "fair.db"


@pytest.fixture
async def text_api(text_db: Path) -> AsyncIterator[ArchiveAPI]:
    api = ArchiveAPI.open(text_db)
    yield api
    await api.aclose()


# -- idle sockets ---------------------------------------------------------------------------------


async def test_256_idle_sockets_do_not_lock_out_an_active_client(tiny_api: TinyAPI) -> None:
    """The cap is full of silent connections; an active client (a connection per request, as
    upstream's clients do) is admitted every time, the silent ones are closed to make room."""
    async with RpcServer(tiny_api, RpcServerOptions(port=0, max_connections=256)) as server:
        idle = [await raw_connect(server.url) for _ in range(256)]
        assert server.connections == 256
        for i in range(40):
            ws = await raw_connect(server.url)
            assert (await rpc(ws, "add", [i, 1], req_id=i))["result"] == i + 1
            await ws.close()
        # a persistent active client is answered too, while the silent ones keep arriving
        active = await raw_connect(server.url)
        for i in range(20):
            idle.append(await raw_connect(server.url))
            assert (await rpc(active, "add", [i, 2], req_id=i))["result"] == i + 2
        assert server.evictions >= 20  # at least one per silent newcomer
        for ws in idle[: server.evictions]:  # the longest silent went first, each told why
            with pytest.raises(ConnectionClosed) as info:
                await asyncio.wait_for(ws.recv(), 30)
            assert info.value.rcvd is not None and info.value.rcvd.code == 1001
            assert info.value.rcvd.reason == "idle: closed to admit another"
        for ws in [*idle, active]:
            await ws.close()


# -- batches beside a single searcher ---------------------------------------------------------------


async def test_batches_do_not_stand_between_a_client_and_its_search(text_api: ArchiveAPI) -> None:
    """Ten connections send 100-item text-search batches; a single searcher's every request is
    granted at the next freed slot or the one after (never behind the batches' backlog), and
    its searches are answered while batch items are still waiting."""
    grants: list[tuple[Any, int]] = []

    def observe(key: Hashable, overtaken: int) -> None:
        grants.append((getattr(key, "remote_address", None), overtaken))

    async with RpcServer(text_api, RpcServerOptions(port=0, max_inflight=2)) as server:
        server.limiter.observer = observe
        batchers = [await raw_connect(server.url) for _ in range(10)]
        single = await raw_connect(server.url)
        for n, ws in enumerate(batchers):
            batch = [
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "search_posts_by_text",
                    "params": {"search_term": WORDS[(n + i) % len(WORDS)]},
                }
                for i in range(100)
            ]
            await send_json(ws, batch)
        while server.limiter.waiting() < 500:  # the batches are queued
            await asyncio.sleep(0.005)
        mine = single.local_address
        waiting_when_answered = []
        for i in range(10):
            answer = await rpc(single, "search_posts_by_text", {"search_term": "river"}, req_id=i)
            assert isinstance(answer["result"], list) and answer["result"]
            waiting_when_answered.append(server.limiter.waiting())
        for ws in batchers:
            answers = await asyncio.wait_for(recv_json(ws), 300)
            assert len(answers) == 100 and all("result" in a for a in answers)
            await ws.close()
        await single.close()
    single_grants = [overtaken for address, overtaken in grants if address == mine]
    assert len(single_grants) == 10
    assert max(single_grants) <= 1, single_grants  # one freed slot to a batch at most, then mine
    # the single searcher was served between batch items, not after the batches
    assert all(waiting > 0 for waiting in waiting_when_answered), waiting_when_answered
    batch_grants = [overtaken for address, overtaken in grants if address != mine]
    assert len(batch_grants) == 1000
    assert max(batch_grants) > 10  # batch items did queue behind each other


# -- the limiter's policy -------------------------------------------------------------------------


async def test_fresh_clients_cannot_starve_a_batch() -> None:
    """A crowd of one-at-a-time clients and one backlogged connection: grants alternate, so the
    batch still gets every other slot."""
    limiter = FairLimiter(1)
    order: list[str] = []
    gate = asyncio.Event()

    async def job(key: str) -> None:
        async with limiter.slot(key, burst=key == "batch"):
            order.append(key)
            await gate.wait()

    holder = asyncio.create_task(job("holder"))
    await asyncio.sleep(0)
    batch = [asyncio.create_task(job("batch")) for _ in range(4)]
    crowd = [asyncio.create_task(job(f"c{i}")) for i in range(4)]
    while limiter.waiting() < 8:
        await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(holder, *batch, *crowd)
    assert order == ["holder", "c0", "batch", "c1", "batch", "c2", "batch", "c3", "batch"]
    assert limiter.in_use == 0 and limiter.waiting() == 0


async def test_slow_stream_reader_holds_no_slot(tiny_api: TinyAPI) -> None:
    """A streamed answer holds a slot while a chunk is made, not while it waits to be sent: a
    client that never reads its endless stream does not take the server's slots away."""
    async with RpcServer(tiny_api, RpcServerOptions(port=0, max_inflight=1)) as server:
        reader = await raw_connect(server.url)
        await send_json(reader, {"jsonrpc": "2.0", "id": 1, "method": "endless"})
        await tiny_api.stream_started.wait()
        other = await raw_connect(server.url)
        for i in range(5):
            assert (await rpc(other, "add", [i, i], req_id=i))["result"] == 2 * i
        await reader.close()
        await other.close()
