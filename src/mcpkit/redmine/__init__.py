"""Redmine MCP server: the Redmine REST API as safe MCP tools with XML results.

- :mod:`mcpkit.redmine.config`: settings from ``REDMINE_*`` variables
- :mod:`mcpkit.redmine.api`: the REST client (auth, timeouts, TLS, paging, error mapping)
- :mod:`mcpkit.redmine.xml`: Redmine JSON to escaped, capped XML
- :mod:`mcpkit.redmine.tools`: one module per resource
- :mod:`mcpkit.redmine.server`: ``build(config)`` with ``build_server``
"""
