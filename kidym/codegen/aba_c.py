"""The recursive O(n) solve of ``M ẇ = F`` for open trees: the articulated-body algorithm.

For a big open tree the dense route — every entry of ``M`` formed, then its ``LDLᵀ``
factorisation — costs ``O(n²)`` to ``O(n³)`` per evaluation, while Featherstone's
articulated-body algorithm (ABA, *Rigid Body Dynamics Algorithms*, 2008, §7.3) gives
the same ``ẇ = M⁻¹F`` in ``O(n)``. The formed equations ``M``, ``F`` stay what the
model prints and what ``kidym_eval`` returns; only ``kidym_rhs`` solves them this way,
from the model's body records:

* every elementary transform whose argument is a bare coordinate (``Rx(q1)``,
  ``Sz(s)``) is a one-degree-of-freedom joint, the node of the recursion; the
  parameter-only transforms between two joints are the node's fixed placement;
* each body's spatial inertia is carried by the node of its last joint (a body
  without one, by its base's node), placed by its remaining and central transforms;
* the force elements' share ``Π`` of ``F`` (:attr:`Equations.pseudo_forces_named`)
  is the joints' applied force, gravity the base's acceleration.

:func:`tree_plan` says whether a model is such a tree (``None`` otherwise: closed
loops, controls, quaternions, pseudo-velocities, time- or coordinate-dependent
placements, a coordinate in two transforms, inertial elements); :func:`aba_source`
writes the C routine ``kd_aba`` over a table of parameter-only numbers that
:func:`kidym.codegen.emit.generate_c` keeps with the other hoisted constants.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import symengine as se

from kidym.eom.equations import Equations
from kidym.kinematics.rotations import axis_rotation

Expr = se.Basic

#: Numbers per node in the table: the fixed placement's rotation ``E`` (row-major,
#: parent ← before the joint) and origin ``r`` (parent components), the carried mass
#: ``m``, its first moment ``h = m c`` and rotational inertia about the node's origin
#: ``I_o`` (xx, yy, zz, xy, yz, xz entries of the tensor), all in the node's frame.
STRIDE = 22

#: Speeds from which ``kidym_rhs`` uses the recursion instead of the dense ``LDLᵀ``
#: solve (``generate_c(solve="auto")``): where it is no slower on the spatial chain
#: (``benchmarks/rhs.py``: about equal at 48 speeds, the dense solve about 1.2x faster
#: at 40 and 1.4x at 24); its build is several times faster from about 30 on
#: (``benchmarks/build.py``).
RECURSIVE_FROM = 48

_AXES = {"x": 0, "y": 1, "z": 2}


@dataclass(frozen=True)
class TreePlan:
    """An open tree of one-coordinate joints, in parent-before-child order.

    ``parent[i]`` is the node's parent (``-1``: the ground), ``prismatic[i]`` whether
    the joint is a shift, ``axis[i]`` its axis (0, 1, 2), ``speed[i]`` the index of its
    coordinate in ``q`` (and of its speed in ``w``); ``table`` holds :data:`STRIDE`
    parameter-only numbers per node and then the base's acceleration ``-g`` (3).
    """

    parent: tuple[int, ...]
    prismatic: tuple[bool, ...]
    axis: tuple[int, ...]
    speed: tuple[int, ...]
    table: tuple[Expr, ...]

    @property
    def plain(self) -> tuple[bool, ...]:
        """Per node: whether its fixed placement does not turn (``E = 1``)."""
        eye = [se.Integer(int(i == j)) for i in range(3) for j in range(3)]
        return tuple(list(self.table[STRIDE * i:STRIDE * i + 9]) == eye
                     for i in range(len(self.parent)))


def _matmul(a: Sequence[Sequence[Expr]], b: Sequence[Sequence[Expr]]) -> list[list[Expr]]:
    return [[se.expand(sum((a[i][k] * b[k][j] for k in range(3)), se.Integer(0)))
             for j in range(3)] for i in range(3)]


def _matvec(a: Sequence[Sequence[Expr]], x: Sequence[Expr]) -> list[Expr]:
    return [se.expand(sum((a[i][k] * x[k] for k in range(3)), se.Integer(0)))
            for i in range(3)]


_EYE = [[se.Integer(int(i == j)) for j in range(3)] for i in range(3)]
_ZERO3 = [se.Integer(0)] * 3


def _fixed(transforms, pose, params: set) -> tuple | None:
    """``pose`` (R, p: node ← frame) followed by parameter-only ``transforms``."""
    R, p = pose
    for tr in transforms:
        if tr.kind not in ("R", "S") or not tr.args[0].free_symbols <= params:
            return None
        if tr.kind == "S":
            d = list(_ZERO3)
            d[_AXES[tr.axis]] = tr.args[0]
            p = [se.expand(a + b) for a, b in zip(p, _matvec(R, d))]
        else:
            R = _matmul(R, axis_rotation(tr.axis, se.cos(tr.args[0]), se.sin(tr.args[0])))
    return R, p


def _joint(tr, coordinate: dict, params: set) -> tuple[int, int, Expr] | None:
    """``(k, sign, offset)`` of a transform by ``sign·q_k + offset`` (sign ±1, the
    offset parameter-only); ``None`` for any other transform."""
    if tr.kind not in ("R", "S"):
        return None
    arg = tr.args[0]
    found = [s for s in arg.free_symbols if s in coordinate]
    if len(found) != 1:
        return None
    q = found[0]
    sign = se.expand(arg.diff(q))
    offset = se.expand(arg - sign * q)
    if sign not in (se.Integer(1), se.Integer(-1)) or not offset.free_symbols <= params:
        return None
    return coordinate[q], int(sign), offset


def _half_turn(axis: str) -> list[list[Expr]]:
    """A half-turn about the axis after ``axis``: it turns ``axis`` into its opposite."""
    nxt = "xyz"[(_AXES[axis] + 1) % 3]
    return axis_rotation(nxt, se.Integer(-1), se.Integer(0))


def tree_plan(eq: Equations) -> TreePlan | None:
    """The articulated-body plan of ``eq``, or ``None`` where the recursion does not
    apply (the dense solve is used then).

    Parameters
    ----------
    eq : Equations
        Derived equations of a model.

    Returns
    -------
    TreePlan or None
        The nodes and their table, in parent-before-child order.
    """
    model = eq.model
    if (eq.constraints is not None or eq.controls is not None or model.quaternions
            or model.pseudo_velocities or model.velocity_definitions or model.rolling
            or model.coincidences or model.virtual_constraints or model.programmed
            or model.inputs   # (their values are read per evaluation: the dense route)
            or eq.n_q != eq.n_w or eq.n_w == 0
            or any(el.kind == "J" for el in model.elements)
            or tuple(eq.qdot) != tuple(eq.speeds)):
        return None
    params = set(eq.parameters)
    coordinate = {s: i for i, s in enumerate(eq.coordinates)}
    bodies = {b.name: b for b in model.bodies}
    # (node, R, p): the body's frame in its node's frame; node -1 is the ground
    frames: dict[str | None, tuple[int, list, list]] = {None: (-1, _EYE, _ZERO3)}
    parent: list[int] = []
    prismatic: list[bool] = []
    axis: list[int] = []
    speed: list[int] = []
    placement: list[Expr] = []
    carried: list[list[tuple]] = []       # per node: (m, c, I_c) of its bodies
    ground: list[tuple] = []
    used: set[int] = set()

    def place(name: str, seen: tuple[str, ...] = ()) -> bool:
        if name in frames:
            return True
        body = bodies.get(name)
        if body is None or name in seen or not place_base(body, (*seen, name)):
            return False
        node, R, p = frames[body.base]
        for tr in body.transforms:
            joint = _joint(tr, coordinate, params)
            if joint is not None:
                k, sign, offset = joint
                if k in used:
                    return False
                used.add(k)
                # by sign·q + offset: the offset as a fixed transform first; a negative
                # sign as the joint about the turned axis F e = -e, F a half-turn:
                # E·J(-q) = (E·F)·J(q)·Fᵀ
                R, p = _fixed((type(tr)(tr.kind, tr.axis, (offset,)),), (R, p), params)
                flip = _half_turn(tr.axis) if sign < 0 else _EYE
                R = _matmul(R, flip)
                parent.append(node)
                prismatic.append(tr.kind == "S")
                axis.append(_AXES[tr.axis])
                speed.append(k)
                placement.extend([*(e for row in R for e in row), *p])
                carried.append([])
                node, R, p = len(parent) - 1, [list(r) for r in zip(*flip)], _ZERO3
                continue
            fixed = _fixed((tr,), (R, p), params)
            if fixed is None:
                return False
            R, p = fixed
        frames[name] = (node, R, p)
        centre = _fixed(body.central, (R, p), params)
        inertia = body.inertia
        values = (inertia.mass, inertia.jx, inertia.jy, inertia.jz, inertia.jxy,
                  inertia.jyz, inertia.jxz)
        if centre is None or not all(v.free_symbols <= params for v in values):
            return False
        m, jx, jy, jz, jxy, jyz, jxz = values
        J = [[jx, -jxy, -jxz], [-jxy, jy, -jyz], [-jxz, -jyz, jz]]
        Rc, c = centre
        Ic = _matmul(_matmul(Rc, J), [list(r) for r in zip(*Rc)])
        (carried[node] if node >= 0 else ground).append((m, c, Ic))
        return True

    def place_base(body, seen: tuple[str, ...]) -> bool:
        return body.base is None or place(body.base, seen)

    for b in model.bodies:
        if not place(b.name):
            return None
    if len(parent) != eq.n_w:
        return None
    table: list[Expr] = []
    for i in range(len(parent)):
        m_t, h_t = se.Integer(0), list(_ZERO3)
        I_t = [[se.Integer(0)] * 3 for _ in range(3)]
        for m, c, Ic in carried[i]:
            m_t += m
            h_t = [a + m * b for a, b in zip(h_t, c)]
            cc = sum((x * x for x in c), se.Integer(0))
            for r in range(3):
                for s in range(3):
                    I_t[r][s] += Ic[r][s] + m * ((cc if r == s else 0) - c[r] * c[s])
        inertia = [m_t, *h_t, I_t[0][0], I_t[1][1], I_t[2][2], I_t[0][1], I_t[1][2],
                   I_t[0][2]]
        table += [*placement[12 * i:12 * i + 12], *(se.expand(v) for v in inertia)]
    gravity = model.gravity or (se.Integer(0),) * 3
    if not all(g.free_symbols <= params for g in gravity):
        return None
    table += [se.expand(-g) for g in gravity]
    return TreePlan(parent=tuple(parent), prismatic=tuple(prismatic), axis=tuple(axis),
                    speed=tuple(speed), table=tuple(table))


_ROUTINE = r"""
/* The articulated-body algorithm (Featherstone 2008, table 7.1) over the nodes above,
   spatial vectors (angular; linear) in each node's frame. T: the table (22 numbers a
   node, then the base's acceleration -g), tau: the joints' applied forces. */
