"""Mass matrix and forcing by composite bodies (a symbolic CRBA / Newton–Euler pass).

The structural sums of :mod:`kidym.eom.structural` pair the partial velocities of
every body with those of every other speed that moves it — O(n²) partial
velocities and O(n³) products for a chain of n links. Here a speed ``w`` *enters*
the kinematics at the elementary steps whose own relative motion depends on it (a
turn ``Rξ(θ)`` with ``θ̇`` depending on ``w``, a shift whose ``ḋ`` does, a
``Q(…)``), each adding an increment ``Δ = (ΔΩ, ΔV)`` to its partial twist at the
step's child frame ``E``; below ``E`` the increment moves rigidly. With the
composite inertia of the bodies below a frame (mass ``m``, first moment
``h = m c``, inertia tensor ``I`` about the frame's origin, frame components) and
their composite wrench (force ``f``, moment ``n`` about the origin), each
increment's momentum ``H = I ΔΩ + h × ΔV``, ``L = m ΔV + ΔΩ × h`` at its ``E``, and
``(Ω_i, V_i)`` the partial twist of speed ``i`` at that frame (known from the
kinematics; ``Ω̂_i = Ω_i − ΔΩ_i`` when ``i`` enters at the same step) ::

    A_ij = Σ_{steps of j} Ω̂_iᵀ H + V̂_iᵀ L      (Ω̂_i, V̂_i: i's increments strictly above)
    M_ij = A_ij + A_ji + Σ_{steps of both} ΔΩ_iᵀ H_j + ΔV_iᵀ L_j
    F_j  = Σ_{steps of j} ΔΩᵀ n + ΔVᵀ f

When every speed enters at one step (a tree of joints) and ``i`` enters above
``j``, this is the composite-rigid-body algorithm, ``M_ij = Ω_iᵀ H_j + V_iᵀ L_j``.
with the body wrench ``f = m (Sᵀg − a⁰)``, ``n = −(J ε⁰ + ω × J ω)`` at its centre
(the same named ``Q`` and ``τ`` as the structural form). Composite quantities go
up the tree step by step (seed 003's "recursion", SPEC §2 "Staying compact"):

* a turn ``R`` (parent ← child): ``h ← R h``, ``I ← R I Rᵀ``, ``f ← R f``, ``n ← R n``;
* a shift ``d``: ``h ← h + m d``, ``I ← I + 2(d·h)𝟙 − (d hᵀ + h dᵀ) + m(d·d 𝟙 − d dᵀ)``,
  ``n ← n + d × f``.

The result equals the structural sums exactly (the tests compare both routes and
SymPy's ``KanesMethod``); it is only cheaper.
"""

from __future__ import annotations

from dataclasses import dataclass

import symengine as se

from kidym.eom.system import SystemGraph
from kidym.kinematics import vectors as vx
from kidym.kinematics.bodies import Frame, Step

Expr = se.Basic
ZERO = se.Integer(0)
XYZ = "XYZ"


@dataclass
class _Inertia:
    m: Expr
    h: list[Expr]
    I: list[list[Expr]]


def _axis(R: list[list[Expr]]) -> int | None:
    """The axis ``k`` a turn keeps (``R e_k = e_k``, ``Rᵀ e_k = e_k``), if any."""
    for k in range(3):
        if R[k][k] == 1 and all(R[k][j] == 0 and R[j][k] == 0 for j in range(3) if j != k):
            return k
    return None


def _rotate_inertia(R: list[list[Expr]], I: list[list[Expr]]) -> list[list[Expr]]:
    """``R I Rᵀ`` for a symmetric ``I``; a turn about a coordinate axis is cheaper.

    About axis ``k`` with the other two ``a < b`` and ``B`` the 2×2 block of ``R``:
    ``I_kk`` stays, ``(I_ak, I_bk)`` turns by ``B``, and of the block ``B I₂ Bᵀ`` only
    the first row is multiplied out (``u = B₀ I₂``, ``I'_aa = u·B₀``,
    ``I'_ab = u·B₁``) — the trace gives ``I'_bb = I_aa + I_bb − I'_aa``: 12
    multiplications instead of 16 for ``R I Rᵀ`` written out.
    """
    k = _axis(R)
    if k is None:
        RI = vx.matmul(R, I)
        return [[sum((RI[i][m] * R[j][m] for m in range(3)), ZERO) for j in range(3)]
                for i in range(3)]
    a, b = (x for x in range(3) if x != k)
    B0, B1 = (R[a][a], R[a][b]), (R[b][a], R[b][b])
    u = (B0[0] * I[a][a] + B0[1] * I[b][a], B0[0] * I[a][b] + B0[1] * I[b][b])
    out = [[ZERO] * 3 for _ in range(3)]
    out[k][k] = I[k][k]
    out[a][a] = u[0] * B0[0] + u[1] * B0[1]
    out[a][b] = out[b][a] = u[0] * B1[0] + u[1] * B1[1]
    out[b][b] = I[a][a] + I[b][b] - out[a][a]
    out[a][k] = out[k][a] = B0[0] * I[a][k] + B0[1] * I[b][k]
    out[b][k] = out[k][b] = B1[0] * I[a][k] + B1[1] * I[b][k]
    return out


