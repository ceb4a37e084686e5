"""Post archive search: one API (:mod:`mcpkit.archive.api`), thin faces over it.

Data flows importers -> store (SQLite) -> embedding runner -> vector spaces; the engine
answers searches over both, and the API validates and shapes every call.
"""
