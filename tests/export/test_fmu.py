"""The FMI 3.0 Model Exchange FMU (kidym/export/fmu.py), run by FMPy: validated by FMPy's
checker, its derivatives against the compiled engine, its trajectories (FMPy's CVode)
against kidym's own runs and closed forms."""

from __future__ import annotations

import ctypes
import math
import zipfile

import numpy as np
import pytest

import kidym
from kidym.export.fmu import fmu_archive, write_fmu
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.compiled_methods import BDF_TOL_FACTOR
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES, ROD_WITH_MOMENT

fmpy = pytest.importorskip("fmpy", reason="FMPy (kidym[export]) runs the FMUs")
from fmpy import extract, read_model_description, simulate_fmu  # noqa: E402
from fmpy.fmi3 import FMU3Model  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

_P = ctypes.POINTER(ctypes.c_double)

#: A damped pendulum: not chaotic, so two integrators' runs stay within their tolerances.
DAMPED_PENDULUM = """
m = 1; l = 1; g = 9.81; b = 0.4;
Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
D1.ωZRod = -b*ωZRod;
GRAVITY := 0, -g, 0;
INITIAL := phi(0.3), phi't(0);
TIME := t(0, 4);
"""

MODELS = {
    "double pendulum": DOUBLE_PENDULUM,
    "quaternion (free body)": (EXAMPLES / "free_body" / "free_body.kdm").read_text("utf-8"),
    "closed loop (four-bar)": (EXAMPLES / "four_bar" / "four_bar.kdm").read_text("utf-8"),
    "non-holonomic (rolling disc)":
        (EXAMPLES / "rolling_disc" / "rolling_disc.kdm").read_text("utf-8"),
    "events (bouncing ball)":
        (EXAMPLES / "bouncing_ball" / "bouncing_ball.kdm").read_text("utf-8"),
    "controls (two-link arm)":
        (EXAMPLES / "two_link_control" / "two_link_control.kdm").read_text("utf-8"),
}


def _eq(text: str) -> kidym.Equations:
    return kidym.derive(kidym.parse(text))


class Instance:
    """An FMU instantiated by FMPy for Model Exchange, in continuous-time mode."""

    def __init__(self, path, tmp_path) -> None:
        md = read_model_description(str(path))
        self.fmu = FMU3Model(guid=md.guid, unzipDirectory=extract(str(path), tmp_path),
                             modelIdentifier=md.modelExchange.modelIdentifier,
                             instanceName="test")
        self.fmu.instantiate()
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        self.fmu.enterContinuousTimeMode()
        self.md = md
        self.nx = len(md.derivatives)

    def derivatives(self, t: float, x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, float)
        d = np.zeros(self.nx)
        self.fmu.setTime(t)
        self.fmu.setContinuousStates(x.ctypes.data_as(_P), self.nx)
        self.fmu.getContinuousStateDerivatives(d.ctypes.data_as(_P), self.nx)
        return d

    def close(self) -> None:
        self.fmu.terminate()
        self.fmu.freeInstance()


@pytest.fixture(scope="module", params=list(MODELS), ids=list(MODELS))
def exported(request, tmp_path_factory):
    eq = _eq(MODELS[request.param])
    path = tmp_path_factory.mktemp("fmu") / "model.fmu"
    return eq, write_fmu(eq, path), path


def test_fmpy_validates_it(exported):
    path = exported[2]
    assert validate_fmu(str(path)) == []


def test_derivatives_equal_the_compiled_rhs(exported, tmp_path):
    eq, _fmu, path = exported
    engine = CompiledSystem.build(eq)
    p = engine.parameter_vector()
    inst = Instance(path, tmp_path)
    rng = np.random.default_rng(2)
    try:
        for k in range(100):
            x = rng.uniform(-1.0, 1.0, inst.nx) * (0.5 if eq.controls is not None else 1.0)
            ours, theirs = inst.derivatives(0.29 * k, x), engine.rhs(0.29 * k, x, p)
            assert np.all(np.abs(ours - theirs) <= 1e-13 * max(1.0, np.max(np.abs(theirs))))
    finally:
        inst.close()


