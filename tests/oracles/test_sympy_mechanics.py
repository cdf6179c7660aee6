"""Sanity tests of the SymPy ``KanesMethod`` oracle itself.

The oracle is checked against quantities derived *by hand* (never with
:mod:`sympy.physics`): the textbook double-pendulum equations, the physical pendulum, and an
independent NumPy Lagrangian for the spatial chain built from geometric Jacobians. Energy
conservation along integrated trajectories closes the loop.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from .sympy_mechanics import Oracle, chain, double_pendulum

RNG_SEED = 20240521


def _values(oracle: Oracle, q: np.ndarray, u: np.ndarray, params: dict[str, float]) -> dict:
    values = dict(params)
    values.update({s.name: float(v) for s, v in zip(oracle.coordinates, q, strict=True)})
    values.update({s.name: float(v) for s, v in zip(oracle.speeds, u, strict=True)})
    return values


def _dp_params(rng: np.random.Generator) -> dict[str, float]:
    m1, m2, l1, l2 = rng.uniform(0.5, 2.0, size=4)
    return {"m1": m1, "m2": m2, "l1": l1, "l2": l2, "g": 9.81}


def _chain_params(rng: np.random.Generator) -> dict[str, float]:
    m, l, jx, jy, jz = rng.uniform(0.3, 2.0, size=5)
    return {"m": m, "l": l, "Jx": jx, "Jy": jy, "Jz": jz, "g": 9.81}


def _dp_closed_form(
    q: np.ndarray, u: np.ndarray, p: dict[str, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Double pendulum of uniform rods, from the Lagrangian by hand.

    With ``a = m2 l2^2/3`` (rod 2 about its hinge) and ``h = m2 l1 l2/2``::

        T = 1/2 (m1 l1^2/3 + m2 l1^2) phi1'^2 + 1/2 a (phi1' + phi2')^2
            + h cos(phi2) phi1' (phi1' + phi2')
        V = g (m1 l1/2 + m2 l1) sin(phi1) + g m2 l2/2 sin(phi1 + phi2)
    """
    phi1, phi2 = q
    w1, w2 = u
    m1, m2, l1, l2, g = (p[k] for k in ("m1", "m2", "l1", "l2", "g"))
    a = m2 * l2**2 / 12 + m2 * l2**2 / 4
    h = m2 * l1 * l2 / 2
    c2, s2 = np.cos(phi2), np.sin(phi2)
    m11 = m1 * l1**2 / 3 + m2 * l1**2 + a + 2 * h * c2
    m12 = a + h * c2
    m22 = a
    mass = np.array([[m11, m12], [m12, m22]])
    dv1 = g * (m1 * l1 / 2 + m2 * l1) * np.cos(phi1) + g * m2 * l2 / 2 * np.cos(phi1 + phi2)
    dv2 = g * m2 * l2 / 2 * np.cos(phi1 + phi2)
    f1 = h * s2 * (2 * w1 * w2 + w2**2) - dv1
    f2 = -h * s2 * w1**2 - dv2
    return mass, np.array([f1, f2])


