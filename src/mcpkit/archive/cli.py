"""``mcpkit archive ...``: the command-line face of the archive.

Data commands (import, embed) call the data modules directly; query commands (search, text,
stats, users, shell) go through the one API — over the server when one answers at
``--url``/``$MCPKIT_ARCHIVE_URL``, else in-process on the DB — and say which on stderr.
Exit codes: 0 ok, 1 failure, 2 usage (bad flags or bad params).

This module is the only reader of the archive's environment variables (the table in
docs/archive.md): it turns each into a value the library takes, so a test or an embedding
program sets an option by passing it, and a variable never changes a library call behind its
caller's back.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import logging
import os
import sqlite3
import sys
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, get_type_hints

import typer

from mcpkit.archive import messages as m
from mcpkit.archive import texts
from mcpkit.archive.filters import FILTER_PARAMS
from mcpkit.archive.limits import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_TEXT_CHARS,
    InputLimits,
)
from mcpkit.archive.messages import LANGS, Lang, choose_lang
from mcpkit.archive.methods import METHODS, Method
from mcpkit.archive.rpc.api_protocol import ArchiveAPIProtocol
from mcpkit.archive.rpc.client import DEFAULT_URL, ENV_URL, RpcClient
from mcpkit.archive.rpc.security import ENV_ORIGINS, ENV_TOKEN, SecurityConfigError, parse_origins
from mcpkit.cli_kit import (
    AllowOriginOpt,
    HostOpt,
    JsonOpt,
    ListenPortOpt,
    MaxMessageBytesOpt,
    ServingOptions,
    TokenEnvOpt,
    TraceFlagOpt,
    env_flag,
    env_value,
    fail,
    logging_from_env,
    option_set,
    print_json,
    token_from_env,
    with_option_sets,
)
from mcpkit.errors import McpkitError, ValidationError
from mcpkit.jsonrpc import error_fields

if TYPE_CHECKING:  # loaded where used: `mcpkit archive --help` must not pay for numpy or rich
    from rich.progress import Progress

    from mcpkit.archive.api import ArchiveAPI
    from mcpkit.archive.daemon import ServeSpec
    from mcpkit.archive.embedders import EmbedEndpoint
    from mcpkit.archive.store import Store

app = typer.Typer(
    help="Search your own posts: import X, Mastodon, Bluesky and Twilog exports, embed them "
    "offline, search by meaning or words from the command line, a shell, MCP or a local web page.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

T = TypeVar("T")
SPEC_COMMAND = "serve-spec"  # mcpkit.archive.daemon.SPEC_COMMAND, kept here so --help loads no daemon


def _db_option(value: str | Path) -> Path:
    """``--db`` as the person typed it, checked before ``Path`` collapses a URL's ``//``."""
    from mcpkit.archive.location import archive_path

    try:
        return archive_path(value)
    except ValidationError as exc:
        fail(str(exc))


DbOpt = Annotated[
    Path | None,
    typer.Option(
        "--db",
        parser=_db_option,
        help="Archive database file; default $MCPKIT_ARCHIVE_DB or the XDG data dir.",
    ),
]
UrlOpt = Annotated[
    str | None,
    typer.Option("--url", help=f"The archive server's URL, used when it answers; default ${ENV_URL}."),
]
# The URL of the server to talk to is --url in every part (mcpkit call/tools/check say so too).
# The archive spelled it --server (which names a config entry in the client commands) and, for
# mcp, --websocket/--ws; those spellings still work, unlisted, so existing client configs run.
OldUrlOpt = Annotated[str | None, typer.Option("--server", hidden=True)]
OldMcpUrlOpt = Annotated[str | None, typer.Option("--websocket", "--ws", hidden=True)]


LangOpt = Annotated[
    str | None,
    typer.Option(
        "--lang",
        help=f"Language of the text printed: {' or '.join(LANGS)}; default Japanese when the "
        "locale (LC_ALL, LC_MESSAGES, LANG) is, else English.",
        show_default=False,
    ),
]


def _lang(flag: str | None) -> Lang:
    """The language of human text: ``--lang``, else the locale's."""
    try:
        return choose_lang(flag, os.environ)
    except ValueError as exc:
        fail(str(exc), 2)


def _err(message: str) -> None:
    typer.echo(message, err=True)


# -- the environment: read here only, passed on as values ---------------------------------------

ENV_EXACT = "MCPKIT_ARCHIVE_EXACT"
ENV_EMBED_URL = "MCPKIT_EMBED_URL"
ENV_EMBED_KEY = "MCPKIT_EMBED_API_KEY"
ENV_ENRICH_URL = "MCPKIT_ENRICH_URL"
ENV_ENRICH_MODEL = "MCPKIT_ENRICH_MODEL"


def _db_path(db: Path | None) -> Path:
    from mcpkit.archive.location import default_db_path

    if db is not None:
        return Path(db)
    try:
        return default_db_path(os.environ)
    except ValidationError as exc:
        fail(str(exc))


def _state_dir() -> Path:
    from mcpkit.archive.daemon import state_dir

    return state_dir(os.environ)


def _endpoint() -> EmbedEndpoint:
    """Where ``openai:`` embedding models are served, and their key."""
    from mcpkit.archive.embedders import EmbedEndpoint

    return EmbedEndpoint(env_value(ENV_EMBED_URL), env_value(ENV_EMBED_KEY))


def _exact() -> bool:
    return env_flag(ENV_EXACT)


def _server_url(given: str | None) -> str:
    return given or env_value(ENV_URL) or DEFAULT_URL


def _origins(allow_origin: list[str] | None) -> tuple[str, ...]:
    """The browser origins a server allows besides its own: ``--allow-origin``, else
    ``$MCPKIT_ARCHIVE_ORIGINS`` (comma-separated)."""
    return tuple(allow_origin or parse_origins(env_value(ENV_ORIGINS)))