static inline void kd_cross3(const double *a, const double *b, double *o) {
    o[0] = a[1]*b[2] - a[2]*b[1]; o[1] = a[2]*b[0] - a[0]*b[2]; o[2] = a[0]*b[1] - a[1]*b[0];
}
/* child <- parent motion: w' = R^T w, v' = R^T (v + w x p) */
static inline void kd_xm(const double *R, const double *p, const double *m, double *o) {
    double t[3];
    kd_cross3(m, p, t);
    t[0] += m[3]; t[1] += m[4]; t[2] += m[5];
    for (int i = 0; i < 3; ++i) {
        o[i] = R[i]*m[0] + R[3 + i]*m[1] + R[6 + i]*m[2];
        o[3 + i] = R[i]*t[0] + R[3 + i]*t[1] + R[6 + i]*t[2];
    }
}
/* parent <- child force: f = R f', n = R n' + p x f */
static inline void kd_xf_add(const double *R, const double *p, const double *f, double *o) {
    double n[3], l[3], pl[3];
    for (int i = 0; i < 3; ++i) {
        n[i] = R[3*i]*f[0] + R[3*i + 1]*f[1] + R[3*i + 2]*f[2];
        l[i] = R[3*i]*f[3] + R[3*i + 1]*f[4] + R[3*i + 2]*f[5];
    }
    kd_cross3(p, l, pl);
    for (int i = 0; i < 3; ++i) { o[i] += n[i] + pl[i]; o[3 + i] += l[i]; }
}
/* X <- G X G^T for G the rotation by (cs, sn) about the axis ax (in place) */
static inline void kd_turn(double *X, int ax, double cs, double sn) {
    const int b = (ax + 1) % 3, d = (ax + 2) % 3;
    for (int k = 0; k < 3; ++k) {
        const double xb = X[3*b + k], xd = X[3*d + k];
        X[3*b + k] = cs*xb - sn*xd;
        X[3*d + k] = sn*xb + cs*xd;
    }
    for (int k = 0; k < 3; ++k) {
        const double xb = X[3*k + b], xd = X[3*k + d];
        X[3*k + b] = cs*xb - sn*xd;
        X[3*k + d] = sn*xb + cs*xd;
    }
}
/* X <- E X E^T (in place) */
static inline void kd_rotate(double *X, const double *E) {
    double t[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            t[3*i + j] = X[3*i]*E[3*j] + X[3*i + 1]*E[3*j + 1] + X[3*i + 2]*E[3*j + 2];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            X[3*i + j] = E[3*i]*t[j] + E[3*i + 1]*t[3 + j] + E[3*i + 2]*t[6 + j];
}
/* parent += X^T Ia X for the 6x6 Ia (row-major) of node i, placed by R = E G (G the
   joint's turn by cs, sn; none for a shift) and p */
static inline void kd_xi_add(int i, const double *E, double cs, double sn, const double *p,
                             const double *Ia, double *o) {
    double A[9], B[9], C[9];
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) {
            A[3*r + k] = Ia[6*r + k]; B[3*r + k] = Ia[6*r + 3 + k];
            C[3*r + k] = Ia[6*(3 + r) + 3 + k];
        }
    if (!kd_aba_prismatic[i]) {
        kd_turn(A, kd_aba_axis[i], cs, sn);
        kd_turn(B, kd_aba_axis[i], cs, sn);
        kd_turn(C, kd_aba_axis[i], cs, sn);
    }
    if (!kd_aba_plain[i]) { kd_rotate(A, E); kd_rotate(B, E); kd_rotate(C, E); }
    /* with P = [p]x: A - B P - (B P)^T - P C P, B + P C, C; a row r times P is r x p,
       P times a column k is p x k */
    double BP[9], PC[9], PCP[9], col[3], pc[3];
    for (int r = 0; r < 3; ++r) kd_cross3(B + 3*r, p, BP + 3*r);
    for (int k = 0; k < 3; ++k) {
        col[0] = C[k]; col[1] = C[3 + k]; col[2] = C[6 + k];
        kd_cross3(p, col, pc);
        PC[k] = pc[0]; PC[3 + k] = pc[1]; PC[6 + k] = pc[2];
    }
    for (int r = 0; r < 3; ++r) kd_cross3(PC + 3*r, p, PCP + 3*r);
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) {
            const double b = B[3*r + k] + PC[3*r + k];
            o[6*r + k] += A[3*r + k] - BP[3*r + k] - BP[3*k + r] - PCP[3*r + k];
            o[6*r + 3 + k] += b;
            o[6*(3 + k) + r] += b;
            o[6*(3 + r) + 3 + k] += C[3*r + k];
        }
}

