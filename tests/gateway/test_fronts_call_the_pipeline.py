"""Every front of the gateway calls the call pipeline and nothing under it.

The stdio fast lane once repeated the pipeline as callbacks of its own: it restored the
arguments, picked the downstream and sent to it, then checked and capped the answer itself,
so a step added to the pipeline (a new check, a cap) could miss the lane. Now a front routes,
starts or sends, and cancels through ``CallPipeline``; restoring, the downstream send, checking
and capping happen there only. The answers themselves are compared lane against SDK path in
tests/gateway/test_stdio_front.py.
"""

from __future__ import annotations

import ast

import pytest

from tests.support.env import REPO

GATEWAY = REPO / "src" / "mcpkit" / "gateway"
FRONTS = ["stdio_front.py", "http_front.py"]
BELOW_THE_PIPELINE = {"restore", "send_raw", "cancel_raw", "request", "finished", "failed", "downstreams"}


@pytest.mark.parametrize("front", FRONTS)
def test_a_front_reaches_no_step_below_the_pipeline(front: str) -> None:
    tree = ast.parse((GATEWAY / front).read_text())
    reached = sorted(
        f"{ast.unparse(node.value)}.{node.attr} (line {node.lineno})"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in BELOW_THE_PIPELINE
    )
    assert reached == []


@pytest.mark.parametrize("front", FRONTS)
def test_a_front_imports_no_downstream(front: str) -> None:
    tree = ast.parse((GATEWAY / front).read_text())
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module is not None
    }
    assert "mcpkit.gateway.downstream" not in imported