def test_the_layout_is_the_model(exported):
    eq, fmu, path = exported
    md = read_model_description(str(path))
    states = [str(s) for s in (*eq.coordinates, *eq.speeds)]
    assert [d.variable.derivative.name for d in md.derivatives] == states
    assert [d.variable.name for d in md.derivatives] == [f"der({s})" for s in states]
    variables = {v.name: v for v in md.modelVariables}
    for name, value in eq.model.parameter_values.items():
        if name in variables:
            assert variables[name].causality == "parameter"
            assert float(variables[name].start) == value
    assert len(md.eventIndicators) == len(eq.events_named)
    # exported again: the same description and sources (and, with the same compiler, the
    # same archive: no dates, fixed modes, a binary without paths)
    again = fmu_archive(eq)
    assert again.model_description == fmu.model_description
    assert again.data == fmu.data
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            if name.startswith("sources/"):
                text = zf.read(name).decode("utf-8")
                assert text == _source(again, name), name


def _source(fmu, name: str) -> str:
    import io

    with zipfile.ZipFile(io.BytesIO(fmu.data)) as zf:
        return zf.read(name).decode("utf-8")


def test_directional_derivatives_are_the_analytic_jacobian(tmp_path):
    eq = _eq(DOUBLE_PENDULUM)
    path = tmp_path / "dp.fmu"
    write_fmu(eq, path)
    engine = CompiledSystem.build(eq, jacobian=True)
    inst = Instance(path, tmp_path / "x")
    md = inst.md
    knowns = [d.variable.derivative.valueReference for d in md.derivatives]
    unknowns = [d.variable.valueReference for d in md.derivatives]
    x = np.array([0.3, -0.7, 1.1, 0.4])
    inst.derivatives(0.0, x)
    J = engine.jacobian(0.0, x, engine.parameter_vector())
    for j in range(4):
        seed = np.eye(4)[j]
        col = inst.fmu.getDirectionalDerivative(unknowns, knowns, list(seed))
        assert np.allclose(col, J[:, j], rtol=1e-13, atol=1e-13)
    inst.close()


def test_an_input_drives_the_model(tmp_path):
    eq = _eq(ROD_WITH_MOMENT)
    path = tmp_path / "rod.fmu"
    write_fmu(eq, path, inputs=["M0"])
    assert validate_fmu(str(path)) == []
    md = read_model_description(str(path))
    m0 = next(v for v in md.modelVariables if v.name == "M0")
    assert m0.causality == "input" and m0.variability == "continuous"
    inst = Instance(path, tmp_path / "x")
    engine = CompiledSystem.build(eq)
    inst.fmu.setFloat64([m0.valueReference], [5.0])
    x = np.array([0.2, 0.1])
    p = engine.parameter_vector({"M0": 5.0})
    assert np.allclose(inst.derivatives(0.0, x), engine.rhs(0.0, x, p), rtol=1e-14)
    inst.close()
    with pytest.raises(ValueError, match="not a parameter"):
        fmu_archive(eq, inputs=["M1"])


@pytest.mark.parametrize("rtol", [1e-6, 1e-8, 1e-10])
def test_cvode_run_agrees_with_kidym(tmp_path, rtol):
    """FMPy's CVode (BDF, atol = rtol × the states' nominal 1) against kidym's own run with
    the same method and the tolerances CVODE is given (kidym asks CVODE for its rtol ×
    ``BDF_TOL_FACTOR``, so it is asked for rtol / ``BDF_TOL_FACTOR`` here): the FMI layer
    adds nothing to CVODE's error. (Against an exact trajectory, BDF's global error at the
    tolerance CVODE is handed is far above it in both: about 2000 × here at 1e-8,
    docs/export.md.)"""
    eq = _eq(DAMPED_PENDULUM)
    path = tmp_path / "damped.fmu"
    write_fmu(eq, path)
    res = simulate_fmu(str(path), fmi_type="ModelExchange", solver="CVode", relative_tolerance=rtol,
                       output_interval=0.01, output=["phi", "phi't"])
    t = res["time"]
    asked = rtol / BDF_TOL_FACTOR
    own = kidym.simulate(eq, t_eval=t, engine="compiled", method="BDF", rtol=asked, atol=asked)
    assert own.stats["cvode_tolerances"] == pytest.approx((rtol, rtol), rel=1e-12)
    exact = kidym.simulate(eq, t_eval=t, rtol=1e-13, atol=1e-15)
    for name in ("phi", "phi't"):
        scale = np.max(np.abs(exact[name]))
        assert np.max(np.abs(res[name] - own[name])) <= 10 * rtol * scale, name
        # and no less accurate than kidym's run of the same method (up to that margin)
        assert (np.max(np.abs(res[name] - exact[name]))
                <= np.max(np.abs(own[name] - exact[name])) + 10 * rtol * scale), name


