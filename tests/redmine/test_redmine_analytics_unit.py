"""Blocker chains from relations: every blocking edge between open issues is on some chain."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcpkit.redmine.tools.analytics import chains


def issues_with(edges: list[tuple[int, int]], kind: str = "blocks") -> list[dict[str, Any]]:
    ids = sorted({n for edge in edges for n in edge})
    return [
        {
            "id": n,
            "relations": [
                {"issue_id": a, "issue_to_id": b, "relation_type": kind}
                if kind == "blocks"
                else {"issue_id": b, "issue_to_id": a, "relation_type": "blocked"}
                for a, b in edges
                if n in (a, b)
            ],
        }
        for n in ids
    ]


def test_a_chain_and_a_branch_root_first() -> None:
    found, cut = chains(issues_with([(1, 2), (2, 3), (1, 4)]))
    assert found == [[1, 2, 3], [1, 4]] and not cut


def test_blocked_relations_read_the_same_as_blocks() -> None:
    assert chains(issues_with([(1, 2), (2, 3)], "blocked"))[0] == [[1, 2, 3]]


def test_a_cycle_is_reported_once_from_its_smallest_id() -> None:
    assert chains(issues_with([(5, 6), (6, 5)]))[0] == [[5, 6]]


def test_relations_to_closed_or_unknown_issues_are_left_out() -> None:
    issues = issues_with([(1, 2)])
    issues[0]["relations"].append({"issue_id": 1, "issue_to_id": 99, "relation_type": "blocks"})
    issues[0]["relations"].append({"issue_id": 1, "issue_to_id": 2, "relation_type": "relates"})
    assert chains(issues)[0] == [[1, 2]]


@given(st.lists(st.tuples(st.integers(1, 8), st.integers(1, 8)).filter(lambda e: e[0] != e[1]), max_size=14))
def test_every_issue_is_on_a_chain_and_every_chain_follows_edges(edges: list[tuple[int, int]]) -> None:
    found, cut = chains(issues_with(edges))
    assert not cut
    steps = {(c[i], c[i + 1]) for c in found for i in range(len(c) - 1)}
    assert steps <= set(edges)
    assert {n for e in edges for n in e} <= {n for c in found for n in c}
    for chain in found:
        assert len(set(chain)) == len(chain), "no issue twice on a chain"