def _token(token_env: str | None = None) -> str | None:
    """The shared secret: from the variable ``--token-env`` names (unset is a usage error),
    else ``$MCPKIT_ARCHIVE_TOKEN`` when set. Never an argv value, which ``ps`` shows."""
    return token_from_env("--token-env", token_env) if token_env else env_value(ENV_TOKEN)


def _open_api(
    path: Path, limits: InputLimits | None = None, *, create: bool = False, lang: Lang = "en"
) -> ArchiveAPI:
    """The API on an existing archive; a missing one is refused unless ``create`` (a mistyped
    --db must not quietly create an empty archive), a database fault is one line naming the cause."""
    from mcpkit.archive.api import ArchiveAPI

    if not create:
        require_archive(path, lang)
    try:
        return ArchiveAPI.open(path, limits=limits, exact=_exact(), endpoint=_endpoint())
    except McpkitError as exc:
        fail(m.CANNOT_OPEN(lang, path=path, reason=m.in_lang(exc, lang)))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return a.resolve() == b.resolve()


def require_archive(path: Path, lang: Lang = "en") -> None:
    if not path.exists():
        fail(m.NO_ARCHIVE(lang, path=path))


def _run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def _progress() -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=None,
        transient=False,
        disable=not sys.stderr.isatty(),
    )


# -- data in ------------------------------------------------------------------------------------


MaxBytesOpt = Annotated[
    int, typer.Option("--max-bytes", min=1, help="Largest export accepted, in bytes once decompressed.")
]
MaxLineOpt = Annotated[int, typer.Option("--max-line-bytes", min=1, help="Longest line accepted, in bytes.")]
CreateOpt = Annotated[bool, typer.Option("--create", help="Create the archive when --db does not exist.")]


@contextlib.contextmanager
def _opened_store(db: Path | None, action: m.Message, *, create: bool, lang: Lang = "en") -> Iterator[Store]:
    """The store at ``--db`` for one command; every failure becomes one line and exit 1 (2 for
    a bad parameter). An archive this command created is removed again when it fails, so a
    refused import leaves nothing behind."""
    from mcpkit.archive.store import Store, describe_db_error, remove_database

    path = _db_path(db)
    existed = path.exists()
    if not existed and not create:
        fail(m.NO_ARCHIVE(lang, path=path))
    try:
        store = Store(path)
    except McpkitError as exc:
        fail(m.CLI_FAILED(lang, action=action(lang), reason=m.in_lang(exc, lang)))
    done = False
    try:
        yield store
        done = True
    except sqlite3.Error as exc:
        fail(m.CLI_FAILED(lang, action=action(lang), reason=describe_db_error(path, exc)))
    except McpkitError as exc:
        fail(
            m.CLI_FAILED(lang, action=action(lang), reason=m.in_lang(exc, lang)),
            2 if isinstance(exc, ValidationError) else 1,
        )
    finally:
        store.close()
        if not done and not existed:
            remove_database(path)


@app.command("import")
def import_cmd(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Exports: Twilog CSV (.csv, .csv.gz, .zip), X archive (zip or folder), "
            "Mastodon archive (tar.gz, tar.bz2, tar.xz, zip or folder), Bluesky repository (.car).",
            show_default=False,
        ),
    ],
    db: DbOpt = None,
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
    max_line_bytes: MaxLineOpt = DEFAULT_MAX_LINE_BYTES,
    handle: Annotated[
        str,
        typer.Option(
            "--handle",
            help="The handle of a Bluesky CAR's account (alice.bsky.social): the CAR holds only its DID.",
            show_default=False,
        ),
    ] = "",
    as_json: JsonOpt = False,
    lang: LangOpt = None,
) -> None:
    """Import exports into one archive, each in one transaction; re-importing adds nothing twice."""
    from mcpkit.archive.importers.detect import detect
    from mcpkit.archive.importers.export_file import ReadLimits
    from mcpkit.archive.importers.flow import import_export

    logging_from_env()
    chosen = _lang(lang)
    path = _db_path(db)
    limits = ReadLimits(max_bytes, max_line_bytes)
    try:  # every path is recognised before anything is written
        formats = [(export, detect(export)) for export in paths]
    except McpkitError as exc:
        fail(m.CLI_FAILED(chosen, action=m.IMPORT_ACTION(chosen), reason=m.in_lang(exc, chosen)))
    if handle and not any(found.takes_handle for _, found in formats):
        fail(m.CLI_FAILED(chosen, action=m.IMPORT_ACTION(chosen), reason=m.HANDLE_WITHOUT_CAR(chosen)), 2)
    results: list[Any] = []
    failure: McpkitError | None = None
    existed = path.exists()
    with (
        _opened_store(db, m.IMPORT_ACTION, create=True, lang=chosen) as store,
        _import_progress(chosen) as bar,
    ):
        try:
            for export, found in formats:
                reader = found.open(export, limits, handle=handle)
                task = bar.add_task(f"{export.name}", total=None, records=0)

                def progress(records: int, done: int, total: int, task: Any = task) -> None:
                    bar.update(task, completed=done or records, total=total or None, records=records)

                def finishing(task: Any = task, name: str = export.name) -> None:
                    bar.update(task, description=m.IMPORT_WRITING(chosen, name=name), refresh=True)

                result = import_export(reader, export, store, progress=progress, finishing=finishing)
                bar.update(task, completed=1, total=1)
                results.append(result)
                if not as_json:
                    typer.echo(f"{export}: {result.line(chosen)}")
                    for sample in result.read.samples[1:]:  # the first is on the line
                        _err(m.MALFORMED_SAMPLE(chosen, sample=sample))
        except (McpkitError, KeyboardInterrupt) as exc:
            if not results and not existed:
                raise  # nothing imported: the new archive goes again
            # the exports before this one are in: keep them (a rerun imports the rest)
            failure = (
                exc
                if isinstance(exc, McpkitError)
                else McpkitError(m.IMPORT_INTERRUPTED(chosen, done=len(results), total=len(formats)))
            )
    if as_json:
        print_json(_import_report(path, results))
    if failure is not None:
        fail(m.CLI_FAILED(chosen, action=m.IMPORT_ACTION(chosen), reason=m.in_lang(failure, chosen)))