/* the node's placement in its parent (R, p) at the joint's coordinate q; cs, sn: the
   turn's cosine and sine (1, 0 for a shift) */
static inline void kd_pose(int i, const double *T, double q, double *Ri, double *Pi,
                           double *cs_, double *sn_) {
    const double *e = T + 22*i;
    const int ax = kd_aba_axis[i];
    if (kd_aba_prismatic[i]) {
        for (int k = 0; k < 9; ++k) Ri[k] = e[k];
        for (int k = 0; k < 3; ++k) Pi[k] = e[9 + k] + e[3*k + ax]*q;
        *cs_ = 1.0; *sn_ = 0.0;
        return;
    }
    const double cs = cos(q), sn = sin(q);
    *cs_ = cs; *sn_ = sn;
    const int a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
    for (int k = 0; k < 3; ++k) {   /* E times the rotation about ax */
        Ri[3*k + ax] = e[3*k + ax];
        Ri[3*k + a1] = e[3*k + a1]*cs + e[3*k + a2]*sn;
        Ri[3*k + a2] = e[3*k + a2]*cs - e[3*k + a1]*sn;
        Pi[k] = e[9 + k];
    }
}
/* the node's rigid inertia [[Io, m[c]x], [-m[c]x, m 1]] (6x6, row-major) */
static inline void kd_rigid(int i, const double *T, double *I) {
    const double *e = T + 22*i;
    const double m = e[12], *h = e + 13, *J = e + 16;
    const double Io[9] = {J[0], J[3], J[5], J[3], J[1], J[4], J[5], J[4], J[2]};
    const double H[9] = {0, -h[2], h[1], h[2], 0, -h[0], -h[1], h[0], 0};
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) {
            I[6*r + k] = Io[3*r + k];
            I[6*r + 3 + k] = H[3*r + k];
            I[6*(3 + r) + k] = H[3*k + r];
            I[6*(3 + r) + 3 + k] = r == k ? m : 0.0;
        }
}
/* c = v x (S qd), the velocity-product acceleration of the joint's motion */
static inline void kd_bias_motion(const double *v, int s, int ax, double qd, double *c) {
    double m3[3] = {0, 0, 0}, t3[3];
    m3[ax] = qd;
    for (int k = 0; k < 6; ++k) c[k] = 0.0;
    if (s < 3) {
        kd_cross3(v, m3, c);
        kd_cross3(v + 3, m3, t3);
        for (int k = 0; k < 3; ++k) c[3 + k] = t3[k];
    } else {
        kd_cross3(v, m3, c + 3);
    }
}
/* o = v x* (I v) for the node's rigid inertia (m, h = m c, Io) in the table row e */
static inline void kd_bias_force(const double *e, const double *v, double *o) {
    const double m = e[12], *h = e + 13, *J = e + 16;
    double n[3], f[3], t3[3];
    kd_cross3(h, v + 3, t3);             /* n = Io w + h x v0 */
    n[0] = J[0]*v[0] + J[3]*v[1] + J[5]*v[2] + t3[0];
    n[1] = J[3]*v[0] + J[1]*v[1] + J[4]*v[2] + t3[1];
    n[2] = J[5]*v[0] + J[4]*v[1] + J[2]*v[2] + t3[2];
    kd_cross3(v, h, t3);                 /* f = m v0 - h x w = m v0 + w x h */
    for (int k = 0; k < 3; ++k) f[k] = m*v[3 + k] + t3[k];
    double a3[3], b3[3];
    kd_cross3(v, n, a3);
    kd_cross3(v + 3, f, b3);
    kd_cross3(v, f, o + 3);
    for (int k = 0; k < 3; ++k) o[k] = a3[k] + b3[k];
}
/* o = I x + v x* (I v) */
static inline void kd_force(const double *I, const double *x, const double *v, double *o) {
    double Iv[6], t3[3], n3[3], f3[3];
    for (int r = 0; r < 6; ++r) {
        double sum = 0.0, sx = 0.0;
        for (int k = 0; k < 6; ++k) { sum += I[6*r + k]*v[k]; sx += I[6*r + k]*x[k]; }
        Iv[r] = sum;
        o[r] = sx;
    }
    kd_cross3(v, Iv, n3);
    kd_cross3(v + 3, Iv + 3, t3);
    kd_cross3(v, Iv + 3, f3);
    for (int k = 0; k < 3; ++k) { o[k] += n3[k] + t3[k]; o[3 + k] += f3[k]; }
}

