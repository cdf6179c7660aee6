"""First derivatives of the Cauchy form by the states and by input parameters.

``ẏ = [q̇(q, w, t); ẇ]`` with ``M ẇ = F`` (and, with ``УРАВНЕНИЯ``, ``M ẇ = F + Gᵀλ``,
``G ẇ = γ``; with controls of programmed constraints, ``M ẇ = F⁰ + H u``, ``G ẇ = b``).
The partial derivatives of ``q̇``, ``M``, ``F`` and the constraint block ``γ, Φ, c, G``
(with controls: of ``F⁰`` and the block ``b, G, H`` of
:attr:`~kidym.eom.equations.Equations.forcing_extended`) by every coordinate, speed and
input parameter are named quantities of
the equations' graph, formed by the chain rule through the names
(:meth:`kidym.symbolic.graph.Graph.diff` for the states; :func:`parameter_partial` for
parameters, which the graph does not track as dependencies) — no expression is expanded
and nothing is differentiated numerically. One generated function evaluates them all —
after the first few points, which are evaluated by putting numbers into the formulas
node by node (:class:`Substitution`): one linearisation needs a point or two, for which
generating and compiling the function costs several times more than the evaluation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import symengine as se

from kidym.eom.equations import Equations
from kidym.model.inputs import refuse as refuse_inputs
from kidym.simulation.numpy_engine import generate_python
from kidym.symbolic.derivatives import derivative

Expr = se.Basic
ZERO = se.Integer(0)

#: Points evaluated by :class:`Substitution` before the generated function takes over
#: (one linearisation: the point, the mass derivatives there, a few Newton steps onto
#: the constraints; a statics solve or a continuation needs many more).
SUBSTITUTED_POINTS = 4


class Substitution:
    """Named expressions evaluated at one point without generated code: each named
    quantity they need gets the number of its formula with the numbers of the states,
    time, parameters and earlier names put in (SymEngine, in dependency order).

    Parameters
    ----------
    graph : kidym.symbolic.graph.Graph
    inputs : sequence of Symbol
        The symbols given values at each call, in the order of the values.
    exprs : sequence of Expr
        The expressions evaluated.
    """

    def __init__(self, graph, inputs: Sequence[se.Symbol], exprs: Sequence[Expr]) -> None:
        exprs = [se.sympify(e) for e in exprs]
        self.inputs = tuple(inputs)
        self.steps = [(s, graph.formula(s), tuple(graph.formula(s).free_symbols))
                      for s in graph.needed(exprs)]
        self.exprs = [(e, tuple(e.free_symbols)) for e in exprs]

    def __call__(self, values: Sequence[float]) -> np.ndarray | None:
        """The expressions' values (shape (len(exprs),)), or ``None`` where a value is
        not a finite real number (a square root of a negative number, a division by
        zero, a function SymEngine does not evaluate): the generated code then
        evaluates the point, with its own handling of such values."""
        vals: dict = {s: se.RealDouble(float(v)) for s, v in zip(self.inputs, values)}
        for s, f, free in self.steps:
            v = _number(f.xreplace({x: vals[x] for x in free if x in vals}))
            if v is None:
                return None
            vals[s] = v
        out = np.empty(len(self.exprs))
        for k, (e, free) in enumerate(self.exprs):
            v = _number(e.xreplace({x: vals[x] for x in free if x in vals}))
            if v is None:
                return None
            out[k] = float(v)
        return out


def _number(v: Expr) -> Expr | None:
    """``v`` as a finite real SymEngine number, or ``None``."""
    if v.is_Number and not v.is_real:
        return None
    try:
        f = float(v)                # also a function of numbers left unevaluated
    except (RuntimeError, TypeError, ValueError):
        return None
    if not np.isfinite(f):
        return None
    return v if v.is_Number else se.RealDouble(f)


def parameter_partial(graph, expr: Expr, p: se.Symbol, memo: dict) -> Expr:
    """``∂expr/∂p`` for a parameter ``p``, through the named quantities.

    The partial of a named quantity ``X`` that uses ``p`` (directly or through other
    names) is named ``X'p`` in ``graph`` and memoised in ``memo``; names in dependency
    order, so no recursion.
    """
    expr = se.sympify(expr)
    for s in graph.needed([expr]):
        if s in memo:
            continue
        f = graph.formula(s)
        memo[s] = _local_partial(graph, f, p, memo, name=f"{s}'{p}")
    return _local_partial(graph, expr, p, memo)


def _local_partial(graph, expr: Expr, p: se.Symbol, memo: dict, name: str | None = None
                   ) -> Expr:
    total = ZERO
    for s in expr.free_symbols:
        if s == p:
            total += derivative(expr, s)
        else:
            d = memo.get(s, ZERO)
            if d != 0:
                total += derivative(expr, s) * d
    if name is None or total == 0:
        return total
    return graph.define(name, total)


@dataclass(frozen=True)
class Point:
    """Values and first derivatives at one state (see :class:`StateDerivatives`).

    ``bases`` are the coordinates, then the speeds, then the inputs; every ``d…``
    array has the bases along its first axis.
    """

    qdot: np.ndarray      # (n_q,)
    M: np.ndarray         # (n_w, n_w)
    F: np.ndarray         # F, γ, Φ, c, G (n_w + m (3 + n_w)); with controls F⁰, b, G, H
    dqdot: np.ndarray     # (n_b, n_q)
    dM: np.ndarray        # (n_b, n_w, n_w)
    dF: np.ndarray        # (n_b, len(F))


@dataclass(frozen=True)
class StateDerivatives:
    """The generated evaluation of ``q̇, M, F`` and their partial derivatives.

    The derivatives of ``M`` are needed only where ``ẇ ≠ 0`` (they enter as
    ``∂M/∂y · ẇ``): at an equilibrium or a steady motion they drop out, and they are
    the bulk of the work (``n_w²/2`` entries by every coordinate), so they are formed
    and generated on first use only (:meth:`mass_derivatives`).

    Attributes
    ----------
    equations : Equations
        The model's equations over a copy of their graph (the workspace in which the
        derivatives are named; the equations given to :meth:`build` stay unchanged).
    inputs : tuple of str
        Parameters differentiated by (the inputs ``u`` of ``B``), in this order.
    expressions : dict
        The named derivatives by key ``d<root>/d<base>`` (roots numbered over
        ``q̇, M upper, F…``; bases the state indices, ``u<j>`` the inputs).
    """

    equations: Equations
    inputs: tuple[str, ...]
    expressions: dict
    _lazy: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def function(self):
        """``f(t, y, p) -> (q̇, M, F, derivatives of q̇ and F)``, generated on first use
        (the first :data:`SUBSTITUTED_POINTS` points are evaluated without it)."""
        if "function" not in self._lazy:
            self._lazy["function"] = generate_python(self.equations,
                                                     self._lazy["main"]).function
        return self._lazy["function"]

    def _substituted(self, which: str, t: float, y: np.ndarray, p: np.ndarray
                     ) -> np.ndarray | None:
        """The outputs ``which`` (``"main"``: q̇, M, F and their derivatives; ``"mass"``:
        those of M) by :class:`Substitution`, or ``None`` (see its ``__call__``)."""
        eq = self.equations
        key = f"substitution {which}"
        if key not in self._lazy:
            if which == "main":
                n_w = eq.n_w
                exprs = [*eq.qdot, *(eq.mass_matrix_named[i][j] for i in range(n_w)
                                     for j in range(n_w)),
                         *eq.forcing_extended, *self._lazy["main"].values()]
            else:
                exprs = list(self._mass_outputs().values())
            self._lazy[key] = Substitution(
                eq.graph, [*eq.coordinates, *eq.speeds, eq.graph.time, *eq.parameters],
                exprs)
        return self._lazy[key]([*np.asarray(y, float), float(t), *np.asarray(p, float)])

    def expression(self, root: int, base: int | str) -> Expr:
        """The named derivative of root ``root`` (index into ``q̇, M upper, F…``) by base
        ``base`` (a state index, or ``"u<j>"`` for input ``j``)."""
        key = f"d{root}/du{base[1:]}" if isinstance(base, str) else f"d{root}/d{base}"
        if key not in self.expressions:
            self._mass_outputs()
        return self.expressions[key]

    @staticmethod
    def _roots(eq: Equations) -> tuple[list[Expr], list[int], list[int]]:
        n_q, n_w = eq.n_q, eq.n_w
        upper = [eq.mass_matrix_named[i][j] for i in range(n_w) for j in range(i, n_w)]
        roots = [*eq.qdot, *upper, *eq.forcing_extended]
        main = list(range(n_q)) + list(range(n_q + len(upper), len(roots)))
        mass = list(range(n_q, n_q + len(upper)))
        return roots, main, mass

    @classmethod
    def build(cls, eq: Equations, inputs: Sequence[str] = ()) -> StateDerivatives:
        """Form the derivatives of ``q̇`` and ``F`` by the states and by ``inputs``
        (parameter names).

        Raises
        ------
        KeyError
            If an input is not a parameter of the model (the message lists them).
        ValueError
            If the model has external inputs (``ВХОДЫ``): their values come from a run's
            callbacks or tables, so an operating point has none.
        """
        refuse_inputs(eq.model, "an analysis (statics, modes, linearize: its column of B)")
        params = [p.name for p in eq.model.parameters]
        for u in inputs:
            if u not in params:
                raise KeyError(f"input `{u}` is not a parameter of model `{eq.model.name}`; "
                               "inputs are parameters: " + (", ".join(params) or "(none)"))
        # the workspace: derivatives are named in a copy of the graph, never in the
        # equations' own (they are immutable; tests/analysis/test_immutable_equations.py)
        work = dataclasses.replace(eq, graph=eq.graph.copy())
        roots, main, _mass = cls._roots(work)
        outputs = _derivatives(work, roots, main, tuple(inputs))
        return cls(work, tuple(inputs), dict(outputs), {"main": outputs, "points": 0})

    def _mass_outputs(self) -> dict:
        if "outputs" not in self._lazy:
            roots, _main, mass = self._roots(self.equations)
            out = _derivatives(self.equations, roots, mass, self.inputs)
            self.expressions.update(out)
            self._lazy["outputs"] = out
        return self._lazy["outputs"]

    def mass_derivatives(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``∂M/∂b`` by every base ``b`` at ``(t, y)``, shape (n_b, n_w, n_w); formed and
        generated on the first call."""
        eq = self.equations
        out = None
        if self._lazy["points"] <= SUBSTITUTED_POINTS and "mass function" not in self._lazy:
            out = self._substituted("mass", t, y, p)
        if out is None:
            if "mass function" not in self._lazy:
                self._lazy["mass function"] = generate_python(
                    eq, self._mass_outputs()).function
            out = self._lazy["mass function"](float(t), np.asarray(y, float).tolist(),
                                              np.asarray(p, float).tolist())[3]
        n_w = eq.n_w
        n_up = n_w * (n_w + 1) // 2
        n_b = eq.n_q + n_w + len(self.inputs)
        d = np.asarray(out, float).reshape(n_b, n_up)
        iu = np.triu_indices(n_w)
        dM = np.zeros((n_b, n_w, n_w))
        dM[:, iu[0], iu[1]] = d
        dM[:, iu[1], iu[0]] = d
        return dM

    def __call__(self, t: float, y: np.ndarray, p: np.ndarray, *, mass: bool = False
                 ) -> Point:
        """Values and derivatives at ``(t, y)`` with parameter vector ``p``; ``dM`` is
        zero unless ``mass`` (see :meth:`mass_derivatives`)."""
        eq = self.equations
        n_q, n_w = eq.n_q, eq.n_w
        values = None
        self._lazy["points"] += 1
        if self._lazy["points"] <= SUBSTITUTED_POINTS and "function" not in self._lazy:
            values = self._substituted("main", t, y, p)
        if values is None:
            qdot, M, F, out = self.function(float(t), np.asarray(y, float).tolist(),
                                            np.asarray(p, float).tolist())
        else:
            n_F = len(eq.forcing_extended)
            qdot, M = values[:n_q], values[n_q:n_q + n_w * n_w].reshape(n_w, n_w)
            F, out = values[n_q + n_w * n_w:][:n_F], values[n_q + n_w * n_w + n_F:]
        M = np.asarray(M, float)
        F = np.asarray(F, float)
        n_b = n_q + n_w + len(self.inputs)
        d = np.asarray(out, float).reshape(n_b, n_q + F.size)
        dM = (self.mass_derivatives(t, y, p) if mass else np.zeros((n_b, n_w, n_w)))
        return Point(np.asarray(qdot, float), M, F, d[:, :n_q], dM, d[:, n_q:])


def _derivatives(eq: Equations, roots: list[Expr], which: list[int],
                 inputs: tuple[str, ...]) -> dict[str, Expr]:
    """Named derivatives of ``roots[i]`` (``i`` in ``which``) by every state and input,
    keyed ``d<i>/d<k>`` and ``d<i>/du<j>``; bases outermost (the generated layout)."""
    outputs: dict[str, Expr] = {}
    for k, s in enumerate((*eq.coordinates, *eq.speeds)):
        for i in which:
            outputs[f"d{i}/d{k}"] = eq.graph.diff(roots[i], s)
    for j, u in enumerate(inputs):
        memo: dict = {}
        sym = se.Symbol(u)
        for i in which:
            outputs[f"d{i}/du{j}"] = parameter_partial(eq.graph, roots[i], sym, memo)
    return outputs