def _import_report(db: Path, results: list[Any]) -> dict[str, Any]:
    """``--json``: the totals (as a single Twilog import always reported them) and each export."""
    totals = {
        key: sum(r.as_dict()[key] for r in results)
        for key in ("rows", "new", "updated", "unchanged", "duplicates_in_file", "malformed")
    }
    return {"db": str(db), **totals, "exports": [r.as_dict() for r in results]}


def _import_progress(lang: Lang) -> Progress:
    """One bar per export on stderr: bytes read where the reader knows them, and records read."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn(m.RECORDS_READ(lang, count="{task.fields[records]:,}")),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not sys.stderr.isatty(),
    )


@app.command("import-twilog-search")
def import_twilog_search_cmd(
    directory: Annotated[Path, typer.Argument(help="A twilog-search installation directory.")],
    db: DbOpt = None,
    csv_path: Annotated[
        Path | None, typer.Option("--csv", help="The Twilog CSV, when meta.json does not lead to it.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Bring posts, enrichments and vectors across from a twilog-search installation."""
    from mcpkit.archive.importers.twilog_search import import_twilog_search

    logging_from_env()
    with _opened_store(db, m.IMPORT_ACTION, create=True) as store:
        report = import_twilog_search(directory, store, csv_path=csv_path)
    if as_json:
        print_json(report)
        return
    typer.echo(json.dumps(report, ensure_ascii=False, indent=2, default=str))
    for bad in report.get("skipped_lines", [])[:20]:
        _err(f"  {bad['file']} line {bad['line']}: {bad['reason']}")


@app.command("embed")
def embed_cmd(
    space: Annotated[str, typer.Option("--space", help="content, reasoning or summary.")] = "content",
    model: Annotated[
        str | None, typer.Option("--model", help="Embedding model; default the bundled multilingual model.")
    ] = None,
    fresh: Annotated[
        bool,
        typer.Option("--fresh", help="Delete the space's vectors first, to re-embed with another model."),
    ] = False,
    repair: Annotated[
        bool,
        typer.Option("--repair", help="Rebuild a damaged space: keep its intact rows, embed the rest."),
    ] = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
    lang: LangOpt = None,
) -> None:
    """Embed what is missing in a vector space (resumable after a kill)."""
    from mcpkit.archive.embedders import create_embedder
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.settings import SPACES
    from mcpkit.archive.vectors import drop_space, vectors_root

    logging_from_env()
    chosen = _lang(lang)
    if space not in SPACES:
        fail(m.SPACE_CHOICE(chosen, spaces=", ".join(SPACES), space=repr(space)), 2)
    with (
        _opened_store(db, m.EMBED_COMMAND_ACTION, create=False, lang=chosen) as store,
        _progress() as bar,
    ):
        embedder = create_embedder(model, _endpoint())
        if fresh and drop_space(vectors_root(store.path), space):
            _err(m.SPACE_DELETED(chosen, space=space, model=embedder.name))
        embedding = m.EMBEDDING_SPACE(chosen, space=space)
        task = bar.add_task(embedding, total=None)

        def announce(line: str) -> None:  # above the bar: the model may load for many seconds
            _err(line)
            if line == m.LOADING_MODEL(chosen, model=embedder.name):
                bar.update(task, description=line)

        summary = embed_missing(
            store,
            space,
            embedder,
            progress=lambda done, total: bar.update(
                task, completed=done, total=total, description=embedding if done else None
            ),
            announce=announce,
            repair=repair,
            lang=chosen,
        )
    if as_json:
        print_json(summary.as_dict())
    else:
        typer.echo(
            m.EMBED_DONE(
                chosen,
                space=summary.space,
                embedded=summary.embedded,
                already=summary.already,
                empty=summary.empty,
                model=summary.model,
            )
        )


