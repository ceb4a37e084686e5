"""The documentation's rule table is the code's, and every citation is in the research report."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpkit.compat import markdown_table
from mcpkit.compat._profiles import all_rules
from tests.support.env import REPO, SHARED

DOC = REPO / "docs" / "toolkit-compat.md"


def test_doc_embeds_the_generated_table() -> None:
    assert markdown_table() in DOC.read_text(encoding="utf-8"), "regenerate: mcpkit.compat.markdown_table()"


def test_every_rule_has_severity_client_citation_summary() -> None:
    for _, rule in all_rules():
        assert rule.severity in ("error", "warning")
        assert rule.client and rule.citation and rule.summary, rule.id
        assert rule.adapt, rule.id


def test_citations_come_from_the_research_report() -> None:
    """Cross-check against ../shared/facts, the report and its dated updates (absent in a
    user's clone: then nothing to check)."""
    facts = Path(SHARED / "facts" / "client-rules.md")
    if not facts.exists():
        pytest.skip("the research report is not here (only in the team's shared folder)")
    reports = sorted(facts.parent.glob("client-rules*.md"))
    text = "\n".join(r.read_text(encoding="utf-8") for r in reports).replace("`", "")
    for _, rule in all_rules():
        sources = [s.split(" (")[0].strip() for s in rule.citation.split(";")]
        sources = [s for s in sources if s and not s.startswith("seed ")]
        assert any(s.split(",")[0] in text for s in sources), (rule.id, sources)
