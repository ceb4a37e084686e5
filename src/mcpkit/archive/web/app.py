"""The Starlette app: pages, their JSON mirror under ``/api``, media from the exports, assets.

Every page is plain HTML that works without script (a GET form and links); the vendored htmx
makes the same requests in place: search as you type (debounced, a newer request cancels the
one in flight), facets without a reload, more results as the list scrolls. The URL is updated
on each, so it always holds the whole state.
"""

from __future__ import annotations

import datetime as dt
import mimetypes
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import anyio.to_thread
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from mcpkit.archive import messages as m
from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.export_media import export_member, read_member
from mcpkit.archive.facets import FACETS
from mcpkit.archive.messages import Lang, Said, Worded
from mcpkit.archive.web.access import WebAccess
from mcpkit.archive.web.render import post_html, post_html_parts
from mcpkit.archive.web.views import PageState, Views, parse_month, parse_state
from mcpkit.errors import ValidationError

__all__ = ["MEDIA_MAX_BYTES", "build_app", "templates_env"]

MEDIA_MAX_BYTES = 200 * 2**20
"""The largest attachment served from inside a zip or tar export (read whole into memory)."""
_MEDIA_TYPES = ("image/", "video/", "audio/")
FACET_TITLES = {
    "kind": m.WEB_FACET_KIND,
    "platform": m.WEB_FACET_PLATFORM,
    "account": m.WEB_FACET_ACCOUNT,
    "lang": m.WEB_FACET_LANG,
}


