"""The kinematics calculation (``РАСЧЕТ := КИНЕМАТИКА``): named formulas over time.

Every requested quantity is a formula of time through named definitions
(``x = 3*sin(pi*t/3); v = sqrt(x't^2 + y't^2);``). A time derivative ``x't`` or
``x't't`` is formed **analytically** and **by name**, as KiDyM does
(``KIDYM_LANGUAGE.md`` §6): ``d(name)/dt = ∂f/∂t + Σ ∂f/∂s · s't`` over the named
quantities ``s`` the formula ``f`` of ``name`` uses directly, each ``s't`` being in turn
a memoised named quantity. Nothing is expanded, so a long chain of definitions stays a
chain. The quantities are then evaluated, vectorised over the time grid, in dependency
order.

Examples
--------
>>> from kidym.lang import parse
>>> m = parse("x = t^2; v = x't; SHOW := v; CALCULATION := KINEMATICS;")
>>> r = kinematics(m, n_points=3)
>>> r["v"].tolist(), r["v't"].tolist()
([0.0, 10.0, 20.0], [2.0, 2.0, 2.0])
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import symengine as se
import sympy

from kidym.model.model import TIME, Model
from kidym.symbolic.derivatives import derivative

Expr = se.Basic


class KinematicsError(ValueError):
    """The model cannot be evaluated as a kinematics calculation (names what and why)."""


def _split(name: str) -> tuple[str, int]:
    order = 0
    while name.endswith("'t") and len(name) > 2:
        name, order = name[:-2], order + 1
    return name, order


class NamedDerivatives:
    """The named quantities of a model and their time derivatives, formed on request.

    Parameters
    ----------
    model : Model
        A model whose every quantity is a formula of time (no generalized coordinates,
        no bodies).

    Attributes
    ----------
    formulas : dict of str to Expr
        Every named quantity defined so far: the model's definitions and the
        derivatives asked for, each a short formula over other names.
    """

    def __init__(self, model: Model) -> None:
        self.parameters = dict(model.parameter_values)
        self.formulas: dict[str, Expr] = {d.name: d.expr for d in model.definitions}
        self.model = model

    def define(self, name: str) -> None:
        """Make sure ``name`` (``x``, ``x't``, ``x't't`` …) and every name its formula
        uses have formulas."""
        todo, seen = [name], set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            self._ensure(n)
            todo.extend(s.name for s in self._named(self.formulas.get(n)))

    def _ensure(self, name: str) -> None:
        stack = [name]
        while stack:
            n = stack[-1]
            if n in self.formulas or n in self.parameters or n == TIME.name:
                stack.pop()
                continue
            base, order = _split(n)
            if order == 0:
                raise KinematicsError(
                    f"`{n}` has no formula: the kinematics calculation needs every quantity "
                    "as a formula of time `t` (define it, `" + n + " = …;`)")
            parent = base + "'t" * (order - 1)
            if parent not in self.formulas and parent not in self.parameters and \
                    parent != TIME.name:
                stack.append(parent)
                continue
            deps = [s.name + "'t" for s in self._named(self.formulas.get(parent))]
            missing = [d for d in deps if d not in self.formulas]
            if missing:
                stack.extend(missing)
                continue
            self.formulas[n] = self._rate(parent)
            stack.pop()

    def _named(self, expr: Expr | None) -> list[Expr]:
        if expr is None:
            return []
        return sorted((s for s in expr.free_symbols
                       if s.name not in self.parameters and s != TIME),
                      key=lambda s: s.name)

    def _rate(self, name: str) -> Expr:
        """d(name)/dt as a formula over named quantities and their ``'t`` names."""
        if name == TIME.name:
            return se.Integer(1)
        if name in self.parameters:
            return se.Integer(0)
        expr = self.formulas[name]
        out = derivative(expr, TIME)
        for s in self._named(expr):
            out += derivative(expr, s) * se.Symbol(s.name + "'t")
        return out

    def order(self, names: list[str]) -> list[str]:
        """``names`` and everything they depend on, dependencies first."""
        done: list[str] = []
        seen: set[str] = set()
        for root in names:
            stack = [(root, False)]
            while stack:
                n, ready = stack.pop()
                if n in seen or n not in self.formulas:
                    continue
                if ready:
                    seen.add(n)
                    done.append(n)
                    continue
                stack.append((n, True))
                stack.extend((s.name, False) for s in self._named(self.formulas[n])
                             if s.name not in seen)
        return done


@dataclass(frozen=True, eq=False)
class KinematicsResult:
    """Values of the requested quantities over the time grid.

    Attributes
    ----------
    t : ndarray, shape (n,)
    values : dict of str to ndarray
        Each requested quantity (``model.outputs`` and the plotted names) by name,
        shape (n,); NaN where the formula has no real value.
    names : tuple of str
        The requested names, in the model's order (the CSV columns after ``t``).
    """

    t: np.ndarray
    values: dict[str, np.ndarray]
    names: tuple[str, ...]
    model_name: str = ""
    formulas: dict[str, Expr] = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        if name == TIME.name:
            return self.t
        return self.values[name]

    def csv_text(self) -> str:
        """The table as CSV: header ``t,`` then the names; full double precision."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["t", *self.names])
        cols = [self.t, *(self.values[n] for n in self.names)]
        for row in zip(*cols):
            w.writerow([repr(float(v)) for v in row])
        return buf.getvalue()


def requested(model: Model) -> list[str]:
    """Names the model asks to compute: its outputs and every plotted name, in order."""
    out: list[str] = []
    for n in model.outputs:
        if n not in out and n != TIME.name:
            out.append(n)
    for p in model.plots:
        for n in (*p.curves, *p.against):
            if n not in out and n != TIME.name:
                out.append(n)
    return out


def _function(expr: Expr, args: list[Expr]):
    # lambdify writes Python source: arguments get our names (`a0`, `a1`…), never the
    # model's (no model text reaches generated code)
    sym = [sympy.Symbol(f"a{i}") for i in range(len(args))]
    subs = dict(zip(args, sym))
    return sympy.lambdify(sym, sympy.sympify(expr.xreplace(subs) if subs else expr),
                          modules="numpy")


def kinematics(model: Model, *, n_points: int = 601, t_start: float | None = None,
               t_end: float | None = None,
               parameters: Mapping[str, float] | None = None) -> KinematicsResult:
    """Evaluate the requested quantities of ``model`` over time.

    Parameters
    ----------
    model : Model
        Every quantity must be a formula of ``t`` (parameters allowed).
    n_points : int, optional
        Number of evenly spaced times from ``t_start`` to ``t_end`` (both included).
    t_start, t_end : float, optional
        Default: the model's range (``ВАРЬИРОВАТЬ``/``ВРЕМЯ``), with ``parameters``.
    parameters : mapping of str to float, optional
        Changed parameter values (``kidym run --set``); every formula of them follows.

    Returns
    -------
    KinematicsResult

    Raises
    ------
    KinematicsError
        The model has bodies or generalized coordinates, asks for nothing, or a
        quantity has no formula.
    """
    if model.bodies or model.coordinates:
        what = (f"bodies ({', '.join(b.name for b in model.bodies)})" if model.bodies else
                f"generalized coordinates ({', '.join(model.coordinates)})")
        raise KinematicsError(
            f"the kinematics calculation evaluates formulas of time; model `{model.name}` has "
            f"{what}, which it does not support yet: give every quantity as a formula of `t`")
    names = requested(model)
    if not names:
        raise KinematicsError(f"model `{model.name}` asks for nothing: list quantities in "
                              "`ПОКАЗАТЬ`/`SHOW`, `СРАВНИТЬ` or `СОВМЕСТИТЬ`")
    if n_points < 2:
        raise KinematicsError(f"n_points must be at least 2, got {n_points}")
    unknown = sorted(set(parameters or {}) - set(model.parameter_values))
    if unknown:
        raise KinematicsError(f"`{unknown[0]}` is not a parameter of model `{model.name}`; "
                              "parameters: " + ", ".join(model.parameter_values))
    span = model.time_span(parameters)
    t0 = span[0] if t_start is None else t_start
    t1 = span[1] if t_end is None else t_end
    if not (math.isfinite(t0) and math.isfinite(t1) and t1 > t0):
        raise KinematicsError(f"the time range must increase: start {t0:g}, end {t1:g}")
    named = NamedDerivatives(model)
    for n in names:
        named.define(n)
    t = np.linspace(t0, t1, n_points)
    env: dict[str, np.ndarray] = {TIME.name: t}
    env.update({p: np.full_like(t, float((parameters or {}).get(p, v)))
                for p, v in named.parameters.items()})
    with np.errstate(all="ignore"):
        for n in named.order(names):
            expr = named.formulas[n]
            args = sorted(expr.free_symbols, key=lambda s: s.name)
            f = _function(expr, args)
            value = np.asarray(f(*(env[a.name] for a in args)))
            if np.iscomplexobj(value):
                value = np.where(np.abs(value.imag) > 0, np.nan, value.real)
            env[n] = np.broadcast_to(value.astype(float), t.shape).copy()
    values = {n: env[n] for n in names}
    return KinematicsResult(t, values, tuple(names), model.name, dict(named.formulas))


def run_kinematics(model: Model, out: str | Path, *, n_points: int = 601) -> list[Path]:
    """Compute ``model`` and write ``out/results.csv`` and its plots (PNG), atomically.

    Returns
    -------
    list of Path
        The CSV file first, then the plots.
    """
    from kidym.calc.plots import plot_kinematics
    from kidym.simulation.result import write_atomically

    result = kinematics(model, n_points=n_points)
    out = Path(out)
    written = [write_atomically(out / "results.csv", result.csv_text())]
    written += plot_kinematics(result, model, out)
    return written


def kinematics_text(model: Model) -> str:
    """What ``kidym equations`` prints for a kinematics calculation: no equations of
    motion, but the formulas of time it evaluates and the derivatives it forms (each a
    short formula over named quantities, dependencies first)."""
    from kidym.report.equations import text

    if model.bodies or model.coordinates:
        raise KinematicsError(f"model `{model.name}`: a kinematics calculation with bodies "
                              "or generalized coordinates is not supported yet")
    names = requested(model)
    named = NamedDerivatives(model)
    for n in names:
        named.define(n)
    order = named.order(names)
    given = {d.name for d in model.definitions}
    title = f" — {model.title}" if model.title else ""
    out = [f"Model {model.name}{title}: kinematics calculation (РАСЧЕТ := КИНЕМАТИКА), "
           f"t from {model.t_start:g} to {model.t_end:g}",
           "No equations of motion: every quantity is a formula of time t; the time "
           "derivatives (x't) are formed analytically by the chain rule.",
           "parameters:    " + (", ".join(f"{p} = {v:g}" for p, v in named.parameters.items())
                                or "none"),
           "computed:      " + ", ".join(names), "",
           f"Formulas and derivatives ({len(order)}, in evaluation order; "
           "* = derivative formed by kidym):"]
    out += [f"  {'' if n in given else '* '}{n} = {text(named.formulas[n])}" for n in order]
    return "\n".join(out) + "\n"
