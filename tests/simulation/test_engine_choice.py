"""``engine="auto"``, the default engine (issue 28): what it chooses and why.

The rule is :mod:`kidym.simulation.choice`'s. Checked here against second routes: a run
that the NumPy probe finishes is the NumPy engine's run to the last bit; a long run
goes to the compiled engine whatever ran before; NumPy-only methods, a missing
compiler and the minimal form go to NumPy and say so; ``kidym run`` prints the choice
once.
"""

from __future__ import annotations

import numpy as np
import pytest

import kidym
from kidym.cli import main
from kidym.simulation.choice import NO_COMPILER_HINT
from tests.codegen.shared import kidym_cache  # noqa: F401


def oscillator(k: float, x: str = "x") -> kidym.Model:
    """``x'' = -k x``; the coordinate's name ``x`` makes a test's library its own (a
    fresh cache entry: the parameters are not compiled in)."""
    return kidym.parse(f"m = 1; k = {k!r}; Slider | Sx({x}) | m, 0, 0, 0; Pf.{x} = -k*{x};"
                       f"INITIAL := t(0), {x}(1);")


def test_a_run_the_probe_finishes_is_the_numpy_run():
    model = oscillator(1.25, "xshort")
    auto = kidym.simulate(model, t_end=0.5, n_points=11)
    assert auto.stats["engine"] == "numpy"
    assert auto.stats["engine_choice"].startswith("auto → numpy: the whole NumPy run took")
    numpy = kidym.simulate(model, t_end=0.5, n_points=11, engine="numpy")
    np.testing.assert_array_equal(auto.y, numpy.y)
    assert auto.nfev == numpy.nfev
    np.testing.assert_allclose(auto["xshort"], np.cos(np.sqrt(1.25) * auto.t), atol=1e-8)


def test_a_long_run_compiles_whatever_ran_before():
    # 20 000 s of x'' = -1.5 x at rtol 1e-9: about 17 s in NumPy (measured) against well
    # under a second to compile a 1-DOF model; a NumPy run of the same equations first
    # changes nothing. The end is within 7e-9 of cos √1.5 t (measured); the bound 1e-6
    # leaves a margin of over 100 for another machine's rounding over ~4 900 periods.
    eq = kidym.derive(oscillator(1.5, "xlong"))
    kidym.simulate(eq, t_end=1.0, engine="numpy")
    r = kidym.simulate(eq, t_end=2e4, n_points=3)
    assert r.stats["engine"] == "compiled", r.stats["engine_choice"]
    assert r.stats["engine_choice"].startswith("auto → compiled: NumPy run about ")
    assert abs(r["xlong"][-1] - np.cos(np.sqrt(1.5) * 2e4)) < 1e-6
    again = kidym.simulate(eq, t_end=1.0, n_points=3)   # now cached: compiled
    assert again.stats["engine_choice"] == "auto → compiled: the compiled library is in " \
                                           "the cache"


def test_numpy_only_methods_and_options_run_in_numpy_and_say_so():
    model = oscillator(1.75, "xradau")
    r = kidym.simulate(model, t_end=1.0, method="Radau")
    assert r.stats["engine"] == "numpy"
    assert r.stats["engine_choice"] == "auto → numpy: method Radau runs in the NumPy " \
                                       "engine only"


