"""``Equations`` are immutable: the analyses form their derivatives in a workspace of
their own (a copy of the graph), so the equations' graph of named quantities is the
same — every name and formula — before and after ``linearize``, ``modes`` and
``equilibrium`` (Pinocchio's ``Model`` vs ``Data``)."""

from __future__ import annotations

import hashlib

import pytest

import kidym

PENDULUM = """l = 1; m = 2; g = 9.81; c = 0.3;
Rod | Rz(phi) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
Damper.phi't = c*phi't;
GRAVITY := 0, -g, 0;
INITIAL := phi(0.2);
"""


def graph_hash(eq: kidym.Equations) -> tuple[int, str]:
    """Number of named quantities and a SHA-256 of every name and formula in order."""
    text = "\n".join(f"{s} = {f}" for s, f in eq.graph.definitions.items())
    return len(eq.graph), hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("analysis", [
    lambda eq: kidym.linearize(eq, {"phi": 0.1}, inputs=["c"]),
    lambda eq: kidym.modes(eq, {"phi": -1.4}),
    lambda eq: kidym.equilibrium(eq, state={"phi": 0.5}),
    # off equilibrium, in motion: ∂M/∂y · ẇ enters (the mass derivatives, formed lazily)
    lambda eq: kidym.linearize(eq, {"phi": 0.4, "phi't": 1.0}),
], ids=["linearize", "modes", "equilibrium", "linearize-in-motion"])
def test_analyses_leave_the_equations_unchanged(analysis) -> None:
    eq = kidym.derive(kidym.parse(PENDULUM))
    before = graph_hash(eq)
    analysis(eq)
    assert graph_hash(eq) == before
    analysis(eq)   # (and again: nothing memoised into them on a second call either)
    assert graph_hash(eq) == before
