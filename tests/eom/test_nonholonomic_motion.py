"""Motions of the non-holonomic and quaternion examples against conserved quantities
and closed forms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kidym import derive, load, parse, simulate
from kidym.kinematics import quaternions as qt

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TIGHT = {"rtol": 1e-11, "atol": 1e-12}


def _drift(res) -> float:
    e = res.values["energy"]
    return float(np.abs(e - e[0]).max() / abs(e[0]))


@pytest.mark.slow
def test_ball_in_bowl_conserves_energy_over_the_papers_run():
    res = simulate(load(EXAMPLES / "ball/ball.kdm"), **TIGHT)
    assert res.t[-1] == 20.0 and _drift(res) < 1e-8
    # the centre stays on the sphere of radius R − r about A = (0, 0, R): (20)
    x, y, z = res.values["xC"], res.values["yC"], res.values["zC"]
    assert np.allclose(x**2 + y**2 + (z - 3) ** 2, 2.8**2, atol=1e-9)
    assert res.stats["quaternion_norm_drift"]["Куля"] < 1e-7


def test_rolling_disc_conserves_energy():
    res = simulate(load(EXAMPLES / "rolling_disc/rolling_disc.kdm"), **TIGHT)
    assert _drift(res) < 1e-8


def test_free_body_through_gimbal_lock_of_the_krylov_angles():
    model = load(EXAMPLES / "free_body/free_body.kdm")
    res = simulate(model, **TIGHT)
    assert _drift(res) < 1e-9
    theta = res.values["theta"]
    assert np.abs(theta).max() > np.radians(88)      # passes near ±90°
    J = np.diag([0.3, 0.2, 0.1])
    lam = np.array([res.values[n] for n in ("l0", "l1", "l2", "l3")])
    w = np.array([res.values[n] for n in ("ωXBody", "ωYBody", "ωZBody")])
    L = np.array([qt.rotation_matrix(lam[:, k]) @ J @ w[:, k] for k in range(lam.shape[1])])
    assert np.abs(L - L[0]).max() < 1e-8 * np.linalg.norm(L[0])   # angular momentum
    # the angles reproduce the quaternion (the outputs are the inverse formulas)
    for k in range(0, lam.shape[1], 25):
        ang = [res.values[n][k] for n in ("psi", "theta", "phi")]
        assert np.allclose(qt.rotation_matrix(qt.sequence_quaternion("yxz", ang)),
                           qt.rotation_matrix(lam[:, k]), atol=1e-8)


ISOTROPIC = """\
Ball | Q(q0, q1, q2, q3) | m(1), Jx(2), Jy(2), Jz(2);
TIME := t(0, 3);
"""


@pytest.mark.parametrize("mode", ["body", "fixed"])
def test_isotropic_free_body_turns_uniformly_in_both_conventions(mode):
    """ω is constant: Λ(t) = (cos(|ω|t/2), sin(|ω|t/2) ω/|ω|)∘Λ0 (fixed-frame ω)."""
    lam0 = np.array(qt.sequence_quaternion("zxz", [0.3, 1.0, -0.5]))
    w_fixed = np.array([0.7, -1.1, 0.4])
    w = w_fixed if mode == "fixed" else qt.rotation_matrix(lam0).T @ w_fixed
    init = {f"q{i}": lam0[i] for i in range(4)}
    init.update({f"ω{a}Ball": w[k] for k, a in enumerate("XYZ")})
    res = simulate(derive(parse(ISOTROPIC), angular_velocity=mode), initial=init, **TIGHT)
    t = res.t[-1]
    n = np.linalg.norm(w_fixed)
    turn = [np.cos(n * t / 2), *(np.sin(n * t / 2) * w_fixed / n)]
    want = qt.hamilton(turn, lam0)
    got = [res.values[f"q{i}"][-1] for i in range(4)]
    assert np.allclose(got, want, atol=1e-9)


def test_fixed_axes_need_an_isotropic_body():
    from kidym.errors import DerivationError
    with pytest.raises(DerivationError, match="isotropic"):
        derive(load(EXAMPLES / "free_body/free_body.kdm"), angular_velocity="fixed")


def test_norm_stabilisation_and_normalised_output():
    model = load(EXAMPLES / "free_body/free_body.kdm")
    loose = {"rtol": 1e-3, "atol": 1e-5, "method": "RK23", "t_end": 50.0}
    plain = simulate(model, **loose)
    kept = simulate(model, quaternion_stabilization=1.0, normalize_quaternions=True, **loose)
    d0 = plain.stats["quaternion_norm_drift"]["Body"]
    d1 = kept.stats["quaternion_norm_drift"]["Body"]
    assert d0 > 1e-3 and d1 < d0 / 10   # the loose run drifts; the stabilised one less
    lam = np.array([kept.values[f"l{i}"] for i in range(4)])
    assert np.allclose((lam**2).sum(axis=0), 1, atol=1e-14)


def test_compiled_engine_reports_and_normalises_the_quaternion():
    # The compiled loop integrates the same λ: its drift is measured from its own states
    # (checked here against the states themselves) and normalisation applies likewise.
    model = load(EXAMPLES / "free_body/free_body.kdm")
    loose = {"rtol": 1e-4, "atol": 1e-6, "t_end": 20.0}
    raw = simulate(model, engine="compiled", **loose)
    lam = np.array([raw.values[f"l{i}"] for i in range(4)])
    measured = float(np.abs(np.sqrt((lam**2).sum(axis=0)) - 1).max())
    assert raw.stats["quaternion_norm_drift"]["Body"] == pytest.approx(measured)
    unit = simulate(model, engine="compiled", normalize_quaternions=True, **loose)
    lam = np.array([unit.values[f"l{i}"] for i in range(4)])
    assert np.allclose((lam**2).sum(axis=0), 1, atol=1e-14)
    with pytest.raises(ValueError, match="NumPy engine only"):
        simulate(model, engine="compiled", quaternion_stabilization=1.0)


SPIN_ANGLES = """\
Top | Q(q0, q1, q2, q3) | m(1), Jx(2), Jy(2), Jz(2);
QUATERNION : Q(q0, q1, q2, q3), Ry(psi), Rx(theta), Rz(phi), E(ea, eb, ec);
INITIAL := t(0), q0(1), q1(0), q2(0), q3(0), omegax@Top(1), omegay@Top(0), omegaz@Top(0);
TIME := t(0, 4);
SHOW := psi, theta, phi, ea, eb, ec;
"""


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_angles_of_the_quaternion_from_the_identity_through_gimbal_lock(engine):
    """A uniform turn about x from the identity: Λ = (cos t/2, sin t/2, 0, 0).

    Both angle sets reproduce the rotation at every sample — the identity (t = 0, a
    gimbal lock of z-x-z), θ = π/2 (gimbal lock of y-x-z) and θ = π (z-x-z again) —
    and at the identity all angles are 0 (they were ψ = π, matrix error 2).
    """
    res = simulate(parse(SPIN_ANGLES), engine=engine, n_points=161, **TIGHT)
    t = res.t
    lam = np.array([np.cos(t / 2), np.sin(t / 2), 0 * t, 0 * t])
    assert np.allclose([res.values[f"q{i}"] for i in range(4)], lam, atol=1e-9)
    for names, axes in ((("psi", "theta", "phi"), "yxz"), (("ea", "eb", "ec"), "zxz")):
        ang = np.array([res.values[n] for n in names])
        assert np.allclose(ang[:, 0], 0.0, atol=1e-15)
        for k in range(len(t)):
            got = qt.sequence_matrix(axes, ang[:, k])
            assert np.abs(got - qt.rotation_matrix(lam[:, k])).max() < 1e-8, (names, t[k])


HEAVY_TOP = """\
m = 1.5; J = 0.2; l = 0.4; g = 9.81;
Top | Q(q0, q1, q2, q3) | Sz(l), m(m), Jx(J), Jy(J), Jz(J);
GRAVITY := 0, 0, -g;
INITIAL := t(0), q0(0.9797958971132712), q1(0.2), q2(0), q3(0), omegax@Top(0.4), omegay@Top(-0.3),
           omegaz@Top(12);
