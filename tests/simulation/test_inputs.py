"""External inputs (``ВХОДЫ``): callbacks and tables in both engines, against the same
input written as a formula in the model (a second route that uses no input at all), and
the errors of bad bindings, tables and callbacks."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kidym
from kidym import InputTable, ModelError, SimulationError

ENGINES = ["numpy", "compiled"]
RTOL, ATOL = 1e-10, 1e-12

#: A mass on a spring driven by a force `u` along x and a torque-driven pendulum beside it:
#: a time-dependent model (the damper's coefficient changes with t) with the input twice.
MODEL = """
m = 2; k = 3; J = 0.5; l = 0.4; b = 0.1;
Cart | Sx(x) | m;
Ck.x = k;
Pu.x = U;
Rod | Rz(phi) | Sx(l/2), 1, 0, J, J;
Pd.phi = -b*(1 + t/4)*phi't + 0.5*U;
GRAVITY := 0, -9.81, 0;
INITIAL := x(0.1), phi(0.3);
TIME := t(0, 2);
"""


def _input_model(formula: str | None):
    """The model with ``U`` an input, or with ``U`` written as ``formula``."""
    if formula is None:
        return kidym.parse(MODEL + "INPUTS := U;\n", name="inputs")
    return kidym.parse(MODEL.replace("U", f"({formula})"), name="formula")


def _bound(result_a, result_b, names=("x", "phi")) -> None:
    """Two runs of the same motion at rtol = RTOL: within 1e3 · rtol of the scale (the
    global error of two runs of an adaptive method stays within a few hundred times the
    local tolerance over this short span; 1e3 is the stated margin)."""
    for n in names:
        a, b = np.asarray(result_a[n]), np.asarray(result_b[n])
        scale = max(1.0, float(np.max(np.abs(b))))
        assert np.max(np.abs(a - b)) <= 1e3 * RTOL * scale, n


@pytest.mark.parametrize("engine", ENGINES)
def test_callback_matches_the_formula(engine: str) -> None:
    ref = kidym.simulate(_input_model("sin(3*t) + 0.2*t"), engine=engine, rtol=RTOL, atol=ATOL)
    res = kidym.simulate(_input_model(None), engine=engine, rtol=RTOL, atol=ATOL,
                         inputs={"U": lambda t, s: math.sin(3 * t) + 0.2 * t})
    _bound(res, ref)


@pytest.mark.parametrize("engine", ENGINES)
def test_state_feedback_callback_matches_the_formula(engine: str) -> None:
    """A controller reading the state: U = -4 x - x't, written as a formula of the state."""
    ref = kidym.simulate(_input_model("-4*x - x't"), engine=engine, rtol=RTOL, atol=ATOL)
    res = kidym.simulate(_input_model(None), engine=engine, rtol=RTOL, atol=ATOL,
                         inputs={"U": lambda t, s: -4 * s["x"] - s["x't"]})
    _bound(res, ref)


#: breakpoints and values of a piecewise-linear input, and the same as a formula
_T = [0.0, 0.5, 1.25, 2.0]
_V = [0.0, 1.0, -0.5, 0.25]
_PIECEWISE = "t < 0.5 ? 2*t ! (t < 1.25 ? 1 - 2*(t - 0.5) ! -0.5 + (t - 1.25))"


def test_the_piecewise_formula_is_the_table() -> None:
    """The formula of the reference run is the table's interpolation (checked apart from
    the runs, at points on both sides of each breakpoint)."""
    table = InputTable(_T, _V)
    for t in np.linspace(0, 2, 97):
        want = 2 * t if t < 0.5 else (1 - 2 * (t - 0.5) if t < 1.25 else -0.5 + (t - 1.25))
        assert table(t) == pytest.approx(want, abs=1e-15)


@pytest.mark.parametrize("engine", ENGINES)
def test_linear_table_matches_the_piecewise_formula(engine: str) -> None:
    ref = kidym.simulate(_input_model(_PIECEWISE), engine=engine, rtol=RTOL, atol=ATOL)
    res = kidym.simulate(_input_model(None), engine=engine, rtol=RTOL, atol=ATOL,
                         inputs={"U": InputTable(_T, _V)})
    _bound(res, ref)