def test_no_compiler_runs_numpy_with_a_hint(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/kidym-test-cc")
    r = kidym.simulate(oscillator(2.25, "xnocc"), t_end=1.0)
    assert r.stats["engine"] == "numpy"
    assert r.stats["engine_choice"] == f"auto → numpy: {NO_COMPILER_HINT}"


def test_kidym_run_prints_the_choice_once(tmp_path, capsys):
    path = tmp_path / "osc.kdm"
    path.write_text("m = 1; k = 2.75; Slider | Sx(xcli) | m, 0, 0, 0; Pf.xcli = -k*xcli;\n"
                    "INITIAL := t(0), xcli(1);\nTIME := t(0, 1);\n", encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("engine: ")]
    assert len(lines) == 1 and lines[0].startswith("engine: auto → numpy: ")


def test_a_numpy_system_runs_in_numpy():
    from kidym.simulation.simulate import NumpySystem

    ns = NumpySystem.build(kidym.derive(oscillator(1.0, "xsys")))
    r = kidym.simulate(ns, t_end=2e3, n_points=3)   # long: a model would compile
    assert r.stats["engine"] == "numpy" and "engine_choice" not in r.stats


def _counting(monkeypatch, module, name: str) -> list:
    """Replace ``module.name`` by a wrapper that records each call; the calls' list."""
    calls: list = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.slow
def test_a_cold_compiled_run_generates_its_c_once(monkeypatch):
    # auto generates the C to estimate the build; the build compiles that C (issue 28).
    # Both modules that call generate_c are counted. The ends are checked against the
    # closed form (bound as in test_a_long_run_compiles_whatever_ran_before); the BDF
    # run's library must carry the analytic Jacobian that the build asks for.
    from kidym.simulation import choice, compiled

    estimates = _counting(monkeypatch, choice, "generate_c")
    builds = _counting(monkeypatch, compiled, "generate_c")
    # BDF over 2 000 s (NumPy's probe: minutes) ends within 3.3e-6 of the closed form
    # (measured): 1e-4 leaves a margin of 30 for another machine's rounding.
    for name, method, t_end, bound in (("xonce", "ERK8", 2e4, 1e-6),
                                       ("xoncebdf", "BDF", 2e3, 1e-4)):
        del estimates[:], builds[:]
        eq = kidym.derive(oscillator(1.5, name))
        r = kidym.simulate(eq, t_end=t_end, n_points=3, method=method)
        assert r.stats["engine"] == "compiled", r.stats["engine_choice"]
        assert "generating and compiling" in r.stats["engine_choice"]
        assert (len(estimates), len(builds)) == (1, 0)
        assert abs(r[name][-1] - np.cos(np.sqrt(1.5) * t_end)) < bound
        if method == "BDF":
            assert r.stats["jacobian"] == "analytic"
        cached = kidym.simulate(eq, t_end=1.0, n_points=3, method=method)
        assert cached.stats["engine_choice"] == ("auto → compiled: the compiled library is "
                                                 "in the cache")
        assert (len(estimates), len(builds)) == (1, 0)


def test_numpy_chosen_after_a_probe_runs_on_the_probed_system(monkeypatch):
    # a probe that stops after its first slice (PROBE_S = 0) and a build that never
    # pays (its floor made huge): NumPy is chosen, and the run is on the NumPy system the
    # probe built (built once), the same run to the last bit as engine="numpy"
    from kidym.simulation import choice
    from kidym.simulation.simulate import NumpySystem

    monkeypatch.setattr(choice, "PROBE_S", 0.0)
    monkeypatch.setattr(choice, "compile_floor", lambda python_bytes: 1e9)
    eq = kidym.derive(oscillator(1.25, "xprobed"))
    builds = _counting(monkeypatch, NumpySystem, "build")
    auto = kidym.simulate(eq, t_end=5.0, n_points=11)
    assert auto.stats["engine"] == "numpy"
    assert "<= the least build of this model" in auto.stats["engine_choice"]
    assert len(builds) == 1
    numpy = kidym.simulate(eq, t_end=5.0, n_points=11, engine="numpy")
    np.testing.assert_array_equal(auto.y, numpy.y)
    assert auto.nfev == numpy.nfev


def test_a_probe_whose_slice_says_numpy_runs_the_whole_span_next(monkeypatch):
    # a slice extrapolated below the least build sends the probe to the whole run (the
    # slices between would be run for nothing): with the build's floor made huge and
    # every slice trusted, the NumPy runs are the untimed first slice, the timed first
    # slice and the whole span — whose result is the run's, bit for bit engine="numpy"
    from kidym.simulation import choice
    from kidym.simulation.simulate import NumpyEngine

    monkeypatch.setattr(choice, "PROBE_S", 1e9)
    monkeypatch.setattr(choice, "PROBE_TRUST", 0.0)
    monkeypatch.setattr(choice, "compile_floor", lambda python_bytes: 1e9)
    eq = kidym.derive(oscillator(1.25, "xjump"))
    runs = _counting(monkeypatch, NumpyEngine, "run")
    auto = kidym.simulate(eq, t_end=5.0, n_points=11)
    assert auto.stats["engine_choice"].startswith("auto → numpy: the whole NumPy run took")
    first = 5.0 * choice.PROBE_FIRST
    assert [call[2].t1 for call in runs] == [first, first, 5.0]
    numpy = kidym.simulate(eq, t_end=5.0, n_points=11, engine="numpy")
    np.testing.assert_array_equal(auto.y, numpy.y)
