"""The harness that runs every fenced block of README.md and docs/*.md (tests/test_docs_run.py)."""