@pytest.mark.parametrize("interpolation", ["linear", "previous"])
def test_table_in_both_engines_is_the_callback(interpolation: str) -> None:
    """The table interpolated in C, and in NumPy, against a Python callback that evaluates
    the same table: three routes to one motion."""
    table = InputTable(_T, _V, interpolation)
    runs = [kidym.simulate(_input_model(None), engine=e, rtol=RTOL, atol=ATOL,
                           inputs={"U": src}) for e in ENGINES
            for src in (table, lambda t, s: table(t))]
    for other in runs[1:]:
        _bound(other, runs[0])


def test_table_values_between_breakpoints() -> None:
    lin = InputTable(_T, _V)
    hold = InputTable(_T, _V, "previous")
    assert lin(0.25) == pytest.approx(0.5)
    assert hold(0.25) == 0.0 and hold(0.5) == 1.0 and hold(1.9) == -0.5
    assert lin(-1) == 0.0 and lin(5) == 0.25          # the end values beyond the ends


@pytest.mark.parametrize(("t", "v", "match"), [
    ([0, 1, 1, 2], [0, 1, 2, 3], "increase strictly; row 3"),
    ([0, 2, 1], [0, 1, 2], "increase strictly"),
    ([0, 1, 2], [0, math.nan, 2], "not a finite number in row 2"),
    ([0, math.inf], [0, 1], "time that is not a finite number"),
    ([0, 1, 2], [0, 1], "same length"),
    ([[0, 1], [1, 2]], [[0, 1], [1, 2]], "same length"),
    ([0], [1], "at least two rows"),
    (["a", "b"], [1, 2], "needs numbers"),
])
def test_bad_tables(t, v, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        InputTable(t, v)


def test_unknown_interpolation() -> None:
    with pytest.raises(ValueError, match=r"interpolation .* must be one of"):
        InputTable([0, 1], [0, 1], "cubic")


def test_csv_table(tmp_path) -> None:
    f = tmp_path / "u.csv"
    f.write_text("t,u\n0,0\n1,2\n2,2\n", encoding="utf-8")
    table = InputTable.read_csv(f)
    assert table(0.5) == pytest.approx(1.0)
    f.write_text("t,u\n0,0\n1,x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"u\.csv:3: not a number"):
        InputTable.read_csv(f)


@pytest.mark.parametrize("engine", ENGINES)
def test_binding_errors(engine: str) -> None:
    model = _input_model(None)
    with pytest.raises(ValueError, match="input `U` of model `inputs` is not bound"):
        kidym.simulate(model, engine=engine)
    with pytest.raises(ValueError, match="`V` is not an input of model `inputs`"):
        kidym.simulate(model, engine=engine, inputs={"U": lambda t, s: 0.0, "V": 1})
    with pytest.raises(ValueError, match="covers t = 0 … 1, not the run's span 0 … 2"):
        kidym.simulate(model, engine=engine, inputs={"U": InputTable([0, 1], [0, 1])})
    with pytest.raises(ValueError, match="bound to a float"):
        kidym.simulate(model, engine=engine, inputs={"U": 1.5})


@pytest.mark.parametrize("engine", ENGINES)
def test_exception_in_a_callback_stops_the_run_naming_the_time(engine: str) -> None:
    def controller(t: float, state: dict) -> float:
        if t > 0.7:
            raise ZeroDivisionError("the controller divided by zero")
        return 0.0

    with pytest.raises(SimulationError, match="callback of input `U` raised "
                       "ZeroDivisionError: the controller divided by zero") as info:
        kidym.simulate(_input_model(None), engine=engine, inputs={"U": controller})
    assert 0.7 < info.value.time < 2.0
    assert isinstance(info.value.__cause__, ZeroDivisionError)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("value", "match"), [(math.nan, "returned nan"),
                                              ("up", "returned 'up', not one number"),
                                              ([1.0, 2.0], "not one number")])
def test_bad_callback_values(engine: str, value, match: str) -> None:
    with pytest.raises(SimulationError, match=match):
        kidym.simulate(_input_model(None), engine=engine,
                       inputs={"U": lambda t, s: value if t > 0.3 else 0.0})


@pytest.mark.parametrize(("text", "match"), [
    ("INPUTS := U; U = 2;", "listed in `INPUTS` but has a value"),
    ("INPUTS := U, W;", "input `W` of `INPUTS` is used nowhere"),
    ("ВХОДЫ := U, U;", "listed twice"),
])
def test_model_errors(text: str, match: str) -> None:
    with pytest.raises(ModelError, match=match):
        kidym.parse(MODEL + text)


def test_an_input_in_a_position_is_an_error() -> None:
    with pytest.raises(ModelError, match="enters a position"):
        kidym.parse("m = 1; Cart | Sx(x), Sy(U) | m; Pf.x = U; INPUTS := U;")


def test_an_undeclared_name_stays_an_error() -> None:
    with pytest.raises(ModelError, match="depends on `U`, which has no value"):
        kidym.parse(MODEL)


def test_analysis_of_a_model_with_inputs_is_an_error() -> None:
    eq = kidym.derive(_input_model(None))
    for analysis in (lambda: kidym.linearize(eq, state={"x": 0.0}),
                     lambda: kidym.equilibrium(eq)):
        with pytest.raises(ValueError, match=r"has external inputs .* write each as a "
                           r"parameter"):
            analysis()


def test_cli_input_table_is_the_api_table(tmp_path, capsys) -> None:
    """``kidym run --input U=FILE.csv`` writes the motion of the same table given to
    ``kidym.simulate``; a missing file and an unbound input are one-line errors."""
    import csv

    from kidym.cli import main

    model = tmp_path / "driven.kdm"
    model.write_text(MODEL + "INPUTS := U;\n", encoding="utf-8")
    table = tmp_path / "u.csv"
    table.write_text("t,U\n" + "".join(f"{t},{v}\n" for t, v in zip(_T, _V)), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(model), "--input", f"U={table}", "--out", str(out), "--no-plots",
                 "--rtol", str(RTOL), "--atol", str(ATOL), "-q"]) in (0, None)
    with open(out / "results.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    ref = kidym.simulate(_input_model(None), rtol=RTOL, atol=ATOL,
                         inputs={"U": InputTable(_T, _V)})
    got = {n: np.array([float(r[n]) for r in rows]) for n in ("x", "phi")}
    _bound(got, ref)
    with pytest.raises(SystemExit, match="--input U: cannot read the input table"):
        main(["run", str(model), "--input", f"U={tmp_path / 'nope.csv'}", "--out", str(out),
              "--force", "-q"])
    capsys.readouterr()
    assert main(["run", str(model), "--out", str(out), "--force", "-q"]) != 0
    err = capsys.readouterr().err
    assert "input `U` of model `driven` is not bound" in err and "Traceback" not in err