TIME := t(0, 3);
{extra}
"""


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
@pytest.mark.parametrize("extra", ["", "ANGULAR VELOCITY := body;",
                                   "УГЛОВАЯ СКОРОСТЬ := Top(тело);"])
def test_heavy_top_with_equal_moments_off_its_fixed_point(extra, engine):
    """Jx = Jy = Jz about the centre, centre of mass at l on the body's z axis: the
    automatic convention (body-frame ω) or the file's choice; energy and the vertical
    angular momentum about the fixed point are conserved, and the top precesses."""
    res = simulate(parse(HEAVY_TOP.format(extra=extra)), engine=engine, **TIGHT)
    m, J, l, g = 1.5, 0.2, 0.4, 9.81
    JO = np.diag([J + m * l * l, J + m * l * l, J])      # about the fixed point
    lam = np.array([res.values[f"q{i}"] for i in range(4)])
    w = np.array([res.values[f"ω{a}Top"] for a in "XYZ"])
    energy, Lz = [], []
    for k in range(lam.shape[1]):
        S = qt.rotation_matrix(lam[:, k])
        energy.append(0.5 * w[:, k] @ JO @ w[:, k] + m * g * (S @ [0, 0, l])[2])
        Lz.append((S @ JO @ w[:, k])[2])
    energy, Lz = np.array(energy), np.array(Lz)
    assert np.abs(energy - energy[0]).max() < 1e-8 * abs(energy[0])
    assert np.abs(Lz - Lz[0]).max() < 1e-8 * abs(Lz[0])
    axis = np.array([qt.rotation_matrix(lam[:, k])[:, 2] for k in range(lam.shape[1])])
    assert np.ptp(np.arctan2(axis[:, 1], axis[:, 0])) > 0.5           # it precesses


def test_heavy_top_cannot_take_fixed_frame_omega():
    from kidym.errors import DerivationError
    with pytest.raises(DerivationError, match=r"centre of rotation.*УГЛОВАЯ СКОРОСТЬ := body"):
        derive(parse(HEAVY_TOP.format(extra="ANGULAR VELOCITY := fixed;")))


@pytest.mark.parametrize("mode", ["body", "fixed"])
def test_isotropic_free_body_convention_chosen_in_the_file(mode):
    """As the API test above, with `ANGULAR VELOCITY := mode;` in the file instead."""
    lam0 = np.array(qt.sequence_quaternion("zxz", [0.3, 1.0, -0.5]))
    w_fixed = np.array([0.7, -1.1, 0.4])
    w = w_fixed if mode == "fixed" else qt.rotation_matrix(lam0).T @ w_fixed
    init = {f"q{i}": lam0[i] for i in range(4)}
    init.update({f"ω{a}Ball": w[k] for k, a in enumerate("XYZ")})
    model = parse(ISOTROPIC + f"ANGULAR VELOCITY := Ball({mode});\n")
    res = simulate(model, initial=init, **TIGHT)
    n, t = np.linalg.norm(w_fixed), res.t[-1]
    want = qt.hamilton([np.cos(n * t / 2), *(np.sin(n * t / 2) * w_fixed / n)], lam0)
    assert np.allclose([res.values[f"q{i}"][-1] for i in range(4)], want, atol=1e-9)


def test_angular_velocity_instruction_errors_are_located():
    from kidym.errors import ModelError
    for bad, message in (("sideways", "expects `body`, `fixed` or `auto`"),
                         ("Tp(body)", r"`Tp` is not a body.*did you mean `Top`"),
                         ("body, fixed", "twice")):
        with pytest.raises(ModelError, match=message):
            parse(HEAVY_TOP.format(extra=f"ANGULAR VELOCITY := {bad};"))
