"""The archive's web face: a local web app to search and browse a whole archive.

``mcpkit archive web`` serves it (:mod:`.serve`; Starlette, Jinja2 templates, vendored htmx,
every asset in this package). Its pages and their JSON mirror are built from the one archive
API's methods only (facets, the keystroke search, the timeline, a post: :mod:`mcpkit.archive.pages`
answers them behind the API); nothing here imports the store, the engine or SQL (an
import-linter contract). :mod:`.mcp_app` offers the search and post views inside MCP clients
that render apps.

Nothing is imported here, so the MCP face can add its app view without loading the web app.
"""
