"""First derivatives of the Cauchy form by the states and by input parameters.

``ẏ = [q̇(q, w, t); ẇ]`` with ``M ẇ = F`` (and, with ``УРАВНЕНИЯ``, ``M ẇ = F + Gᵀλ``,
``G ẇ = γ``). The partial derivatives of ``q̇``, ``M``, ``F`` and the constraint block
``γ, Φ, c, G`` by every coordinate, speed and input parameter are named quantities of
the equations' graph, formed by the chain rule through the names
(:meth:`kidym.symbolic.graph.Graph.diff` for the states; :func:`parameter_partial` for
parameters, which the graph does not track as dependencies) — no expression is expanded
and nothing is differentiated numerically. One generated function evaluates them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import symengine as se

from kidym.eom.equations import Equations
from kidym.simulate.numpy_engine import generate_python
from kidym.symbolic.derivatives import derivative

Expr = se.Basic
ZERO = se.Integer(0)


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
    F: np.ndarray         # (n_w + m (3 + n_w),): F, γ, Φ, c, G
    dqdot: np.ndarray     # (n_b, n_q)
    dM: np.ndarray        # (n_b, n_w, n_w)
    dF: np.ndarray        # (n_b, len(F))


@dataclass(frozen=True)
class StateDerivatives:
    """The generated evaluation of ``q̇, M, F`` and their partial derivatives.

    Attributes
    ----------
    equations : Equations
        The model's equations.
    inputs : tuple of str
        Parameters differentiated by (the inputs ``u`` of ``B``), in this order.
    function : callable
        ``f(t, y, p) -> (q̇, M, F, derivatives)``.
    """

    equations: Equations
    inputs: tuple[str, ...]
    function: object
    expressions: dict

    def expression(self, root: int, base: int | str) -> Expr:
        """The named derivative of root ``root`` (index into ``q̇, M upper, F…``) by base
        ``base`` (a state index, or ``"u<j>"`` for input ``j``)."""
        key = f"d{root}/du{base[1:]}" if isinstance(base, str) else f"d{root}/d{base}"
        return self.expressions[key]

    @classmethod
    def build(cls, eq: Equations, inputs: Sequence[str] = ()) -> StateDerivatives:
        """Form the derivatives by the states and by ``inputs`` (parameter names).

        Raises
        ------
        KeyError
            If an input is not a parameter of the model (the message lists them).
        """
        params = [p.name for p in eq.model.parameters]
        for u in inputs:
            if u not in params:
                raise KeyError(f"input `{u}` is not a parameter of model `{eq.model.name}`; "
                               "inputs are parameters: " + (", ".join(params) or "(none)"))
        n_w = eq.n_w
        upper = [eq.mass_matrix_named[i][j] for i in range(n_w) for j in range(i, n_w)]
        roots = [*eq.qdot, *upper, *eq.forcing_extended]
        outputs: dict[str, Expr] = {}
        bases = (*eq.coordinates, *eq.speeds)
        for k, s in enumerate(bases):
            for i, e in enumerate(roots):
                outputs[f"d{i}/d{k}"] = eq.graph.diff(e, s)
        for j, u in enumerate(inputs):
            memo: dict = {}
            sym = se.Symbol(u)
            for i, e in enumerate(roots):
                outputs[f"d{i}/du{j}"] = parameter_partial(eq.graph, e, sym, memo)
        fn = generate_python(eq, outputs)
        return cls(eq, tuple(inputs), fn.function, outputs)

    def __call__(self, t: float, y: np.ndarray, p: np.ndarray) -> Point:
        """Values and derivatives at ``(t, y)`` with parameter vector ``p``."""
        eq = self.equations
        n_q, n_w = eq.n_q, eq.n_w
        qdot, M, F, out = self.function(float(t), np.asarray(y, float).tolist(),
                                        np.asarray(p, float).tolist())
        M = np.asarray(M, float)
        F = np.asarray(F, float)
        n_up = n_w * (n_w + 1) // 2
        per = n_q + n_up + F.size
        n_b = n_q + n_w + len(self.inputs)
        d = np.asarray(out, float).reshape(n_b, per)
        iu = np.triu_indices(n_w)
        dM = np.zeros((n_b, n_w, n_w))
        dM[:, iu[0], iu[1]] = d[:, n_q:n_q + n_up]
        dM[:, iu[1], iu[0]] = d[:, n_q:n_q + n_up]
        return Point(np.asarray(qdot, float), M, F, d[:, :n_q], dM, d[:, n_q + n_up:])