static int kd_aba(const double *y, const double *T, const double *tau, double *wdot) {
    double R[9*KD_NB], P[3*KD_NB], V[6*KD_NB], Cb[6*KD_NB], IA[36*KD_NB], PA[6*KD_NB];
    double A[6*KD_NB], D[KD_NB], u[KD_NB], CS[KD_NB], SN[KD_NB];
    static const double still[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < KD_NB; ++i) {
        const int ax = kd_aba_axis[i], s = kd_aba_prismatic[i] ? 3 + ax : ax;
        const double q = y[kd_aba_speed[i]], qd = y[KIDYM_NQ + kd_aba_speed[i]];
        kd_pose(i, T, q, R + 9*i, P + 3*i, CS + i, SN + i);
        double *v = V + 6*i, *c = Cb + 6*i;
        const int par = kd_aba_parent[i];
        kd_xm(R + 9*i, P + 3*i, par < 0 ? still : V + 6*par, v);
        v[s] += qd;
        kd_bias_motion(v, s, ax, qd, c);
        double *I = IA + 36*i;
        kd_rigid(i, T, I);
        kd_bias_force(T + 22*i, v, PA + 6*i);
    }
    for (int i = KD_NB - 1; i >= 0; --i) {
        const int ax = kd_aba_axis[i], s = kd_aba_prismatic[i] ? 3 + ax : ax;
        double *I = IA + 36*i, *pa = PA + 6*i;
        const double d = I[7*s];
        if (!(d > 0.0) || !isfinite(d)) return 1;
        D[i] = d;
        u[i] = tau[kd_aba_speed[i]] - pa[s];
        const int par = kd_aba_parent[i];
        if (par < 0) continue;
        double U[6], Ia[36], pv[6];
        for (int k = 0; k < 6; ++k) U[k] = I[6*k + s];
        for (int r = 0; r < 6; ++r)
            for (int k = 0; k < 6; ++k) Ia[6*r + k] = I[6*r + k] - U[r]*U[k]/d;
        const double *c = Cb + 6*i;
        for (int r = 0; r < 6; ++r) {
            double sum = pa[r] + U[r]*u[i]/d;
            for (int k = 0; k < 6; ++k) sum += Ia[6*r + k]*c[k];
            pv[r] = sum;
        }
        kd_xi_add(i, T + 22*i, CS[i], SN[i], P + 3*i, Ia, IA + 36*par);
        kd_xf_add(R + 9*i, P + 3*i, pv, PA + 6*par);
    }
    const double base[6] = {0, 0, 0, T[22*KD_NB], T[22*KD_NB + 1], T[22*KD_NB + 2]};
    for (int i = 0; i < KD_NB; ++i) {
        const int ax = kd_aba_axis[i], s = kd_aba_prismatic[i] ? 3 + ax : ax;
        const int par = kd_aba_parent[i];
        double *a = A + 6*i;
        kd_xm(R + 9*i, P + 3*i, par < 0 ? base : A + 6*par, a);
        const double *I = IA + 36*i, *c = Cb + 6*i;
        double ua = u[i];
        for (int k = 0; k < 6; ++k) { a[k] += c[k]; ua -= I[6*k + s]*a[k]; }
        const double qdd = ua/D[i];
        a[s] += qdd;
        wdot[kd_aba_speed[i]] = qdd;
    }
    return 0;
}

