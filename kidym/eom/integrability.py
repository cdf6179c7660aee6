"""Are the velocity equations ``q̇ = B(q) w`` integrable (holonomic) or not?

Two tests on the kinematic equations of an :class:`~kidym.eom.equations.Equations`:

* **Frobenius** (the rigorous one): the columns ``X_j = Σ_k B_kj ∂/∂q_k`` span a
  distribution; the constraints are integrable iff it is involutive, i.e. every Lie
  bracket ``[X_i, X_j] = (∂X_j/∂q) X_i − (∂X_i/∂q) X_j`` stays in the span of the
  ``X``. The witness of non-holonomy is a pair ``(w_i, w_j)`` whose bracket leaves it.
* **Mixed derivatives** (seed 000, after eq. (19); Neimark & Fufaev): write the
  constraints as ``q̇_l = Σ_k a_lk(q) q̇_k`` over the coordinates whose speeds are
  independent and compare ``∂a_lk/∂q_j`` with ``∂a_lj/∂q_k`` (and require
  ``∂a_lk/∂q_m = 0`` for dependent ``q_m``): equality everywhere means each constraint
  is an exact differential. It needs the dependent velocities expressed in generalized
  velocities; with pseudo-velocities only the Frobenius test applies. It is
  sufficient, not necessary (an integrating factor may exist): the verdict is
  Frobenius's.

Time-dependent terms ``β(q, t)`` are handled by adding ``∂/∂t + β`` to the
distribution (and ``t`` to the coordinates).

**How it is decided, and what it costs.** Both tests are first evaluated
*numerically, on the named quantities*: at a few random states the values of ``B``,
``β`` and their first derivatives ``∂/∂q`` come from forward-mode differentiation
through the graph of named quantities (the chain rule applied to each short formula,
nothing expanded), so a model with a long chain of definitions costs about as much as
its derivation. A bracket outside the span (or unequal mixed derivatives) at one state
is a proof: non-holonomic, done. If every bracket stays in the span at every state, a
**symbolic confirmation** (SymPy, on the expanded ``B``) runs in a child process within
a time budget (:data:`SYMBOLIC_BUDGET_S`); when it does not finish, the verdict is
*undecided*, with the reason and the numerical evidence — never a guess presented as
a result.
"""

from __future__ import annotations

import math
import multiprocessing
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import symengine as se

from kidym.symbolic.derivatives import derivative

if TYPE_CHECKING:  # SymPy is loaded by the symbolic tests only
    import sympy as sp

#: Wall-clock seconds allowed to the symbolic confirmation (SymPy on the expanded ``B``).
SYMBOLIC_BUDGET_S = 10.0
#: Random states at which the numerical tests are evaluated.
NUMERIC_POINTS = 4
#: A bracket whose distance to the span exceeds this fraction of its scale leaves it.
RELATIVE_TOLERANCE = 1e-7


@dataclass(frozen=True)
class Integrability:
    """Verdict on the velocity equations.

    Attributes
    ----------
    holonomic : bool or None
        Whether the velocity equations are integrable (Frobenius); ``None``:
        undecided (see ``reason``).
    constraints : int
        Number of velocity constraints, ``n_q − n_w`` (0: nothing to test).
    witness : tuple of str or None
        Two speeds whose Lie bracket leaves the distribution (non-holonomic).
    mixed_derivatives : bool or None
        Seed 000's criterion: ``True`` if all mixed derivatives agree, ``False`` if
        not, ``None`` if it does not apply (pseudo-velocities) or is undecided.
    mixed_witness : tuple of str or None
        ``(dependent coordinate, q_k, q_j)`` of the first unequal pair.
    method : str
        How the verdict was reached: ``"numeric witness"`` (a bracket outside the span
        at a random state: a proof), ``"symbolic"`` (SymPy confirmed the numerical
        evidence), or ``""``.
    reason : str or None
        Why the verdict is undecided.
    """

    holonomic: bool | None
    constraints: int
    witness: tuple[str, str] | None = None
    mixed_derivatives: bool | None = None
    mixed_witness: tuple[str, str, str] | None = None
    method: str = ""
    reason: str | None = None

    def describe(self) -> str:
        """One line for ``kidym check``."""
        if self.constraints == 0:
            return "none (every coordinate has an independent speed)"
        if self.holonomic is None:
            return f"undecided: {self.reason}"
        if self.holonomic:
            return "integrable: the velocity constraints are holonomic (Frobenius)"
        assert self.witness is not None
        text = ("non-holonomic (Frobenius: the bracket of the fields of "
                f"{self.witness[0]} and {self.witness[1]} leaves their span")
        text += ", at a random state)" if self.method == "numeric witness" else ")"
        if self.mixed_witness is not None:
            lq, k, j = self.mixed_witness
            text += (f"; mixed derivatives: ∂a[{lq},{k}]/∂{j} ≠ ∂a[{lq},{j}]/∂{k}")
        return text


