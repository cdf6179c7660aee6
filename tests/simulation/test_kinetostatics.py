"""The kinetostatics calculation (``РАСЧЕТ := КИНЕТОСТАТИКА``): the motion prescribed by
constraints, the forces it needs from their multipliers.

The example ``examples/slider_crank`` drives the crank by the rheonomic constraint
``f3 = q1 - Om*t``; its multiplier ``λf3`` must be the torque that inverse dynamics by
Lagrange's equation gives with the crank angle prescribed (closed-form kinematics, one
coordinate, SymPy: :class:`tests.oracles.closed_loops.DrivenSliderCrank`), in both
engines, for a constant and for a varying crank speed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import kidym
from kidym.cli import main
from kidym.errors import ModelError, ParseError
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.oracles.closed_loops import DrivenSliderCrank, t

EXAMPLE = Path(__file__).parents[2] / "examples" / "slider_crank" / "slider_crank.kdm"
VALUES = dict(r=0.1, l=0.4, m1=1.0, m2=2.0, ms=3.0, g=9.81, c=20.0)
OM, A, W = 10.0, 0.3, 25.0

#: the crank angle: the example's q1 = Om t, and one with a speed that varies
DRIVES = {
    "constant": ("f3 = q1 - Om*t;", OM * t),
    "varying": ("A = 0.3; W = 25; f3 = q1 - Om*t - A*sin(W*t);",
                OM * t + A * sp.sin(W * t)),
}


def model_text(drive: str) -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert "f3 = q1 - Om*t;" in text
    return text.replace("f3 = q1 - Om*t;", DRIVES[drive][0])


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
@pytest.mark.parametrize("drive", sorted(DRIVES))
def test_the_drive_torque_is_the_one_of_inverse_dynamics(engine: str, drive: str) -> None:
    oracle = DrivenSliderCrank.build(VALUES, DRIVES[drive][1])
    r = kidym.simulate(kidym.parse(model_text(drive)), engine=engine, rtol=1e-11,
                       atol=1e-13, n_points=51)
    assert r.success and r.t[-1] == pytest.approx(2 * np.pi / OM)
    tau = oracle.torque(r.t)
    assert np.abs(r["λf3"] - tau).max() <= 1e-8 * np.abs(tau).max()
    # λf1: the horizontal force of the slider on the rod, −(ms s̈ + c ṡ)
    X = oracle.slider_force(r.t)
    assert np.abs(r["λf1"] - X).max() <= 1e-8 * np.abs(X).max()
    assert np.abs(r["s"] - oracle.s(r.t)).max() <= 1e-10
    # the start is solved from the constraints: q1 and every speed (0 degrees of freedom)
    assert {"q1't", "q2't"} <= set(r.stats["initial_adjusted"])
    assert r["q1't"][0] == pytest.approx(float(sp.diff(DRIVES[drive][1], t).subs(t, 0)))


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_projection_holds_a_prescribed_motion_at_loose_tolerances(engine: str) -> None:
    model = kidym.parse(model_text("varying"))
    oracle = DrivenSliderCrank.build(VALUES, DRIVES["varying"][1])
    kw = dict(engine=engine, method="BDF", rtol=1e-4, atol=1e-6, n_points=51)
    held = kidym.simulate(model, **kw)
    free = kidym.simulate(model, constraints="none", **kw)
    scale = np.abs(oracle.torque(held.t)).max()
    err_held = np.abs(held["λf3"] - oracle.torque(held.t)).max() / scale
    err_free = np.abs(free["λf3"] - oracle.torque(free.t)).max() / scale
    assert held.stats["constraint_drift"]["projections"] > 0
    assert err_held <= 1e-8 < 1e-5 <= err_free, (err_held, err_free)


@pytest.mark.parametrize(("change", "message"), [
    (("УРАВНЕНИЯ := f1, f2, f3;", "УРАВНЕНИЯ := f1, f2;"),
     r"3 speeds \(q1't, q2't, s't\) and 2 constraints \(f1, f2\): 1 degree of freedom is "
     r"free; add a driving constraint"),
    (("УРАВНЕНИЯ := f1, f2, f3;", "f4 = s - 0.45; УРАВНЕНИЯ := f1, f2, f3, f4;"),
     r"needs as many constraints as speeds, but the model has 3 speeds .* and 4 "
     r"constraints"),
])
def test_a_motion_not_prescribed_is_a_located_error(change, message) -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace(*change).replace(
        "ПОКАЗАТЬ := λf3, s, s't;", "ПОКАЗАТЬ := s;")
    with pytest.raises(ModelError, match=message) as exc:
        kidym.derive(kidym.parse(text))
    (diag,) = exc.value.errors
    assert diag.span.line == 8 and text.splitlines()[7].startswith("РАСЧЕТ := КИНЕТОСТАТИКА")


def test_kinetostatics_without_constraints_is_a_located_error() -> None:
    text = "РАСЧЕТ := KINETOSTATICS;\nm = 1;\nBlock | Sx(x) | m(m);\nF.x = 1;"
    with pytest.raises(ParseError, match="needs the motion prescribed by constraints, and "
                                         "the model has none") as exc:
        kidym.parse(text)
    assert exc.value.errors[0].span.line == 1


def test_run_reports_and_plots_the_forces(tmp_path, capsys) -> None:
    assert main(["check", str(EXAMPLE)]) == 0
    assert "degrees of freedom: 0 (3 speeds, 3 holonomic constraints)" in (
        capsys.readouterr().out)
    out = tmp_path / "sc"
    assert main(["run", str(EXAMPLE), "--out", str(out), "--points", "41",
                 "--engine", "compiled"]) == 0
    text = capsys.readouterr().out
    assert "kinetostatics: forces and torques the constraints exert (λ):" in text
    line = next(x for x in text.splitlines() if x.strip().startswith("λf3:"))
    header = (out / "results.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert {"λf1", "λf2", "λf3"} <= set(header)
    assert (out / "multipliers.png").exists()
    # the mean torque over a revolution at constant speed pays for the load: T and V
    # return to their values, so 2π·mean(τ) = ∫ c ṡ² dt (closed-form s(t))
    oracle = DrivenSliderCrank.build(VALUES, OM * t)
    tt = np.linspace(0, 2 * np.pi / OM, 20001)
    sd = np.gradient(oracle.s(tt), tt, edge_order=2)
    dissipated = np.trapezoid(VALUES["c"] * sd ** 2, tt)
    mean = float(line.rsplit("mean over the run", 1)[1])
    assert mean == pytest.approx(dissipated / (2 * np.pi), rel=1e-4)