def test_events_fire_at_the_closed_form_times(tmp_path):
    eq = _eq(MODELS["events (bouncing ball)"])
    path = tmp_path / "ball.fmu"
    write_fmu(eq, path)
    res = simulate_fmu(str(path), fmi_type="ModelExchange",
                       solver="CVode", relative_tolerance=1e-10,
                       output_interval=0.01, output=["z", "z't"])
    t = res["time"]
    at = t[1:][np.diff(t) == 0]                  # FMPy records the rows before and after
    # the state a reset leaves lies a few ulps below the floor: CVode sees the ball rise
    # through it 1e-14 s later, a crossing in the other direction that changes nothing
    events = at[np.concatenate([[True], np.diff(at) > 1e-9])]
    t1, e = math.sqrt(2 * 1 / 9.81), 0.8
    expected = [t1 * (1 + sum(2 * e ** j for j in range(1, k))) for k in range(1, 7)]
    expected = [x for x in expected if x < 3]
    assert len(events) == len(expected)
    assert np.max(np.abs(events - expected)) <= 1e-8
    ref = kidym.simulate(eq, rtol=1e-12, atol=1e-14)
    ours = ref.stats["events"]["t"]
    assert np.max(np.abs(events - ours)) <= 1e-8


def test_constraints_hold_under_cvode(tmp_path):
    """The four-bar under FMPy's CVode: the loop stays closed — the FMU projects the state
    back at step events wherever the residual exceeds 1e-9. Between steps the residual is
    the drift of one BDF step, of the order of rtol times the speeds; the bound allows
    100 times that."""
    from kidym.simulation.simulate import NumpySystem

    eq = _eq(MODELS["closed loop (four-bar)"])
    path = tmp_path / "four_bar.fmu"
    fmu = write_fmu(eq, path)
    names = list(fmu.library.state_names)
    rtol = 1e-8
    res = simulate_fmu(str(path), fmi_type="ModelExchange", solver="CVode", relative_tolerance=rtol,
                       output_interval=0.01, output=names)
    system = NumpySystem.build(eq)
    p = system.parameter_vector()
    speeds = max(np.max(np.abs(res[n])) for n in names[eq.n_q:])
    worst = 0.0
    for row in res:
        y = np.array([row[n] for n in names])
        _M, _F, block = system.constraint_block(row["time"], y, p)
        worst = max(worst, np.max(np.abs(block.phi)), np.max(np.abs(block.c)))
    assert worst <= 100 * rtol * (1 + speeds)


def test_a_terminal_event_ends_the_run_and_a_record_event_changes_nothing(tmp_path):
    """A pendulum released from the horizontal: `down` (phi = -pi/2 crossed falling,
    recorded only) changes nothing; `stop` (phi't = 0 rising, at the far turning point)
    ends the run where kidym's own run stops."""
    text = """m = 1; l = 1; g = 9.81;
    Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
    GRAVITY := 0, -g, 0;  INITIAL := phi(0), phi't(0);  TIME := t(0, 5);
    EVENTS := down(phi + pi/2, DOWN), stop(phi't, UP, STOP);"""
    eq = _eq(text)
    path = tmp_path / "swing.fmu"
    write_fmu(eq, path)
    assert validate_fmu(str(path)) == []
    res = simulate_fmu(str(path), fmi_type="ModelExchange",
                       solver="CVode", relative_tolerance=1e-10,
                       output_interval=0.01, output=["phi", "phi't"])
    ref = kidym.simulate(eq, rtol=1e-12, atol=1e-14)
    assert ref.status == 1
    t_stop = ref.stats["events"]["t"][-1]
    assert ref.stats["events"]["name"][-1] == "stop"
    assert abs(res["time"][-1] - t_stop) <= 1e-8
    # `down` was met (a row recorded before and after it) and left the motion as it was
    t = res["time"]
    at = np.flatnonzero(np.diff(t) == 0)
    assert len(at) >= 1 and abs(res["phi"][at[0]] + math.pi / 2) <= 1e-8
    assert all(res["phi't"][k] == res["phi't"][k + 1] for k in at)
    # the far turning point of a swing from the horizontal is the other horizontal
    assert abs(res["phi"][-1] + math.pi) <= 1e-6


