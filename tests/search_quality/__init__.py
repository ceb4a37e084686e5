"""The archive's search-quality evaluation set: a corpus the project builds and judged queries."""
