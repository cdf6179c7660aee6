"""Reference evaluation of the Cauchy right-hand side in plain Python/NumPy.

The named quantities are emitted as Python statements in dependency order — one
line per name, exactly the structural form — and compiled once with ``compile``;
``M ẇ = F`` is solved with LAPACK through :func:`numpy.linalg.solve`. This engine
is the reference the compiled one is checked against.

No text of the model reaches the source: names are mapped to safe identifiers
(:class:`~kidym.symbolic.identifiers.IdentifierMap`), comments show them only
through :func:`~kidym.symbolic.identifiers.comment_text`, and before it is compiled
the source is checked node by node (:func:`_check_source`): assignments, arithmetic,
numbers, calls of the functions of :data:`_NAMESPACE` and the mapped names, nothing
else.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import symengine as se

from kidym.eom.equations import Equations
from kidym.symbolic.identifiers import RESERVED, IdentifierMap, comment_text

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


#: The same names evaluated the C way (a domain fault gives NaN or ±inf, not an
#: exception): for the outputs of the state where a run failed (:func:`tolerant`).
_TOLERANT: dict[str, object] = {
    **_NAMESPACE,
    **{name: getattr(np, np_name) for name, np_name in (
        ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("asin", "arcsin"),
        ("acos", "arccos"), ("atan", "arctan"), ("atan2", "arctan2"), ("exp", "exp"),
        ("log", "log"), ("sqrt", "sqrt"), ("sinh", "sinh"), ("cosh", "cosh"),
        ("tanh", "tanh"), ("asinh", "arcsinh"), ("acosh", "arccosh"), ("atanh", "arctanh"),
        ("floor", "floor"), ("ceiling", "ceil"))},
    "cot": lambda x: 1.0 / np.tan(x), "sec": lambda x: 1.0 / np.cos(x),
    "csc": lambda x: 1.0 / np.sin(x), "acot": lambda x: np.arctan(1.0 / x),
}


def tolerant(source: str) -> Callable:
    """The generated function of ``source`` (already checked) evaluated as C would:
    on NumPy scalars, so that ``sqrt(-1)``, ``log(0)`` or ``1/0`` give NaN or ±inf where
    they occur instead of raising. Call it with ``y``, ``p`` as float64 arrays, inside
    ``np.errstate(all="ignore")``."""
    namespace = dict(_TOLERANT)
    exec(compile(source, "<kidym generated rhs>", "exec"), namespace)
    return namespace["rhs"]


#: Names of the generated function itself (its arguments and results).
_FRAME = frozenset({"rhs", "t", "y", "p", "M", "F", "qdot", "out", "float"})
#: Attributes the generated source may use (of ``np``).
_ATTRIBUTES = frozenset({"empty", "array"})
_NODES = (ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Assign, ast.Return,
          ast.Name, ast.Load, ast.Store, ast.Subscript, ast.Tuple, ast.List, ast.Call,
          ast.keyword, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.operator,
          ast.unaryop, ast.cmpop, ast.boolop, ast.Attribute, ast.Constant)


def _check_source(source: str, identifiers: set[str]) -> None:
    """Raise ``RuntimeError`` unless ``source`` is plain arithmetic over known names.

    The guard behind the mapping: whatever a printer may write, code that names
    anything but the mapped identifiers, :data:`_NAMESPACE` and the function's own
    frame, or holds a string, is never compiled.
    """
    allowed = identifiers | _FRAME | set(_NAMESPACE)
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise RuntimeError(f"internal error: the generated Python does not parse ({exc}); "
                           "this is a bug in kidym, please report it with the model "
                           "file") from exc
    for node in ast.walk(tree):
        bad = None
        if not isinstance(node, _NODES):
            bad = type(node).__name__
        elif isinstance(node, ast.Name) and node.id not in allowed:
            bad = f"name {node.id!r}"
        elif isinstance(node, ast.Attribute) and not (
                node.attr in _ATTRIBUTES and isinstance(node.value, ast.Name)
                and node.value.id == "np"):
            bad = f"attribute {node.attr!r}"
        elif isinstance(node, ast.Constant) and not (
                isinstance(node.value, int | float) or node.value is None):
            bad = "a non-numeric constant"
        if bad is not None:
            raise RuntimeError(f"internal error: the generated Python holds {bad}; this is "
                               "a bug in kidym, please report it with the model file")


@dataclass(frozen=True)
class PythonFunction:
    """A generated Python function and its source (kept for inspection)."""

    source: str
    function: Callable


def _printer(names: IdentifierMap, symbols: Sequence[se.Symbol],
             time: se.Symbol) -> Callable[[Expr], str]:
    rename = {s: se.Symbol(names(str(s))) for s in symbols}
    rename[time] = se.Symbol("t")

    def emit(expr: Expr) -> str:
        expr = se.sympify(expr)
        local = {s: rename[s] for s in expr.free_symbols if s in rename}
        return str(expr.xreplace(local) if local else expr)

    return emit


def needs_accelerations(eq: Equations, outputs: dict[str, Expr] | None) -> bool:
    """Whether the function of :func:`generate_python` for ``outputs`` takes ``y = [q, w, ẇ]``."""
    return bool(outputs) and eq.uses_accelerations(list(outputs.values()))


def generate_python(eq: Equations, outputs: dict[str, Expr] | None = None, *,
                    dynamics: bool = True) -> PythonFunction:
    """Generate ``f(t, y, p) -> (ydot, M, F[, outputs])`` for the equations.

    Parameters
    ----------
    eq : Equations
        Derived equations.
    outputs : dict of str to Expr, optional
        Extra named expressions to evaluate; when given, the function returns a
        fourth item, an array of their values in dict order. If they use the
        accelerations ``ẇ`` (:attr:`Equations.accelerations`), ``y`` is
        ``[q, w, ẇ]`` (see :func:`needs_accelerations`).
    dynamics : bool
        ``False``: ``f(t, y, p) -> outputs`` alone, with only the intermediate
        quantities they use (the bodies' positions of a drawing need neither ``M``
        nor ``F``, most of a big model's code).

    Returns
    -------
    PythonFunction
        ``y = [q, w]`` (shape (n_q + n_w,)), ``p`` the parameter vector in model
        order; returns ``qdot`` (n_q,), ``M`` (n_w, n_w), ``F`` (n_w,; with
        constraints followed by their block ``γ, Φ, c, G``, see
        :attr:`Equations.forcing_extended`).
    """
    names = IdentifierMap(RESERVED | _FRAME | frozenset(_NAMESPACE))
    roots = list(eq.roots()) if dynamics else []
    extra = list((outputs or {}).values())
    inter = eq.intermediates(roots + extra)
    # outputs that use the accelerations ẇ read them after the state: y = [q, w, ẇ]
    accelerations = list(eq.accelerations) if extra and eq.uses_accelerations(extra) else []
    symbols = [*eq.coordinates, *eq.speeds, *accelerations, *eq.parameters, *eq.inputs,
               *(s for s, _ in inter)]
    emit = _printer(names, symbols, eq.graph.time)
    lines = ["def rhs(t, y, p):"]
    for i, s in enumerate([*eq.coordinates, *eq.speeds, *accelerations]):
        lines.append(f"    {names(str(s))} = y[{i}]  # {comment_text(str(s))}")
    for i, s in enumerate((*eq.parameters, *eq.inputs)):   # inputs after the parameters
        lines.append(f"    {names(str(s))} = p[{i}]  # {comment_text(str(s))}")
    for s, expr in inter:
        lines.append(f"    {names(str(s))} = {emit(expr)}  # {comment_text(str(s))}")
    if not dynamics:
        lines.append("    return np.array([" + ", ".join(emit(x) for x in extra) + "],"
                     " dtype=float)")
        return _compiled("\n".join(lines) + "\n", names)
    n = eq.n_w
    lines.append(f"    M = np.empty(({n}, {n}))")
    for i in range(n):
        for j in range(i, n):
            lines.append(f"    M[{i}, {j}] = {emit(eq.mass_matrix_named[i][j])}")
            if j != i:
                lines.append(f"    M[{j}, {i}] = M[{i}, {j}]")
    # F, then (with constraints) the block γ, Φ, c, G (Equations.forcing_extended)
    lines.append("    F = np.array([" + ", ".join(emit(f) for f in eq.forcing_extended) + "],"
                 " dtype=float)")
    lines.append("    qdot = np.array([" + ", ".join(emit(x) for x in eq.qdot) + "],"
                 " dtype=float)")
    if outputs is None:
        lines.append("    return qdot, M, F")
    else:
        lines.append("    out = np.array([" + ", ".join(emit(x) for x in extra) + "],"
                     " dtype=float)")
        lines.append("    return qdot, M, F, out")
    return _compiled("\n".join(lines) + "\n", names)


def _compiled(source: str, names: IdentifierMap) -> PythonFunction:
    """The function ``rhs`` of ``source``, checked (:func:`_check_source`) and compiled."""
    _check_source(source, {ident for _, ident in names.items()})
    namespace = dict(_NAMESPACE)
    exec(compile(source, "<kidym generated rhs>", "exec"), namespace)
    return PythonFunction(source=source, function=namespace["rhs"])