@pytest.mark.parametrize("engine", ENGINES)
def test_an_event_on_an_input(engine: str) -> None:
    """``U = sin 3t`` from a callback crosses 0.5 upwards at t = asin(0.5)/3 = π/18 only,
    within the span 0 … 2; the event is located there (to the event tolerance, 1e-9
    here with a margin of 10 over the integrator's rtol)."""
    model = kidym.parse(MODEL + "INPUTS := U;\nСОБЫТИЯ := Hit(U - 0.5, ВВЕРХ);\n")
    res = kidym.simulate(model, engine=engine, rtol=RTOL, atol=ATOL,
                         inputs={"U": lambda t, s: math.sin(3 * t)})
    times = np.asarray(res.stats["events"]["t"])
    assert times.shape == (1,)
    assert times[0] == pytest.approx(math.pi / 18, abs=1e-9)


def _exact_free_mass(table: InputTable, m: float, t: np.ndarray) -> np.ndarray:
    """x(t) of a free mass m from rest at 0 pushed by the table's force: per segment the
    force is a + b (τ - t_k) (b = 0 held), so x and v are integrated exactly segment by
    segment."""
    x = v = 0.0
    out = np.empty_like(t)
    knots = table.t
    for k in range(knots.size - 1):
        t0, t1 = knots[k], knots[k + 1]
        a = table.values[k]
        b = 0.0 if table.interpolation == "previous" else (
            (table.values[k + 1] - a) / (t1 - t0))
        sel = (t >= t0) & (t <= t1)
        s = t[sel] - t0
        out[sel] = x + v * s + a * s**2 / (2 * m) + b * s**3 / (6 * m)
        h = t1 - t0
        x, v = x + v * h + a * h**2 / (2 * m) + b * h**3 / (6 * m), v + (a * h + b * h**2 / 2) / m
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("interpolation", ["linear", "previous"])
def test_tables_meet_the_tolerance_across_their_breakpoints(engine: str,
                                                            interpolation: str) -> None:
    """A free mass pushed by a table with 40 kinks or jumps, against the closed form: the
    run restarts at every breakpoint, so the kinks and jumps cost no accuracy: within
    100 · rtol (between breakpoints the force is a polynomial of degree ≤ 1, which the
    methods integrate to roundoff; 100 is the stated margin). Without the restarts the
    steps straddle the kinks and jumps and miss this bound.)"""
    rng = np.random.default_rng(7)
    knots = np.concatenate([[0.0], np.sort(rng.uniform(0.05, 1.95, 39)), [2.0]])
    table = InputTable(knots, rng.uniform(-1, 1, knots.size), interpolation)
    model = kidym.parse("m = 2; Cart | Sx(x) | m; Pu.x = U; INPUTS := U; TIME := t(0, 2);")
    rtol = 1e-10
    res = kidym.simulate(model, engine=engine, rtol=rtol, atol=1e-13, inputs={"U": table})
    exact = _exact_free_mass(table, 2.0, np.asarray(res.t))
    scale = max(1.0, float(np.max(np.abs(exact))))
    assert np.max(np.abs(np.asarray(res["x"]) - exact)) <= 100 * rtol * scale


