"""The energy balance E(t) − E(0) − W(t) is conserved by every model, in both engines."""

import numpy as np
import pytest
import symengine as se
from scipy.integrate import cumulative_simpson

import kidym
from kidym.cli import main
from kidym.simulation.energy import energy_balance
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES

ENGINES = ["numpy", "compiled"]
TIGHT = {"rtol": 1e-11, "atol": 1e-13}

# a damped spring-mass driven by F0 sin(W t): the work is that of the damper and the drive
OSCILLATOR = ("m = 1.5; k = 4; c = 0.3; F0 = 0.5; W = 1.7; Cart | Sx(x) | m, 0, 0, 0; "
              "Cs.x = k; Dd.x = c; Pf.x = F0*sin(W*t); INITIAL := x(0.2);")
# a rod on a support moved along x by a prescribed motion A sin(w t)
DRIVEN = ("m = 1; l = 1; J = 0.1; g = 9.81; A = 0.2; w = 3; "
          "Rod | Sx(A*sin(w*t)), Rz(phi) | Sx(l/2), m, 0, J, J; GRAVITY := 0, -g, 0; "
          "SHOW := XCRod't't; INITIAL := phi(0.5);")


@pytest.mark.parametrize("engine", ENGINES)
def test_damped_driven_oscillator_balances_with_the_work_of_damper_and_drive(engine):
    t = np.linspace(0, 10, 4001)
    r = kidym.simulate(kidym.parse(OSCILLATOR), t_eval=t, engine=engine, **TIGHT)
    v = r["x't"]
    power = -0.3 * v**2 + 0.5 * np.sin(1.7 * t) * v      # P = -c v² + F0 sin(W t) v
    np.testing.assert_allclose(r["energy't"], power, atol=1e-9)
    b = energy_balance(r)
    np.testing.assert_allclose(b.work, cumulative_simpson(power, x=t, initial=0), atol=1e-9)
    energy = r["energy"]
    assert np.max(np.abs(energy - energy[0])) > 0.1     # far from conserved …
    assert b.max_abs < 1e-8                              # … but balanced
    assert r.stats["energy_balance"]["max_abs"] == b.max_abs


@pytest.mark.parametrize("engine", ENGINES)
def test_prescribed_motion_balances_with_the_work_of_the_drive(engine):
    t = np.linspace(0, 3, 3001)
    r = kidym.simulate(kidym.parse(DRIVEN), t_eval=t, engine=engine, **TIGHT)
    # the support pushes the rod with R_x = m ẍ_C at the speed A w cos(w t)
    power = 1.0 * r["XCRod't't"] * 0.2 * 3 * np.cos(3 * t)
    np.testing.assert_allclose(r["energy't"], power, atol=1e-8)
    b = energy_balance(r)
    assert np.max(np.abs(b.work)) > 0.05
    assert b.max_abs < 1e-7 and b.relative < 1e-7


@pytest.mark.parametrize("engine", ENGINES)
def test_conservative_balance_is_the_energy_drift(engine):
    r = kidym.simulate(kidym.parse(DOUBLE_PENDULUM), t_end=5, initial={"phi1": 0.7},
                       engine=engine, n_points=2001, rtol=1e-8, atol=1e-10)
    b = energy_balance(r)
    assert np.max(np.abs(r["energy't"])) < 1e-9
    drift = r["energy"] - r["energy"][0]
    np.testing.assert_allclose(b.balance, drift, atol=1e-9)


def test_cli_reports_the_balance_when_the_energy_starts_at_zero(tmp_path, capsys):
    # E(0) = 0: at rest at the spring's rest length; the drive does all the work
    path = tmp_path / "osc.kdm"
    path.write_text(OSCILLATOR.replace("INITIAL := x(0.2);", "INITIAL := x(0);"),
                    encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-plots",
                 "--points", "2001", "--rtol", "1e-10", "--atol", "1e-12"]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if s.startswith("energy"))
    assert line.startswith("energy balance: max |E - E(0) - W| = ")
    relative = float(line.rsplit(": ", 1)[1].rstrip(")"))
    assert relative < 1e-7


