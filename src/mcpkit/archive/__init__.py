"""Post archive search (seed 001): one API (:mod:`mcpkit.archive.api`), three faces.

Data flows importers -> store (SQLite) -> embedding runner -> vector spaces; the engine
answers searches over both, and the API validates and shapes every call.
"""
