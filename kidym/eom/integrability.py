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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp


@dataclass(frozen=True)
class Integrability:
    """Verdict on the velocity equations.

    Attributes
    ----------
    holonomic : bool
        Whether the velocity equations are integrable (Frobenius).
    constraints : int
        Number of velocity constraints, ``n_q − n_w`` (0: nothing to test).
    witness : tuple of str or None
        Two speeds whose Lie bracket leaves the distribution (non-holonomic).
    mixed_derivatives : bool or None
        Seed 000's criterion: ``True`` if all mixed derivatives agree, ``False`` if
        not, ``None`` if it does not apply (pseudo-velocities).
    mixed_witness : tuple of str or None
        ``(dependent coordinate, q_k, q_j)`` of the first unequal pair.
    """

    holonomic: bool
    constraints: int
    witness: tuple[str, str] | None = None
    mixed_derivatives: bool | None = None
    mixed_witness: tuple[str, str, str] | None = None

    def describe(self) -> str:
        """One line for ``kidym check``."""
        if self.constraints == 0:
            return "none (every coordinate has an independent speed)"
        if self.holonomic:
            return "integrable: the velocity constraints are holonomic (Frobenius)"
        text = ("non-holonomic (Frobenius: the bracket of the fields of "
                f"{self.witness[0]} and {self.witness[1]} leaves their span)")
        if self.mixed_witness is not None:
            lq, k, j = self.mixed_witness
            text += (f"; mixed derivatives: ∂a[{lq},{k}]/∂{j} ≠ ∂a[{lq},{j}]/∂{k}")
        return text


def _is_zero(expr: sp.Expr) -> bool:
    return sp.simplify(expr) == 0


def _leaves_span_numerically(B: sp.Matrix, bracket: sp.Matrix, q: list[sp.Symbol],
                             values: dict[sp.Symbol, float]) -> bool:
    """Whether, at a random state, the bracket is clearly outside the span of ``B``.

    A point where it leaves the span proves non-involutivity; the converse is checked
    symbolically by the caller.
    """
    rng = np.random.default_rng(0)
    args = sorted((B.free_symbols | bracket.free_symbols) - set(values), key=str)
    fb = sp.lambdify(args, B.subs(values), "numpy")
    fx = sp.lambdify(args, bracket.subs(values), "numpy")
    for _ in range(5):
        point = rng.uniform(-0.5, 0.5, len(args))
        with np.errstate(all="ignore"):
            Bn = np.asarray(fb(*point), dtype=float)
            Xn = np.asarray(fx(*point), dtype=float).reshape(-1, 1)
        if not (np.all(np.isfinite(Bn)) and np.all(np.isfinite(Xn))):
            continue
        coef, *_ = np.linalg.lstsq(Bn, Xn, rcond=None)
        residual = np.linalg.norm(Bn @ coef - Xn)
        if residual > 1e-8 * max(1.0, np.linalg.norm(Xn)):
            return True
    return False


def frobenius(B: sp.Matrix, q: list[sp.Symbol], names: list[str],
              values: dict[sp.Symbol, float] | None = None
              ) -> tuple[bool, tuple[str, str] | None]:
    """Involutivity of the column fields of ``B(q)``; the first witness pair if not.

    A bracket found outside the span at a random state (parameters at ``values``) is a
    proof of non-involutivity; otherwise the rank is compared symbolically.
    """
    k = B.shape[1]
    cols = [B[:, j] for j in range(k)]
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    brackets = {(i, j): cols[j].jacobian(q) * cols[i] - cols[i].jacobian(q) * cols[j]
                for i, j in pairs}
    for (i, j), bracket in brackets.items():
        if _leaves_span_numerically(B, bracket, q, values or {}):
            return False, (names[i], names[j])
    rank = B.rank(simplify=True)
    for (i, j), bracket in brackets.items():
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


def check_integrability(eq) -> Integrability:
    """Decide whether the velocity equations of ``eq`` are integrable.

    Parameters
    ----------
    eq : Equations
        Derived equations (``B``, ``beta``, ``coordinates``, ``speeds``).

    Returns
    -------
    Integrability
    """
    q = [sp.Symbol(str(s)) for s in eq.coordinates]
    names = [str(w) for w in eq.speeds]
    n_c = len(q) - len(names)
    if n_c == 0:
        return Integrability(holonomic=True, constraints=0)
    B = eq.B
    beta = eq.beta
    t = sp.Symbol("t")
    if not beta.is_zero_matrix or any(t in x.free_symbols for x in B):
        # extended distribution in (q, t): columns (B_j, 0) and (β, 1)
        B = B.col_join(sp.zeros(1, B.shape[1])).row_join(beta.col_join(sp.Matrix([[1]])))
        q = [*q, t]
        names = [*names, "t"]
    values = {sp.Symbol(k): v for k, v in eq.model.parameter_values.items()}
    ok, witness = frobenius(B, q, names, values)
    speeds = [str(w) for w in eq.speeds]
    independent = []
    for w in speeds:
        base = w[:-2] if w.endswith("'t") else None
        if base is None or base not in [str(s) for s in eq.coordinates]:
            independent = None
            break
        independent.append([str(s) for s in eq.coordinates].index(base))
    mixed = mixed_w = None
    if independent is not None and q[-1] != t:
        mixed, where = mixed_derivatives(eq.B, q, independent)
        if where is not None:
            l, k, j = where
            mixed_w = (str(q[l]), str(q[k]), str(q[j]))
    return Integrability(holonomic=ok, constraints=n_c, witness=witness,
                         mixed_derivatives=mixed, mixed_witness=mixed_w)
