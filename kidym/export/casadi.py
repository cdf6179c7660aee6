"""The equations of motion as CasADi functions, built from the graph of named quantities.

:func:`to_casadi` walks the named quantities the right-hand side needs in dependency
order (:meth:`kidym.Equations.intermediates`) and creates each one once as a CasADi
``SX`` expression over the earlier ones, so the shared subexpressions of the graph stay
shared in CasADi's expression graph: no numeric code is traced, nothing is expanded,
nothing is differenced. The Cauchy form is then

    ẋ = [q̇, ẇ],   q̇ = B(q, t) w + β(q, t),   ẇ = M⁻¹ F           (seed 000 eq. (18))

with ``M ẇ = F`` solved in SX by the engines' own method: a Cholesky factorisation
written out entry by entry (the compiled engine's dense Cholesky; CasADi's generic
``solve`` of SX kept fewer digits than LAPACK on the 10-link chain). With constraints
(``УРАВНЕНИЯ``, ``СОВПАДЕНИЕ``, ``КАЧЕНИЕ``) it is the augmented system the engines
solve, ``M ẇ = F + Gᵀλ``, ``G ẇ = γ``, by the range-space method
(:func:`kidym.eom.constraints.solve_augmented`; exact, no Baumgarte terms); with
controls of programmed constraints (``НЕИЗВЕСТНЫЕ``) the system ``M ẇ = F⁰ + H u``,
``G ẇ = b`` with ``u`` of least norm by Householder QR (seed 004 (5.6),
:func:`kidym.eom.controls.solve_controls`).

Every function takes the same arguments: ``(x, u, p)``, or ``(t, x, u, p)`` when the
model depends on time (:attr:`CasadiModel.time_dependent`); ``x`` is the state in the
engines' order (coordinates, then speeds), ``u`` the parameters named as inputs (as
:func:`kidym.linearize` takes them), ``p`` the other parameters in model order.

Events (``СОБЫТИЯ``) have no place in one smooth function: a model with events is
refused with a located error rather than exported without its resets.
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import symengine as se

from kidym.eom.equations import Equations
from kidym.errors import Diagnostic, ModelError
from kidym.model.inputs import refuse as refuse_inputs
from kidym.symbolic.numbers import to_float

if TYPE_CHECKING:
    import casadi

Expr = se.Basic

#: SymEngine function class name → the CasADi function of one or two arguments.
_FUNCTIONS: dict[str, str] = {
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
    "atan": "atan", "atan2": "atan2", "exp": "exp", "log": "log", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "Abs": "fabs", "floor": "floor", "ceiling": "ceil", "sign": "sign",
}
#: A valid CasADi function name.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*")
#: Relations of a ``Piecewise`` condition.
_RELATIONS: dict[str, Callable] = {
    "StrictLessThan": lambda a, b: a < b, "LessThan": lambda a, b: a <= b,
    "Equality": lambda a, b: a == b, "Unequality": lambda a, b: a != b,
}


def _import_casadi():
    try:
        import casadi
    except ImportError as exc:   # an optional dependency: kidym[export]
        raise ImportError("the CasADi export needs the `casadi` package: "
                          "pip install 'kidym[export]' (or pip install casadi)") from exc
    return casadi


@dataclass(frozen=True, eq=False)
class CasadiModel:
    """The equations of a model as CasADi functions (:func:`to_casadi`).

    Each function takes ``(x, u, p)``, or ``(t, x, u, p)`` when
    :attr:`time_dependent`; call them with CasADi symbols (``Opti`` variables, ``MX``)
    or numbers.

    Attributes
    ----------
    f : casadi.Function
        ``ẋ = f(x, u, p)``: the state's rate, shape (n_q + n_w,).
    outputs : casadi.Function
        The model's outputs (``ПОКАЗАТЬ``/``SHOW``, those the engines record), shape
        (n_out,), named by :attr:`output_names`; accelerations they use are ``ẇ`` of
        ``f``.
    energy : casadi.Function
        ``T + Π`` (the engines' output ``energy``), a scalar.
    constraints : casadi.Function or None
        ``(phi, c)``: the holonomic constraints ``Φ`` (0 in the rows of velocity
        constraints) and the velocity constraints ``c = G w + g``, each shape (m,),
        named by :attr:`constraint_names`; ``None`` without constraints.
    multipliers : casadi.Function or None
        The multipliers ``λ`` of the constraints, or with controls of programmed
        constraints the controls ``u`` of (5.6); named by :attr:`multiplier_names`;
        ``None`` without either.
    state_names, input_names, parameter_names : tuple of str
        The layout of ``x``, ``u`` and ``p``.
    output_names, constraint_names, multiplier_names : tuple of str
        The layout of what :attr:`outputs`, :attr:`constraints`, :attr:`multipliers`
        return.
    time_dependent : bool
        Whether the functions take the time ``t`` first.
    equations : Equations
        What they were built from.
    """

    f: casadi.Function
    outputs: casadi.Function
    energy: casadi.Function
    constraints: casadi.Function | None
    multipliers: casadi.Function | None
    state_names: tuple[str, ...]
    input_names: tuple[str, ...]
    parameter_names: tuple[str, ...]
    output_names: tuple[str, ...]
    constraint_names: tuple[str, ...]
    multiplier_names: tuple[str, ...]
    time_dependent: bool
    equations: Equations

    @property
    def arguments(self) -> tuple[str, ...]:
        """The arguments' names: ``("x", "u", "p")`` or ``("t", "x", "u", "p")``."""
        return ("t", "x", "u", "p") if self.time_dependent else ("x", "u", "p")

    @property
    def functions(self) -> dict[str, casadi.Function]:
        """Every function by name (those that exist)."""
        out = {"f": self.f, "outputs": self.outputs, "energy": self.energy,
               "constraints": self.constraints, "multipliers": self.multipliers}
        return {k: v for k, v in out.items() if v is not None}

    def values(self, params: Mapping[str, float] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """``(u, p)``: the model's parameter values with ``params`` applied, split into
        the inputs and the other parameters (as the arguments ``u`` and ``p``).

        Raises
        ------
        KeyError
            A name that is not a parameter (the message lists them).
        ValueError
            Values that give a body an impossible inertia (as for a run).
        """
        from kidym.simulation.layout import parameter_vector

        model = self.equations.model
        full = dict(zip((q.name for q in model.parameters), parameter_vector(model, params)))
        return (np.array([full[n] for n in self.input_names], dtype=float),
                np.array([full[n] for n in self.parameter_names], dtype=float))

    def initial_state(self, params: Mapping[str, float] | None = None) -> np.ndarray:
        """The model's initial values of ``x`` (0 for a state it gives none), as a run
        reads them (:func:`kidym.simulation.layout.initial_state`)."""
        from kidym.simulation.layout import initial_state

        return initial_state(self.state_names, self.equations.model, None, params)


def _refuse_events(eq: Equations) -> None:
    """A model with events is a located error: a smooth function cannot reset a state."""
    if not eq.events_named:
        return
    model = eq.model
    raise ModelError([Diagnostic(
        f"event `{ev.name}` cannot be exported to CasADi: a CasADi function is one smooth "
        "right-hand side and has no place for the event's zero crossing and its state "
        "resets, so the export would silently drop them; export the model without "
        "`СОБЫТИЯ` (and handle the switch in the optimal-control problem, e.g. as phases)",
        ev.span) for ev in eq.events_named], filename=model.filename, source=model.source)


class _Converter:
    """SymEngine expressions → CasADi SX, each distinct subexpression converted once."""

    def __init__(self, casadi, values: dict[Expr, object]) -> None:
        self.ca = casadi
        self.memo: dict[Expr, object] = dict(values)

    def __call__(self, expr: Expr):
        expr = se.sympify(expr)
        if expr in self.memo:
            return self.memo[expr]
        # post-order without recursion: a formula may be thousands of levels deep
        stack: list[tuple[Expr, bool]] = [(expr, False)]
        while stack:
            e, ready = stack.pop()
            if e in self.memo:
                continue
            if not ready:
                stack.append((e, True))
                stack.extend((a, False) for a in e.args if a not in self.memo)
                continue
            self.memo[e] = self._node(e)
        return self.memo[expr]

    def _node(self, e: Expr):
        ca = self.ca
        kind = type(e).__name__
        if e.is_Symbol:
            raise ValueError(f"internal error: the symbol `{e}` has no value in the CasADi "
                             "export; this is a bug in kidym, please report it with the "
                             "model file")
        if e.is_Number or kind in ("Pi", "Exp1"):
            value = to_float(e)
            if not math.isfinite(value):
                raise ValueError(f"the number {e} has no finite value in the CasADi export")
            return ca.SX(value)
        args = [self.memo[a] for a in e.args]
        if e.is_Add:
            total = args[0]
            for a in args[1:]:
                total = total + a
            return total
        if e.is_Mul:
            return self._mul(e, args)
        if e.is_Pow:
            return self._pow(e, args)
        if kind in _FUNCTIONS:
            return getattr(ca, _FUNCTIONS[kind])(*args)
        if kind in ("cot", "sec", "csc"):
            inner = {"cot": ca.tan, "sec": ca.cos, "csc": ca.sin}[kind]
            return 1 / inner(args[0])
        if kind == "acot":
            return ca.atan(1 / args[0])
        if kind in ("Min", "Max"):
            op = ca.fmin if kind == "Min" else ca.fmax
            out = args[0]
            for a in args[1:]:
                out = op(out, a)
            return out
        if kind == "Piecewise":
            out = ca.SX(math.nan)          # no condition holds: NaN, as both engines
            for value, cond in reversed(list(zip(args[0::2], args[1::2]))):
                out = ca.if_else(cond, value, out)
            return out
        if kind in _RELATIONS:
            return _RELATIONS[kind](*args)
        if kind == "And":
            return _fold(ca.logic_and, args)
        if kind == "Or":
            return _fold(ca.logic_or, args)
        if kind == "Not":
            return ca.logic_not(args[0])
        if kind in ("BooleanTrue", "BooleanFalse"):
            return ca.SX(1.0 if kind == "BooleanTrue" else 0.0)
        raise ValueError(f"the function `{kind}` (in `{e}`) has no CasADi counterpart; "
                         "kidym cannot export a model that uses it to CasADi")

    def _mul(self, e: Expr, args: list):
        num, den = [], []
        for a, x in zip(e.args, args):
            if a.is_Pow and a.args[1].is_Number and float(a.args[1]) < 0:
                den.append(self(a.args[0] ** (-a.args[1])))   # x/y rather than x*(1/y)
            else:
                num.append(x)
        out = _fold(lambda a, b: a * b, num) if num else self.ca.SX(1.0)
        return out / _fold(lambda a, b: a * b, den) if den else out

    def _pow(self, e: Expr, args: list):
        ca = self.ca
        base, exponent = e.args
        if type(base).__name__ == "Exp1":
            return ca.exp(args[1])
        if exponent == se.Rational(1, 2):
            return ca.sqrt(args[0])
        if exponent == se.Rational(-1, 2):
            return 1 / ca.sqrt(args[0])
        if exponent.is_Integer:
            n = int(exponent)
            if n < 0:
                return 1 / ca.constpow(args[0], -n)
            return ca.constpow(args[0], n)
        return ca.power(args[0], args[1])


def _fold(op: Callable, items: list):
    out = items[0]
    for x in items[1:]:
        out = op(out, x)
    return out


def _split_parameters(eq: Equations, inputs: Sequence[str]) -> tuple[tuple[str, ...],
                                                                    tuple[str, ...]]:
    names = [str(p) for p in eq.parameters]
    inputs = tuple(inputs)
    for n in inputs:
        if n not in names:
            raise KeyError(f"input `{n}` is not a parameter of model `{eq.model.name}`; "
                           "parameters: " + ", ".join(names))
    if len(set(inputs)) != len(inputs):
        raise ValueError(f"an input is named twice in {list(inputs)}")
    return inputs, tuple(n for n in names if n not in inputs)


def _cholesky(ca, M) -> list[list]:
    """The lower Cholesky factor ``L`` of the symmetric positive definite ``M`` (SX,
    entry by entry: ``M = L Lᵀ``), as the compiled engine factors it."""
    n = M.shape[0]
    L = [[ca.SX(0.0)] * n for _ in range(n)]
    for j in range(n):
        d = M[j, j]
        for k in range(j):
            d = d - L[j][k] * L[j][k]
        L[j][j] = ca.sqrt(d)
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s = s - L[i][k] * L[j][k]
            L[i][j] = s / L[j][j]
    return L


def _cholesky_solve(ca, L: list[list], B):
    """``X`` of ``L Lᵀ X = B`` by forward and back substitution (``B``: SX, n × k)."""
    n = len(L)
    out = []
    for c in range(B.shape[1]):
        y: list = []
        for i in range(n):
            s = B[i, c]
            for k in range(i):
                s = s - L[i][k] * y[k]
            y.append(s / L[i][i])
        x: list = [None] * n
        for i in reversed(range(n)):
            s = y[i]
            for k in range(i + 1, n):
                s = s - L[k][i] * x[k]
            x[i] = s / L[i][i]
        out.append(ca.vertcat(*x))
    return ca.horzcat(*out) if out else ca.SX(n, 0)


def _least_norm(ca, A, b):
    """``u`` of least norm with ``A u = b`` (``A``: r × S, S ≥ r, full row rank), as the
    engines find it: Householder QR of ``Aᵀ = Q R``, ``u = Q R⁻ᵀ b`` (the unique
    solution when ``S = r``), never the normal equations."""
    At = A.T
    S, r = At.shape
    reflectors = []
    for k in range(r):
        col = At[k:, k]
        norm = ca.norm_2(col)
        alpha = -ca.if_else(col[0] >= 0, 1.0, -1.0) * norm
        v = ca.vertcat(col[0] - alpha, col[1:]) if S - k > 1 else col - alpha
        v = v / ca.norm_2(v)
        At[k:, :] = At[k:, :] - 2 * ca.mtimes(v, ca.mtimes(v.T, At[k:, :]))
        reflectors.append(v)
    z: list = []                       # Rᵀ z = b, R the upper r × r block
    for i in range(r):
        s = b[i]
        for k in range(i):
            s = s - At[k, i] * z[k]
        z.append(s / At[i, i])
    u = ca.vertcat(*z, ca.SX(S - r, 1))
    for k in reversed(range(r)):       # Q [z; 0] = H_1 … H_r [z; 0]
        v = reflectors[k]
        u[k:] = u[k:] - 2 * v * ca.dot(v, u[k:])
    return u


def _solve(ca, eq: Equations, M, F, extended: list):
    """``(ẇ, λ)`` (or ``(ẇ, u)`` with controls): the engines' solve, in SX — Cholesky of
    ``M``; with constraints the range-space method of
    :func:`kidym.eom.constraints.solve_augmented`; with controls (5.6) as
    :func:`kidym.eom.controls.solve_controls`."""
    n_w = eq.n_w
    L = _cholesky(ca, M)
    if eq.controls is not None:
        c = eq.controls
        r, s = c.r, c.s
        b = ca.vertcat(*extended[:r])
        G = ca.reshape(ca.vertcat(*extended[r:r + r * n_w]), n_w, r).T
        H = ca.reshape(ca.vertcat(*extended[r + r * n_w:]), s, n_w).T
        solved = _cholesky_solve(ca, L, ca.horzcat(F, H))
        x0, X = solved[:, 0], solved[:, 1:]
        u = _least_norm(ca, ca.mtimes(G, X), b - ca.mtimes(G, x0))
        return x0 + ca.mtimes(X, u), u
    if eq.constraints is None:
        return _cholesky_solve(ca, L, F), ca.SX(0, 1)
    m = eq.m
    gamma = ca.vertcat(*extended[:m])
    G = ca.reshape(ca.vertcat(*extended[3 * m:3 * m + m * n_w]), n_w, m).T
    solved = _cholesky_solve(ca, L, ca.horzcat(F, G.T))
    MinvF, MinvGt = solved[:, 0], solved[:, 1:]
    S = ca.mtimes(G, MinvGt)
    lam = _cholesky_solve(ca, _cholesky(ca, S), gamma - ca.mtimes(G, MinvF))
    return MinvF + ca.mtimes(MinvGt, lam), lam


def to_casadi(equations: Equations, *, inputs: Sequence[str] = (), name: str = "f"
              ) -> CasadiModel:
    """The equations of motion as CasADi functions ``ẋ = f(x, u, p)``.

    Parameters
    ----------
    equations : Equations
        From :func:`kidym.derive`.
    inputs : sequence of str
        Parameters taken as the inputs ``u`` (a force's value ``F0``, a moment ``M0``),
        in this order; the others form ``p``, in model order.
    name : str
        Name of the function ``f`` (the others are ``name_outputs``, ``name_energy``,
        ``name_constraints``, ``name_multipliers``): ASCII letters and digits with
        single underscores between them, starting with a letter (CasADi's rule).

    Returns
    -------
    CasadiModel
        ``f`` and the functions of the outputs, energy, constraints and multipliers, all
        of ``(x, u, p)`` or, for a model that depends on time, ``(t, x, u, p)``.

    Raises
    ------
    ImportError
        CasADi is not installed (``pip install 'kidym[export]'``).
    ModelError
        The model has events (``СОБЫТИЯ``), located at each.
    KeyError
        An input that is not a parameter.
    ValueError
        A model with nothing to integrate, a bad ``name``, or a function with no CasADi
        counterpart.

    Examples
    --------
    >>> import kidym
    >>> eq = kidym.derive(kidym.parse('''
    ...     m = 1; l = 1; g = 9.81; M0 = 0;
    ...     Bob | Rz(phi) | Sx(l), m, 0, 0, 0;
    ...     GRAVITY := 0, -g, 0;
    ...     Pm.phi = M0;
    ... '''))
    >>> cm = kidym.to_casadi(eq, inputs=["M0"])
    >>> cm.state_names, cm.input_names, cm.parameter_names
    (('phi', "phi't"), ('M0',), ('m', 'l', 'g'))
    >>> u, p = cm.values()
    >>> [round(float(v), 6) for v in cm.f([0.0, 0.0], [2.0], p).full().ravel()]
    [0.0, -7.81]
    """
    ca = _import_casadi()
    eq = equations
    eq.require_motion()
    _refuse_events(eq)
    refuse_inputs(eq.model, "the CasADi export")
    if not _NAME.fullmatch(name) or name in ("null", "jac", "hess"):
        raise ValueError("the function name must be ASCII letters and digits, starting with "
                         "a letter, with single `_` between them (CasADi's rule; not `null`, "
                         f"`jac` or `hess`), got {name!r}")
    if eq.controls is not None and eq.constraints is not None:
        raise ValueError("the CasADi export does not take controls of programmed constraints "
                         "(`НЕИЗВЕСТНЫЕ`) together with constraints (`УРАВНЕНИЯ`) in one model")
    input_names, parameter_names = _split_parameters(eq, inputs)
    n_q, n_w = eq.n_q, eq.n_w
    # no text of the model reaches CasADi's symbols: neutral names, layouts kept here
    t = ca.SX.sym("t")
    x = ca.SX.sym("x", n_q + n_w)
    u = ca.SX.sym("u", len(input_names))
    p = ca.SX.sym("p", len(parameter_names))
    values: dict[Expr, object] = {eq.graph.time: t}
    for k, s in enumerate((*eq.coordinates, *eq.speeds)):
        values[s] = x[k]
    for k, n in enumerate(input_names):
        values[se.Symbol(n)] = u[k]
    for k, n in enumerate(parameter_names):
        values[se.Symbol(n)] = p[k]
    convert = _Converter(ca, values)
    outputs = dict(eq.outputs_named)
    extra = [*outputs.values(), eq.energy_named]
    if eq.constraints is not None:
        extra += [*eq.constraints.position, *eq.constraints.velocity]
    # the right-hand side's named quantities first, each created once, in order
    for s, formula in eq.intermediates():
        convert.memo[s] = convert(formula)
    M = ca.SX(n_w, n_w)
    for i in range(n_w):
        for j in range(i, n_w):
            M[i, j] = convert(eq.mass_matrix_named[i][j])
            M[j, i] = M[i, j]
    F = ca.vertcat(*(convert(e) for e in eq.forcing_named))
    extended = [convert(e) for e in eq.forcing_extended[n_w:]]
    qdot = ca.vertcat(*(convert(e) for e in eq.qdot))
    wdot, mult = _solve(ca, eq, M, F, extended)
    xdot = ca.vertcat(qdot, wdot)
    # outputs may use the accelerations ẇ and the controls u: their solved values
    for a, v in zip(eq.accelerations, ca.vertsplit(wdot)):
        convert.memo[a] = v
    if eq.controls is not None:
        for c, v in zip(eq.controls.controls, ca.vertsplit(mult)):
            convert.memo[c] = v
    for s, formula in eq.intermediates(extra):
        if s not in convert.memo:
            convert.memo[s] = convert(formula)
    args = [t, x, u, p]
    arg_names = ["t", "x", "u", "p"]
    results = [xdot, *(convert(e) for e in extra), mult]
    if not any(ca.depends_on(r, t) for r in results if r.numel()):
        args, arg_names = args[1:], arg_names[1:]

    def function(suffix: str, outs: list, out_names: list[str]):
        label = name if not suffix else f"{name}_{suffix}"
        return ca.Function(label, args, outs, arg_names, out_names)

    def column(items: list):
        return ca.vertcat(*items) if items else ca.SX(0, 1)

    f = function("", [xdot], ["xdot"])
    out_fn = function("outputs", [column([convert(e) for e in outputs.values()])], ["y"])
    energy = function("energy", [convert(eq.energy_named)], ["energy"])
    constraints = multipliers = None
    constraint_names: tuple[str, ...] = ()
    multiplier_names: tuple[str, ...] = ()
    if eq.constraints is not None:
        con = eq.constraints
        constraints = function("constraints", [column([convert(e) for e in con.position]),
                                               column([convert(e) for e in con.velocity])],
                               ["phi", "c"])
        constraint_names = con.names
        multiplier_names = con.multiplier_names
    if eq.controls is not None:
        multiplier_names = eq.controls.control_names
    if multiplier_names:
        multipliers = function("multipliers", [mult], ["multipliers"])
    return CasadiModel(
        f=f, outputs=out_fn, energy=energy, constraints=constraints, multipliers=multipliers,
        state_names=tuple(str(s) for s in (*eq.coordinates, *eq.speeds)),
        input_names=input_names, parameter_names=parameter_names,
        output_names=tuple(outputs), constraint_names=constraint_names,
        multiplier_names=multiplier_names, time_dependent=len(args) == 4, equations=eq)


def write_casadi(equations: Equations, path: str | Path, *, inputs: Sequence[str] = (),
                 name: str = "f") -> Path:
    """Write the equations as one CasADi function to ``path`` (CasADi's own ``save``).

    The file holds one ``casadi.Function`` named ``name`` of the arguments of
    :func:`to_casadi` with every result as a named output: ``xdot``, ``y`` (the
    outputs), ``energy``, and where the model has them ``phi``, ``c`` (constraints) and
    ``multipliers``. Read it back with ``casadi.Function.load(path)``. The file is
    written whole or not at all (a temporary file in the same directory, renamed).

    Parameters
    ----------
    equations : Equations
        From :func:`kidym.derive`.
    path : str or Path
        The file to write (``model.casadi``).
    inputs : sequence of str
        Parameters taken as the inputs ``u`` (as :func:`to_casadi`).
    name : str
        The function's name.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    As :func:`to_casadi`.
    """
    ca = _import_casadi()
    cm = to_casadi(equations, inputs=inputs, name=name)
    n_in = len(cm.arguments)
    syms = [cm.f.sx_in(k) for k in range(n_in)]
    outs, names = [], []
    for fn in cm.functions.values():
        res = fn.call(syms)
        for k in range(fn.n_out()):
            outs.append(res[k])
            names.append(fn.name_out(k))
    combined = ca.Function(name, syms, outs, list(cm.arguments), names)
    from kidym.simulation.result import write_atomically

    # CasADi's own file format (Function.load reads it back), published whole by the
    # writer of every result file
    with tempfile.TemporaryDirectory(prefix="kidym-casadi-") as work:
        saved = Path(work) / "f.casadi"
        combined.save(str(saved))
        return write_atomically(Path(path), saved.read_bytes())