def templates_env(lang: Lang = "en") -> Environment:
    """The Jinja2 environment of the pages: autoescaping on for every template; every human
    string from the catalogue in ``lang`` (``t.NAME(...)``, the page's ``lang`` attribute)."""
    env = Environment(
        loader=PackageLoader("mcpkit.archive.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["post_html"] = post_html
    env.filters["post_html_parts"] = post_html_parts
    words = Worded(lang)
    env.globals.update(
        facet_titles={name: title(lang) for name, title in FACET_TITLES.items()},
        months=words.months(),
        facet_names=FACETS,
        t=words,
        lang=lang,
        said=lambda text: text.text(lang) if isinstance(text, Said) else text,
    )
    return env


def _static_dir() -> Path:
    return Path(str(resources.files("mcpkit.archive.web") / "static"))


def build_app(
    api: ArchiveAPI,
    access: WebAccess,
    *,
    today: Callable[[], dt.date] = dt.date.today,
    views: Views | None = None,
    lang: Lang = "en",
) -> Any:
    """The ASGI app over ``api``, behind ``access``'s checks.

    ``today`` is the day "on this day" opens on (a test passes a fixed one); ``views`` lets a
    caller (the benchmark) warm the app's data before serving; ``lang`` is the pages' language
    (their JSON mirror under ``/api`` is the same in every language)."""
    views = views or Views(api)
    templates = Jinja2Templates(env=templates_env(lang))
    months = Worded(lang).months()

    def state_of(request: Request) -> PageState:
        params: dict[str, list[str]] = {}
        for key, value in request.query_params.multi_items():
            params.setdefault(key, []).append(value)
        return parse_state(params)

    def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
        path = request.url.path
        query = request.url.query
        context.setdefault("state_obj", None)
        context.update(
            path=path, json_url="/api" + (path if path != "/" else "/search") + (f"?{query}" if query else "")
        )
        return templates.TemplateResponse(request, name, context, status_code=status)

    def bad_request(request: Request, exc: ValidationError, json: bool) -> Response:
        if json:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return page(
            request, "error.html", {"title": m.WEB_BAD_REQUEST(lang), "message": str(exc)}, status=400
        )

    def state_page(
        view: Callable[[PageState], Awaitable[dict[str, Any]]],
        template: str,
        title: Callable[[PageState, dict[str, Any]], str],
    ) -> Callable[..., Awaitable[Response]]:
        """A page of the page state in the URL (search, timeline, on this day): its data as
        JSON, or rendered by ``template``; a state that does not parse is a 400 either way."""

        async def handler(request: Request, json: bool = False) -> Response:
            try:
                state = state_of(request)
            except ValidationError as exc:
                return bad_request(request, exc, json)
            data = await view(state)
            if json:
                return JSONResponse(data)
            return page(request, template, {"data": data, "s": state, "title": title(state, data)})

        return handler

    search = state_page(views.search, "search.html", lambda state, _: state.q or m.WEB_SEARCH(lang))
    timeline = state_page(views.timeline, "timeline.html", lambda *_: m.WEB_TIMELINE(lang))
    on_this_day = state_page(
        lambda state: views.on_this_day(state, today()),
        "on_this_day.html",
        lambda _, data: m.WEB_ON_THIS_DAY_TITLE(
            lang, month=months[int(data["day"][:2]) - 1], day=int(data["day"][3:])
        ),
    )

    async def month(request: Request, json: bool = False) -> Response:
        try:
            state = state_of(request)
            year, number = parse_month(str(request.path_params["month"]))
        except ValidationError as exc:
            return bad_request(request, exc, json)
        data = await views.month(state, year, number)
        if json:
            return JSONResponse(data)
        title = m.WEB_MONTH_YEAR(lang, month=months[number - 1], year=year)
        return page(request, "month.html", {"data": data, "s": state, "title": title})

    media_grid = state_page(views.media_grid, "media_grid.html", lambda *_: m.WEB_MEDIA(lang))

    async def post(request: Request, json: bool = False) -> Response:
        reference = str(request.path_params["post_id"])
        try:
            data = await views.post(reference)
        except ValidationError as exc:
            return bad_request(request, exc, json)
        if data is None:
            message = f"No post {reference} in this archive."
            if json:
                return JSONResponse({"error": message}, status_code=404)
            return page(
                request, "error.html", {"title": m.WEB_NOT_FOUND(lang), "message": message}, status=404
            )
        if json:
            return JSONResponse(data)
        return page(
            request, "post.html", {"data": data, "title": m.WEB_POST_TITLE(lang, id=data["post"]["id"])}
        )

    async def media(request: Request) -> Response:
        position = str(request.path_params["position"])
        found = (
            await views.media_file(str(request.path_params["post_id"]), int(position))
            if position.isdecimal()
            else None
        )
        where = export_member(*found) if found is not None else None
        if where is None:
            return Response(
                "This attachment is not in the export on disk.\n", status_code=404, media_type="text/plain"
            )
        file, member = where
        kind = mimetypes.guess_type(member or file.name)[0] or "application/octet-stream"
        headers = {
            "content-security-policy": "sandbox; default-src 'none'",
            "cache-control": "private, max-age=3600",
        }
        if not kind.startswith(_MEDIA_TYPES) or kind == "image/svg+xml":
            headers["content-disposition"] = "attachment"
            kind = "application/octet-stream"
        if not member:
            return FileResponse(file, media_type=kind, headers=headers)

        def read() -> bytes | None:
            return read_member(file, member, MEDIA_MAX_BYTES)

        body = await anyio.to_thread.run_sync(read)
        if body is None:
            return Response(
                "This attachment is not in the export on disk.\n", status_code=404, media_type="text/plain"
            )
        return Response(body, media_type=kind, headers=headers)

    def json_face(handler: Callable[..., Any]) -> Callable[[Request], Any]:
        async def run(request: Request) -> Response:
            response: Response = await handler(request, json=True)
            return response

        return run

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # facet columns are built in the background: the first page waits only if it comes first
        await anyio.to_thread.run_sync(lambda: None)
        import threading

        threading.Thread(target=views.warm, name="mcpkit-web-warm", daemon=True).start()
        yield

    routes = [
        Route("/", search),
        Route("/timeline", timeline),
        Route("/on-this-day", on_this_day),
        Route("/month/{month}", month),
        Route("/media", media_grid),
        Route("/post/{post_id:path}", post),
        Route("/media/{post_id}/{position}", media),
        Route("/api/search", json_face(search)),
        Route("/api/timeline", json_face(timeline)),
        Route("/api/on-this-day", json_face(on_this_day)),
        Route("/api/month/{month}", json_face(month)),
        Route("/api/media", json_face(media_grid)),
        Route("/api/post/{post_id:path}", json_face(post)),
        Mount("/static", StaticFiles(directory=_static_dir()), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.views = views
    return access.wrap(app)