EXAMPLE_FILES = sorted(p for p in EXAMPLES.rglob("*.kdm")
                       if kidym.load(p).calculation in (None, "DYNAMICS"))


def stiff_options(model: kidym.Model) -> dict:
    """Virtual potentials (seed 001) vibrate with a period ~ 1/√α: the step is limited
    to a fraction of it (else a step jumps into a wall and overflows it), and the
    output times resolve it (the work is integrated from the recorded power)."""
    if not model.virtual_constraints:
        return {"n_points": 2001}
    values = {se.Symbol(k): v for k, v in model.parameter_values.items()}
    alpha = max(float(v.alpha.xreplace(values)) for v in model.virtual_constraints)
    return {"n_points": 20001, "max_step": 0.05 / np.sqrt(alpha)}


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_example_balances(path):
    model = kidym.load(path)
    # two seconds, or the model's own span where it is shorter (Andrews' squeezer: 0.03 s)
    # a model driven from outside (ВХОДЫ) by a smooth force: its work is in the balance
    inputs = {u: (lambda t, s: np.sin(3 * t)) for u in model.inputs}
    r = kidym.simulate(model, t_end=min(model.t_start + 2, model.t_end), inputs=inputs,
                       **stiff_options(model))
    b = energy_balance(r)
    assert b.relative is not None and b.relative < 1e-7


@pytest.mark.parametrize("engine", ENGINES)
def test_isotropic_quaternion_ball_balances(engine):
    """The fixed-axes centre of the rolling ball: its velocity's rate is no acc − ω×v."""
    model = kidym.load(EXAMPLES / "ball" / "ball.kdm")
    r = kidym.simulate(model, t_end=2, n_points=2001, engine=engine)
    v = r["energy"]
    assert np.max(np.abs(v - v[0])) < 1e-7                # conserved …
    assert np.max(np.abs(r["energy't"])) < 1e-7           # … so its power is 0
    assert energy_balance(r).relative < 1e-9


def test_quadrature_error_estimate_matches_the_true_error_of_the_work():
    """On a coarse grid the Richardson estimate is within a factor 3 of the true error of
    ``W = ∫ sin²(ωt) dt = t/2 − sin(2ωt)/(4ω)`` (closed form), and it shrinks as h⁴."""
    from kidym.simulation.energy import quadrature_error, work_done

    w = 3.0
    for n, factor in ((41, 3.0), (81, 3.0)):
        t = np.linspace(0.0, 10.0, n)
        exact = t / 2 - np.sin(2 * w * t) / (4 * w)
        true = np.max(np.abs(work_done(t, np.sin(w * t) ** 2) - exact))
        estimate = quadrature_error(t, np.sin(w * t) ** 2)
        assert true / factor < estimate < true * factor, (n, true, estimate)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_coarse_output_grid_is_named_as_the_cause_of_a_large_balance(engine):
    """A fast damped oscillation seen at few outputs: the balance is the quadrature's, and
    the message says so; with enough outputs the note goes away."""
    fast = ("m = 1; k = 400; c = 2; Cart | Sx(x) | m, 0, 0, 0; Cs.x = k; Dd.x = c; "
            "INITIAL := x(0.1);")
    coarse = kidym.simulate(kidym.parse(fast), t_end=2.0, n_points=41, engine=engine, **TIGHT)
    b = energy_balance(coarse)
    assert b.relative > 1e-3 and b.quadrature > 0.25 * b.max_abs
    assert "quadrature of W over the output times" in b.describe()
    fine = kidym.simulate(kidym.parse(fast), t_end=2.0, n_points=4001, engine=engine, **TIGHT)
    assert "quadrature" not in energy_balance(fine).describe()


