"""Printed equations never write ``a + -b`` (issue 18): text, LaTeX, Markdown, HTML.

Two checks on every printed form: the pattern is absent, and the printed text still
means the expression — read back by SymPy's own parser (independent of the printer
under test) and evaluated at random points against SymEngine's value of the
expression object.
"""

from __future__ import annotations

import random
import re

import pytest
import symengine as se
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import kidym
from kidym.report.equations import equation_set, motion_lhs, motion_text, text
from kidym.report.latex import LatexPrinter, markdown_of
from tests.fixtures import EXAMPLES

#: ``+ -x``, ``+ (-1/2)*x`` (a negative coefficient), ``+ \left(- …`` in LaTeX
TEXT_BAD = re.compile(r"\+ -|\+ \(-[\d./]+\)")
LATEX_BAD = re.compile(r"\+ -|\+ \\left\(-|\+ \\Big\(-")

A, B, C = se.symbols("a b c")
leaves = st.sampled_from([A, B, C]) | st.fractions(-5, 5, max_denominator=4).map(
    lambda f: se.Rational(f.numerator, f.denominator))


def _combine(children):
    return st.one_of(
        st.tuples(children, children).map(lambda p: p[0] + p[1]),
        st.tuples(children, children).map(lambda p: p[0] - p[1]),
        st.tuples(children, children).map(lambda p: p[0] * p[1]),
        st.tuples(children, children).map(lambda p: p[0] / (p[1] ** 2 + 1)),
        children.map(lambda x: -x),
        children.map(lambda x: se.sin(x)),
        st.tuples(children, st.integers(2, 3)).map(lambda p: p[0] ** p[1]),
    )


expressions = st.recursive(leaves, _combine, max_leaves=12)


def _close(printed: str, expr, names=("a", "b", "c")) -> None:
    symbols = {n: sympy.Symbol(n) for n in names}
    parsed = sympy.parse_expr(printed, local_dict=symbols)
    rng = random.Random(printed)
    for _ in range(3):
        point = {n: rng.uniform(-2, 2) for n in names}
        want = float(se.sympify(expr).subs({se.Symbol(n): v for n, v in point.items()}))
        got = float(parsed.subs({symbols[n]: v for n, v in point.items()}))
        assert got == pytest.approx(want, rel=1e-9, abs=1e-9), (printed, expr)


@settings(max_examples=300, deadline=None)
@given(expressions)
def test_text_never_plus_minus_and_reads_back(expr):
    printed = text(expr)
    assert not TEXT_BAD.search(printed), printed
    _close(printed, expr)


def test_symengine_alone_would_print_plus_minus():
    """The case the printer fixes (so the test above can fail)."""
    assert TEXT_BAD.search(str(A - B / 2))
    assert text(A - B / 2) == "a - (1/2)*b"


def _model(name):
    return kidym.load(next((EXAMPLES / name).glob("*.kdm")))


@pytest.mark.parametrize("name", ["biped", "four_bar", "ball"])
def test_equations_of_examples_print_no_plus_minus(name):
    eq = kidym.derive(_model(name))
    from kidym.report.equations import text_of

    for stage in ("cauchy", "final"):
        es = equation_set(eq, stage=stage)
        assert not TEXT_BAD.search(text_of(es))
    es = equation_set(eq, stage="final")
    assert not LATEX_BAD.search(markdown_of(es))
    p = LatexPrinter(es)
    for i in range(eq.n_w):
        assert not LATEX_BAD.search(" ".join(p.motion_pieces(eq, i)))


def test_motion_text_means_the_equation():
    """``motion_text`` read back by SymPy equals ``Σ M_ij ẇ_j − F_i`` (the four-bar: a
    model with multipliers, names made identifiers by replacing ``'``)."""
    eq = kidym.derive(_model("four_bar"))
    rng = random.Random(1)
    for i in range(eq.n_w):
        printed = motion_text(eq, i)
        assert not TEXT_BAD.search(printed)
        lhs = motion_lhs(eq)[i]
        free = sorted(lhs.free_symbols, key=str)
        ident = {str(s): str(s).replace("'", "_") for s in free}
        local = {v: sympy.Symbol(v) for v in ident.values()}
        source = printed
        for name in sorted(ident, key=len, reverse=True):
            source = re.sub(rf"(?<![\w']){re.escape(name)}(?![\w'])", ident[name], source)
        parsed = sympy.parse_expr(source, local_dict=local)
        for _ in range(3):
            point = {str(s): rng.uniform(-1, 1) for s in free}
            want = float(lhs.subs({s: point[str(s)] for s in free}))
            got = float(parsed.subs({local[ident[n]]: v for n, v in point.items()}))
            assert got == pytest.approx(want, rel=1e-9, abs=1e-9)
