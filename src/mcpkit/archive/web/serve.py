"""Running the web app: check the bind, print where it is, serve until stopped."""

from __future__ import annotations

import sys
import threading
import webbrowser
from collections.abc import Sequence

from mcpkit.archive.api import ArchiveAPI
from mcpkit.archive.messages import Lang
from mcpkit.archive.web.access import WebAccess

__all__ = ["DEFAULT_PORT", "serve_web", "web_url"]

DEFAULT_PORT = 8766


def web_url(host: str, port: int) -> str:
    name = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{name}:{port}/"


def serve_web(
    api: ArchiveAPI,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    allowed_origins: Sequence[str] = (),
    open_browser: bool = False,
    lang: Lang = "en",
) -> None:
    """Serve the web app on ``host:port`` until interrupted.

    Raises :class:`~mcpkit.archive.rpc.security.SecurityConfigError` before binding anything
    when ``host`` is reachable from other machines and no ``token`` is set."""
    import uvicorn

    from mcpkit.archive.web.app import build_app

    access = WebAccess.for_bind(host, port, token, tuple(allowed_origins))
    app = build_app(api, access, lang=lang)
    url = web_url(host, port)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    def announce() -> None:
        while not server.started and not server.should_exit:
            threading.Event().wait(0.05)
        if server.started:
            login = " (log in with the token)" if token else ""
            print(f"Archive web app at {url}{login}", file=sys.stderr, flush=True)
            if open_browser:
                webbrowser.open(url)

    threading.Thread(target=announce, daemon=True).start()
    server.run()