def _transport_inertia(c: _Inertia, step: Step) -> _Inertia:
    if step.R is not None:
        return _Inertia(c.m, vx.matvec(step.R, c.h), _rotate_inertia(step.R, c.I))
    d, h, m = step.d, c.h, c.m
    dh, dd = vx.dot(d, h), vx.dot(d, d)
    Inew = [[c.I[i][j] - d[i] * h[j] - h[i] * d[j] - m * d[i] * d[j]
             + ((2 * dh + m * dd) if i == j else ZERO) for j in range(3)] for i in range(3)]
    return _Inertia(m, vx.add(h, vx.scale(m, d)), Inew)


def _transport_wrench(w: tuple[list[Expr], list[Expr]], step: Step
                      ) -> tuple[list[Expr], list[Expr]]:
    f, n = w
    if step.R is not None:
        return vx.matvec(step.R, f), vx.matvec(step.R, n)
    return f, vx.add(n, vx.cross(step.d, f))


class CompositeSums:
    """Composite inertia and wrench of the bodies downstream of each frame.

    Parameters
    ----------
    system : SystemGraph
        Kinematics, with the elementary steps its builder recorded.
    Q, tau : dict of body name to 3-vector
        Each body's ``m (Sᵀg − a⁰)`` and ``J ε⁰ + ω × J ω`` (central components).
    """

    def __init__(self, system: SystemGraph, Q: dict[str, list[Expr]],
                 tau: dict[str, list[Expr]]) -> None:
        self.system = system
        self.Q, self.tau = Q, tau
        self.g = system.graph
        self.steps = system.steps
        self._below: dict[int, list[Step]] = {}
        self._above: dict[int, Step] = {}
        for st in self.steps:
            self._below.setdefault(id(st.parent), []).append(st)
            self._above[id(st.child)] = st
        self._bodies: dict[int, list[str]] = {}
        for name, kin in system.bodies.items():
            self._bodies.setdefault(id(kin.centre), []).append(name)
        self._massive: dict[int, bool] = {}
        self._inertia: dict[int, _Inertia | None] = {}
        self._wrench: dict[int, tuple[list[Expr], list[Expr]] | None] = {}

    # ------------------------------------------------------------ structure
    def massive(self, frame: Frame) -> bool:
        """Whether any body hangs below ``frame`` (or on it)."""
        key = id(frame)
        if key not in self._massive:
            self._massive[key] = key in self._bodies or any(
                self.massive(st.child) for st in self._below.get(key, ()))
        return self._massive[key]

    def entries(self) -> dict[se.Symbol, list[Step]]:
        """The steps at which each speed enters, with bodies below them."""
        return {w: [st for st in self.steps if w in st.entering and self.massive(st.child)]
                for w in self.system.speeds}

    def above(self, upper: Frame, lower: Frame) -> bool:
        """Whether ``upper`` is ``lower`` or one of the frames it hangs from."""
        f = lower
        while True:
            if f is upper:
                return True
            st = self._above.get(id(f))
            if st is None:
                return False
            f = st.parent

    def label(self, frame: Frame) -> str:
        st = self._above.get(id(frame))
        return st.label if st is not None else "0"

    # ------------------------------------------------------------ sums
    def _own(self, frame: Frame) -> tuple[_Inertia | None, tuple | None]:
        s = self.system
        inertia, wrench = None, None
        for name in self._bodies.get(id(frame), ()):
            kin = s.bodies[name]
            tensor = kin.body.inertia.tensor()
            J = [[s.resolve(tensor[i, j]) for j in range(3)] for i in range(3)]
            m = s.resolve(kin.body.inertia.mass)
            c = _Inertia(m, [ZERO] * 3, J)
            w = (list(self.Q[name]), vx.scale(-1, self.tau[name]))
            inertia = c if inertia is None else _add_inertia(inertia, c)
            wrench = w if wrench is None else (vx.add(wrench[0], w[0]), vx.add(wrench[1], w[1]))
        return inertia, wrench

    def inertia(self, frame: Frame) -> _Inertia | None:
        """Composite inertia at ``frame`` (named components), ``None`` if massless."""
        key = id(frame)
        if key in self._inertia:
            return self._inertia[key]
        total, _ = self._own(frame)
        for st in self._below.get(key, ()):
            c = self.inertia(st.child)
            if c is not None:
                t = _transport_inertia(c, st)
                total = t if total is None else _add_inertia(total, t)
        if total is not None:
            lab, g = self.label(frame), self.g
            I = [[ZERO] * 3 for _ in range(3)]
            for i in range(3):
                for j in range(i, 3):
                    I[i][j] = I[j][i] = g.define(f"Ic{XYZ[i]}{XYZ[j]}{lab}", total.I[i][j])
            total = _Inertia(g.define(f"mc{lab}", total.m),
                             [g.define(f"hc{a}{lab}", x) for a, x in zip(XYZ, total.h)], I)
        self._inertia[key] = total
        return total

    def wrench(self, frame: Frame) -> tuple[list[Expr], list[Expr]] | None:
        """Composite wrench ``(f, n)`` at ``frame`` (named components)."""
        key = id(frame)
        if key in self._wrench:
            return self._wrench[key]
        _, total = self._own(frame)
        for st in self._below.get(key, ()):
            w = self.wrench(st.child)
            if w is not None:
                t = _transport_wrench(w, st)
                total = t if total is None else (vx.add(total[0], t[0]), vx.add(total[1], t[1]))
        if total is not None:
            lab, g = self.label(frame), self.g
            total = ([g.define(f"fc{a}{lab}", x) for a, x in zip(XYZ, total[0])],
                     [g.define(f"nc{a}{lab}", x) for a, x in zip(XYZ, total[1])])
        self._wrench[key] = total
        return total


