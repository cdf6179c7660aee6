"""Analysis only at possible states (:mod:`kidym.analysis.consistent`): an operating
point off the constraints has its dependent states solved from the given ones, or is a
located error naming the violated constraints.

Oracles: SymPy ``KanesMethod`` of the rolling disc (``sympy_linear``), the four-bar's
loop equations solved by SciPy, and the Whipple bicycle's eigenvalues and critical
speeds published by Meijaard, Papadopoulos, Ruina & Schwab (2007, Proc. R. Soc. A 463,
Table 2: the values at v = 5 m/s and the weave and capsize speeds, to 14 digits).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.cli import main
from kidym.errors import ModelError

from .sympy_linear import rolling_disc
from .test_linearize import DISC_CONSTRAINED, FOUR_BAR

ROOT = Path(__file__).parents[2]
DISC = dict(m=1.0, r=0.3, g=9.81)
W = 4.0


def _same_spectrum(ours: np.ndarray, expected: np.ndarray, tol: float) -> None:
    """Each expected eigenvalue matched by one of ours, within ``tol``."""
    ours = list(ours)
    for s in expected:
        k = int(np.argmin([abs(s - o) for o in ours]))
        assert abs(ours.pop(k) - s) <= tol, (s, ours)


@pytest.fixture(scope="module")
def disc_eq():
    return kidym.derive(kidym.parse(DISC_CONSTRAINED))


def test_disc_from_its_independent_speeds(disc_eq) -> None:
    """The disc with ``КАЧЕНИЕ`` given only its independent speeds (``psi't, theta't,
    phi't``) and lean and heading: the centre's height ``z = r`` and its speed
    ``x't = r Ω`` are solved and reported, and the spectrum is SymPy's (the disc with the
    rolling as velocity formulas) at that steady rolling."""
    lin = kidym.linearize(disc_eq, {"theta": 0.0, "psi": 0.0, "psi't": 0.0,
                                    "theta't": 0.0, "phi't": W})
    op = {"x": 0.0, "y": 0.0, "psi": 0.0, "theta": 0.0, "phi": 0.0, "psi't": 0.0,
          "theta't": 0.0, "phi't": W, "x't": DISC["r"] * W, "y't": 0.0}
    expected = np.linalg.eigvals(rolling_disc(op, DISC))
    _same_spectrum(np.linalg.eigvals(lin.A), expected,
                   1e-9 * max(1.0, np.abs(expected).max()))
    assert set(lin.solved) == {"z", "x't"}
    assert lin.solved["z"][1] == pytest.approx(DISC["r"], rel=1e-12)
    assert lin.solved["x't"][1] == pytest.approx(DISC["r"] * W, rel=1e-12)
    assert lin.point["z"] == lin.solved["z"][1]
    assert "solved from the constraints" in lin.to_text() and "z 0 → 0.3" in lin.to_text()
    # the point given in full and consistent is taken as it is: nothing solved, same A
    full = kidym.linearize(disc_eq, {**op, "z": DISC["r"], "z't": 0.0})
    assert full.solved == {}
    np.testing.assert_allclose(full.A, lin.A, rtol=0, atol=1e-12 * np.abs(lin.A).max())


def test_inconsistent_full_point_is_a_located_error(disc_eq) -> None:
    """Every state given, the centre's speed against the rolling: no state is left to
    solve, so the error names the violated constraint at the `КАЧЕНИЕ` that writes it
    (line 5 of the model) and the value it would need."""
    op = {"x": 0.0, "y": 0.0, "z": DISC["r"], "psi": 0.0, "theta": 0.0, "phi": 0.0,
          "x't": 0.0, "y't": 0.0, "z't": 0.0, "psi't": 0.0, "theta't": 0.0, "phi't": W}
    with pytest.raises(ModelError, match=r"<string>:5:\d+: error: the operating point is "
                       r"not a possible state: constraint `rollXDisc` is -1\.2 there") as exc:
        kidym.linearize(disc_eq, op)
    assert "`x't` = 1.2 (given 0)" in str(exc.value)
    assert exc.value.diagnostics[0].span.line == 5
    with pytest.raises(ModelError, match="rollXDisc"):
        kidym.modes(disc_eq, op, statics=False)


def test_four_bar_from_the_crank_angle() -> None:
    """The four-bar given its crank's angle and rate only (the rocker's and coupler's
    initial values of the model as the guess of the branch): ``q2, q3`` are the closed
    loop's (SciPy on the loop equations), ``q2't, q3't`` follow from its velocity
    equations, and ``A`` equals the one at that full point given."""
    from scipy.optimize import fsolve

    eq = kidym.derive(kidym.parse(FOUR_BAR + "INITIAL := t(0), q2(-0.8), q3(1.5);\n"))
    q1, w1 = 1.0, 1.5
    lin = kidym.linearize(eq, {"q1": q1, "q1't": w1})
    assert set(lin.solved) == {"q2", "q3", "q2't", "q3't"}
    a, b, c, d = 0.3, 1.0, 0.8, 0.9
    loop = lambda z: [a * np.cos(q1) + b * np.cos(q1 + z[0]) - d - c * np.cos(z[1]),  # noqa: E731
                      a * np.sin(q1) + b * np.sin(q1 + z[0]) - c * np.sin(z[1])]
    q2, q3 = fsolve(loop, [-0.8, 1.5], xtol=1e-14)
    # d/dt of the loop equations: J [q2', q3'] = -∂/∂q1 · q1'
    J = np.array([[-b * np.sin(q1 + q2), c * np.sin(q3)],
                  [b * np.cos(q1 + q2), -c * np.cos(q3)]])
    rhs = -w1 * np.array([-a * np.sin(q1) - b * np.sin(q1 + q2),
                          a * np.cos(q1) + b * np.cos(q1 + q2)])
    w2, w3 = np.linalg.solve(J, rhs)
    got = [lin.point[k] for k in ("q2", "q3", "q2't", "q3't")]
    np.testing.assert_allclose(got, [q2, q3, w2, w3], rtol=0, atol=1e-10)
    full = kidym.linearize(eq, {"q1": q1, "q2": q2, "q3": q3, "q1't": w1, "q2't": w2,
                                "q3't": w3})
    assert full.solved == {}
    np.testing.assert_allclose(lin.A, full.A, rtol=0, atol=1e-8 * np.abs(full.A).max())


def test_a_guess_picks_the_assembly_branch_and_may_change() -> None:
    """``guess`` replaces the model's initial values without fixing the states: from a
    guess near the other assembly branch of the four-bar the loop closes there (SciPy
    from the same guess), and the guessed values are solved, not an error."""
    from scipy.optimize import fsolve

    eq = kidym.derive(kidym.parse(FOUR_BAR))
    q1, a, b, c, d = 1.0, 0.3, 1.0, 0.8, 0.9
    loop = lambda z: [a * np.cos(q1) + b * np.cos(q1 + z[0]) - d - c * np.cos(z[1]),  # noqa: E731
                      a * np.sin(q1) + b * np.sin(q1 + z[0]) - c * np.sin(z[1])]
    q2, q3 = fsolve(loop, [-2.0, -1.5])
    assert abs(q3 + 2.1) < 0.01             # (SciPy's branch: the rocker below the ground)
    lin = kidym.linearize(eq, {"q1": q1}, guess={"q2": -2.0, "q3": -1.5})
    assert lin.solved["q2"] == (-2.0, pytest.approx(q2, abs=1e-9))
    assert lin.point["q3"] == pytest.approx(q3, abs=1e-9)


def test_no_closed_configuration_is_a_located_error() -> None:
    """A crank angle given with the coupler and rocker (all coordinates) off the loop:
    nothing is left to move, so the error names both loop equations."""
    eq = kidym.derive(kidym.parse(FOUR_BAR))
    with pytest.raises(ModelError, match=r"(?s)constraint `f1` is .* constraint `f2` is"):
        kidym.linearize(eq, {"q1": 1.0, "q2": 0.0, "q3": 0.0})


def test_cli_modes_and_linearize_print_what_they_set(tmp_path, capsys) -> None:
    model = tmp_path / "disc.kdm"
    model.write_text(DISC_CONSTRAINED, encoding="utf-8")
    state = ["--state", "psi't=0", "--state", "theta't=0", "--state", f"phi't={W}"]
    assert main(["modes", str(model), *state, "--statics", "no"]) == 0
    out = capsys.readouterr().out
    assert "solved from the constraints" in out and "z 0 → 0.3, x't 0 → 1.2" in out
    assert main(["linearize", str(model), *state]) == 0
    assert "z 0 → 0.3, x't 0 → 1.2" in capsys.readouterr().out
    assert main(["modes", str(model), *state, "--state", "x't=0", "--state", "y't=0",
                 "--state", "z't=0", "--state", "z=0.3", "--statics", "no"]) == 1
    err = capsys.readouterr().err
    assert "disc.kdm:5:" in err and "rollXDisc" in err and "^~~" in err


def test_continuation_locates_by_bisection_where_brent_cannot(disc_eq, monkeypatch) -> None:
    """Where the smooth indicator of :func:`_locate` fails (SciPy's "f(a) and f(b) must
    have different signs"), the boundary is found by bisection of ``max Re s``: the
    constrained disc's critical spin ``√(g/(3r))`` (examples/rolling_disc/README.md),
    its points re-solved on the constraints at every spin."""
    import importlib

    modes_module = importlib.import_module("kidym.analysis.modes")

    def fail(*_args, **_kw):
        raise ValueError("f(a) and f(b) must have different signs")

    monkeypatch.setattr(modes_module, "_locate", fail)
    c = kidym.continuation(disc_eq, "phi't", [2.5, 4.0],
                           state={"theta": 0.0, "psi": 0.0, "psi't": 0.0, "theta't": 0.0},
                           statics=False)
    assert len(c.boundaries) == 1
    assert c.boundaries[0] == pytest.approx(np.sqrt(9.81 / (3 * 0.3)), rel=1e-6)


def test_continuation_reports_a_failed_boundary_search_in_its_own_words(
        disc_eq, monkeypatch) -> None:
    """Brent's indicator failing and the bisection's point failing too: the error says
    between which values the stability changes and where the search failed (no SciPy
    message)."""
    import importlib

    modes_module = importlib.import_module("kidym.analysis.modes")

    def fail(*_args, **_kw):
        raise ValueError("f(a) and f(b) must have different signs")

    real = modes_module.modes

    def grid_only(eq, st, **kw):
        if st["phi't"] not in (2.5, 4.0):
            raise ValueError("no state here")
        return real(eq, st, **kw)

    monkeypatch.setattr(modes_module, "_locate", fail)
    monkeypatch.setattr(modes_module, "modes", grid_only)
    with pytest.raises(ValueError, match=r"continuation along phi't: the stability changes "
                       r"between phi't = 2\.5 and 4, but the boundary could not be located: "
                       r"at phi't = 3\.25 no state here") as exc:
        kidym.continuation(disc_eq, "phi't", [2.5, 4.0],
                           state={"theta": 0.0, "psi": 0.0, "psi't": 0.0, "theta't": 0.0},
                           statics=False)
    assert "f(a)" not in str(exc.value)


def test_continuation_names_the_value_of_an_impossible_point(disc_eq) -> None:
    """Every state given but the centre's speed varied: only ``x't = r Ω`` is a possible
    state; the next value is a located error that names it."""
    op = {"x": 0.0, "y": 0.0, "z": DISC["r"], "psi": 0.0, "theta": 0.0, "phi": 0.0,
          "y't": 0.0, "z't": 0.0, "psi't": 0.0, "theta't": 0.0, "phi't": W}
    with pytest.raises(ModelError, match=r"<string>:5:\d+: error: continuation at x't = 2: "
                       r"the operating point is not a possible state: constraint `rollXDisc`"):
        kidym.continuation(disc_eq, "x't", [DISC["r"] * W, 2.0], state=op, statics=False)


# --------------------------------------------------------------- the Whipple bicycle
#: Meijaard et al. (2007) Table 2, v = 5 m/s: castering, capsize, weave.
TABLE_2 = np.array([-14.07838969279822, -0.32286642900409,
                    -0.77534188219585 + 4.46486771378823j,
                    -0.77534188219585 - 4.46486771378823j])
#: The weave and capsize speeds of the same table's text [m/s].
V_WEAVE, V_CAPSIZE = 4.29238253634111, 6.02426201538837


@pytest.fixture(scope="module")
def bicycle():
    return kidym.derive(kidym.load(ROOT / "examples/bicycle/bicycle.kdm"))


@pytest.mark.parametrize("speed", [{"qR't": 5.0 / 0.3}, {"x't": 5.0}],
                         ids=["rear-wheel-rate", "forward-speed"])
def test_bicycle_spectrum_from_independent_speeds_is_table_2(bicycle, speed) -> None:
    """The bicycle (both wheels by ``КАЧЕНИЕ``) given only its independent speeds at
    v = 5 — roll and steer rates 0, and the rear wheel's rate or the forward speed —
    has Table 2's spectrum (its coupled part; the cyclic states split off at 0) to the
    table's 14 printed digits (a margin of 100 on its last digit)."""
    md = kidym.modes(bicycle, {"phi't": 0.0, "delta't": 0.0, **speed}, statics=False)
    assert md.eigenvalues.size == 4
    _same_spectrum(md.eigenvalues, TABLE_2, 1e-12)
    assert {"z", "qF't"} <= set(md.linearization.solved)
    assert md.linearization.point["x't"] == pytest.approx(5.0, rel=1e-12)
    assert md.stability == "asymptotically stable"


def test_bicycle_weave_and_capsize_speeds(bicycle) -> None:
    """Continuation along the forward speed, every point re-solved on the constraints,
    finds the weave and capsize speeds of the table (the points stay possible states:
    on today's code the speed alone changed and the root search crashed in SciPy)."""
    c = kidym.continuation(bicycle, "x't", [3.0, 5.0, 7.0],
                           state={"phi't": 0.0, "delta't": 0.0}, statics=False)
    assert c.stability == ("unstable", "asymptotically stable", "unstable")
    np.testing.assert_allclose(c.boundaries, [V_WEAVE, V_CAPSIZE], rtol=0, atol=1e-9)