def test_exports_of_a_model_with_inputs_are_errors(tmp_path) -> None:
    eq = kidym.derive(_input_model(None))
    for export in (lambda: kidym.c_library(eq), lambda: kidym.fmu_archive(eq),
                   lambda: kidym.to_casadi(eq)):
        with pytest.raises(ValueError, match=r"has external inputs .* write each as a "
                           r"parameter \(`U = 0;`"):
            export()


def test_compiled_runs_in_threads_keep_their_own_inputs() -> None:
    """The binding is per thread: runs of one library at once, each with its own table
    and callback, give what each gives alone."""
    from concurrent.futures import ThreadPoolExecutor

    from kidym.simulation.compiled import CompiledSystem

    system = CompiledSystem.build(kidym.derive(_input_model(None)))
    sources = [InputTable(_T, [a * v for v in _V]) for a in (1.0, -2.0, 3.0)] + [
        (lambda t, s, a=a: a * math.sin(t)) for a in (1.0, -1.0)]

    def run(src):
        return np.asarray(kidym.simulate(system, rtol=RTOL, atol=ATOL,
                                         inputs={"U": src})["x"])

    alone = [run(s) for s in sources]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(run, sources * 2))
    for k, x in enumerate(together):
        assert np.array_equal(x, alone[k % len(sources)])


@pytest.mark.parametrize("engine", ENGINES)
def test_show_records_an_input(engine: str) -> None:
    """``SHOW := U;`` records the input's value at the output times: the table's own
    interpolation and the callback's value."""
    model = kidym.parse(MODEL + "INPUTS := U;\nSHOW := x, U;\n")
    table = InputTable(_T, _V)
    for src, want in ((table, table), (lambda t, s: math.cos(t), math.cos)):
        res = kidym.simulate(model, engine=engine, inputs={"U": src}, n_points=41)
        expected = np.array([want(t) for t in res.t])
        assert np.max(np.abs(np.asarray(res["U"]) - expected)) <= 1e-14


