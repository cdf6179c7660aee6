"""Time dependence that is not smooth, for the first integrals
(:mod:`kidym.analysis.integrals`): the instants where a condition, ``abs``, ``sign``,
``min``/``max``, ``floor``/``ceil`` of a formula of time alone switches, the pieces of
the time span between them, and the rejection of a candidate integral whose value
jumps at one of them."""

from __future__ import annotations

import itertools

import numpy as np
import symengine as se

from kidym.analysis.integral_witness import Candidate, FirstIntegral, candidate_values
from kidym.eom.equations import Equations
from kidym.model.model import Model

Expr = se.Basic


# ------------------------------------------------------------- numeric witness
# ------------------------------------------- the model's own time dependence
#: Function heads whose value, or whose derivative, jumps where an argument changes sign
#: (``floor``/``ceiling`` where it crosses an integer).
_SWITCHES = frozenset({"Abs", "sign", "Min", "Max", "Piecewise", "floor", "ceiling"})


#: Points of the grid the switches are scanned on (then bisected), and the most
#: breakpoints used.
_SCAN_POINTS = 4097


_MAX_BREAKPOINTS = 256


def _switch_functions(eq: Equations, cands: list[Candidate]) -> list[tuple[str, Expr]]:
    """``(how, g)`` for each switch of the candidates and their rates that is a formula
    of time (and parameters) alone: the branch changes where ``sign(g)`` changes
    (``how == "sign"``) or ``floor``/``ceil`` of ``g`` does."""
    graph, t = eq.graph, eq.graph.time
    exprs = [c.expr for c in cands] + [c.rate for c in cands]
    roots = [graph.formula(x) for x in graph.needed(exprs)] + [se.sympify(e) for e in exprs]
    out: dict[tuple[str, Expr], None] = {}
    seen: set = set()
    stack = list(roots)
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        stack.extend(e.args)
        kind = type(e).__name__
        if kind not in _SWITCHES:
            continue
        found: list[tuple[str, Expr]] = []
        if kind in ("Abs", "sign"):
            found.append(("sign", e.args[0]))
        elif kind in ("floor", "ceiling"):
            found.append((kind, e.args[0]))
        elif kind in ("Min", "Max"):
            found += [("sign", a - b) for i, a in enumerate(e.args) for b in e.args[i + 1:]]
        else:   # Piecewise: the conditions' relations
            conds = [e.args[i] for i in range(1, len(e.args), 2)]
            while conds:
                c = conds.pop()
                if type(c).__name__ in ("And", "Or", "Not"):
                    conds.extend(c.args)
                elif len(c.args) == 2 and type(c).__name__ not in ("BooleanTrue",
                                                                    "BooleanFalse"):
                    found.append(("sign", c.args[0] - c.args[1]))
        for how, g in found:
            if graph.dependencies(g) == frozenset({t}):
                out[(how, g)] = None
    return list(out)


def time_breakpoints(eq: Equations, model: Model, cands: list[Candidate], p: np.ndarray,
                      span: tuple[float, float]) -> list[float]:
    """Instants inside ``span`` where a switch of :func:`_switch_functions` changes branch:
    scanned on a grid of :data:`_SCAN_POINTS` times, each change bisected to rounding.
    A switch whose branch changes more than once per grid step is missed (a formula of
    ``t`` that oscillates faster than the grid); at most :data:`_MAX_BREAKPOINTS`."""
    switches = _switch_functions(eq, cands)
    if not switches:
        return []
    graph, t = eq.graph, eq.graph.time
    values = {se.Symbol(k): v for k, v in zip(model.parameter_values, p)}
    t0, t1 = span
    grid = np.linspace(t0, t1, _SCAN_POINTS)
    found: list[float] = []
    for how, g in switches:
        g = graph.expand(g).xreplace(values)
        if g.free_symbols - {t}:
            continue
        try:
            fn = se.Lambdify([t], [g], real=True)
        except (RuntimeError, TypeError, ValueError):  # pragma: no cover (no such head)
            continue
        step = np.sign if how == "sign" else np.floor if how == "floor" else np.ceil

        def branch(x: float, fn=fn, step=step) -> float:
            with np.errstate(all="ignore"):
                return float(step(float(np.asarray(fn(x)).ravel()[0])))

        with np.errstate(all="ignore"):
            b = step(np.asarray(fn(grid[:, None]), float).ravel())
        for j in np.flatnonzero(b[1:] != b[:-1]):
            lo, hi = float(grid[j]), float(grid[j + 1])
            blo = b[j]
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                if not lo < mid < hi:
                    break
                if branch(mid) == blo:
                    lo = mid
                else:
                    hi = mid
            found.append(0.5 * (lo + hi))
    edge = 1e-9 * max(1.0, abs(t0), abs(t1), t1 - t0)
    out: list[float] = []
    for x in sorted(found):
        if t0 + edge < x < t1 - edge and (not out or x - out[-1] > edge):
            out.append(x)
    if len(out) > _MAX_BREAKPOINTS:
        out = [out[k] for k in np.linspace(0, len(out) - 1, _MAX_BREAKPOINTS).astype(int)]
    return out


