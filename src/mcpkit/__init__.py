"""mcpkit: dependable Model Context Protocol servers and clients.

The core toolkit lives in small packages with one job each:
``tools`` (how a tool is defined), ``compat`` (client profiles, lint, adapt),
``results`` (what a tool returns), ``server`` (honest servers on the SDK).
"""

__version__ = "0.1.0"
