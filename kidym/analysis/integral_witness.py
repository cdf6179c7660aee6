"""The numeric witness of first integrals (:mod:`kidym.analysis.integrals`): an integral
found (:class:`FirstIntegral`), the candidates' values, rates and term scales at random
states — on the constraint manifold where there are constraints — and the integrals read
from the null space of their rates (single candidates by kind, combinations in reduced
row-echelon form)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import symengine as se

from kidym.eom.equations import Equations
from kidym.model.model import Model

Expr = se.Basic


@dataclass(frozen=True)
class FirstIntegral:
    """One first integral ``I = Σ c_k I_k`` of the candidates.

    Attributes
    ----------
    name : str
        Short label (``energy``, ``p_phi``, ``h``, ``I1``).
    kind : str
        One of :data:`KINDS`.
    terms : tuple of (float, str)
        Coefficients and candidate labels of the combination.
    expression : Expr
        ``I`` over the named quantities of :attr:`FirstIntegrals.equations`.
    how : str
        How it was found (printed by ``kidym check``).
    proof : {"symbolic", "numeric"}
        Whether the zero rate was proved by expansion and simplification, or only
        witnessed at every random state.
    """

    name: str
    kind: str
    terms: tuple[tuple[float, str], ...]
    expression: Expr
    how: str
    proof: str

    @property
    def formula(self) -> str:
        """The combination of candidates as text (``(ω·r_C)Ball − 3·ωZBall``)."""
        parts = []
        for c, label in self.terms:
            mag = abs(c)
            coef = "" if abs(mag - 1) < 1e-12 else f"{mag:.10g}·"
            sign = "−" if c < 0 else "+"
            parts.append((sign, coef + label))
        text = ("−" if parts[0][0] == "−" else "") + parts[0][1]
        for sign, body in parts[1:]:
            text += f" {sign} {body}"
        return text

    def describe(self) -> str:
        """One line: name, formula, how found and how proved."""
        proof = ("proved symbolically" if self.proof == "symbolic"
                 else "zero rate at every random state, not proved symbolically")
        return f"{self.name} = {self.formula}  [{self.how}; {proof}]"


#: A rate is taken as zero when it is below this fraction of the terms it sums.
ZERO_RATE = 1e-10


@dataclass
class Candidate:
    label: str
    kind: str
    expr: Expr
    how: str = ""
    rate: Expr = field(default=None)  # type: ignore[assignment]


def model_parameters(eq: Equations, parameters) -> np.ndarray:
    from kidym.simulation.layout import parameter_vector

    return parameter_vector(eq.model, parameters)


def witness(eq: Equations, model: Model, cands: list[Candidate], p: np.ndarray, n: int,
             rng: np.random.Generator, parameters, times: list[float] | None = None):
    """Values, rates and term scales of the candidates at ``n`` random states (on the
    constraint manifold where there are constraints); the first take their times from
    ``times`` in turn (one in each smooth piece of the model's time dependence), the
    rest uniformly in the model's time span."""
    from kidym.simulation.faults import quaternion_indices
    from kidym.simulation.numpy_engine import generate_python

    k = len(cands)
    with_rates = generate_python(eq, {f"c{i}": c.expr for i, c in enumerate(cands)}
                                 | {f"r{i}": c.rate for i, c in enumerate(cands)}).function
    names = [str(s) for s in (*eq.coordinates, *eq.speeds)]
    init = model.initial_values(parameters)
    y0 = np.array([init.get(x, 0.0) for x in names], float)
    groups = list(quaternion_indices(names, model).values())
    t0, t1 = model.time_span(parameters)
    nq, nw = eq.n_q, eq.n_w
    manifold = _Manifold(eq, with_rates) if eq.m else None
    values, rates, scales = [], [], []
    tries = 0
    pending = list(times or ())
    while len(values) < n and tries < 20 * n:
        tries += 1
        y = y0 + rng.normal(size=y0.size) * 0.3 * (1 + np.abs(y0))
        y[nq:] = y0[nq:] + rng.normal(size=nw) * (1 + np.abs(y0[nq:]))
        for idx in groups:
            y[idx] /= np.linalg.norm(y[idx])
        t = float(pending[len(values)]) if len(values) < len(pending) else float(
            rng.uniform(t0, t1))
        with np.errstate(all="ignore"):
            try:
                if manifold is not None:
                    y = manifold.project(t, y, p)
                    if y is None:
                        continue
                row = _evaluate(with_rates, t, y, p, nq, nw, eq.m)
            except (TypeError, ValueError, ZeroDivisionError, OverflowError,
                    np.linalg.LinAlgError):  # TypeError: a complex value (x^1.5, x < 0)
                continue
            if row is None:
                continue
            ydot, out = row
            vals, rate = out[:k], out[k:]
            # the size of the terms each rate sums: Σ |∂I/∂y_i ẏ_i| + |∂I/∂t| (the
            # candidates' values need no accelerations, and are defined off the manifold)
            scale = np.zeros(k)
            ok = True
            for i in range(y.size + 1):
                h = 1e-6 * (1 + (abs(y[i]) if i < y.size else abs(t)))
                dy = np.zeros(y.size)
                dt = 0.0
                if i < y.size:
                    dy[i] = h
                else:
                    dt = h
                try:
                    plus = candidate_values(with_rates, t + dt, y + dy, p, nw)[:k]
                    minus = candidate_values(with_rates, t - dt, y - dy, p, nw)[:k]
                except (TypeError, ValueError, ZeroDivisionError, OverflowError):
                    ok = False
                    break
                grad = (plus - minus) / (2 * h)
                scale += np.abs(grad * (ydot[i] if i < y.size else 1.0))
            if not ok or not np.all(np.isfinite(scale)):
                continue
        values.append(vals)
        rates.append(rate)
        scales.append(scale)
    if len(values) < max(4, n // 2):
        where = " on the constraint manifold" if eq.m else ""
        raise ValueError(f"model `{model.name}`: the first-integral search found only "
                         f"{len(values)} random states{where} where the equations can be "
                         f"evaluated (of {tries} tried about the initial values)")
    return np.array(values), np.array(rates), np.array(scales)


class _Manifold:
    """Random states put on the constraints: the small interface of
    :mod:`kidym.simulation.constrained` (``constraint_block``, ``rates``) over the
    generated function."""

    #: |Φ| and |c| a projected state must reach, relative to the state's size.
    TOL = 1e-12

    def __init__(self, eq: Equations, fn) -> None:
        self.equations = eq
        self.fn = fn
        self.state_names = [str(s) for s in (*eq.coordinates, *eq.speeds)]

    def _call(self, t, y, p):
        z = list(map(float, y)) + [0.0] * self.equations.n_w
        return self.fn(float(t), z, list(map(float, p)))

    def constraint_block(self, t, y, p):
        from kidym.eom.constraints import split

        _qdot, M, F = self._call(t, y, p)[:3]
        F, block = split(F, self.equations.n_w, self.equations.m)
        return np.asarray(M, float), F, block

    def rates(self, t, y, p):
        return np.asarray(self._call(t, y, p)[0], float)

    def project(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray | None:
        """``y`` on ``Φ = 0`` and ``G w + g = 0``, or ``None`` where that fails."""
        from kidym.eom.constraints import drift
        from kidym.simulation.constrained import project

        tol = self.TOL * (1 + float(np.abs(y).max(initial=0.0)))
        y = project(self, t, y, p, tol)
        pos, vel = drift(self.constraint_block(t, y, p)[2])
        if not (pos <= tol and vel <= tol * 10):
            return None
        return y


def candidate_values(fn, t, y, p, nw) -> np.ndarray:
    """The outputs at a state, accelerations set to 0."""
    z = list(map(float, y)) + [0.0] * nw
    return np.asarray(fn(t, z, list(map(float, p)))[3], float)


def _evaluate(fn, t, y, p, nq, nw, m=0):
    """``(ẏ, outputs)`` at one state, ``None`` where something is not finite; with
    ``m`` constraints ``ẇ`` is the augmented system's."""
    z = list(map(float, y)) + [0.0] * nw
    qdot, M, F = fn(t, z, list(map(float, p)))[:3]
    M = np.asarray(M, float)
    F = np.asarray(F, float)
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(F))):
        return None
    if np.linalg.cond(M) > 1e10:
        return None
    if m:
        from kidym.eom.constraints import Stabilization, solve_augmented, split

        F, block = split(F, nw, m)
        acc, _lam = solve_augmented(M, F, block, Stabilization())
    else:
        acc = np.linalg.solve(M, F[:nw])
    out = np.asarray(fn(t, list(map(float, y)) + list(acc), list(map(float, p)))[3], float)
    ydot = np.concatenate([np.asarray(qdot, float), acc])
    if not (np.all(np.isfinite(out)) and np.all(np.isfinite(ydot))):
        return None
    return ydot, out


def select(cands: list[Candidate], values: np.ndarray, rates: np.ndarray,
            scales: np.ndarray) -> list[tuple[str, list[tuple[float, int]]]]:
    """The integrals among the candidates: single ones by kind, then combinations."""
    ref = np.sqrt(np.mean(scales ** 2, axis=0))          # per candidate
    # candidates that are constants, or (as functions of the state) constant-coefficient
    # combinations of earlier ones, say nothing new: ∂T/∂θ't = J·θ't
    live: list[int] = []
    span = [np.ones(values.shape[0])]
    for k in range(len(cands)):
        if ref[k] > 0 and _independent(span, values[:, k]):
            span.append(values[:, k])
            live.append(k)
    # individually: |İ_k| below ZERO_RATE of its own terms at every sample
    single = [k for k in live
              if np.all(np.abs(rates[:, k]) <= ZERO_RATE * np.maximum(scales[:, k], 1e-300))]
    accepted: list[tuple[str, list[tuple[float, int]]]] = []
    basis = [np.ones(values.shape[0])]   # values of what is found, and constants

    def new(vec: np.ndarray) -> bool:
        if _independent(basis, vec):
            basis.append(vec)
            return True
        return False

    for k in single:
        if new(values[:, k]):
            accepted.append((cands[k].kind, [(1.0, k)]))
    rest = [k for k in live if k not in single]
    if len(rest) >= 2:
        Rn = rates[:, rest] / ref[rest]
        _u, s, vt = np.linalg.svd(Rn, full_matrices=True)
        tol = ZERO_RATE * np.sqrt(Rn.shape[0])
        rank = int(np.sum(s > tol))
        null = vt[rank:]                     # rows: null vectors (scaled coefficients)
        if null.size:
            rows = _rref(null)
            for row in rows:
                coef = row / ref[rest]
                big = np.max(np.abs(coef))
                coef = coef / coef[np.argmax(np.abs(coef) > 1e-9 * big)]
                terms = [(float(_tidy(c)), rest[j]) for j, c in enumerate(coef)
                         if abs(c) > 1e-9 * np.max(np.abs(coef))]
                vec = sum(c * values[:, k] for c, k in terms)
                size = sum(abs(c) * np.linalg.norm(values[:, k]) for c, k in terms)
                if np.linalg.norm(vec) <= 1e-9 * size:
                    continue     # zero on the constraint manifold: no integral
                if len(terms) >= 2 and new(vec):
                    accepted.append(("linear", terms))
    return accepted


def _independent(span: list[np.ndarray], vec: np.ndarray) -> bool:
    """Whether ``vec`` is not a least-squares combination of ``span`` (relative 1e-7)."""
    A = np.column_stack(span)
    scale = np.linalg.norm(vec)
    if scale == 0:
        return False
    A = A / np.maximum(np.linalg.norm(A, axis=0), 1e-300)
    coef, *_ = np.linalg.lstsq(A, vec, rcond=None)
    return bool(np.linalg.norm(A @ coef - vec) > 1e-7 * scale)


def _tidy(c: float) -> float:
    """``c`` rounded to a near integer or a short decimal (rounding of the null space)."""
    for digits in (0, 1, 2, 3, 4, 5, 6):
        r = round(c, digits)
        if abs(r - c) <= 1e-8 * max(1.0, abs(c)):
            return r
    return c


def _rref(a: np.ndarray) -> np.ndarray:
    """Reduced row-echelon form of ``a`` (partial pivoting), rows normalised."""
    a = a.copy()
    rows, cols = a.shape
    r = 0
    for c in range(cols):
        if r == rows:
            break
        piv = r + int(np.argmax(np.abs(a[r:, c])))
        if abs(a[piv, c]) < 1e-9:
            continue
        a[[r, piv]] = a[[piv, r]]
        a[r] /= a[r, c]
        for i in range(rows):
            if i != r:
                a[i] -= a[i, c] * a[r]
        r += 1
    return a[:r]


def integral_name(kind: str, terms, cands, counts: dict[str, int]) -> str:
    if kind == "energy":
        return "E"
    if kind == "jacobi":
        return "h"
    if kind in ("cyclic momentum", "momentum"):
        return "p_" + cands[terms[0][1]].label.removeprefix("∂T/∂").removesuffix("'t")
    if kind == "speed":
        return cands[terms[0][1]].label
    counts[kind] = counts.get(kind, 0) + 1
    return f"I{counts[kind]}"