/* M by the composite-rigid-body algorithm (Featherstone 2008, table 6.2) and
   F = tau - C(q, w) by the recursive Newton-Euler algorithm (table 5.1), ẇ = 0 */
static void kd_tree_eval(const double *y, const double *T, const double *tau, double *M,
                         double *F) {
    double R[9*KD_NB], P[3*KD_NB], V[6*KD_NB], A[6*KD_NB], IC[36*KD_NB], Fo[6*KD_NB];
    double CS[KD_NB], SN[KD_NB];
    static const double still[6] = {0, 0, 0, 0, 0, 0};
    const double base[6] = {0, 0, 0, T[22*KD_NB], T[22*KD_NB + 1], T[22*KD_NB + 2]};
    for (int i = 0; i < KD_NB; ++i) {
        const int ax = kd_aba_axis[i], s = kd_aba_prismatic[i] ? 3 + ax : ax;
        const double q = y[kd_aba_speed[i]], qd = y[KIDYM_NQ + kd_aba_speed[i]];
        const int par = kd_aba_parent[i];
        double *v = V + 6*i, *a = A + 6*i, c[6];
        kd_pose(i, T, q, R + 9*i, P + 3*i, CS + i, SN + i);
        kd_xm(R + 9*i, P + 3*i, par < 0 ? still : V + 6*par, v);
        v[s] += qd;
        kd_xm(R + 9*i, P + 3*i, par < 0 ? base : A + 6*par, a);
        kd_bias_motion(v, s, ax, qd, c);
        for (int k = 0; k < 6; ++k) a[k] += c[k];
        kd_rigid(i, T, IC + 36*i);
        kd_force(IC + 36*i, a, v, Fo + 6*i);
    }
    for (int i = 0; i < KIDYM_NW*KIDYM_NW; ++i) M[i] = 0.0;
    for (int i = KD_NB - 1; i >= 0; --i) {
        const int ax = kd_aba_axis[i], s = kd_aba_prismatic[i] ? 3 + ax : ax;
        const int par = kd_aba_parent[i], k = kd_aba_speed[i];
        F[k] = tau[k] - Fo[6*i + s];
        if (par >= 0) {
            kd_xf_add(R + 9*i, P + 3*i, Fo + 6*i, Fo + 6*par);
            kd_xi_add(i, T + 22*i, CS[i], SN[i], P + 3*i, IC + 36*i, IC + 36*par);
        }
        double f[6], g[6];
        for (int r = 0; r < 6; ++r) f[r] = IC[36*i + 6*r + s];
        M[k*KIDYM_NW + k] = f[s];
        for (int j = i; kd_aba_parent[j] >= 0; ) {
            for (int r = 0; r < 6; ++r) g[r] = 0.0;
            kd_xf_add(R + 9*j, P + 3*j, f, g);
            j = kd_aba_parent[j];
            for (int r = 0; r < 6; ++r) f[r] = g[r];
            const int sj = kd_aba_prismatic[j] ? 3 + kd_aba_axis[j] : kd_aba_axis[j];
            const int kj = kd_aba_speed[j];
            M[k*KIDYM_NW + kj] = M[kj*KIDYM_NW + k] = f[sj];
        }
    }
}
"""


_POWER = r"""
/* dE/dt = sum of v . (I a) over the nodes, a with the base's -g: the rate of the
   kinetic energy (v . I a) and of gravity's potential (v . I a0, a0 the base's -g
   carried to the node) in one sum; wdot: the accelerations */
