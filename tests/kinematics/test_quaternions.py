"""Quaternion conventions checked by round trips against elementary rotation matrices.

The oracle is :func:`kidym.kinematics.rotations.axis_rotation` (the body-record
matrices) multiplied directly: never the quaternion code under test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import symengine as se

from kidym.kinematics import quaternions as qt

RNG = np.random.default_rng(20250612)


def _angles(euler: bool, near_lock: float | None) -> list[float]:
    a, c = RNG.uniform(-math.pi, math.pi, 2)
    if near_lock is None:
        b = RNG.uniform(0.05, math.pi - 0.05) if euler else RNG.uniform(-1.5, 1.5)
    elif euler:
        b = near_lock
    else:
        b = math.pi / 2 - near_lock if RNG.random() < 0.5 else -math.pi / 2 + near_lock
    return [a, b, c]


def _same_rotation(q1, q2) -> float:
    return float(np.abs(qt.rotation_matrix(q1) - qt.rotation_matrix(q2)).max())


@pytest.mark.parametrize("axes", qt.SEQUENCES)
def test_quaternion_matches_elementary_matrices(axes):
    for _ in range(5):
        ang = _angles(axes[0] == axes[2], None)
        lam = qt.sequence_quaternion(axes, ang)
        assert np.allclose(qt.rotation_matrix(lam), qt.sequence_matrix(axes, ang), atol=1e-14)
        assert abs(np.dot(lam, lam) - 1) < 1e-14


@pytest.mark.parametrize("near_lock", [None, 1e-4, 1e-7, 0.0])
@pytest.mark.parametrize("axes", qt.SEQUENCES)
def test_round_trip_quaternion_angles_quaternion(axes, near_lock):
    euler = axes[0] == axes[2]
    for branch in ("principal", "alternate"):
        for _ in range(4):
            ang = _angles(euler, near_lock)
            lam = qt.sequence_quaternion(axes, ang)
            back = qt.sequence_angles(qt.rotation_matrix(lam), axes, branch=branch)
            assert _same_rotation(lam, qt.sequence_quaternion(axes, back)) < 1e-9
            b = back[1]
            if near_lock != 0.0:
                # the branch decides the sign of cos β (Tait–Bryan) or sin β (Euler)
                key = math.sin(b) if euler else math.cos(b)
                assert (key >= 0) == (branch == "principal")
            if near_lock is None and branch == "principal":
                assert np.allclose(back, ang, atol=1e-9)


def _formulas(axes: str, branch: str = "principal"):
    """``angle_formulas`` as a Python function of ``λ0…λ3`` (``math``: atan2(0, 0) = 0)."""
    import sympy as sp
    lam = [se.Symbol(f"l{i}") for i in range(4)]
    exprs = [sp.sympify(f) for f in qt.angle_formulas(lam, axes, branch=branch)]
    return sp.lambdify([sp.Symbol(f"l{i}") for i in range(4)], exprs, modules="math")


@pytest.mark.parametrize("axes", qt.SEQUENCES)
def test_symbolic_formulas_equal_numeric(axes):
    f = _formulas(axes)
    for _ in range(3):
        ang = _angles(axes[0] == axes[2], None)
        val = np.array(qt.sequence_quaternion(axes, ang)) * RNG.uniform(0.5, 2)  # not unit
        assert np.allclose(f(*val), ang, atol=1e-12)
        assert np.allclose(f(*val), qt.sequence_angles(qt.rotation_matrix(val), axes),
                           atol=1e-12)


GRID = (0.0, math.pi / 2, -math.pi / 2, math.pi, 0.3, -2.0)


@pytest.mark.parametrize("branch", ["principal", "alternate"])
@pytest.mark.parametrize("axes", qt.SEQUENCES)
def test_symbolic_formulas_reproduce_the_rotation_everywhere(axes, branch):
    """angles → Λ → angle formulas → rotation matrix, on a grid of multiples of π/2 (the
    identity and every gimbal lock) and generic angles, for ±Λ and a non-unit Λ.

    Matrices are compared, not angles: in gimbal lock the split of the turn between
    the first and third angle is arbitrary.
    """
    f = _formulas(axes, branch)
    euler = axes[0] == axes[2]
    for ang in itertools.product(GRID, repeat=3):
        lam = qt.sequence_quaternion(axes, ang)
        want = qt.sequence_matrix(axes, ang)
        for scale in (1.0, -1.0, 2.5):
            back = f(*(scale * x for x in lam))
            assert np.abs(qt.sequence_matrix(axes, back) - want).max() < 1e-12, (ang, scale)
            assert all(-math.pi - 1e-12 <= a <= math.pi + 1e-12 for a in back)
            key = math.sin(back[1]) if euler else math.cos(back[1])
            assert key >= -1e-12 if branch == "principal" else key <= 1e-12
    identity = f(1.0, 0.0, 0.0, 0.0)
    if branch == "principal":
        assert np.allclose(identity, 0.0, atol=0)


def test_rates_body_and_fixed_agree_and_match_seed_eq_23():
    lam = np.array(qt.sequence_quaternion("yxz", [0.3, -0.7, 1.1]))
    w_body = np.array([0.4, -1.3, 2.0])
    w_fixed = qt.rotation_matrix(lam) @ w_body
    assert np.allclose(qt.rate_body(lam, w_body), qt.rate_fixed(lam, w_fixed), atol=1e-15)
    # seed 000 eq. (23), transcribed: λ̇ = ½ ω∘Λ with fixed-frame ω
    l0, l1, l2, l3 = lam
    wx, wy, wz = w_fixed
    eq23 = [-0.5 * (l1 * wx + l2 * wy + l3 * wz), 0.5 * (l0 * wx + l3 * wy - l2 * wz),
            0.5 * (-l3 * wx + l0 * wy + l1 * wz), 0.5 * (l2 * wx - l1 * wy + l0 * wz)]
    assert np.allclose(qt.rate_fixed(lam, w_fixed), eq23, atol=1e-15)


def test_rate_is_the_derivative_of_the_rotation():
    """Ṡ = S [ω_body]× by finite differences along Λ̇ = ½ Λ∘ω."""
    lam = np.array(qt.sequence_quaternion("zxz", [0.2, 0.9, -0.4]))
    w = np.array([0.7, 0.1, -0.5])
    h = 1e-6
    dS = (qt.rotation_matrix(lam + h * np.array(qt.rate_body(lam, w)))
          - qt.rotation_matrix(lam - h * np.array(qt.rate_body(lam, w)))) / (2 * h)
    W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    assert np.allclose(dS, qt.rotation_matrix(lam) @ W, atol=1e-8)


def test_bad_sequence_is_a_clear_error():
    with pytest.raises(ValueError, match="rotation sequence must be one of"):
        qt.sequence_angles(np.eye(3), "xxy")