@pytest.mark.parametrize("engine", ENGINES)
def test_a_closed_loop_driven_by_a_callback_is_the_formula(engine: str) -> None:
    """The four-bar (holonomic constraints, the consistent start, projection) driven by a
    torque on its crank: the callback against the same torque as a formula of time."""
    from tests.fixtures import EXAMPLES

    text = (EXAMPLES / "four_bar" / "four_bar.kdm").read_text(encoding="utf-8")
    ref = kidym.simulate(kidym.parse(text + "\nPm.q1 = 2*sin(3*t);\n"), engine=engine,
                         t_end=1, rtol=RTOL, atol=ATOL)
    res = kidym.simulate(kidym.parse(text + "\nPm.q1 = T;\nINPUTS := T;\n"), engine=engine,
                         t_end=1, rtol=RTOL, atol=ATOL,
                         inputs={"T": lambda t, s: 2 * math.sin(3 * t)})
    _bound(res, ref, names=("q1", "q3"))


@pytest.mark.parametrize("engine", ENGINES)
def test_ctrl_c_in_a_callback_is_a_keyboard_interrupt(engine: str) -> None:
    def controller(t: float, state: dict) -> float:
        if t > 0.3:
            raise KeyboardInterrupt
        return 0.0

    with pytest.raises(KeyboardInterrupt):
        kidym.simulate(_input_model(None), engine=engine, inputs={"U": controller})


#: The model with two inputs: `U` on the cart, `V` a torque on the rod.
TWO = MODEL.replace("+ 0.5*U", "+ V")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("how", ["all", "tuple"])
def test_one_controller_for_two_inputs_is_the_formulas(engine: str, how: str) -> None:
    """A controller returning the vector (U, V) = (-4 x - ẋ, 0.5 sin 3t), bound as
    ``inputs=f`` or ``inputs={("U", "V"): f}``, against both written as formulas."""
    ref = kidym.simulate(kidym.parse(TWO.replace("U", "(-4*x - x't)")
                                     .replace("+ V", "+ 0.5*sin(3*t)")),
                         engine=engine, rtol=RTOL, atol=ATOL)

    def controller(t: float, s: dict) -> tuple[float, float]:
        return -4 * s["x"] - s["x't"], 0.5 * math.sin(3 * t)

    inputs = controller if how == "all" else {("U", "V"): controller}
    res = kidym.simulate(kidym.parse(TWO + "INPUTS := U, V;\n"), engine=engine, rtol=RTOL,
                         atol=ATOL, inputs=inputs)
    _bound(res, ref)


def test_a_vector_callback_is_called_once_per_evaluation() -> None:
    """Both engines fill the inputs through ``InputBinding.called`` (the NumPy engine's
    ``values``, the C loop's one callback): a vector callback beside a table is called
    once for its two inputs."""
    from kidym.simulation.inputs import bind_inputs

    model = kidym.parse(TWO + "INPUTS := V, U, W;\nPw.x = W;\n")
    calls = []
    binding = bind_inputs(model, ("x", "phi", "x't", "phi't"),
                          {("U", "W"): lambda t, s: calls.append(t) or (t, 2 * s["x"]),
                           "V": InputTable([0, 2], [1, 3])}, 0.0, 2.0)
    assert binding.values(0.5, [0.25, 0, 0, 0]) == [1.5, 0.5, 0.5]   # V, U, W
    assert calls == [0.5]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_vector_of_the_wrong_length_names_the_inputs_and_the_time(engine: str) -> None:
    model = kidym.parse(TWO + "INPUTS := U, V;\n")
    with pytest.raises(SimulationError, match=r"callback of the inputs `U`, `V` returned "
                       r"shape \(3,\), not 2 numbers") as info:
        kidym.simulate(model, engine=engine,
                       inputs=lambda t, s: [0.0, 0.0] if t < 0.4 else [0.0, 0.0, 1.0])
    assert 0.4 <= info.value.time < 2.0
    with pytest.raises(SimulationError, match=r"returned nan for `V`"):
        kidym.simulate(model, engine=engine,
                       inputs=lambda t, s: [0.0, 0.0] if t < 0.4 else [0.0, math.nan])