@pytest.mark.parametrize("units, expected", [
    ("РАЗМЕРНОСТИ := m(кг), l(м), t(с);", {"m": "kg", "l": "m", "g": "m / s ** 2"}),
    ("", {"m": "кг", "l": "см", "g": "м/с^2"}),
])
def test_parameters_carry_their_units(tmp_path, units, expected):
    """With РАЗМЕРНОСТИ the values are converted to the base units and carry them; without,
    the units are the text written beside the values (which are not converted)."""
    text = units + """
    m = 1, кг; l = 50, см; g = 9.81, м/с^2; b = 0.2;
    Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
    D1.ωZRod = -b*ωZRod;  GRAVITY := 0, -g, 0;"""
    eq = _eq(text)
    path = tmp_path / "units.fmu"
    write_fmu(eq, path)
    assert validate_fmu(str(path)) == []
    md = read_model_description(str(path))
    variables = {v.name: v for v in md.modelVariables}
    assert {n: variables[n].unit for n in expected} == expected
    assert variables["b"].unit is None
    assert {u.name for u in md.unitDefinitions} == set(expected.values())
    values = eq.model.parameter_values
    assert float(variables["l"].start) == values["l"]


def test_the_sources_build_the_fmu_again(tmp_path):
    """`sources/` as buildDescription.xml lists them, compiled here in place of the binary:
    the FMU built from them gives the same derivatives."""
    import subprocess
    import xml.etree.ElementTree as ET

    from tests.export.clib_build import STRICT, compiler

    eq = _eq(DOUBLE_PENDULUM)
    path = tmp_path / "dp.fmu"
    fmu = write_fmu(eq, path)
    unzipped = tmp_path / "unzipped"
    with zipfile.ZipFile(path) as zf:
        zf.extractall(unzipped)
    build = ET.parse(unzipped / "sources" / "buildDescription.xml").getroot()
    config = build.find("BuildConfiguration")
    files = [f.get("name") for f in config.iter("SourceFile")]
    binary = unzipped / "binaries" / fmu.platform / f"{fmu.model_identifier}.so"
    binary.unlink()
    cmd = [compiler(), *STRICT, "-O2", "-fPIC", "-shared", "-I.", *files, "-o", str(binary),
           "-lm"]
    r = subprocess.run(cmd, cwd=unzipped / "sources", capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0 and not r.stderr, r.stderr
    md = read_model_description(str(path))
    inst = FMU3Model(guid=md.guid, unzipDirectory=str(unzipped),
                     modelIdentifier=config.get("modelIdentifier"), instanceName="rebuilt")
    inst.instantiate()
    inst.enterInitializationMode()
    inst.exitInitializationMode()
    inst.enterContinuousTimeMode()
    x = np.array([0.4, -0.2, 0.3, 1.0])
    d = np.zeros(4)
    inst.setContinuousStates(x.ctypes.data_as(_P), 4)
    inst.getContinuousStateDerivatives(d.ctypes.data_as(_P), 4)
    engine = CompiledSystem.build(eq)
    ref = engine.rhs(0.0, x, engine.parameter_vector())
    assert np.all(np.abs(d - ref) <= 1e-13 * np.max(np.abs(ref)))
    inst.terminate()
    inst.freeInstance()


# ------------------------------------------------------------------ Co-Simulation
@pytest.mark.parametrize("rtol", [1e-6, 1e-8, 1e-10])
def test_cosimulation_run_is_within_its_tolerance(tmp_path, rtol):
    """fmi3DoStep's own integrator (Dormand–Prince 5(4), error per unit step within the
    tolerance FMPy passes to fmi3EnterInitializationMode) against kidym's ERK8 at 1e-13:
    within 10 rtol of the motion's scale over the 4 s."""
    eq = _eq(DAMPED_PENDULUM)
    path = tmp_path / "damped.fmu"
    write_fmu(eq, path)
    res = simulate_fmu(str(path), fmi_type="CoSimulation", relative_tolerance=rtol,
                       output_interval=0.1, output=["phi", "phi't"])
    exact = kidym.simulate(eq, t_eval=res["time"], rtol=1e-13, atol=1e-15)
    assert res["time"][-1] == pytest.approx(4.0)
    for name in ("phi", "phi't"):
        scale = np.max(np.abs(exact[name]))
        assert np.max(np.abs(res[name] - exact[name])) <= 10 * rtol * scale, name


def test_cosimulation_events(tmp_path):
    """The bouncing ball in Co-Simulation: the impacts, located inside fmi3DoStep by
    re-stepping, reverse the speed at the closed-form times (the flights are parabolas,
    which the fifth-order steps follow exactly)."""
    eq = _eq(MODELS["events (bouncing ball)"])
    path = tmp_path / "ball.fmu"
    write_fmu(eq, path)
    # outputs at the closed-form impact times ± 1e-8: the speed has turned between them
    t1, e = math.sqrt(2 * 1 / 9.81), 0.8
    impacts = [t1 * (1 + sum(2 * e ** j for j in range(1, k))) for k in range(1, 7)]
    for tk in impacts:
        before = simulate_fmu(str(path), fmi_type="CoSimulation", relative_tolerance=1e-10,
                              stop_time=tk - 1e-8, output_interval=tk / 4,
                              output=["z't"])["z't"][-1]
        after = simulate_fmu(str(path), fmi_type="CoSimulation", relative_tolerance=1e-10,
                             stop_time=tk + 1e-8, output_interval=tk / 4,
                             output=["z't"])["z't"][-1]
        assert before < 0 < after, tk
        assert after == pytest.approx(-e * before, rel=1e-6)


def test_cosimulation_terminal_event_and_constraints(tmp_path):
    text = """m = 1; l = 1; g = 9.81;
    Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
    GRAVITY := 0, -g, 0;  INITIAL := phi(0), phi't(0);  TIME := t(0, 5);
    EVENTS := stop(phi't, UP, STOP);"""
    eq = _eq(text)
    path = tmp_path / "swing.fmu"
    write_fmu(eq, path)
    res = simulate_fmu(str(path), fmi_type="CoSimulation", relative_tolerance=1e-10,
                       output_interval=0.1, output=["phi"], early_return_allowed=True)
    ref = kidym.simulate(eq, rtol=1e-12, atol=1e-14)
    # (where early returns are allowed, the step ends at the event: FMPy records it)
    assert abs(res["time"][-1] - ref.stats["events"]["t"][-1]) <= 1e-8
    assert abs(res["phi"][-1] + math.pi) <= 1e-6
    # the four-bar: its loop held closed by the projection after every step
    from kidym.simulation.simulate import NumpySystem

    eq = _eq(MODELS["closed loop (four-bar)"])
    path = tmp_path / "four_bar.fmu"
    fmu = write_fmu(eq, path)
    names = list(fmu.library.state_names)
    res = simulate_fmu(str(path), fmi_type="CoSimulation", relative_tolerance=1e-8,
                       output_interval=0.05, output=names)
    system = NumpySystem.build(eq)
    p = system.parameter_vector()
    for row in res:
        _M, _F, block = system.constraint_block(row["time"], np.array([row[n] for n in names]),
                                                p)
        # projected wherever the residual exceeded kidym's tolerance, 1e-9
        assert max(np.max(np.abs(block.phi)), np.max(np.abs(block.c))) <= 1e-9


EXAMPLE_MODELS = sorted(EXAMPLES.glob("*/*.kdm"))


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLE_MODELS, ids=[p.stem for p in EXAMPLE_MODELS])
def test_every_example_model_with_motion_exports_valid(path, tmp_path):
    """Every example whose equations of motion kidym integrates exports an FMU that FMPy
    validates. (The kinematics and inverse-kinematics calculations have no motion to
    integrate: `kidym run` evaluates formulas or solves positions for them.)"""
    model = kidym.load(path)
    if model.calculation in ("KINEMATICS", "INVERSE_KINEMATICS"):
        pytest.skip(f"{model.calculation}: no equations of motion are integrated")
    if model.inputs:   # the refusal is tested by tests/simulation/test_inputs.py
        pytest.skip("external inputs (ВХОДЫ): an FMU takes its inputs as parameters")
    out = tmp_path / f"{path.stem}.fmu"
    write_fmu(kidym.derive(model), out)
    assert validate_fmu(str(out)) == []