# ------------------------------------------------------------------ numerical tests
class _Jets:
    """Values and first derivatives of named quantities, by the chain rule on the graph.

    For each named quantity ``X = f(a, b, …)`` (its direct arguments) the local partials
    ``∂f/∂a`` are formed once — short formulas — and at a state
    ``∇X = Σ ∂f/∂a · ∇a`` is accumulated in dependency order, with ``∇q_m = e_m`` for
    the chosen bases. Nothing is expanded.
    """

    def __init__(self, graph, roots: list[se.Basic], bases: list[se.Symbol]) -> None:
        self.graph = graph
        self.bases = bases
        self.order = graph.needed(roots)
        self.local = {s: self._partials(graph.formula(s)) for s in self.order}
        self.roots = [se.sympify(r) for r in roots]
        self.root_partials = [self._partials(r) for r in self.roots]

    def _partials(self, f: se.Basic) -> list[tuple[se.Symbol, se.Basic]]:
        out = []
        for a in f.free_symbols:
            if a in self.bases or a in self.graph:
                d = derivative(f, a)
                if d != 0:
                    out.append((a, d))
        return out

    def at(self, values: dict[se.Symbol, float]) -> tuple[np.ndarray, np.ndarray] | None:
        """Values (shape (n_roots,)) and gradients (shape (n_roots, n_bases)), or
        ``None`` where a formula is undefined or not real at this state."""
        n = len(self.bases)
        num = {s: se.RealDouble(v) for s, v in values.items()}
        grad: dict[se.Symbol, np.ndarray] = {b: np.eye(n)[i] for i, b in enumerate(self.bases)}
        zero = np.zeros(n)

        def evaluate(f: se.Basic) -> float:
            v = f.xreplace({a: num[a] for a in f.free_symbols if a in num})
            x = float(v)
            if not math.isfinite(x):
                raise ValueError(x)
            return x

        def jet(f: se.Basic, partials) -> tuple[float, np.ndarray]:
            g = zero.copy()
            for a, d in partials:
                ga = grad.get(a)
                if ga is not None and ga.any():
                    g += evaluate(d) * ga
            return evaluate(f), g

        try:
            for s in self.order:
                val, g = jet(self.graph.formula(s), self.local[s])
                num[s] = se.RealDouble(val)
                grad[s] = g
            out = [jet(r, p) for r, p in zip(self.roots, self.root_partials, strict=True)]
        except (RuntimeError, TypeError, ValueError, OverflowError, ZeroDivisionError):
            return None
        return np.array([v for v, _ in out]), np.array([g for _, g in out])


def _numeric_verdicts(eq, extended: bool, independent: list[int] | None
                      ) -> tuple[tuple[int, int] | None, tuple[int, int, int] | None, int]:
    """Numerical Frobenius and mixed-derivative tests at random states.

    Returns the first bracket pair found outside the span, the first unequal mixed
    derivative ``(l, k, j)``, and the number of states where all could be evaluated.
    """
    g = eq.graph
    q = list(eq.coordinates)
    w = list(eq.speeds)
    bases = [*q, g.time] if extended else q
    B_named = [[g.diff(x, s) for s in w] for x in eq.qdot]
    roots = [x for row in B_named for x in row] + list(eq.qdot)
    jets = _Jets(g, roots, bases)
    rng = np.random.default_rng(0)
    params = {se.Symbol(k): float(v) for k, v in eq.model.parameter_values.items()}
    n, k = len(q), len(w)
    good = 0
    bracket_witness = mixed_witness = None
    for _ in range(NUMERIC_POINTS * 5):
        if good >= NUMERIC_POINTS:
            break
        point = dict(params)
        point.update({s: float(v) for s, v in zip(q, rng.uniform(-0.9, 0.9, n), strict=True)})
        point.update({s: 0.0 for s in w})
        point[g.time] = float(rng.uniform(0.1, 1.0))
        got = jets.at(point)
        if got is None:
            continue
        good += 1
        vals, grads = got
        Bv = vals[:n * k].reshape(n, k)
        dB = grads[:n * k].reshape(n, k, len(bases))        # ∂B_rj/∂base
        beta, dbeta = vals[n * k:], grads[n * k:]
        # the fields as columns over the bases (q, and t when extended)
        if extended:
            X = np.vstack([np.hstack([Bv, beta[:, None]]), np.r_[np.zeros(k), 1.0][None, :]])
            dX = np.zeros((n + 1, k + 1, n + 1))
            dX[:n, :k, :] = dB
            dX[:n, k, :] = dbeta
        else:
            X, dX = Bv, dB
        if bracket_witness is None:
            bracket_witness = _bracket_outside(X, dX)
        if independent is not None and mixed_witness is None and not extended:
            mixed_witness = _mixed_unequal(dB, q, independent)
    return bracket_witness, mixed_witness, good