def test_vector_binding_errors() -> None:
    model = kidym.parse(TWO + "INPUTS := U, V;\n")
    with pytest.raises(ValueError, match="input `U` is bound twice"):
        kidym.simulate(model, inputs={("U", "V"): lambda t, s: (0, 0), "U": lambda t, s: 0})
    with pytest.raises(ValueError, match=r"`X` is not an input of model"):
        kidym.simulate(model, inputs={("U", "X"): lambda t, s: (0, 0)})
    with pytest.raises(ValueError, match=r"share one source, so it is a callable"):
        kidym.simulate(model, inputs={("U", "V"): InputTable([0, 2], [0, 1])})
    with pytest.raises(ValueError, match="has no inputs"):
        kidym.simulate(kidym.parse(MODEL.replace("U", "1")), inputs=lambda t, s: [])


def test_a_table_short_of_the_span_says_where_the_run_starts_and_ends(tmp_path, capsys
                                                                       ) -> None:
    """A table that does not cover the run names the run's start and end as times, not
    an option of one entry point: ``t_end=`` is Python's, ``--t-end`` the command line's
    (issue 29); the times it names are those of the table and of ``TIME``."""
    from kidym.cli import main

    model = _input_model(None)   # TIME := t(0, 2)
    with pytest.raises(ValueError, match=r"covers t = 0 … 1, not the run's span 0 … 2; the "
                       r"run ends at t = 2: extend the table to it or end the run by "
                       r"t = 1$"):
        kidym.simulate(model, inputs={"U": InputTable([0, 1], [0, 1])})
    with pytest.raises(ValueError, match=r"covers t = 0\.5 … 3, not the run's span 0 … 2; "
                       r"the run starts at t = 0: begin the table by then or start the run "
                       r"at t = 0\.5 or later$"):
        kidym.simulate(model, inputs={"U": InputTable([0.5, 3], [0, 1])})
    path = tmp_path / "driven.kdm"
    path.write_text(MODEL + "INPUTS := U;\n", encoding="utf-8")
    table = tmp_path / "short.csv"
    table.write_text("t,U\n0,0\n1,1\n", encoding="utf-8")
    for command in ("run", "sweep"):
        extra = ["--vary", "k=1:2:2"] if command == "sweep" else []
        assert main([command, str(path), *extra, "--input", f"U={table}", "--no-plots",
                     "--out", str(tmp_path / command)]) != 0
        err = capsys.readouterr().err
        assert "the run ends at t = 2: extend the table to it or end the run by t = 1" in err
        assert "t_end" not in err and "Traceback" not in err, err


def test_check_names_every_command_that_takes_an_input_table(tmp_path, capsys) -> None:
    """``kidym check`` of a model with inputs names each command with ``--input
    NAME=FILE.csv`` (found in the command line's parser, not listed here)."""
    import argparse

    from kidym.cli import build_parser, main

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    takers = sorted(name for name, p in sub.choices.items()
                    if any(a.dest == "input" and a.metavar == "NAME=FILE.csv"
                           for a in p._actions))
    assert "run" in takers and "sweep" in takers
    path = tmp_path / "driven.kdm"
    path.write_text(MODEL + "INPUTS := U;\n", encoding="utf-8")
    assert main(["check", str(path)]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if "inputs (1)" in s)
    for name in takers:
        assert f"kidym {name} --input NAME=FILE.csv" in line, line


def test_a_callback_that_works_builds_no_error_text() -> None:
    """``call_input`` runs at every evaluation: the hint of its errors is written only on
    an error (issue 29). The input's name counts how often it is formatted."""
    from kidym.simulation.inputs import call_input

    class Counted(str):
        formatted = 0

        def __format__(self, spec: str) -> str:
            Counted.formatted += 1
            return str.__format__(self, spec)

    name = Counted("U")
    for t in (0.0, 0.5, 1.0):
        assert call_input(name, lambda t, s: 2.0 * t, t, {"x": 0.0}) == 2.0 * t
    assert Counted.formatted == 0
    with pytest.raises(SimulationError, match="callback of input `U` returned nan") as info:
        call_input(name, lambda t, s: math.nan, 0.25, {"x": 0.0})
    assert "bound to input `U` is called with (t, state)" in info.value.hint
