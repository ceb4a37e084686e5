"""The archive's web face: a local web app to search and browse a whole archive.

``mcpkit archive web`` serves it (Starlette, Jinja2 templates, vendored htmx; every asset in
this package). Its pages and their JSON mirror are built on the one archive API; facet counts
and the timeline come from :mod:`.queries`.
"""

from mcpkit.archive.web.serve import DEFAULT_PORT, serve_web

__all__ = ["DEFAULT_PORT", "serve_web"]
