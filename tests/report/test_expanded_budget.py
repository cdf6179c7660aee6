"""``--expanded`` with a time budget and progress (issue 18)."""

from __future__ import annotations

import kidym
from kidym.report.equations import equation_set
from tests.fixtures import DOUBLE_PENDULUM


def test_zero_budget_expands_nothing_and_says_what():
    eq = kidym.derive(kidym.parse(DOUBLE_PENDULUM))
    es = equation_set(eq, stage="final", expanded=True, expand_budget=0.0)
    assert es.expanded == []
    assert any("4 of 4 not expanded" in w and "U[phi1't]" in w for w in es.warnings)


def test_progress_reports_every_relation_and_no_budget_expands_all():
    eq = kidym.derive(kidym.parse(DOUBLE_PENDULUM))
    seen: list[tuple[int, int]] = []
    es = equation_set(eq, stage="final", expanded=True,
                      progress=lambda done, total: seen.append((done, total)))
    assert seen == [(k, 4) for k in range(1, 5)]
    assert len(es.expanded) == 4
    # the expanded kinematic equations are the rates themselves (w = q't here)
    assert {str(r.rhs) for r in es.expanded[:2]} == {"phi1't", "phi2't"}