@app.command("enrich")
def enrich_cmd(
    endpoint: Annotated[
        str | None,
        typer.Option("--endpoint", help="OpenAI-compatible /v1 URL; default $MCPKIT_ENRICH_URL or ollama's."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Chat model; default $MCPKIT_ENRICH_MODEL or qwen3:4b.")
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=256, help="Requests in flight.")
    ] = 8,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Enrich at most N posts this run.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only count the posts due and estimate the tokens.")
    ] = False,
    embed: Annotated[
        bool,
        typer.Option("--embed/--no-embed", help="Embed the reasoning and summary spaces afterwards."),
    ] = True,
    db: DbOpt = None,
    as_json: JsonOpt = False,
    lang: LangOpt = None,
) -> None:
    """Add reasoning, summary and tags to posts with an LLM (resumable, idempotent)."""
    from mcpkit.archive.enrich import DEFAULT_ENDPOINT, DEFAULT_MODEL, EnrichClient, plan_enrichment
    from mcpkit.archive.enrich import enrich as run_enrich
    from mcpkit.archive.enrich.client import api_key_from

    logging_from_env()
    chosen = _lang(lang)
    endpoint = endpoint or env_value(ENV_ENRICH_URL) or DEFAULT_ENDPOINT
    model = model or env_value(ENV_ENRICH_MODEL) or DEFAULT_MODEL
    with _opened_store(db, m.ENRICH_ACTION, create=False, lang=chosen) as store:
        plan = plan_enrichment(store, limit)
        if dry_run:
            report = {"endpoint": endpoint, "model": model, **plan.as_dict()}
            if as_json:
                print_json(report)
            else:
                typer.echo(
                    m.ENRICH_PLAN(
                        chosen,
                        due=f"{report['due']:,}",
                        failed_before=f"{report['failed_before']:,}",
                        done_before=f"{report['done_before']:,}",
                        imported=f"{report['imported']:,}",
                        empty=f"{report['empty']:,}",
                        input_tokens=f"{report['estimated_input_tokens']:,}",
                        output_tokens=f"{report['estimated_output_tokens']:,}",
                        model=model,
                        endpoint=endpoint,
                    )
                )
            return
        client = EnrichClient(endpoint, model, api_key=api_key_from(os.environ))
        with _enrich_progress(chosen) as bar:
            task = bar.add_task(m.ENRICHING(chosen), total=len(plan.due), tokens=0)

            def progress(done: int, total: int, tokens: int) -> None:
                bar.update(task, completed=done, total=total, tokens=tokens)

            async def go() -> Any:
                try:
                    return await run_enrich(store, client, plan, concurrency=concurrency, progress=progress)
                finally:
                    await client.aclose()

            summary = _run(go())
        embedded = _embed_enrichments(store) if embed and summary.enriched else []
    report = {"endpoint": endpoint, "model": model, **summary.as_dict(), "embedded": embedded}
    if as_json:
        print_json(report)
    else:
        rate = summary.enriched / summary.seconds if summary.seconds else 0.0
        typer.echo(
            m.ENRICH_DONE(
                chosen,
                enriched=f"{summary.enriched:,}",
                failed=f"{summary.failed:,}",
                seconds=f"{summary.seconds:.1f}",
                rate=f"{rate:.1f}",
                tokens=f"{summary.prompt_tokens + summary.completion_tokens:,}",
            )
        )
        for item in embedded:
            typer.echo(
                m.ENRICH_EMBEDDED(
                    chosen, space=item["space"], embedded=f"{item['embedded']:,}", model=item["model"]
                )
            )
    for post_id, reason in summary.failures[:20]:
        _err(m.POST_FAILED(chosen, id=post_id, reason=m.in_lang(reason, chosen)))
    if summary.failed:
        _err(m.POSTS_FAILED(chosen, count=f"{summary.failed:,}"))