def _rot(axis: int, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    r = np.eye(3)
    r[i, i], r[i, j], r[j, i], r[j, j] = c, -s, s, c
    return r


def _chain_numpy(q: np.ndarray, p: dict[str, float]) -> tuple[np.ndarray, float]:
    """Mass matrix and potential energy of the chain via geometric Jacobians (NumPy)."""
    n = len(q)
    m, l, g = p["m"], p["l"], p["g"]
    j_body = np.diag([p["Jx"], p["Jy"], p["Jz"]])
    ez = np.array([0.0, 0.0, 1.0])
    rot = np.eye(3)
    origin = np.zeros(3)
    joints: list[np.ndarray] = []
    axes: list[np.ndarray] = []
    mass = np.zeros((n, n))
    potential = 0.0
    for k in range(n):
        axis = 0 if k % 2 == 0 else 1
        if k > 0:
            origin = origin + rot @ (-l * ez)
        rot = rot @ _rot(axis, q[k])
        joints.append(origin)
        axes.append(rot[:, axis])
        centre = origin + rot @ (-l / 2 * ez)
        jv = np.zeros((3, n))
        jw = np.zeros((3, n))
        for j in range(k + 1):
            jv[:, j] = np.cross(axes[j], centre - joints[j])
            jw[:, j] = axes[j]
        mass += m * jv.T @ jv + jw.T @ (rot @ j_body @ rot.T) @ jw
        potential += m * g * centre[2]
    return mass, potential


def _chain_lagrange(
    q: np.ndarray, u: np.ndarray, p: dict[str, float], h: float = 1e-6
) -> tuple[np.ndarray, np.ndarray]:
    """``M`` and ``F = dT/dq - (d(M u)/dq) u - dV/dq`` by central differences in ``q``."""
    n = len(q)
    mass, _ = _chain_numpy(q, p)
    forcing = np.zeros(n)
    dmu = np.zeros((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        mp, vp = _chain_numpy(q + e, p)
        mm, vm = _chain_numpy(q - e, p)
        dm = (mp - mm) / (2 * h)
        dmu[:, j] = dm @ u
        forcing[j] = 0.5 * u @ dm @ u - (vp - vm) / (2 * h)
    forcing -= dmu @ u
    return mass, forcing


@pytest.fixture(scope="module")
def dp() -> Oracle:
    return double_pendulum()


@pytest.fixture(scope="module")
def chains() -> dict[int, Oracle]:
    return {n: chain(n) for n in (1, 2, 3, 4)}


def test_symbol_names(dp: Oracle, chains: dict[int, Oracle]) -> None:
    assert [s.name for s in dp.coordinates] == ["phi1", "phi2"]
    assert [s.name for s in dp.speeds] == ["phi1't", "phi2't"]
    assert [s.name for s in dp.parameters] == ["m1", "m2", "l1", "l2", "g"]
    c3 = chains[3]
    assert [s.name for s in c3.coordinates] == ["q1", "q2", "q3"]
    assert [s.name for s in c3.speeds] == ["q1't", "q2't", "q3't"]
    assert [s.name for s in c3.parameters] == ["m", "l", "Jx", "Jy", "Jz", "g"]
    for o in (dp, *chains.values()):
        allowed = set(o.arguments)
        for expr in (o.mass_matrix, o.forcing, o.kinetic_energy, o.potential_energy):
            assert expr.free_symbols <= allowed
            assert not expr.atoms(sp.Function, sp.Derivative) - expr.atoms(sp.sin, sp.cos)


def test_double_pendulum_closed_form(dp: Oracle) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(25):
        p = _dp_params(rng)
        q = rng.uniform(-np.pi, np.pi, 2)
        u = rng.uniform(-3, 3, 2)
        mass, forcing = dp.evaluate(_values(dp, q, u, p))
        mass_ref, forcing_ref = _dp_closed_form(q, u, p)
        np.testing.assert_allclose(mass, mass_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(forcing, forcing_ref, rtol=1e-12, atol=1e-11)


def test_double_pendulum_symbolic(dp: Oracle) -> None:
    phi1, phi2 = dp.coordinates
    w1, w2 = dp.speeds
    m1, m2, l1, l2, g = dp.parameters
    a = m2 * l2**2 / 3
    h = m2 * l1 * l2 / 2
    mass_ref = sp.Matrix(
        [
            [m1 * l1**2 / 3 + m2 * l1**2 + a + 2 * h * sp.cos(phi2), a + h * sp.cos(phi2)],
            [a + h * sp.cos(phi2), a],
        ]
    )
    v_ref = g * (m1 * l1 / 2 + m2 * l1) * sp.sin(phi1) + g * m2 * l2 / 2 * sp.sin(phi1 + phi2)
    forcing_ref = sp.Matrix(
        [
            h * sp.sin(phi2) * (2 * w1 * w2 + w2**2) - v_ref.diff(phi1),
            -h * sp.sin(phi2) * w1**2 - v_ref.diff(phi2),
        ]
    )
    assert sp.simplify(dp.mass_matrix - mass_ref) == sp.zeros(2, 2)
    assert sp.simplify(dp.forcing - forcing_ref) == sp.zeros(2, 1)
    assert sp.simplify(dp.potential_energy - v_ref) == 0


def test_chain_one_link_is_physical_pendulum(chains: dict[int, Oracle]) -> None:
    o = chains[1]
    (q1,) = o.coordinates
    m, l, jx, _, _, g = o.parameters
    assert sp.simplify(o.mass_matrix[0, 0] - (jx + m * l**2 / 4)) == 0
    assert sp.simplify(o.forcing[0] + m * g * l / 2 * sp.sin(q1)) == 0
    assert sp.simplify(o.potential_energy + m * g * l / 2 * sp.cos(q1)) == 0


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_chain_against_numpy_lagrangian(chains: dict[int, Oracle], n: int) -> None:
    o = chains[n]
    rng = np.random.default_rng(RNG_SEED + n)
    for _ in range(10):
        p = _chain_params(rng)
        q = rng.uniform(-np.pi, np.pi, n)
        u = rng.uniform(-3, 3, n)
        values = _values(o, q, u, p)
        mass, forcing = o.evaluate(values)
        mass_ref, forcing_ref = _chain_lagrange(q, u, p)
        np.testing.assert_allclose(mass, mass_ref, rtol=1e-12, atol=1e-12)
        scale = np.abs(forcing_ref).max()
        np.testing.assert_allclose(forcing, forcing_ref, rtol=0, atol=1e-7 * scale)
        kinetic, potential = o.energy(values)
        assert kinetic == pytest.approx(0.5 * u @ mass_ref @ u, rel=1e-12)
        assert potential == pytest.approx(_chain_numpy(q, p)[1], rel=1e-12, abs=1e-12)


def _oracles(dp: Oracle, chains: dict[int, Oracle]) -> list[tuple[Oracle, Callable]]:
    return [(dp, _dp_params)] + [(o, _chain_params) for o in chains.values()]


def test_mass_matrix_spd_and_energy_consistency(dp: Oracle, chains: dict[int, Oracle]) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for o, params in _oracles(dp, chains):
        n = len(o.coordinates)
        for _ in range(10):
            p = params(rng)
            q = rng.uniform(-np.pi, np.pi, n)
            u = rng.uniform(-3, 3, n)
            values = _values(o, q, u, p)
            mass, _ = o.evaluate(values)
            np.testing.assert_allclose(mass, mass.T, rtol=0, atol=1e-13)
            assert np.linalg.eigvalsh(mass).min() > 0
            kinetic, _ = o.energy(values)
            assert kinetic == pytest.approx(0.5 * u @ mass @ u, rel=1e-12)
            # At rest, the forcing is the generalized gravity force -dV/dq.
            _, forcing0 = o.evaluate(_values(o, q, np.zeros(n), p))
            grad = np.empty(n)
            for j in range(n):
                e = np.zeros(n)
                e[j] = 1e-6
                vp = o.energy(_values(o, q + e, np.zeros(n), p))[1]
                vm = o.energy(_values(o, q - e, np.zeros(n), p))[1]
                grad[j] = (vp - vm) / 2e-6
            np.testing.assert_allclose(forcing0, -grad, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("which", ["dp", 1, 2, 3])
def test_energy_conserved(dp: Oracle, chains: dict[int, Oracle], which: str | int) -> None:
    o, params = (dp, _dp_params) if which == "dp" else (chains[which], _chain_params)
    rng = np.random.default_rng(RNG_SEED + 7)
    n = len(o.coordinates)
    p = params(rng)
    x0 = np.concatenate([rng.uniform(-1.5, 1.5, n), rng.uniform(-2, 2, n)])

    def rhs(_t: float, x: np.ndarray) -> np.ndarray:
        mass, forcing = o.evaluate(_values(o, x[:n], x[n:], p))
        return np.concatenate([x[n:], np.linalg.solve(mass, forcing)])

    def total(x: np.ndarray) -> tuple[float, float]:
        kinetic, potential = o.energy(_values(o, x[:n], x[n:], p))
        return kinetic + potential, kinetic + abs(potential)

    sol = solve_ivp(rhs, (0.0, 2.0), x0, method="DOP853", rtol=1e-11, atol=1e-12)
    assert sol.success
    e0, scale = total(sol.y[:, 0])
    drift = max(abs(total(sol.y[:, i])[0] - e0) for i in range(sol.y.shape[1]))
    assert drift / max(abs(e0), scale) < 1e-8
    # The motion must be non-trivial for the check to mean anything.
    assert np.ptp(sol.y[:n], axis=1).max() > 0.1
