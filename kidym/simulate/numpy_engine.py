"""Reference evaluation of the Cauchy right-hand side in plain Python/NumPy.

The named quantities are emitted as Python statements in dependency order — one
line per name, exactly the structural form — and compiled once with ``compile``;
``M ẇ = F`` is solved with LAPACK through :func:`numpy.linalg.solve`. This engine
is the reference the compiled one is checked against.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import symengine as se

from kidym.eom.equations import Equations
from kidym.symbolic.identifiers import IdentifierMap

Expr = se.Basic


def _piecewise(*pairs: tuple[float, bool]) -> float:
    for value, cond in pairs:
        if cond:
            return value
    return math.nan


_NAMESPACE: dict[str, object] = {
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "atan2": math.atan2, "exp": math.exp, "log": math.log,
    "sqrt": math.sqrt, "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh,
    "asinh": math.asinh, "acosh": math.acosh, "atanh": math.atanh, "abs": abs, "Abs": abs,
    "floor": math.floor, "ceiling": math.ceil, "sign": lambda x: float(np.sign(x)),
    "pi": math.pi, "E": math.e, "Piecewise": _piecewise, "True": True, "False": False,
    "cot": lambda x: 1.0 / math.tan(x), "sec": lambda x: 1.0 / math.cos(x),
    "csc": lambda x: 1.0 / math.sin(x), "acot": lambda x: math.atan(1.0 / x),
    "np": np, "math": math,
}


@dataclass(frozen=True)
class PythonFunction:
    """A generated Python function and its source (kept for inspection)."""

    source: str
    function: Callable


def _printer(names: IdentifierMap, symbols: Sequence[se.Symbol]) -> Callable[[Expr], str]:
    rename = {s: se.Symbol(names(str(s))) for s in symbols}

    def emit(expr: Expr) -> str:
        expr = se.sympify(expr)
        local = {s: rename[s] for s in expr.free_symbols if s in rename}
        return str(expr.xreplace(local) if local else expr)

    return emit


def generate_python(eq: Equations, outputs: dict[str, Expr] | None = None) -> PythonFunction:
    """Generate ``f(t, y, p) -> (ydot, M, F[, outputs])`` for the equations.

    Parameters
    ----------
    eq : Equations
        Derived equations.
    outputs : dict of str to Expr, optional
        Extra named expressions to evaluate; when given, the function returns a
        fourth item, an array of their values in dict order.

    Returns
    -------
    PythonFunction
        ``y = [q, w]`` (shape (n_q + n_w,)), ``p`` the parameter vector in model
        order; returns ``qdot`` (n_q,), ``M`` (n_w, n_w), ``F`` (n_w,).
    """
    names = IdentifierMap()
    names(str(eq.graph.time))  # time is always `t`
    roots = list(eq.roots())
    extra = list((outputs or {}).values())
    inter = eq.intermediates(roots + extra)
    symbols = [*eq.coordinates, *eq.speeds, *eq.parameters, eq.graph.time,
               *(s for s, _ in inter)]
    emit = _printer(names, symbols)
    lines = ["def rhs(t, y, p):"]
    for i, s in enumerate([*eq.coordinates, *eq.speeds]):
        lines.append(f"    {names(str(s))} = y[{i}]  # {s}")
    for i, s in enumerate(eq.parameters):
        lines.append(f"    {names(str(s))} = p[{i}]  # {s}")
    for s, expr in inter:
        lines.append(f"    {names(str(s))} = {emit(expr)}  # {s}")
    n = eq.n_w
    lines.append(f"    M = np.empty(({n}, {n}))")
    for i in range(n):
        for j in range(i, n):
            lines.append(f"    M[{i}, {j}] = {emit(eq.mass_matrix_named[i][j])}")
            if j != i:
                lines.append(f"    M[{j}, {i}] = M[{i}, {j}]")
    lines.append("    F = np.array([" + ", ".join(emit(f) for f in eq.forcing_named) + "],"
                 " dtype=float)")
    lines.append("    qdot = np.array([" + ", ".join(emit(x) for x in eq.qdot) + "],"
                 " dtype=float)")
    if outputs is None:
        lines.append("    return qdot, M, F")
    else:
        lines.append("    out = np.array([" + ", ".join(emit(x) for x in extra) + "],"
                     " dtype=float)")
        lines.append("    return qdot, M, F, out")
    source = "\n".join(lines) + "\n"
    namespace = dict(_NAMESPACE)
    exec(compile(source, f"<kidym:{eq.model.name}>", "exec"), namespace)
    return PythonFunction(source=source, function=namespace["rhs"])