def _bracket_outside(X: np.ndarray, dX: np.ndarray) -> tuple[int, int] | None:
    """The first pair whose bracket ``J_j X_i − J_i X_j`` leaves the span of ``X``."""
    cols = X.shape[1]
    for i in range(cols):
        for j in range(i + 1, cols):
            a = dX[:, j, :] @ X[:, i]
            b = dX[:, i, :] @ X[:, j]
            bracket = a - b
            scale = np.linalg.norm(a) + np.linalg.norm(b)
            if scale == 0:
                continue
            coef, *_ = np.linalg.lstsq(X, bracket, rcond=None)
            if np.linalg.norm(X @ coef - bracket) > RELATIVE_TOLERANCE * scale:
                return i, j
    return None


def _mixed_unequal(dB: np.ndarray, q: list, independent: list[int]
                   ) -> tuple[int, int, int] | None:
    dep = [r for r in range(len(q)) if r not in independent]
    for l in dep:
        for a, k in enumerate(independent):
            for m in dep:
                if abs(dB[l, a, m]) > RELATIVE_TOLERANCE * (1 + np.abs(dB[l]).max()):
                    return l, k, m
            for b, j in enumerate(independent):
                if b <= a:
                    continue
                x, y = dB[l, a, j], dB[l, b, k]
                if abs(x - y) > RELATIVE_TOLERANCE * (abs(x) + abs(y)):
                    return l, k, j
    return None


# ------------------------------------------------------------------- symbolic tests
def _is_zero(expr: sp.Expr) -> bool:
    import sympy as sp

    return sp.simplify(expr) == 0


def frobenius(B: sp.Matrix, q: list[sp.Symbol], names: list[str]
              ) -> tuple[bool, tuple[str, str] | None]:
    """Involutivity of the column fields of ``B(q)`` (SymPy, exact); the first witness pair
    if not."""
    import sympy as sp

    k = B.shape[1]
    cols = [B[:, j] for j in range(k)]
    rank = B.rank(simplify=True)
    for i in range(k):
        for j in range(i + 1, k):
            bracket = cols[j].jacobian(q) * cols[i] - cols[i].jacobian(q) * cols[j]
            bracket = bracket.applyfunc(sp.simplify)
            if bracket.is_zero_matrix:
                continue
            if B.row_join(bracket).rank(simplify=True) > rank:
                return False, (names[i], names[j])
    return True, None


def mixed_derivatives(B: sp.Matrix, q: list[sp.Symbol], independent: list[int],
                      ) -> tuple[bool, tuple[int, int, int] | None]:
    """Seed 000's pairwise test when the speeds are ``q̇`` of the coordinates ``independent``.

    ``B`` rows of the dependent coordinates give ``a_lk``; returns the first
    ``(l, k, j)`` (coordinate indices) with ``∂a_lk/∂q_j ≠ ∂a_lj/∂q_k``.
    """
    import sympy as sp

    dep = [r for r in range(len(q)) if r not in independent]
    for l in dep:
        for a, k in enumerate(independent):
            for m in dep:
                if not _is_zero(sp.diff(B[l, a], q[m])):
                    return False, (l, k, m)
            for b, j in enumerate(independent):
                if b <= a:
                    continue
                if not _is_zero(sp.diff(B[l, a], q[j]) - sp.diff(B[l, b], q[k])):
                    return False, (l, k, j)
    return True, None


def _symbolic(eq, extended: bool, independent: list[int] | None, names: list[str]):
    """Both tests in SymPy on the expanded ``B`` (what may be slow: run in a child)."""
    import sympy as sp

    q = [sp.Symbol(str(s)) for s in eq.coordinates]
    B = eq.B
    if extended:
        t = sp.Symbol(str(eq.graph.time))
        B = B.col_join(sp.zeros(1, B.shape[1])).row_join(eq.beta.col_join(sp.Matrix([[1]])))
        q = [*q, t]
    ok, witness = frobenius(B, q, names)
    mixed = where = None
    if independent is not None and not extended:
        mixed, where = mixed_derivatives(eq.B, q, independent)
    return ok, witness, mixed, where