def _enrich_progress(lang: Lang) -> Progress:
    """Bar, count, rate, tokens used, elapsed and remaining time."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(m.POSTS_PER_SECOND(lang, rate="--" if speed is None else f"{speed:.1f}"))

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TextColumn(m.TOKENS_USED(lang, count="{task.fields[tokens]:,}")),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        disable=not sys.stderr.isatty(),
    )


def _embed_enrichments(store: Store) -> list[dict[str, Any]]:
    """Embed the reasoning and summary spaces with the content space's model (so the hybrid
    modes compare like with like), or the default model when there is no content space."""
    from mcpkit.archive.embedders import create_embedder
    from mcpkit.archive.embedding import embed_missing
    from mcpkit.archive.vectors import describe, vectors_root

    content = describe(vectors_root(store.path)).get("content")
    embedder = create_embedder(content["model"] if content else None, _endpoint())
    done = []
    for space in ("reasoning", "summary"):
        summary = embed_missing(store, space, embedder)
        done.append({"space": space, "embedded": summary.embedded, "model": summary.model})
    return done


# -- the server ---------------------------------------------------------------------------------


TextCapOpt = Annotated[
    int, typer.Option("--max-text-chars", min=1, help="Longest query, search term or embed text.")
]
ConnCapOpt = Annotated[int, typer.Option("--max-connections", min=1, help="Open connections at most.")]
BatchOpt = Annotated[int, typer.Option("--max-batch", min=1, help="Requests in one JSON-RPC batch at most.")]
IdleOpt = Annotated[
    float,
    typer.Option("--idle-timeout", min=0, help="Seconds before a silent connection is closed; 0 never."),
]


def _spec(
    *,
    host: str,
    port: int,
    db: Path | None,
    token_env: str | None,
    allow_origin: list[str] | None,
    max_message_bytes: int,
    max_text_chars: int,
    max_connections: int,
    max_batch: int,
    idle_timeout: float,
    trace: bool,
    create: bool,
    lang: Lang = "en",
) -> ServeSpec:
    """The one value ``serve`` and ``start`` run, from their options and the environment; a
    bind that others could reach without a token is refused here, before anything starts."""
    from mcpkit.archive.daemon import ServeSpec
    from mcpkit.archive.rpc.security import AccessPolicy
    from mcpkit.archive.rpc.server import RpcServerOptions

    options = RpcServerOptions(
        host=host,
        port=port,
        token=_token(token_env),
        allowed_origins=_origins(allow_origin),
        max_message_bytes=max_message_bytes,
        max_connections=max_connections,
        max_batch=max_batch,
        idle_timeout=idle_timeout,
        trace=trace,
    )
    try:
        AccessPolicy.for_bind(host, options.token)
    except SecurityConfigError as exc:
        fail(str(exc), 2)
    path = _db_path(db)
    if not create:
        require_archive(path, lang)
    return ServeSpec(
        db=str(path),
        server=options,
        limits=InputLimits(max_text_chars=max_text_chars),
        create=create,
        exact=_exact(),
        endpoint=_endpoint(),
    )


def _serve(spec: ServeSpec) -> None:
    """Run the server of ``spec`` in this process until it is stopped."""
    from mcpkit.archive.api import ArchiveAPI
    from mcpkit.archive.rpc.server import run_server

    logging_from_env("info")
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)  # which CPU build it picked
    path = Path(spec.db)
    if not spec.create:
        require_archive(path)
    try:
        api = ArchiveAPI.open(path, limits=spec.limits, exact=spec.exact, endpoint=spec.endpoint)
    except McpkitError as exc:
        fail(f"cannot open {path}: {exc}")
    api.warm_in_background()  # filter columns and vector indexes; queries meanwhile run exact
    try:
        _run(
            run_server(
                api, spec.server, on_ready=lambda url: _err(f"archive server ready at {url} (db {path})")
            )
        )
    except SecurityConfigError as exc:
        fail(str(exc), 2)
    except OSError as exc:
        fail(f"cannot listen on {spec.server.host}:{spec.server.port}: {exc.strerror or exc}")
    finally:
        api.close()


@app.command("serve")
def serve_cmd(
    host: HostOpt = "127.0.0.1",
    port: ListenPortOpt = 8765,
    db: DbOpt = None,
    token_env: TokenEnvOpt = None,
    allow_origin: AllowOriginOpt = None,
    max_message_bytes: MaxMessageBytesOpt = 1 << 20,
    max_text_chars: TextCapOpt = DEFAULT_MAX_TEXT_CHARS,
    max_connections: ConnCapOpt = 256,
    max_batch: BatchOpt = 100,
    idle_timeout: IdleOpt = 300.0,
    trace: TraceFlagOpt = False,
    create: CreateOpt = False,
) -> None:
    """Serve the archive over WebSocket JSON-RPC 2.0 in the foreground."""
    _serve(
        _spec(
            host=host,
            port=port,
            db=db,
            token_env=token_env,
            allow_origin=allow_origin,
            max_message_bytes=max_message_bytes,
            max_text_chars=max_text_chars,
            max_connections=max_connections,
            max_batch=max_batch,
            idle_timeout=idle_timeout,
            trace=trace,
            create=create,
        )
    )


@app.command(SPEC_COMMAND, hidden=True)
def serve_spec_cmd() -> None:
    """The background server ``start`` spawns: its options as JSON on stdin (never in argv)."""
    from mcpkit.archive.daemon import ServeSpec

    try:
        spec = ServeSpec.from_json(sys.stdin.read())
    except (ValueError, KeyError, TypeError) as exc:
        fail(f"{SPEC_COMMAND} reads the server's options as JSON on stdin: {exc}", 2)
    _serve(spec)


def _with_serve_options(command: Callable[..., None]) -> Callable[..., None]:
    """Give ``command`` every option of ``serve`` ahead of its own (typer reads the signature),
    so ``start`` cannot lack one again: it once lacked --trace and --max-message-bytes because
    it listed the options a second time and rebuilt serve's argv from them."""
    shared = inspect.signature(serve_cmd, eval_str=True).parameters.values()
    own = [
        p
        for p in inspect.signature(command, eval_str=True).parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    command.__signature__ = inspect.Signature([*shared, *own])  # type: ignore[attr-defined]
    command.__annotations__ = {
        **get_type_hints(serve_cmd, include_extras=True),
        **get_type_hints(command, include_extras=True),
    }
    return command


@app.command("start")
@_with_serve_options
def start_cmd(
    *,
    ready_timeout: Annotated[
        float, typer.Option("--ready-timeout", help="Seconds to wait for readiness.")
    ] = 120.0,
    lang: LangOpt = None,
    **serve_options: Any,
) -> None:
    """Start the server in the background (every serve option applies); returns once it answers."""
    from mcpkit.archive import daemon

    chosen = _lang(lang)
    spec = _spec(**serve_options, lang=chosen)
    try:
        state = daemon.start(spec, _state_dir(), ready_timeout=ready_timeout)
    except daemon.DaemonError as exc:
        fail(exc.text(chosen))
    except McpkitError as exc:
        fail(str(exc))
    typer.echo(m.SERVER_STARTED(chosen, url=state.url, pid=state.pid, log=state.log))


@app.command("stop")
def stop_cmd(lang: LangOpt = None) -> None:
    """Stop the background server started by ``start``."""
    from mcpkit.archive import daemon

    chosen = _lang(lang)
    state = daemon.stop(_state_dir())
    if state is None:
        fail(m.NO_SERVER_RUNNING(chosen), 1)
    typer.echo(m.SERVER_STOPPED(chosen, pid=state.pid))


@app.command("status")
def status_cmd(as_json: JsonOpt = False, lang: LangOpt = None) -> None:
    """Show whether the background server runs and answers; exit 1 when it does not."""
    from mcpkit.archive import daemon

    info = daemon.status(_state_dir(), token=_token())
    if not info["running"]:
        other = daemon.probe(_server_url(None), _token(), timeout=1.0)
        if other is not None:  # not ours, but it is what the query commands would reach
            info["other_server"] = {"url": _server_url(None), **other}
    chosen = _lang(lang)
    if as_json:
        print_json(info)
    elif not info["running"]:
        typer.echo(m.STATUS_NOT_RUNNING(chosen))
        if info.get("other_server"):
            other = info["other_server"]
            typer.echo(
                m.STATUS_OTHER_SERVER(chosen, url=other["url"], server=daemon.describe_server(other, chosen))
            )
    else:
        served = (info.get("server") or {}).get("db")
        typer.echo(
            m.STATUS_RUNNING(chosen, url=info["url"], pid=info["pid"], db=served or m.DB_NOT_NAMED(chosen))
        )
        if info.get("server"):
            typer.echo(texts.format_status(info["server"], chosen).rstrip())
        else:
            typer.echo(m.STATUS_SILENT(chosen))
    if not (info["running"] and info.get("answers")):
        raise typer.Exit(1)


# -- queries ------------------------------------------------------------------------------------


async def _connect_api(given_url: str | None, db: Path | None, lang: Lang = "en") -> ArchiveAPIProtocol:
    """The server when it answers (unless --db was given), else the API in-process.

    The line on stderr names the archive that answers. When ``$MCPKIT_ARCHIVE_DB`` names one
    and the server serves another, the named one is searched in-process: queries used to go
    silently to whatever answered on the port (200,000 posts of another archive instead of 185).
    """
    if db is None:
        client = await _answering_server(_server_url(given_url), lang)
        if client is not None:
            return client
    path = _db_path(db)
    api = _open_api(path, lang=lang)
    _err(m.IN_PROCESS(lang, path=path))
    return api


async def _answering_server(url: str, lang: Lang = "en") -> RpcClient | None:
    """A client of the archive server at ``url`` when it answers and serves the archive
    ``$MCPKIT_ARCHIVE_DB`` names (if it names one), else None; a line on stderr says which."""
    from mcpkit.archive.location import ENV_DB

    client = RpcClient(url, token=_token(), connect_timeout=2.0)
    named = env_value(ENV_DB)
    try:
        status = await client.call("get_status", {})
    except Exception:
        await client.aclose()
        _err(m.NO_SERVER_ANSWERS(lang, url=url))
        return None
    served = status.get("db") if isinstance(status, dict) else None
    if named and served and not _same_file(Path(named).expanduser(), Path(served)):
        await client.aclose()
        _err(m.OTHER_ARCHIVE_SERVED(lang, url=url, served=served, variable=ENV_DB, named=named))
        return None
    _err(m.USING_SERVER(lang, url=url, db=served or m.DB_NOT_NAMED_BY_SERVER(lang)))
    return client


async def _default_server_answers() -> bool:
    client = await _answering_server(DEFAULT_URL)
    if client is not None:
        await client.aclose()
    return client is not None


async def _call_once(
    url: str | None, db: Path | None, method: str, params: dict[str, Any], lang: Lang = "en"
) -> Any:
    api = await _connect_api(url, db, lang)
    try:
        return await api.call(method, params)
    finally:
        await api.aclose()


def _text_render(
    url: str | None, db: Path | None, terms: str, params: dict[str, Any], lang: Lang
) -> Callable[[Any], str]:
    """The text answer, numbered from ``offset`` + 1; when no post holds every word (asked from
    the first), also whether some post comes close in meaning (a hybrid search of the same
    words under the same filters, and its verdict)."""

    def render(posts: Any) -> str:
        offset = params.get("offset", 0)
        shown = texts.format_text_results(terms, posts, lang, start=offset + 1)
        if posts or offset or params.get("source") != "content":
            return shown
        filters = {k: v for k, v in params.items() if k not in ("search_term", "limit", "offset", "source")}
        try:
            hits = _run(_call_once(url, db, "search_similar", texts.meaning_search(terms, filters), lang))
        except Exception:  # no vectors yet, a model that cannot load: the words' answer stands
            return shown
        return shown + texts.meaning_note(hits, lang)

    return render


def _query(
    url: str | None,
    db: Path | None,
    method: str,
    params: dict[str, Any],
    render: Callable[[Any], str],
    as_json: bool,
    lang: Lang = "en",
) -> None:
    try:
        result = _run(_call_once(url, db, method, params, lang))
    except typer.Exit:
        raise
    except Exception as exc:
        fields = error_fields(exc)
        if fields is not None:
            fail(fields[1], 2 if fields[0] == -32602 else 1)
        fail(str(exc))
    if as_json:
        print_json(result)
    else:
        typer.echo(render(result).rstrip("\n"))


_FILTER_HELP = {param.key: param.help for param in FILTER_PARAMS}
"""The filters' help, declared once (:data:`~mcpkit.archive.filters.FILTER_PARAMS`) for every face."""
KindOpt = Annotated[
    list[str] | None, typer.Option("--kind", help=f"{_FILTER_HELP['kind']} Repeatable, or a,b.")
]
PlatformOpt = Annotated[
    list[str] | None, typer.Option("--platform", help=f"{_FILTER_HELP['platform']} Repeatable.")
]
AccountOpt = Annotated[
    list[str] | None, typer.Option("--account", help=f"{_FILTER_HELP['account']} Repeatable.")
]
MediaOpt = Annotated[
    bool | None, typer.Option("--has-media/--no-media", help="Only posts with pictures or video, or without.")
]
VisibilityOpt = Annotated[
    list[str] | None, typer.Option("--visibility", help=f"{_FILTER_HELP['visibility']} Repeatable, or a,b.")
]


_SIMILAR, _TEXT = METHODS["search_similar"], METHODS["search_posts_by_text"]
_USERS, _THREAD = METHODS["get_user_stats"], METHODS["get_thread"]
_MODE_DEFAULT, _SOURCE_DEFAULT = str(_SIMILAR.param("mode").default), str(_TEXT.param("source").default)

if TYPE_CHECKING:
    ModeChoice = str
    SourceChoice = str
else:  # the declared choices, as click checks them (typer reads the annotation at run time)
    ModeChoice = Literal[_SIMILAR.param("mode").choices]
    SourceChoice = Literal[_TEXT.param("source").choices]


def _declared(method: Method, name: str, *flags: str) -> Any:
    """An option from the API's one declaration of the parameter (:mod:`mcpkit.archive.methods`):
    its help and range; its choices come with its type (``ModeChoice``, ``SourceChoice``)."""
    param = method.param(name)
    return typer.Option(*flags, min=param.minimum, max=param.maximum, help=param.help)


@option_set
@dataclasses.dataclass(frozen=True)
class PostFilters:
    """Which posts a query counts or finds: the filter options every query command takes
    (search, text, stats, users), declared once."""

    kind: KindOpt = None
    platform: PlatformOpt = None
    account: AccountOpt = None
    has_media: MediaOpt = None
    visibility: VisibilityOpt = None

    def request(self) -> dict[str, Any]:
        """The request keys of these options (the API reads and checks them)."""
        from mcpkit.archive.filters import request_filters

        return request_filters(self.kind, self.platform, self.account, self.has_media, self.visibility)


@option_set
@dataclasses.dataclass(frozen=True)
class Target:
    """Which archive a query command asks: the server at ``--url`` when it answers, else the
    database at ``--db``; declared once for every query command and the shell."""

    url: UrlOpt = None
    db: DbOpt = None
    server: OldUrlOpt = None

    @property
    def given_url(self) -> str | None:
        """The URL given, in either spelling."""
        return self.url or self.server


def _weights(raw: str | None) -> list[float] | None:
    if raw is None:
        return None
    try:
        return [float(w) for w in raw.split(",") if w.strip()]
    except ValueError:
        raise typer.BadParameter("weights are numbers separated by commas, like .7,.2,.1") from None


@app.command("search")
@with_option_sets
def search_cmd(
    query: Annotated[str, typer.Argument(help="What to look for; V|T adds a word filter T.")],
    *,
    top_k: Annotated[int, _declared(_SIMILAR, "top_k", "--top-k", "-k")] = _SIMILAR.param("top_k").default,
    offset: Annotated[int, _declared(_SIMILAR, "offset", "--offset")] = _SIMILAR.param("offset").default,
    mode: Annotated[ModeChoice, _declared(_SIMILAR, "mode", "--mode")] = _MODE_DEFAULT,
    weights: Annotated[
        str | None,
        typer.Option("--weights", help=f"{_SIMILAR.param('weights').help} Written like .7,.2,.1."),
    ] = None,
    user: Annotated[list[str] | None, _declared(_SIMILAR, "includes", "--user")] = None,
    exclude_user: Annotated[list[str] | None, _declared(_SIMILAR, "excludes", "--exclude-user")] = None,
    min_posts: Annotated[int | None, _declared(_SIMILAR, "threshold_min", "--min-posts")] = None,
    max_posts: Annotated[int | None, _declared(_SIMILAR, "threshold_max", "--max-posts")] = None,
    date_from: Annotated[str | None, _declared(_SIMILAR, "from", "--from")] = None,
    date_to: Annotated[str | None, _declared(_SIMILAR, "to", "--to")] = None,
    filters: PostFilters,
    target: Target,
    as_json: JsonOpt = False,
    lang: LangOpt = None,
) -> None:
    """Search posts by meaning (semantic search); posts, replies and quotes unless --kind says."""
    settings: dict[str, Any] = {"top_k": top_k}
    user_filter = {
        k: v
        for k, v in (
            ("includes", user),
            ("excludes", exclude_user),
            ("threshold_min", min_posts),
            ("threshold_max", max_posts),
        )
        if v
    }
    if user_filter:
        settings["user_filter"] = user_filter
    dates = {k: v for k, v in (("from", date_from), ("to", date_to)) if v}
    if dates:
        settings["date_filter"] = dates
    params: dict[str, Any] = {
        "query": query,
        "settings": settings,
        "mode": mode,
        **({"offset": offset} if offset else {}),  # the wire of a first page stays upstream's
        **filters.request(),
    }
    parsed = _weights(weights)
    if parsed is not None:
        params["weights"] = parsed
    chosen = _lang(lang)
    _query(
        target.given_url,
        target.db,
        "search_similar",
        params,
        lambda r: texts.format_search_results(query, r, chosen, start=offset + 1),
        as_json,
        chosen,
    )


@app.command("text")
@with_option_sets
def text_cmd(
    terms: Annotated[str, typer.Argument(help='Words to find; "a phrase", -exclude.')],
    *,
    limit: Annotated[int, _declared(_TEXT, "limit", "--limit")] = _TEXT.param("limit").default,
    offset: Annotated[int, _declared(_TEXT, "offset", "--offset")] = _TEXT.param("offset").default,
    source: Annotated[SourceChoice, _declared(_TEXT, "source", "--source")] = _SOURCE_DEFAULT,
    filters: PostFilters,
    target: Target,
    as_json: JsonOpt = False,
    lang: LangOpt = None,
) -> None:
    """Find posts containing words, newest first; posts, replies and quotes unless --kind says."""
    params = {
        "search_term": terms,
        "limit": limit,
        **({"offset": offset} if offset else {}),
        "source": source,
        **filters.request(),
    }
    chosen = _lang(lang)
    _query(
        target.given_url,
        target.db,
        "search_posts_by_text",
        params,
        _text_render(target.given_url, target.db, terms, params, chosen),
        as_json,
        chosen,
    )


@app.command("stats")
@with_option_sets
def stats_cmd(
    *,
    filters: PostFilters,
    target: Target,
    as_json: JsonOpt = False,
    lang: LangOpt = None,
) -> None:
    """Count posts and users, by kind, platform and account, and show the date range; every
    count is of the posts the options select (posts, replies and quotes unless --kind says)."""
    params = filters.request()
    chosen = _lang(lang)
    _query(
        target.given_url,
        target.db,
        "get_database_stats",
        params,
        lambda r: texts.format_database_stats(r, chosen),
        as_json,
        chosen,
    )


@app.command("users")
@with_option_sets
def users_cmd(
    *,
    limit: Annotated[int, _declared(_USERS, "limit", "--limit")] = _USERS.param("limit").default,
    filters: PostFilters,
    target: Target,
    as_json: JsonOpt = False,
    lang: LangOpt = None,
) -> None:
    """List users by number of posts (posts, replies and quotes unless --kind says)."""
    params = {"limit": limit, **filters.request()}
    chosen = _lang(lang)
    _query(
        target.given_url,
        target.db,
        "get_user_stats",
        params,
        lambda r: texts.format_user_stats(r, chosen),
        as_json,
        chosen,
    )


@app.command("thread")
@with_option_sets
def thread_cmd(
    post: Annotated[
        str, typer.Argument(help="The post: an X id, a link to the post, or an at:// or Mastodon URI.")
    ],
    *,
    limit: Annotated[int, _declared(_THREAD, "limit", "--limit")] = _THREAD.param("limit").default,
    offset: Annotated[int, _declared(_THREAD, "offset", "--offset")] = _THREAD.param("offset").default,
    target: Target,
    as_json: JsonOpt = False,
    lang: LangOpt = None,
) -> None:
    """Show a post in its conversation: its author's chain of replies and the post it answers."""
    params = {"id": post, "limit": limit, "offset": offset}
    chosen = _lang(lang)
    _query(
        target.given_url,
        target.db,
        "get_thread",
        params,
        lambda r: _thread_text(post, r, chosen),
        as_json,
        chosen,
    )


def _thread_text(post: str, thread: dict[str, Any], lang: Lang) -> str:
    text = texts.format_thread(post, thread, lang)
    if thread.get("next_offset") is not None:
        text += (
            m.THREAD_MORE(
                lang, returned=thread["returned"], total=thread["total_count"], next=thread["next_offset"]
            )
            + "\n"
        )
    return text


@app.command("shell")
@with_option_sets
def shell_cmd(*, target: Target, lang: LangOpt = None) -> None:
    """Interactive search with slash commands (/help lists them)."""
    from mcpkit.archive.api import ArchiveAPI
    from mcpkit.archive.shell import run_shell

    chosen = _lang(lang)
    api = _run(_connect_api(target.given_url, target.db, chosen))
    if isinstance(api, ArchiveAPI):  # in-process: a long session, worth warming up
        api.warm_in_background()
    run_shell(
        api,
        history=_state_dir() / "archive_history",
        banner=[m.SHELL_BANNER(chosen)],
        lang=chosen,
    )


@app.command("mcp")
@with_option_sets
def mcp_cmd(
    *,
    url: Annotated[
        str | None,
        typer.Option("--url", help=f"Forward to the archive server at this URL; default ${ENV_URL}."),
    ] = None,
    db: DbOpt = None,
    serving: ServingOptions,
    max_text_chars: TextCapOpt = DEFAULT_MAX_TEXT_CHARS,
    create: CreateOpt = False,
    websocket: OldMcpUrlOpt = None,
    embed_tool: Annotated[
        bool,
        typer.Option(
            "--embed-tool",
            help="With --db, also serve embed: compute missing vectors (a task for clients that take tasks).",
        ),
    ] = False,
    lang: LangOpt = None,
) -> None:
    """Run the MCP server: a thin wrapper over the archive server, or in-process with --db."""
    from mcpkit.archive.mcp import build_archive_mcp
    from mcpkit.server import OAuthOptions, ServerOptions, serve

    http = serving.http_changes(OAuthOptions)
    chosen = _lang(lang)
    url = url or websocket
    if url and db:
        fail("give --url or --db, not both", 2)
    if embed_tool and db is None:
        fail("--embed-tool needs --db: embedding runs in-process", 2)
    api: ArchiveAPIProtocol
    if db is None and url is None and env_value(ENV_URL) is None and not _run(_default_server_answers()):
        # No server named or running: the default archive, as a client's one-line config expects.
        db = _db_path(None)
    if db is not None:
        limits = InputLimits(max_text_chars=max_text_chars)
        if not db.exists() and not create:
            from mcpkit.archive.api import ArchiveAPI
            from mcpkit.archive.first_run import FirstRunAPI

            # A fresh install: serve, and say how to import, instead of exiting before initialize.
            path = db
            api = FirstRunAPI(
                path, lambda: ArchiveAPI.open(path, limits=limits, exact=_exact(), endpoint=_endpoint())
            )
            _err(api.missing_message(chosen))
        else:
            local = _open_api(db, limits, create=create)
            local.warm_in_background()
            api = local
    else:
        url = _server_url(url)
        api = RpcClient(url, token=_token())
    options = ServerOptions.from_environ(os.environ).with_http(**http)
    server = build_archive_mcp(api, websocket_url=url, options=options, embed_tool=embed_tool, lang=chosen)
    serve(server, serving.transport.value)


@app.command("web")
def web_cmd(
    db: DbOpt = None,
    host: HostOpt = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to serve on.")] = 8766,
    token_env: TokenEnvOpt = None,
    allow_origin: AllowOriginOpt = None,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the page in a browser.")] = False,
    lang: LangOpt = None,
) -> None:
    """Serve the archive as a local web app: search as you type, timeline, posts in their threads."""
    from mcpkit.archive.web.serve import serve_web

    chosen = _lang(lang)
    api = _open_api(_db_path(db))
    try:
        serve_web(
            api,
            host=host,
            port=port,
            token=_token(token_env),
            allowed_origins=_origins(allow_origin),
            open_browser=open_browser,
            lang=chosen,
        )
    except SecurityConfigError as exc:
        fail(str(exc), 2)
    finally:
        api.close()


if __name__ == "__main__":  # `python -m mcpkit.archive.cli`: works without the top-level mount
    app(prog_name="mcpkit archive")