def _add_inertia(a: _Inertia, b: _Inertia) -> _Inertia:
    return _Inertia(a.m + b.m, vx.add(a.h, b.h),
                    [[a.I[i][j] + b.I[i][j] for j in range(3)] for i in range(3)])


def composite_mf(cs: CompositeSums) -> tuple[list[list[Expr]], list[Expr]]:
    """The bodies' share of ``M`` (upper triangle) and ``F`` by composite sums.

    Parameters
    ----------
    cs : CompositeSums
        Built on the system, its ``Q`` and ``tau`` filled for every body.
    """
    entry = cs.entries()
    system = cs.system
    g = system.graph
    speeds = system.speeds
    n = len(speeds)
    zero3 = [ZERO] * 3
    F = [ZERO] * n
    # momentum of each increment at its step: (H, L) = I ΔΩ + h × ΔV, m ΔV + ΔΩ × h
    momentum: dict[se.Symbol, list[tuple[Step, list[Expr], list[Expr]]]] = {}
    incr: dict[tuple[int, se.Symbol], tuple[list[Expr], list[Expr]]] = {}
    for j, w in enumerate(speeds):
        momentum[w] = []
        for st in entry[w]:
            E = st.child
            lab = f"{st.label}'{w}"
            dOm, dV = ([g.define(f"{t}{a}{lab}", x) for a, x in zip(XYZ, v)]
                       for t, v in zip(("ΔΩ", "ΔV"), st.entering[w]))
            incr[id(st), w] = (dOm, dV)
            wr = cs.wrench(E)
            if wr is not None:
                F[j] += vx.dot(dOm, wr[1]) + vx.dot(dV, wr[0])
            c = cs.inertia(E)
            if c is None:
                continue
            H = vx.add(vx.matvec(c.I, dOm), vx.cross(c.h, dV))
            L = vx.add(vx.scale(c.m, dV), vx.cross(dOm, c.h))
            momentum[w].append((st, [g.define(f"Hc{a}{lab}", x) for a, x in zip(XYZ, H)],
                                [g.define(f"Lc{a}{lab}", x) for a, x in zip(XYZ, L)]))

    def upper(i: se.Symbol, st: Step) -> tuple[list[Expr], list[Expr]]:
        # partial twist of i at the step's child frame from increments strictly above
        Om, V = st.child.Omega.get(i, zero3), st.child.V.get(i, zero3)
        if (id(st), i) in incr:
            dOm, dV = incr[id(st), i]
            Om, V = [x - y for x, y in zip(Om, dOm)], [x - y for x, y in zip(V, dV)]
        return Om, V

    def across(i: se.Symbol, j: se.Symbol) -> Expr:
        # pairs (increment of i strictly above an increment of j)
        total = ZERO
        for st, H, L in momentum[j]:
            Om, V = upper(i, st)
            total += vx.dot(Om, H) + vx.dot(V, L)
        return total

    def same(i: se.Symbol, j: se.Symbol) -> Expr:
        # pairs of increments at one and the same step
        return sum((vx.dot(incr[id(st), i][0], H) + vx.dot(incr[id(st), i][1], L)
                    for st, H, L in momentum[j] if (id(st), i) in incr), ZERO)

    M = [[ZERO] * n for _ in range(n)]
    for i, wi in enumerate(speeds):
        for j in range(i, n):
            wj = speeds[j]
            pairs = 2 * across(wi, wi) if i == j else across(wi, wj) + across(wj, wi)
            M[i][j] = pairs + same(wi, wj)
    return M, F
