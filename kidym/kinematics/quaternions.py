"""Quaternions: Hamilton product, rotation matrices, rotation sequences and angles.

Conventions (written once, see ``docs/theory.md`` § Quaternions):

* A quaternion is ``Λ = (λ0, λ1, λ2, λ3)``, ``λ0`` the scalar part; the product is
  Hamilton's, ``(a0, a)∘(b0, b) = (a0 b0 − a·b, a0 b + b0 a + a × b)``.
* ``Λ`` describes the turn of a child frame relative to its parent frame; its
  rotation matrix ``S(Λ)`` maps child components to parent components,
  ``v_parent = S v_child = Λ∘v_child∘Λ̄`` — the same meaning as ``Rx, Ry, Rz`` in
  body records and as the bodies' ``S`` (fixed ← body).
* The elementary turn ``Rx(a)`` is ``(cos a/2, sin a/2, 0, 0)`` (likewise ``y, z``);
  a sequence ``R_1(a_1), R_2(a_2), …`` about the *current* axes (as in a body record)
  is ``Λ = Λ_1∘Λ_2∘…`` and ``S = R_1 R_2 …``.
* ``S`` is computed in the homogeneous form ``S(Λ) = S_quadratic(Λ)/|Λ|²``, exactly
  orthogonal for any ``Λ ≠ 0``: a drift of the norm during integration changes no
  rotation (it is still monitored, see :mod:`kidym.simulation.simulate`).
* Kinematics: ``Λ̇ = ½ Λ∘ω`` with ``ω`` in child (body) components,
  ``Λ̇ = ½ ω∘Λ`` with ``ω`` in parent (fixed) components (seed 000 eqs. (19), (23)).

The inverse formulas (angles of a three-rotation sequence from ``S``) are obtained by
matching ``S`` with the product of the elementary matrices; :func:`sequence_angles`
gives them numerically with both branches and the gimbal-lock case, and
:func:`angle_formulas` symbolically from the quaternion itself (valid at every
orientation, gimbal lock and the identity included) for model outputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import symengine as se

from kidym.kinematics.rotations import AXES

Expr = se.Basic

#: The 12 three-rotation sequences: 6 Tait–Bryan (Krylov, aircraft), 6 proper Euler.
SEQUENCES = ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx",
             "xyx", "xzx", "yxy", "yzy", "zxz", "zyz")

#: Below this ``|cos θ|`` (Tait–Bryan) or ``|sin θ|`` (Euler) the sequence is in gimbal
#: lock: the first and third angles are not separable and the third is set to 0.
GIMBAL_TOLERANCE = 1e-12


def hamilton(a: Sequence, b: Sequence) -> list:
    """Hamilton product ``a∘b`` of two quaternions (any scalar type)."""
    a0, a1, a2, a3 = a
    b0, b1, b2, b3 = b
    return [a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
            a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0]


def conjugate(a: Sequence) -> list:
    """``Λ̄ = (λ0, −λ1, −λ2, −λ3)``."""
    return [a[0], -a[1], -a[2], -a[3]]


def vector(v: Sequence) -> list:
    """The pure quaternion ``(0, v)``."""
    zero = 0 * v[0]
    return [zero, v[0], v[1], v[2]]


def quadratic_matrix(lam: Sequence) -> list[list]:
    """``S(Λ)·|Λ|²``: the rotation matrix times the squared norm (any scalar type)."""
    l0, l1, l2, l3 = lam
    return [[l0 * l0 + l1 * l1 - l2 * l2 - l3 * l3, 2 * (l1 * l2 - l0 * l3),
             2 * (l1 * l3 + l0 * l2)],
            [2 * (l1 * l2 + l0 * l3), l0 * l0 - l1 * l1 + l2 * l2 - l3 * l3,
             2 * (l2 * l3 - l0 * l1)],
            [2 * (l1 * l3 - l0 * l2), 2 * (l2 * l3 + l0 * l1),
             l0 * l0 - l1 * l1 - l2 * l2 + l3 * l3]]


def rotation_matrix(lam: Sequence) -> np.ndarray:
    """Numeric ``S(Λ)`` (child → parent components), shape (3, 3); ``Λ`` need not be unit."""
    lam = np.asarray(lam, dtype=float)
    return np.array(quadratic_matrix(lam)) / float(lam @ lam)


def rate_body(lam: Sequence, omega: Sequence) -> list:
    """``Λ̇ = ½ Λ∘ω``, ``ω`` in child (body) components (seed 000 eq. (19))."""
    return [x / 2 for x in hamilton(lam, vector(omega))]


def rate_fixed(lam: Sequence, omega: Sequence) -> list:
    """``Λ̇ = ½ ω∘Λ``, ``ω`` in parent (fixed) components (seed 000 eq. (23))."""
    return [x / 2 for x in hamilton(vector(omega), lam)]


def axis_quaternion(axis: str, angle, *, symbolic: bool = False) -> list:
    """Quaternion of ``R<axis>(angle)``."""
    cos, sin = (se.cos, se.sin) if symbolic else (math.cos, math.sin)
    zero = se.Integer(0) if symbolic else 0.0
    q = [cos(angle / 2), zero, zero, zero]
    q[1 + AXES[axis]] = sin(angle / 2)
    return q


def sequence_quaternion(axes: str, angles: Sequence, *, prior: Sequence | None = None,
                        symbolic: bool = False) -> list:
    """``Λ = P∘Λ_1∘Λ_2∘…`` of turns about the current axes ``axes`` (e.g. ``"yxz"``)."""
    one = se.Integer(1) if symbolic else 1.0
    zero = se.Integer(0) if symbolic else 0.0
    q = list(prior) if prior is not None else [one, zero, zero, zero]
    for axis, angle in zip(axes, angles, strict=True):
        q = hamilton(q, axis_quaternion(axis, angle, symbolic=symbolic))
    return q


def _parity(i: int, j: int, k: int) -> int:
    """+1 for a cyclic permutation of (0, 1, 2), −1 otherwise."""
    return 1 if (i, j, k) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1


def _check(axes: str) -> tuple[int, int, int, bool]:
    if axes not in SEQUENCES:
        raise ValueError(f"rotation sequence must be one of {', '.join(SEQUENCES)}; "
                         f"got {axes!r} (two consecutive turns about one axis are one turn)")
    i, j = AXES[axes[0]], AXES[axes[1]]
    k = 3 - i - j
    return i, j, k, axes[0] == axes[2]


def sequence_angles(S: np.ndarray, axes: str, *, branch: str = "principal"
                    ) -> tuple[float, float, float]:
    """Angles ``(α, β, γ)`` with ``S = R_a(α) R_b(β) R_c(γ)`` for ``axes = "abc"``.

    Parameters
    ----------
    S : array, shape (3, 3)
        A rotation matrix (child → parent).
    axes : str
        One of :data:`SEQUENCES`.
    branch : {"principal", "alternate"}
        Tait–Bryan: ``cos β ≥ 0`` or ``cos β < 0`` (seed 000 eq. (24)'s two branches);
        proper Euler: ``sin β ≥ 0`` or ``sin β < 0``.

    Returns
    -------
    tuple of float
        In gimbal lock (``|cos β|`` resp. ``|sin β|`` below :data:`GIMBAL_TOLERANCE`)
        ``γ = 0`` and ``α`` carries the whole turn about the locked axis.
    """
    i, j, k, euler = _check(axes)
    e = _parity(i, j, k)
    S = np.asarray(S, dtype=float)
    if branch not in ("principal", "alternate"):
        raise ValueError(f"branch must be 'principal' or 'alternate', got {branch!r}")
    sgn = 1.0 if branch == "principal" else -1.0
    if euler:
        sb = math.hypot(S[i, j], S[i, k])
        beta = math.atan2(sgn * sb, S[i, i])
        if sb < GIMBAL_TOLERANCE:
            return math.atan2(e * S[k, j], S[j, j]), beta, 0.0
        alpha = math.atan2(sgn * S[j, i], -sgn * e * S[k, i])
        gamma = math.atan2(sgn * S[i, j], sgn * e * S[i, k])
        return alpha, beta, gamma
    cb = math.hypot(S[i, i], S[i, j])
    beta = math.atan2(e * S[i, k], sgn * cb)
    if cb < GIMBAL_TOLERANCE:
        return math.atan2(e * S[k, j], S[j, j]), beta, 0.0
    alpha = math.atan2(-sgn * e * S[j, k], sgn * S[k, k])
    gamma = math.atan2(-sgn * e * S[i, j], sgn * S[i, i])
    return alpha, beta, gamma


def sequence_matrix(axes: str, angles: Sequence[float]) -> np.ndarray:
    """Numeric ``R_a(α) R_b(β) R_c(γ)`` (from elementary matrices, not quaternions)."""
    from kidym.kinematics.rotations import axis_rotation
    out = np.eye(3)
    for axis, a in zip(axes, angles, strict=True):
        R = axis_rotation(axis, se.Float(math.cos(a)), se.Float(math.sin(a)))
        out = out @ np.array([[float(x) for x in row] for row in R])
    return out


def angle_formulas(lam: Sequence[Expr], axes: str, *, branch: str = "principal"
                   ) -> tuple[Expr, Expr, Expr]:
    """Symbolic ``(α, β, γ)`` of ``S(Λ) = R_a(α) R_b(β) R_c(γ)`` from the quaternion.

    The direct quaternion method of Bernardes & Viollet (2022, *PLoS ONE* 17(11)
    e0276302): with the sequence reversed (turns about current axes are fixed-axis
    turns in the reverse order), the half-sum ``θ₊ = atan2(b, a)`` and half-difference
    ``θ₋ = atan2(d, c)`` of four linear combinations ``a, b, c, d`` of ``λ0…λ3`` give

    * ``β = 2 atan2(√(c² + d²), √(a² + b²))`` (``− π/2`` for Tait–Bryan sequences),
    * ``γ = θ₊ − θ₋`` and ``α = θ₊ + θ₋`` (times the parity for Tait–Bryan),

    each angle wrapped into ``(−π, π]`` as ``atan2(sin x, cos x)`` where needed. ``Λ`` need not
    be unit and ``−Λ`` gives the same angles. In gimbal lock (``β = 0, π`` resp.
    ``±π/2``) one of ``θ₊, θ₋`` is ``atan2(0, 0)`` and takes any value (``0`` in C and
    Python); only the other one matters there, so ``α, β, γ`` still reproduce the
    rotation: the formulas hold for every orientation, the identity included.

    Parameters
    ----------
    lam : sequence of 4 expressions
        ``λ0…λ3`` (``λ0`` the scalar part).
    axes : str
        One of :data:`SEQUENCES`.
    branch : {"principal", "alternate"}
        As in :func:`sequence_angles`: Tait–Bryan ``cos β ≥ 0`` (principal) or ``≤ 0``,
        proper Euler ``sin β ≥ 0`` or ``≤ 0``.

    Returns
    -------
    tuple of 3 expressions
        ``α, β, γ``; on the principal branch they equal :func:`sequence_angles` outside
        gimbal lock.
    """
    *_, euler = _check(axes)
    if branch not in ("principal", "alternate"):
        raise ValueError(f"branch must be 'principal' or 'alternate', got {branch!r}")
    # the reversed sequence c, b, a as fixed-axis turns: first axis k' = AXES[axes[2]]
    first, second = AXES[axes[2]], AXES[axes[1]]
    third = 3 - first - second
    e = _parity(first, second, third)
    l0, v = lam[0], [lam[1], lam[2], lam[3]]
    if euler:
        a, b, c, d = l0, v[first], v[second], e * v[third]
    else:
        a, b = l0 - v[second], v[first] + e * v[third]
        c, d = v[second] + l0, e * v[third] - v[first]
    beta = 2 * se.atan2(se.sqrt(c * c + d * d), se.sqrt(a * a + b * b))
    half_sum, half_diff = se.atan2(b, a), se.atan2(d, c)
    gamma, alpha = half_sum - half_diff, half_sum + half_diff
    if not euler:
        alpha, beta = e * alpha, beta - se.pi / 2
    if branch == "alternate":
        alpha, gamma = alpha + se.pi, gamma + se.pi
        beta = -beta if euler else _wrap(se.pi - beta)
    return _wrap(alpha), beta, _wrap(gamma)


def _wrap(x: Expr) -> Expr:
    """The angle ``x`` taken into ``(−π, π]``."""
    return se.atan2(se.sin(x), se.cos(x))