#: Runs that fail at t = 0: a point mass turned about its own centre (no inertia about
#: the axis: a singular mass matrix), and a force undefined at the start (sqrt of −1).
FAILS_AT_START = {
    "singular": "m = 1; Point | Rz(phi) | m, 0, 0, 0; INITIAL := phi(0), phi't(0);",
    "undefined": "m = 1; k = 1; Jm.x = m; Cs.x = k*sqrt(x - 1); INITIAL := x(0), x't(0);",
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(FAILS_AT_START))
def test_a_run_that_fails_at_the_start_has_no_balance_in_either_engine(
        engine, case, tmp_path, capsys):
    """No motion, no balance: both engines say so, rather than ``0`` (the compiled
    engine, before: a perfect run) or ``nan`` (NumPy's, which records the failing
    state's outputs as NaN)."""
    import json

    path = tmp_path / f"{case}.kdm"
    path.write_text(FAILS_AT_START[case], encoding="utf-8")
    out = tmp_path / "out"
    main(["run", str(path), "--engine", engine, "--out", str(out), "--no-plots"])
    lines = [s for s in capsys.readouterr().out.splitlines() if s.startswith("energy")]
    assert lines == ["energy balance: not available: the run stopped at t = 0, where it "
                     "started"], lines
    stats = json.loads((out / "results.json").read_text(encoding="utf-8"))["stats"]
    assert stats["energy_balance"] == {
        "max_abs": None, "scale": None, "relative": None,
        "unavailable": "the run stopped at t = 0, where it started"}


@pytest.mark.parametrize("case", sorted(FAILS_AT_START))
def test_the_failing_state_s_outputs_are_the_same_in_both_engines(case, tmp_path):
    """The row of the state where a run failed: each output is evaluated on its own, NaN
    only where its own formula fails — in NumPy as in the generated C (before, NumPy's
    row was all NaN: one failing formula raised and took the row with it). At x = 0,
    x't = 0 the energy is the kinetic energy, 0, and only the power ``k sqrt(x−1) x't``
    is undefined; the singular model's outputs are all defined."""
    import csv

    path = tmp_path / f"{case}.kdm"
    path.write_text(FAILS_AT_START[case], encoding="utf-8")
    rows = {}
    for engine in ENGINES:
        out = tmp_path / engine
        main(["run", str(path), "--engine", engine, "--out", str(out), "--no-plots"])
        with open(out / "results.csv", encoding="utf-8") as fh:
            table = list(csv.reader(fh))
        rows[engine] = dict(zip(table[0], map(float, table[-1])))
    numpy_row, compiled_row = rows["numpy"], rows["compiled"]
    assert numpy_row.keys() == compiled_row.keys()
    for name, v in numpy_row.items():
        c = compiled_row[name]
        assert (np.isnan(v) and np.isnan(c)) or abs(v - c) <= 1e-12 * max(1.0, abs(c)), (
            name, v, c)
    assert numpy_row["energy"] == 0.0            # T at rest; no potential of its own
    if case == "undefined":
        assert np.isnan(numpy_row["energy't"])   # the power holds sqrt(−1)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_run_that_fails_before_its_second_output_has_no_balance(engine, tmp_path,
                                                                   capsys):
    """The slider of docs/output.md pushed to its fold at t = π/3, with output times
    0 and 2 only: one recorded state, no balance, the failure time named."""
    path = tmp_path / "fold.kdm"
    path.write_text("m = 1; L = 1; F = 2; xs = L*sin(phi); Jm.xs = m; Pf.xs = F*cos(t);\n"
                    "INITIAL := phi(0), phi't(0);\nTIME := t(0, 2);\n", encoding="utf-8")
    main(["run", str(path), "--engine", engine, "--out", str(tmp_path / "o"), "--no-plots",
          "--points", "2"])
    line = next(s for s in capsys.readouterr().out.splitlines() if s.startswith("energy"))
    prefix = "energy balance: not available: the run stopped at t = "
    assert line.startswith(prefix) and line.endswith(
        ", before its second output time (no motion recorded to balance)"), line
    assert abs(float(line[len(prefix):].split(",")[0]) - np.pi / 3) < 1e-6
