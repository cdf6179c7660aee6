"""Full-tensor Euler equations vs principal axes by Jacobi rotations (seed 003 (4), (5))."""

import numpy as np
import pytest

import kidym
from kidym.eom.principal import jacobi_eigen
from kidym.simulation.simulate import NumpySystem

PLATE = """m = 2; g = 9.81;
Plate | Rz(a), Rx(b), Sy(0.3) | Sx(0.1), Sy(0.05),
        m(m), Jx(0.3), Jy(0.2), Jz(0.4), Jxy(0.05), Jyz(-0.03), Jxz(0.02);
Tip~Plate | Sz(0.2), Ry(c) | m(0.5), Jx(0.01), Jy(0.02), Jz(0.015), Jxy(0.004);
GRAVITY := 0, 0, -g;"""


def _evaluate(eq, rng, n=6):
    system = NumpySystem.build(eq)
    p = system.parameter_vector()
    out = []
    for _ in range(n):
        y = rng.uniform(-2, 2, len(system.state_names))
        _, M, F, _ = system.evaluate(0.0, y, p)
        out.append((M, F))
    return out


def test_jacobi_agrees_with_lapack():
    rng = np.random.default_rng(5)
    for _ in range(20):
        A = rng.normal(size=(3, 3))
        A = A @ A.T + 0.1 * np.eye(3)
        moments, V = jacobi_eigen(A)
        np.testing.assert_allclose(sorted(moments), np.linalg.eigvalsh(A), rtol=1e-12)
        np.testing.assert_allclose(V.T @ A @ V, np.diag(moments), atol=1e-12)
        assert np.linalg.det(V) == pytest.approx(1.0)


def test_full_and_principal_routes_agree():
    model = kidym.parse(PLATE)
    full = kidym.derive(model, inertia="full")
    principal = kidym.derive(model, inertia="principal")
    assert set(principal.principal_moments) == {"Plate", "Tip"}
    tensor = np.array([[0.3, -0.05, -0.02], [-0.05, 0.2, 0.03], [-0.02, 0.03, 0.4]])
    np.testing.assert_allclose(sorted(principal.principal_moments["Plate"]),
                               np.linalg.eigvalsh(tensor), rtol=1e-12)
    for (M1, F1), (M2, F2) in zip(_evaluate(full, np.random.default_rng(1)),
                                  _evaluate(principal, np.random.default_rng(1))):
        np.testing.assert_allclose(M1, M2, rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(F1, F2, rtol=1e-11, atol=1e-13)


def _rot(axis, deg):
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return {"x": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]),
            "z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])}[axis]


def test_products_of_inertia_equal_a_rotated_principal_frame():
    """A diagonal tensor in a central frame turned by Rz(30), Rx(20) is the same body as
    the full tensor R·diag·Rᵀ written with products of inertia (Jxy = −J[0,1] …)."""
    R = _rot("z", 30) @ _rot("x", 20)
    J = R @ np.diag([0.3, 0.2, 0.4]) @ R.T
    rotated = """m = 2; g = 9.81;
    B | Rz(a), Ry(b) | Sx(0.1), Rz(30), Rx(20), m(m), Jx(0.3), Jy(0.2), Jz(0.4);
    GRAVITY := 0, 0, -g;"""
    tensor = f"""m = 2; g = 9.81;
    B | Rz(a), Ry(b) | Sx(0.1), m(m), Jx({J[0, 0]:.17g}), Jy({J[1, 1]:.17g}), Jz({J[2, 2]:.17g}),
        Jxy({-J[0, 1]:.17g}), Jyz({-J[1, 2]:.17g}), Jxz({-J[0, 2]:.17g});
    GRAVITY := 0, 0, -g;"""
    a = _evaluate(kidym.derive(kidym.parse(rotated)), np.random.default_rng(3))
    b = _evaluate(kidym.derive(kidym.parse(tensor)), np.random.default_rng(3))
    for (M1, F1), (M2, F2) in zip(a, b):
        np.testing.assert_allclose(M1, M2, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(F1, F2, rtol=1e-12, atol=1e-14)


def test_inertia_must_be_parameters_so_principal_axes_are_always_numeric():
    """A product of inertia that uses a name without a value is rejected by validation,
    which is what guarantees the Jacobi route a numeric tensor."""
    text = """m = 1; Jq = 0.1;
    B | Rz(a) | m(m), Jx(Jq), Jy(Jq), Jz(Jq), Jxy(k*a);"""
    with pytest.raises(kidym.ModelError, match=r"`k`.*no value"):
        kidym.parse(text)