static double kd_tree_power(const double *y, const double *T, const double *wdot) {
    double R[9], P[3], V[6*KD_NB], A[6*KD_NB], I[36], c[6], f[6];
    static const double still[6] = {0, 0, 0, 0, 0, 0};
    const double base[6] = {0, 0, 0, T[22*KD_NB], T[22*KD_NB + 1], T[22*KD_NB + 2]};
    double power = 0.0;
    for (int i = 0; i < KD_NB; ++i) {
        const int ax = kd_aba_axis[i], s = kd_aba_prismatic[i] ? 3 + ax : ax;
        const int k = kd_aba_speed[i], par = kd_aba_parent[i];
        double *v = V + 6*i, *a = A + 6*i;
        double cs, sn;
        kd_pose(i, T, y[k], R, P, &cs, &sn);
        kd_xm(R, P, par < 0 ? still : V + 6*par, v);
        v[s] += y[KIDYM_NQ + k];
        kd_xm(R, P, par < 0 ? base : A + 6*par, a);
        kd_bias_motion(v, s, ax, y[KIDYM_NQ + k], c);
        for (int r = 0; r < 6; ++r) a[r] += c[r];
        a[s] += wdot[k];
        kd_rigid(i, T, I);
        kd_force(I, a, still, f);
        for (int r = 0; r < 6; ++r) power += v[r]*f[r];
    }
    return power;
}
"""


def aba_source(plan: TreePlan, table_offset: int, *, power: bool = False) -> str:
    """C source of ``kd_aba(y, T, tau, wdot)`` for ``plan``, its table at ``c[table_offset]``.

    Parameters
    ----------
    plan : TreePlan
        From :func:`tree_plan`.
    table_offset : int
        Index of the table's first number in the constants vector ``c``.
    power : bool
        Also ``kd_tree_power(y, T, wdot)``, ``dE/dt`` of the bodies and gravity.

    Returns
    -------
    str
        The node arrays, the routine and ``KD_ABA_TABLE``.
    """
    def arr(values: Sequence[int]) -> str:
        return "{" + ", ".join(str(int(v)) for v in values) + "}"

    return "\n".join([
        f"#define KD_NB {len(plan.parent)}",
        f"#define KD_ABA_TABLE {table_offset}",
        f"static const int kd_aba_parent[KD_NB] = {arr(plan.parent)};",
        f"static const int kd_aba_prismatic[KD_NB] = {arr(plan.prismatic)};",
        f"static const int kd_aba_axis[KD_NB] = {arr(plan.axis)};",
        f"static const int kd_aba_speed[KD_NB] = {arr(plan.speed)};",
        f"static const int kd_aba_plain[KD_NB] = {arr(plan.plain)};",
        _ROUTINE, _POWER if power else ""])
