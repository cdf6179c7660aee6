"""Runs of a link of variable length (seed 004): a prescribed length ξ(t) and a servo.

``examples/variable_links/one_link_prescribed.kdm`` (time-dependent: the length
``ξ = l0 + a sin(W t)`` is prescribed) is run by both engines. Checked against things
independent of kidym's equations:

* the two engines' trajectories agree (generated Python + SciPy vs generated C +
  SUNDIALS);
* the energy output equals the paper's ``T + Π`` (2.5), (2.6) along the run;
* the energy balance with the work of the prescribed motion computed from the paper:
  the length takes the force ``F1`` of the corrected (2.9) (with ``ξ̈`` of the formula),
  whose power is ``F1 ξ̇``, so ``E(t) − E(0) = ∫ F1 ξ̇ dt``;
* a controlled length (``one_link_servo.kdm``: the length a coordinate, a PD force on
  it following the same ``ξ(t)``) approaches the prescribed motion as ``1/kp``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import cumulative_simpson

import kidym
from kidym.simulation.energy import energy_balance
from tests.codegen.shared import kidym_cache  # noqa: F401

EX = Path(__file__).resolve().parents[2] / "examples" / "variable_links"
P = {"m1": 2.0, "l1": 0.8, "g": 9.81, "l0": 0.3, "a": 0.1, "W": 4.0}   # as in the files


def _xi(t):
    return (P["l0"] + P["a"] * np.sin(P["W"] * t), P["a"] * P["W"] * np.cos(P["W"] * t),
            -P["a"] * P["W"] ** 2 * np.sin(P["W"] * t))


@pytest.fixture(scope="module")
def runs(kidym_cache):  # noqa: F811
    model = kidym.load(EX / "one_link_prescribed.kdm")
    eq = kidym.derive(model)
    return {e: kidym.simulate(eq, engine=e, n_points=3001) for e in ("numpy", "compiled")}


def test_prescribed_length_engines_agree(runs):
    a, b = runs["numpy"], runs["compiled"]
    for name in ("phi1", "psi1", "phi1't", "psi1't", "xi11", "energy"):
        scale = 1 + np.abs(a[name]).max()
        np.testing.assert_allclose(a[name], b[name], rtol=0, atol=1e-7 * scale)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_prescribed_length_energy_balance_from_the_paper(runs, engine):
    r = runs[engine]
    t = r["t"]
    m, l, g = P["m1"], P["l1"], P["g"]
    xi, dxi, ddxi = _xi(t)
    psi, dphi, dpsi = r["psi1"], r["phi1't"], r["psi1't"]
    np.testing.assert_allclose(r["xi11"], xi, rtol=0, atol=1e-14)
    zeta = m * l**2 / 3 + m * l * xi + m * xi**2
    c = np.cos(psi)
    E = 0.5 * (m * dxi**2 + zeta * (dpsi**2 + dphi**2 * c**2)) + g * m * (l / 2 + xi) * np.sin(psi)
    np.testing.assert_allclose(r["energy"], E, rtol=1e-12, atol=1e-12)   # (2.5) + (2.6)
    lam = xi + l / 2
    F1 = m * ddxi - m * lam * c**2 * dphi**2 - m * lam * dpsi**2 + g * m * np.sin(psi)  # (2.9)
    W = cumulative_simpson(F1 * dxi, x=t, initial=0.0)
    scale = max(np.abs(E).max(), np.abs(W).max())
    assert np.abs(W).max() > 1.0                       # the prescribed motion does real work
    assert np.abs(E - E[0] - W).max() < 1e-7 * scale
    bal = energy_balance(r)                             # what `kidym run` prints
    assert bal is not None and bal.max_abs < 1e-7 * scale
    np.testing.assert_allclose(bal.work, W, rtol=0, atol=1e-7 * scale)


def test_servo_length_approaches_the_prescribed_one_as_one_over_kp(runs, kidym_cache):  # noqa: F811
    ref = runs["compiled"]
    eq = kidym.derive(kidym.load(EX / "one_link_servo.kdm"))
    err = {}
    for kp in (1e5, 1e6):
        r = kidym.simulate(eq, engine="compiled", parameters={"kp": kp}, n_points=3001)
        np.testing.assert_allclose(r["xr"], ref["xi11"], rtol=0, atol=1e-14)
        err[kp] = (np.abs(r["xi11"] - r["xr"]).max(), np.abs(r["psi1"] - ref["psi1"]).max())
    for k in range(2):
        assert 7 < err[1e5][k] / err[1e6][k] < 13, err   # O(1/kp): a tenth per decade
    assert err[1e6][0] < 1e-4 and err[1e6][1] < 1e-2


MASSLESS_TIP = """m1 = 2; l1 = 0.8; g = 9.81;
Link1 | Rz(phi1), Ry(-psi1), Sx(xi11) | Sx(l1/2), m(m1), Jx(0), Jy(m1*l1^2/12), Jz(m1*l1^2/12);
Tip~Link1 | Sx(l1 + xi12) | m(0);
GRAVITY := 0, 0, -g;
INITIAL := psi1(0.5), xi11(0.3);
"""


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_massless_part_as_a_coordinate_is_named(engine, kidym_cache):  # noqa: F811
    """Seed 004 leaves ξn2 out: as a coordinate it moves no mass; the error names it."""
    with pytest.raises(kidym.SimulationError,
                       match=r"mass matrix is singular: at this state no mass moves with "
                             r"the speed xi12't"):
        kidym.simulate(kidym.parse(MASSLESS_TIP), t_end=1, engine=engine)


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_links_in_line_name_the_motion_that_moves_nothing(engine, kidym_cache):  # noqa: F811
    """Two links in line: ξ12 and ξ21 slide along one line, only their sum moves mass."""
    model = kidym.load(EX / "two_links.kdm")
    with pytest.raises(kidym.SimulationError) as info:
        kidym.simulate(model, t_end=1, engine=engine,
                       initial={"psi1": 0.5, "psi2": 0.5, "phi1": 0.2, "phi2": 0.2})
    assert re.search(r"at this state the motion 1\*xi12't - 1\*xi21't of the speeds moves no "
                     r"mass",
                     str(info.value)), str(info.value)


def test_a_mass_at_the_joint_removes_the_in_line_singularity():
    """The null motion ξ12' = −ξ21' moves no mass only while the joint A2 has none."""
    from kidym.simulation.simulate import NumpySystem

    base = (EX / "two_links.kdm").read_text(encoding="utf-8")
    joint = base.replace("GRAVITY :=", "mJ = 0.5;\nJoint~Link1 | Sx(l1 + xi12) | m(mJ);\n"
                                       "GRAVITY :=", 1)
    state = {"psi1": 0.5, "psi2": 0.5, "phi1": 0.2, "phi2": 0.2, "xi11": 0.2, "xi12": 0.1,
             "xi21": 0.3}
    smallest = []
    for text in (base, joint):
        ns = NumpySystem.build(kidym.derive(kidym.parse(text)))
        y = np.array([state.get(n, 0.0) for n in ns.state_names])
        M = np.asarray(ns.rhs_function(0.0, y.tolist(), ns.parameter_vector().tolist())[1],
                       float).reshape(len(ns.equations.speeds), -1)
        smallest.append(np.linalg.eigvalsh(M).min() / np.linalg.eigvalsh(M).max())
    assert abs(smallest[0]) < 1e-14 and smallest[1] > 1e-4, smallest
