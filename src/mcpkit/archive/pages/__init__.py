"""What the archive's pages show, behind the archive API: facet columns and their counts, the
text search a keystroke runs, the timeline, a month, the media grid, a post in its thread.

The API's page methods (``browse_search``, ``get_facets``, ``get_timeline``, ...) call
:class:`~mcpkit.archive.pages.browse.Pages`; every face (the web app, JSON-RPC, the CLI) reaches
them through the API only.
"""
