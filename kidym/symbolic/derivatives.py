"""Partial derivatives that know the piecewise functions of the language.

SymEngine differentiates ``abs``, ``sign``, ``floor``, ``ceil`` (and ``min``/``max``)
into unevaluated ``Derivative`` objects, which neither the NumPy nor the C printer can
write. Their derivatives are piecewise (SPEC §2: the equations are valid where the
model is smooth, as for any non-smooth force law):

* ``abs(u)' = sign(u)·u'`` (0 at ``u = 0``, the mean of the one-sided slopes);
* ``sign(u)' = floor(u)' = ceil(u)' = 0`` (away from the jumps, where they are
  constant); hence ``(u % v)' = (u − v·floor(u/v))' = u' − v'·floor(u/v)``;
* ``min(a, b)' = a'`` where ``a ≤ b``, else ``b'`` (likewise ``max``);
* a conditional ``Piecewise((a, c), (b, True))`` is differentiated branch by branch,
  under the same conditions.

:func:`derivative` is used wherever kidym differentiates: the chain rule of
:class:`kidym.symbolic.graph.Graph` (time derivatives and partials of the kinematics),
the model's partial-derivative names ``x'y`` and the kinematics calculation.
"""

from __future__ import annotations

import functools

import symengine as se

from kidym.symbolic.functions import sign

Expr = se.Basic

#: Function class names with zero derivative away from their jumps.
_STEPS = frozenset({"sign", "floor", "ceiling"})
#: Function class names handled here rather than by SymEngine.
_PIECEWISE = _STEPS | {"Abs", "Min", "Max", "Piecewise"}


def _kind(expr: Expr) -> str:
    return type(expr).__name__


@functools.lru_cache(maxsize=64)
def _outer_piecewise(expr: Expr) -> tuple[Expr, ...]:
    """The outermost sub-expressions of ``expr`` whose head is a piecewise function.

    Remembered for the last few expressions: a partial derivative through names
    differentiates the same expression by each of its symbols in turn (the energy of
    the 60-link chain: 11 000 walks of one big sum, 8 s of its C generation).
    """
    out: list[Expr] = []
    stack = [expr]
    seen: set[Expr] = set()
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if _kind(e) in _PIECEWISE:
            out.append(e)
        else:
            stack.extend(e.args)
    return tuple(out)


#: A sum with more terms than this is differentiated term by term (:func:`derivative`).
_TERMWISE_ABOVE = 16


@functools.lru_cache(maxsize=16)
def _terms_by_symbol(total: Expr) -> dict[se.Symbol, tuple[Expr, ...]]:
    """The terms of the sum ``total`` that hold each of its symbols."""
    index: dict[se.Symbol, list[Expr]] = {}
    for term in total.args:
        for s in term.free_symbols:
            index.setdefault(s, []).append(term)
    return {s: tuple(terms) for s, terms in index.items()}


def derivative(expr: Expr, s: se.Symbol) -> Expr:
    """``∂expr/∂s``, with the piecewise rules above; never a ``Derivative`` object.

    Parameters
    ----------
    expr : Expr
        A formula of the language (any SymEngine expression).
    s : Symbol
        The variable.

    Returns
    -------
    Expr
        The derivative; every piecewise function ``f(u)`` in ``expr`` is held as a
        symbol ``z`` while SymEngine differentiates, and ``∂expr/∂z · ∂f(u)/∂s`` is added
        (the chain rule), with ``∂f(u)/∂s`` from :func:`_piecewise_derivative`.
    """
    expr = se.sympify(expr)
    if expr.is_Add and len(expr.args) > _TERMWISE_ABOVE:
        # a big sum (the energy) is differentiated by each of its symbols in turn: only
        # the terms that hold ``s``, found once per sum (each whole walk was O(size))
        terms = _terms_by_symbol(expr).get(s, ())
        return se.Add(*[derivative(t, s) for t in terms]) if terms else se.Integer(0)
    if s not in expr.free_symbols:
        return se.Integer(0)
    heads = _outer_piecewise(expr)
    if not heads:
        return expr.diff(s)
    held = {f: se.Dummy(f"z{n}") for n, f in enumerate(heads)}
    body = expr.xreplace(held)
    total = body.diff(s)
    for f, z in held.items():
        outer = body.diff(z)
        if outer != 0:
            total += outer * _piecewise_derivative(f, s)
    return total.xreplace({z: f for f, z in held.items()})


def _piecewise_derivative(f: Expr, s: se.Symbol) -> Expr:
    """``∂f/∂s`` of one piecewise function application ``f``."""
    kind = _kind(f)
    if kind in _STEPS or s not in f.free_symbols:
        return se.Integer(0)
    if kind == "Abs":
        (u,) = f.args
        return sign(u) * derivative(u, s)
    if kind in ("Min", "Max"):
        first, *rest = f.args
        other = type(f)(*rest) if len(rest) > 1 else rest[0]
        chosen = se.Le(first, other) if kind == "Min" else se.Ge(first, other)
        return se.Piecewise((derivative(first, s), chosen), (derivative(other, s), True))
    if kind == "Piecewise":
        pairs = [(f.args[n], f.args[n + 1]) for n in range(0, len(f.args), 2)]
        return se.Piecewise(*[(derivative(value, s), cond) for value, cond in pairs])
    raise AssertionError(f"no derivative rule for {kind}")  # pragma: no cover