def _symbolic_within(budget: float, eq, extended: bool, independent: list[int] | None,
                     names: list[str]):
    """:func:`_symbolic` in a forked child, or ``None`` if it does not finish in time."""
    if budget <= 0:
        return None
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:   # no fork on this platform: no way to stop SymPy on time
        return None
    receive, send = ctx.Pipe(duplex=False)

    def child() -> None:
        try:
            send.send(("ok", _symbolic(eq, extended, independent, names)))
        except Exception as exc:   # reported to the parent: undecided
            send.send(("error", f"{type(exc).__name__}: {exc}"))

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    send.close()
    try:
        if not receive.poll(budget):
            return None
        status, value = receive.recv()
    except EOFError:
        return None
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join()
        receive.close()
    return value if status == "ok" else None


def check_integrability(eq, *, budget: float = SYMBOLIC_BUDGET_S) -> Integrability:
    """Decide whether the velocity equations of ``eq`` are integrable.

    Parameters
    ----------
    eq : Equations
        Derived equations (``qdot`` over named quantities, ``coordinates``, ``speeds``).
    budget : float
        Seconds allowed to the symbolic confirmation of a numerically integrable
        system (0: none; the verdict is then undecided).

    Returns
    -------
    Integrability
        Non-holonomic as soon as a random state shows a bracket outside the span;
        holonomic only when SymPy confirms it within ``budget``; else undecided.
    """
    q = [str(s) for s in eq.coordinates]
    names = [str(w) for w in eq.speeds]
    n_c = len(q) - len(names)
    if n_c == 0:
        return Integrability(holonomic=True, constraints=0)
    g = eq.graph
    extended = any(g.depends_on(x, g.time) for x in eq.qdot) or _has_drift(eq)
    if extended:
        names = [*names, "t"]
    independent: list[int] | None = []
    for w in eq.speeds:
        base = str(w)[:-2] if str(w).endswith("'t") else None
        if base is None or base not in q:
            independent = None
            break
        independent.append(q.index(base))
    pair, mixed_at, good = _numeric_verdicts(eq, extended, independent)
    mixed_w = None
    if mixed_at is not None:
        l, k, j = mixed_at
        mixed_w = (q[l], q[k], q[j])
    if pair is not None:
        return Integrability(holonomic=False, constraints=n_c,
                             witness=(names[pair[0]], names[pair[1]]),
                             mixed_derivatives=False if mixed_w else None,
                             mixed_witness=mixed_w, method="numeric witness")
    # one field: no bracket to take, involutive whatever its form
    single = len(names) < 2
    found = (None if single and independent is None
             else _symbolic_within(budget, eq, extended, independent, names))
    if found is None and single:
        return Integrability(holonomic=True, constraints=n_c,
                             mixed_derivatives=False if mixed_w else None,
                             mixed_witness=mixed_w, method="symbolic")
    if found is None:
        evidence = (f"every Lie bracket stays in the span at {good} random states"
                    if good else "the velocity equations could not be evaluated at random "
                    "states")
        return Integrability(
            holonomic=None, constraints=n_c,
            mixed_derivatives=False if mixed_w else None, mixed_witness=mixed_w,
            reason=f"{evidence}, and the symbolic confirmation (SymPy on the expanded "
                   "velocity equations) "
                   + (f"did not finish within {budget:g} s" if budget > 0
                      else "was not attempted (no time budget)"))
    ok, witness, mixed, where = found
    if where is not None:
        l, k, j = where
        mixed_w = (q[l], q[k], q[j])
    return Integrability(holonomic=ok, constraints=n_c, witness=witness,
                         mixed_derivatives=mixed, mixed_witness=mixed_w, method="symbolic")


def _has_drift(eq) -> bool:
    """Whether ``q̇`` has a part ``β = q̇|_{w=0}`` that is not zero (then ``∂/∂t + β``
    joins the distribution), judged at random states."""
    g = eq.graph
    jets = _Jets(g, list(eq.qdot), list(eq.coordinates))
    rng = np.random.default_rng(1)
    params = {se.Symbol(k): float(v) for k, v in eq.model.parameter_values.items()}
    for _ in range(3):
        point = dict(params)
        point.update({s: float(v) for s, v in
                      zip(eq.coordinates, rng.uniform(-0.9, 0.9, len(eq.coordinates)),
                          strict=True)})
        point.update({s: 0.0 for s in eq.speeds})
        point[g.time] = float(rng.uniform(0.1, 1.0))
        got = jets.at(point)
        if got is not None and np.abs(got[0]).max() > 0:
            return True
    return False