#: The most pieces between breakpoints given a sample of their own.
_MAX_PIECES = 32


def piece_times(breaks: list[float], span: tuple[float, float],
                 rng: np.random.Generator) -> list[float]:
    """A random time inside each piece of ``span`` between breakpoints (its middle half,
    away from the switches and the difference steps of the witness), so that the rates
    are seen on both sides of every jump; none without breakpoints."""
    if not breaks:
        return []
    edges = [span[0], *breaks, span[1]]
    pieces = [(a, b) for a, b in itertools.pairwise(edges)
              if b - a > 1e-5 * (1 + max(abs(a), abs(b)))]
    if len(pieces) > _MAX_PIECES:
        pieces = [pieces[k] for k in np.linspace(0, len(pieces) - 1, _MAX_PIECES).astype(int)]
    return [float(a + (b - a) * rng.uniform(0.25, 0.75)) for a, b in pieces]


def continuous_integrals(eq: Equations, model: Model, cands: list[Candidate], found: list,
                breaks: list[float], p: np.ndarray, rng: np.random.Generator,
                parameters) -> tuple[list, list[str]]:
    """``found`` without the integrals whose value jumps at a breakpoint, and a line for
    each of those. A zero rate on each side of a jump of the model's time dependence
    does not make an integral: a prescribed length whose rate jumps (``abs(t - T)``)
    changes ``m ξ̇²`` there, at every state, while no rate sees it (its derivative is a
    Dirac pulse, which a formula's derivative leaves out). The value of each integral is
    compared just before and just after each breakpoint, at two random states: a change
    above 1e-6 of its terms' size is a jump."""
    if not breaks or not found:
        return found, []
    from kidym.simulation.numpy_engine import generate_python

    fn = generate_python(eq, {f"c{i}": c.expr for i, c in enumerate(cands)}).function
    names = [str(x) for x in (*eq.coordinates, *eq.speeds)]
    init = model.initial_values(parameters)
    y0 = np.array([init.get(x, 0.0) for x in names], float)
    states = [y0 + rng.normal(size=y0.size) * 0.3 * (1 + np.abs(y0)) for _ in range(2)]
    keep, rejected = [], []
    for kind, terms in found:
        jump = None
        for b in breaks:
            d = 1e-10 * max(1.0, abs(b))
            for y in states:
                with np.errstate(all="ignore"):
                    try:
                        before = candidate_values(fn, b - d, y, p, eq.n_w)
                        after = candidate_values(fn, b + d, y, p, eq.n_w)
                    except (TypeError, ValueError, ZeroDivisionError, OverflowError):  # complex
                        continue
                i0 = sum(c * before[k] for c, k in terms)
                i1 = sum(c * after[k] for c, k in terms)
                size = sum(abs(c) * (abs(before[k]) + abs(after[k])) for c, k in terms)
                if np.isfinite(i0) and np.isfinite(i1) and abs(i1 - i0) > 1e-6 * size:
                    jump = (b, i1 - i0)
                    break
            if jump:
                break
        if jump is None:
            keep.append((kind, terms))
            continue
        formula = FirstIntegral("", kind, tuple((c, cands[k].label) for c, k in terms),
                                se.Integer(0), "", "numeric").formula
        rejected.append(f"{formula} has a zero rate at every random state, but jumps by "
                        f"{jump[1]:.3g} at t = {jump[0]:.9g}, where the model's time "
                        "dependence is not smooth (a prescribed rate that jumps is an "
                        "impact; docs/language.md §2.4d)")
    return keep, rejected
