"""``kidym.sweep`` and ``kidym sweep``: every run of a study equals the same run done
alone (kidym.simulate), closed forms hold across the grid, the thread pool, the plain
loop and a local Dask cluster of processes give identical arrays, failures are kept."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import kidym
from kidym.study import worker
from kidym.study.design import grid
from tests.codegen.shared import kidym_cache  # noqa: F401

xr = pytest.importorskip("xarray", reason="kidym[sweep] (xarray) not installed")

# a body falling from z0 with speed v0: z(t) = z0 + v0 t - g t^2 / 2
FALL = ("m = 2; g = 9.81; v0 = 1;\nBall | Sz(z) | m, 0, 0, 0;\nGRAVITY := 0, 0, -g;\n"
        "INITIAL := z(10), z't(v0);\n")
# a pendulum (rod about its end); phi' ' = -(3 g / 2 l) sin phi
PENDULUM = ("m = 1; l = 1; g = 9.81;\nRod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;\n"
            "GRAVITY := g, 0, 0;\nINITIAL := phi(0.3);\n")
# time-dependent: a spring-mass driven by F0 sin(W t)
DRIVEN = ("m = 1; k = 4; F0 = 0.3; W = 3;\nCart | Sx(x) | m, 0, 0, 0;\n"
          "Pf.x = -k*x + F0*sin(W*t);\nINITIAL := x(0.5);\n")


def test_grid_of_the_model_matches_the_closed_form() -> None:
    model = kidym.parse(FALL + "VARY := t(0, 1.5), g(1, 10, 4), z(0, 5, 3);", name="fall")
    r = kidym.sweep(model, n_points=16)
    assert r.status.tolist() == [0] * 12 and r.study.shape == (4, 3)
    for k, (g, z0) in enumerate(r.study.table):
        exact = z0 + 1.0 * r.t - g * r.t ** 2 / 2
        np.testing.assert_allclose(r["z"][k], exact, rtol=0, atol=1e-9)
    ds = r.to_dataset()
    assert ds["value"].dims == ("g", "z", "time", "quantity")
    np.testing.assert_allclose(ds["value"].sel(g=7.0, z=2.5, quantity="z").values,
                               2.5 + r.t - 7.0 * r.t ** 2 / 2, atol=1e-9)


@pytest.mark.parametrize("text", [PENDULUM, DRIVEN], ids=["pendulum", "driven"])
def test_every_run_equals_the_same_run_alone(text: str) -> None:
    model = kidym.parse(text, name="study")
    first = model.coordinates[0]
    names = {"pendulum": ("l", "phi't"), "driven": ("k", "W")}[
        "pendulum" if "Rod" in text else "driven"]
    study = grid({names[0]: [0.5, 1.0, 2.0], names[1]: [0.0, 0.7]})
    r = kidym.sweep(model, vary=study, t_end=2.0, n_points=41, workers=2)
    params = model.parameter_values
    for k, row in enumerate(study.table):
        given = dict(zip(study.names, row))
        alone = kidym.simulate(model, engine="compiled", t_end=2.0, n_points=41,
                               parameters={n: v for n, v in given.items() if n in params},
                               initial={n: v for n, v in given.items() if n not in params})
        for q in (first, f"{first}'t"):
            np.testing.assert_array_equal(r[q][k], alone[q])


def test_small_oscillation_period_follows_the_length() -> None:
    model = kidym.parse(PENDULUM, name="pendulum")
    lengths = [0.5, 1.0, 2.0]
    r = kidym.sweep(model, vary={"l": lengths, "phi": [1e-4]}, t_end=6.0, n_points=3001,
                    rtol=1e-11, atol=1e-15)
    for k, length in enumerate(lengths):
        phi = r["phi"][k]
        ups = [r.t[i - 1] - phi[i - 1] * (r.t[i] - r.t[i - 1]) / (phi[i] - phi[i - 1])
               for i in range(1, len(phi)) if phi[i - 1] < 0 <= phi[i]]
        # physical pendulum: T = 2 pi sqrt(2 l / (3 g))
        assert np.diff(ups).mean() == pytest.approx(
            2 * np.pi * np.sqrt(2 * length / (3 * 9.81)), rel=1e-6)


def test_random_sample_is_the_documented_draw() -> None:
    model = kidym.parse(FALL, name="fall")
    r = kidym.sweep(model, vary={"g": (1.0, 10.0), "v0": (-1.0, 1.0)}, samples=7, seed=3,
                    t_end=1.0, n_points=11)
    u = np.random.default_rng(3).random((7, 2))
    np.testing.assert_array_equal(r.study.table[:, 0], 1.0 + 9.0 * u[:, 0])
    np.testing.assert_array_equal(r.study.table[:, 1], -1.0 + 2.0 * u[:, 1])
    g, v0 = r.study.table.T
    np.testing.assert_allclose(r["z"][:, -1], 10 + v0 - g / 2, atol=1e-9)
    ds = r.to_dataset()
    assert ds["value"].dims == ("run", "time", "quantity")
    np.testing.assert_array_equal(ds["g"].values, g)
    model2 = kidym.parse(FALL + "VARY := RANDOM(7, 3), g(1, 10), v0(-1, 1);", name="fall")
    np.testing.assert_array_equal(kidym.sweep(model2, t_end=1.0, n_points=11).values,
                                  r.values)


def test_failed_runs_are_kept_with_nan_and_a_reason() -> None:
    # below z = 0 the force sqrt(z) is not defined: the low starts fail, the high run not;
    # a negative mass cannot start
    model = kidym.parse("m = 1; g = 9.81;\nBall | Sz(z) | m, 0, 0, 0;\nGRAVITY := 0, 0, -g;\n"
                        "Pd.z = 0.001*sqrt(z);\nINITIAL := z(1);\n", name="drop")
    r = kidym.sweep(model, vary={"z": [0.5, 100.0], "m": [1.0, -1.0]}, t_end=1.0,
                    n_points=21)
    assert r.status.tolist() == [-1, -1, 0, -1]
    assert r.failed == [0, 1, 3]
    assert "t = " in r.reasons[0] and np.isnan(r["z"][0, -1]) and r["z"][0, 0] == 0.5
    assert "mass" in r.reasons[1] and np.isnan(r["z"][1]).all()
    assert r.reasons[2] == "" and np.isfinite(r["z"][2]).all()


def test_netcdf_file_opens_with_xarray(tmp_path) -> None:
    model = kidym.parse(FALL, name="fall")
    r = kidym.sweep(model, vary={"g": [1.0, 2.0], "m": [-1.0, 1.0, 3.0]}, t_end=1.0,
                    n_points=5)
    path = r.write(tmp_path / "s.nc")
    assert [p.name for p in tmp_path.iterdir()] == ["s.nc"]   # no temporary left
    with xr.open_dataset(path) as ds:
        assert dict(ds.sizes) == {"g": 2, "m": 3, "time": 5, "quantity": len(r.quantities)}
        assert ds["g"].values.tolist() == [1.0, 2.0] and ds["m"].values.tolist() == [-1, 1, 3]
        assert list(ds["quantity"].values) == list(r.quantities)
        np.testing.assert_array_equal(ds["value"].values.reshape(r.values.shape), r.values)
        assert ds["status"].values.tolist() == [[-1, 0, 0], [-1, 0, 0]]
        assert "mass" in str(ds["reason"].sel(g=2.0, m=-1.0).values)
        assert ds.attrs["model"] == "fall" and ds.attrs["study"] == "grid"


def test_worker_takes_the_library_from_cache_shipped_bytes_or_builds(
        tmp_path, monkeypatch) -> None:
    model = kidym.parse(DRIVEN, name="driven")
    from kidym.simulation.compiled import CompiledSystem

    system = CompiledSystem.build(kidym.derive(model))
    pkg = worker.package(system)
    monkeypatch.setattr(worker, "_SYSTEMS", {})
    assert worker.system_of(pkg)[1] == "cache"
    monkeypatch.setattr(worker, "_SYSTEMS", {})
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path / "empty"))
    shipped, route = worker.system_of(pkg)
    assert route == "shipped" and not (tmp_path / "empty").exists()
    y0, p = np.array([0.5, 0.0]), system.parameter_vector()
    np.testing.assert_array_equal(shipped.rhs(0.3, y0, p), system.rhs(0.3, y0, p))
    monkeypatch.setattr(worker, "_SYSTEMS", {})
    import dataclasses

    other = dataclasses.replace(pkg, cpu="another processor", sha256="x" * 64)
    assert worker.system_of(other)[1] == "built"


@pytest.fixture(scope="module")
def dask_client(kidym_cache):  # noqa: F811
    distributed = pytest.importorskip("distributed", reason="kidym[sweep] (Dask) missing")
    # the scheduler's HTTP server on a free port: None would mean 8787, taken by a
    # cluster of another test process (pytest-xdist) or of the benchmark in the docs
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_dask_threads_and_loop_give_identical_results(dask_client) -> None:
    model = kidym.parse(PENDULUM, name="pendulum")
    study = grid({"l": [0.5, 1.0, 1.5, 2.0], "phi": [0.1, 1.0, 2.5]})
    runs = {ex: kidym.sweep(model, vary=study, t_end=2.0, n_points=21, executor=ex,
                            scheduler=dask_client if ex == "dask" else None, chunk_size=2)
            for ex in ("loop", "threads", "dask")}
    assert runs["dask"].routes == {"cache": 12}   # the workers share the cache directory
    for ex in ("threads", "dask"):
        np.testing.assert_array_equal(runs[ex].values, runs["loop"].values)
        assert runs[ex].status.tolist() == [0] * 12
    # and the same as one run alone
    alone = kidym.simulate(model, engine="compiled", t_end=2.0, n_points=21,
                           parameters={"l": 1.5}, initial={"phi": 1.0})
    np.testing.assert_array_equal(runs["dask"]["phi"][7], alone["phi"])
    # the energy monitor on every executor (the pendulum is conservative): the same
    # ratios, each the one of the run alone (issue 27)
    for ex in ("threads", "dask"):
        np.testing.assert_array_equal(runs[ex].energy_ratio, runs["loop"].energy_ratio)
    assert runs["dask"].options["energy_monitor"] == "on"
    assert (runs["dask"].energy_ratio < 1).all()
    assert runs["dask"].energy_ratio[7] == pytest.approx(
        alone.stats["energy_monitor"]["ratio"], rel=1e-6)


def test_cli_sweep_on_dask_writes_one_directory(dask_client, tmp_path, capsys) -> None:
    from kidym.cli import main

    path = tmp_path / "fall.kdm"
    path.write_text(FALL + "VARY := t(0, 1), g(1, 10, 4), z(0, 5, 3);", encoding="utf-8")
    out = tmp_path / "out"
    address = dask_client.scheduler.address
    assert main(["sweep", str(path), "--out", str(out), "--points", "11", "--scheduler",
                 address, "--quantity", "z"]) == 0
    printed = capsys.readouterr().out
    assert "grid 4 × 3 = 12 runs" in printed and "0 failed" in printed
    assert sorted(p.name for p in out.iterdir()) == [
        "kidym-run.json", "runs.csv", "summary-g.png", "summary-map.png", "summary-z.png",
        "sweep.nc"]
    with xr.open_dataset(out / "sweep.nc") as ds:
        np.testing.assert_allclose(ds["value"].sel(quantity="z", time=1.0).values,
                                   ds["z"].values[None, :] + 1 - ds["g"].values[:, None] / 2,
                                   atol=1e-9)


def test_cli_errors(tmp_path, capsys, monkeypatch) -> None:
    from kidym.cli import main

    path = tmp_path / "fall.kdm"
    path.write_text(FALL + "VARY := g(1, 10, 4);", encoding="utf-8")
    assert main(["run", str(path)]) == 1
    assert "is a parameter study" in capsys.readouterr().err
    assert main(["check", str(path)]) == 0
    assert "study: grid of 4 runs: g 1…10 (kidym sweep)" in capsys.readouterr().out
    assert main(["sweep", str(path), "--vary", "g=1:2"]) == 1
    assert "give --samples N" in capsys.readouterr().err
    assert main(["sweep", str(path), "--vary", "nosuch=1:2:3", "--out",
                 str(tmp_path / "o")]) == 1
    assert "`nosuch` is not a parameter nor a state" in capsys.readouterr().err
    assert main(["sweep", str(path), "--quantity", "nosuch", "--out", str(tmp_path / "o")]) == 1
    assert "--quantity nosuch: not recorded; quantities: z, z't" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "distributed", None)   # dask not installed
    assert main(["sweep", str(path), "--scheduler", "tcp://127.0.0.1:1"]) == 1
    assert "needs dask[distributed]: pip install 'kidym[sweep]'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("example", "vary", "t_end"), [
    ("four_bar/four_bar.kdm", {"m2": [1.0, 2.0], "b": [0.6, 0.62]}, 1.0),   # constraints
    ("bouncing_ball/bouncing_ball.kdm", {"e": [0.5, 0.8], "H": [1.0, 2.0]}, 1.0),  # events
])
def test_constraints_and_events_as_single_runs(example: str, vary: dict, t_end: float) -> None:
    from pathlib import Path

    model = kidym.load(Path(__file__).resolve().parents[2] / "examples" / example)
    r = kidym.sweep(model, vary=vary, t_end=t_end, n_points=21)
    assert r.status.tolist() == [0] * r.study.n_runs
    for k, row in enumerate(r.study.table):
        alone = kidym.simulate(model, engine="compiled", t_end=t_end, n_points=21,
                               parameters=dict(zip(r.study.names, row)))
        np.testing.assert_array_equal(r.values[k], np.array([alone[q] for q in r.quantities]).T)


def test_an_event_storm_is_a_failed_run_not_an_error() -> None:
    from pathlib import Path

    model = kidym.load(Path(__file__).resolve().parents[2] / "examples" / "bouncing_ball"
                       / "bouncing_ball.kdm")
    r = kidym.sweep(model, vary={"e": [0.5, 0.8]}, t_end=3.0, n_points=31)
    assert r.status.tolist() == [-1, 0] and "event storm" in r.reasons[0]
    assert np.isnan(r["z"][0, -1]) and np.isfinite(r["z"][1]).all()


def test_names_netcdf_cannot_hold_become_identifiers(tmp_path) -> None:
    model = kidym.parse("m = 1; l = 1; g = 9.81; мас = 2;\n"
                        "Rod | Rz(phi) | Sx(l/2), мас, 0, m*l^2/12, m*l^2/12;\n"
                        "GRAVITY := g, 0, 0;\n", name="p")
    r = kidym.sweep(model, vary={"phi't": [0.0, 1.0], "мас": [1.0, 2.0]}, t_end=0.5,
                    n_points=5)
    with xr.open_dataset(r.write(tmp_path / "u.nc")) as ds:
        assert ds["value"].dims == ("phi't", "mas", "time", "quantity")
        assert ds["mas"].attrs["kidym_name"] == "мас" and ds.attrs["varied"] == "phi't мас"
        np.testing.assert_array_equal(ds["value"].sel(mas=2.0).values, r.values[[1, 3]])


@pytest.mark.parametrize("kind", ["grid", "random"])
def test_the_file_is_what_xarray_writes_of_to_dataset(tmp_path, kind) -> None:
    # the file is written without xarray (SweepResult.write): read back by xarray it
    # is to_dataset() — values, coordinates, text (UTF-8, a non-Latin name), attributes
    model = kidym.parse("m = 1; l = 1; g = 9.81; мас = 2;\n"
                        "Rod | Rz(phi) | Sx(l/2), мас, 0, m*l^2/12, m*l^2/12;\n"
                        "GRAVITY := g, 0, 0;\n", name="p")
    vary = ({"phi't": [0.0, 1.0], "мас": [-1.0, 2.0]} if kind == "grid"
            else {"phi't": (0.0, 1.0), "мас": (-1.0, 2.0)})
    r = kidym.sweep(model, vary=vary, samples=None if kind == "grid" else 5, t_end=0.5,
                    n_points=5)
    assert r.failed   # a negative mass: a reason of many characters
    want = r.to_dataset()
    with xr.open_dataset(r.write(tmp_path / "s.nc")) as ds:
        got = ds.load()
    xr.testing.assert_equal(got, want)
    assert got.attrs == want.attrs
    for name in want.variables:
        assert {k: v for k, v in got[name].attrs.items()} == dict(want[name].attrs), name


#: A spring-mass pushed by the input `U` (a time-dependent model: the damping changes
#: with t), and its breakpoints and values; `_PIECEWISE` the same table as a formula.
INPUT_MODEL = ("m = 2; k = 3;\nCart | Sx(x) | m, 0, 0, 0;\nCk.x = k;\n"
               "Pd.x = -0.1*(1 + t/4)*x't;\nPu.x = U;\nINITIAL := x(0.1);\nTIME := t(0, 2);\n")
_T, _V = [0.0, 0.5, 1.25, 2.0], [0.0, 1.0, -0.5, 0.25]
_PIECEWISE = "(t < 0.5 ? 2*t ! (t < 1.25 ? 1 - 2*(t - 0.5) ! -0.5 + (t - 1.25)))"
RTOL, ATOL = 1e-10, 1e-12


def _close(a: np.ndarray, b: np.ndarray) -> None:
    """Two routes to one motion at rtol = RTOL: within 1e3 · rtol of the scale (the stated
    margin of the global error of two adaptive runs over this short span)."""
    assert np.max(np.abs(a - b)) <= 1e3 * RTOL * max(1.0, float(np.max(np.abs(b))))


def test_a_sweep_with_a_table_input_is_the_single_runs_and_the_formula() -> None:
    """`k` varied, `U` one table for every run: each run equals the same run alone, and
    the same motion with the table written as a formula of t (no input at all)."""
    model = kidym.parse(INPUT_MODEL + "INPUTS := U;\n", name="driven")
    table = kidym.InputTable(_T, _V)
    r = kidym.sweep(model, vary={"k": [1.0, 3.0, 9.0]}, inputs={"U": table}, n_points=41,
                    rtol=RTOL, atol=ATOL, workers=2)
    assert r.status.tolist() == [0, 0, 0]
    formula = kidym.parse(INPUT_MODEL.replace("= U", f"= {_PIECEWISE}"), name="formula")
    for j, k in enumerate([1.0, 3.0, 9.0]):
        alone = kidym.simulate(model, engine="compiled", parameters={"k": k}, n_points=41,
                               rtol=RTOL, atol=ATOL, inputs={"U": table})
        np.testing.assert_array_equal(r["x"][j], alone["x"])
        _close(r["x"][j], kidym.simulate(formula, engine="compiled", parameters={"k": k},
                                         n_points=41, rtol=RTOL, atol=ATOL)["x"])


def test_per_run_inputs_and_their_errors() -> None:
    """One binding per run (a callback, a table, a controller for the one input); a
    binding the model cannot take is the study's error, a callback failing in a run
    that run's."""
    model = kidym.parse(INPUT_MODEL + "INPUTS := U;\n", name="driven")
    per_run = [{"U": lambda t, s: -s["x't"]}, {"U": kidym.InputTable(_T, _V)},
               lambda t, s: [1 / 0 if t > 1 else 0.0]]
    r = kidym.sweep(model, vary={"k": [1.0, 2.0, 3.0]}, inputs=per_run, n_points=21,
                    rtol=RTOL, atol=ATOL)
    assert r.status.tolist() == [0, 0, -1]
    assert "callback of the inputs `U` raised ZeroDivisionError" in r.reasons[2]
    ref = kidym.simulate(kidym.parse(INPUT_MODEL.replace("= U", "= -x't")), engine="compiled",
                         parameters={"k": 1.0}, n_points=21, rtol=RTOL, atol=ATOL)
    _close(r["x"][0], ref["x"])
    with pytest.raises(ValueError, match="2 input bindings for a study of 3 runs"):
        kidym.sweep(model, vary={"k": [1.0, 2.0, 3.0]}, inputs=per_run[:2])
    with pytest.raises(ValueError, match="input `U` of model `driven` is not bound"):
        kidym.sweep(model, vary={"k": [1.0, 2.0]})
    with pytest.raises(ValueError, match="covers t = 0 … 1, not the run's span"):
        kidym.sweep(model, vary={"k": [1.0, 2.0]}, inputs={"U": kidym.InputTable([0, 1],
                                                                                  [0, 1])})


def test_inputs_on_dask_tables_and_callbacks_pickled(dask_client) -> None:
    """On a cluster of processes: a table and a picklable callback go to the workers and
    give the threads' arrays; a callback that does not pickle is an error naming it."""
    import threading

    model = kidym.parse(INPUT_MODEL + "INPUTS := U;\n", name="driven")
    for inputs in ({"U": kidym.InputTable(_T, _V)}, {"U": lambda t, s: -0.5 * s["x"]}):
        runs = [kidym.sweep(model, vary={"k": [1.0, 2.0, 4.0]}, inputs=inputs, n_points=21,
                            executor=ex, scheduler=dask_client if ex == "dask" else None,
                            chunk_size=1) for ex in ("threads", "dask")]
        assert runs[1].status.tolist() == [0, 0, 0]
        np.testing.assert_array_equal(runs[1].values, runs[0].values)
    lock = threading.Lock()

    def locked(t: float, s: dict) -> float:
        with lock:
            return 0.0

    with pytest.raises(ValueError, match=r"callback of input `U` cannot be sent to the Dask "
                       r"workers: it does not pickle .*\(executor='threads'\)"):
        kidym.sweep(model, vary={"k": [1.0, 2.0]}, inputs={"U": locked},
                    scheduler=dask_client)


def test_cli_sweep_with_an_input_table(tmp_path, capsys) -> None:
    """``kidym sweep --input U=FILE.csv`` writes what ``kidym.sweep`` gives with the table."""
    from kidym.cli import main

    path = tmp_path / "driven.kdm"
    path.write_text(INPUT_MODEL + "INPUTS := U;\n", encoding="utf-8")
    table = tmp_path / "u.csv"
    table.write_text("t,U\n" + "".join(f"{t},{v}\n" for t, v in zip(_T, _V)), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--vary", "k=1:3:2", "--input", f"U={table}",
                 "--points", "11", "--no-plots", "--out", str(out)]) == 0
    api = kidym.sweep(kidym.load(path), vary={"k": [1.0, 3.0]}, n_points=11,
                      inputs={"U": kidym.InputTable(_T, _V)})
    with xr.open_dataset(out / "sweep.nc") as ds:
        np.testing.assert_array_equal(ds["value"].sel(quantity="x").values, api["x"])
    capsys.readouterr()
    assert main(["sweep", str(path), "--vary", "k=1:3:2", "--out", str(out), "--force"]) != 0
    err = capsys.readouterr().err
    assert "input `U` of model `driven` is not bound" in err and "Traceback" not in err


def test_an_interrupted_dask_sweep_leaves_no_stop_event_set(dask_client, monkeypatch
                                                           ) -> None:
    """Ctrl-C sets a named ``distributed.Event`` on the scheduler to stop the workers;
    the sweep clears it when it ends (issue 29: one was left per interrupted sweep).
    The stop is the watch's flag set as Ctrl-C sets it, before the tasks are sent."""
    import distributed

    from kidym.errors import RunInterrupted
    from kidym.study import sweep as sweep_module

    set_names: list[str] = []
    real_set = distributed.Event.set

    def recorded(self):
        set_names.append(self.name)
        return real_set(self)

    monkeypatch.setattr(distributed.Event, "set", recorded)
    run_dask = sweep_module._run_dask

    def stopped_at_once(client, system, jobs, watch):
        watch.stop()
        return run_dask(client, system, jobs, watch)

    monkeypatch.setattr(sweep_module, "_run_dask", stopped_at_once)
    model = kidym.parse(PENDULUM, name="pendulum")
    with pytest.raises(RunInterrupted) as info:
        kidym.sweep(model, vary={"l": [0.5, 1.0, 1.5, 2.0]}, t_end=2.0, n_points=5,
                    scheduler=dask_client, chunk_size=1)
    assert info.value.result.interrupted
    assert len(set_names) == 1 and set_names[0].startswith("kidym-stop-")
    assert not distributed.Event(set_names[0], client=dask_client).is_set()
    # and the cluster runs the next study whole
    monkeypatch.undo()
    r = kidym.sweep(model, vary={"l": [0.5, 1.0]}, t_end=2.0, n_points=5,
                    scheduler=dask_client)
    assert r.status.tolist() == [0, 0]


#: An oscillator over 1e6 s: its run takes about half a minute compiled.
LONG = ("m = 1; k = 4; F0 = 1; W = 1;\nB | Sx(x) | m, 0, 0, 0;\nCs.x = k;\n"
        "Pf.x = F0*sin(W*t);\nINITIAL := x(0), x't(0);\nTIME := t(0, 1e6);\n")


@pytest.mark.slow
@pytest.mark.compiled
def test_a_cancelled_dask_task_stops_its_runs(dask_client) -> None:
    """A task still running when the sweep ends (cancelled, its stop event cleared)
    stops its runs on seeing its cancellation: the worker's one thread is free within
    seconds, where the run would hold it for about half a minute."""
    import time

    from kidym.eom.stored import derived
    from kidym.simulation.compiled import CompiledSystem
    from kidym.study.runs import Job
    from kidym.study.sweep import recorded_quantities

    system = CompiledSystem.build(derived(kidym.parse(LONG, name="long")))
    y0 = np.array([[0.0, 0.0]])
    job = Job(rows=np.array([0]), y0s=y0, ps=system.parameter_vector(None)[None, :],
              t0=0.0, t1=1e6, times=np.linspace(0.0, 1e6, 3),
              quantities=recorded_quantities(system), stop="kidym-stop-never-set")
    pkg = dask_client.scatter(worker.package(system), broadcast=True)
    future = dask_client.submit(worker.run_on_worker, pkg, job, pure=False)
    deadline = time.monotonic() + 20
    while not any(future.key in keys for keys in dask_client.processing().values()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.0)   # (the library loaded, the run under way)
    dask_client.cancel(future)
    for address in dask_client.scheduler_info()["workers"]:
        assert dask_client.submit(abs, -1, workers=[address], pure=False).result(
            timeout=5) == 1


def test_a_worker_runs_a_model_whose_mesh_files_it_cannot_see(tmp_path, monkeypatch) -> None:
    """A sweep draws nothing: a Dask worker (another folder, another machine) parses the
    model without reading its `SHAPES` mesh files, and runs the client's equations."""
    stl = tmp_path / "cart.stl"
    stl.write_text("solid c\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
                   "vertex 0 1 0\nendloop\nendfacet\nendsolid c\n")
    path = tmp_path / "driven.kdm"
    path.write_text(DRIVEN + '\nSHAPES := Cart(mesh("cart.stl"));\n')
    model = kidym.load(path)
    assert model.shapes[0].mesh is not None
    from kidym.simulation.compiled import CompiledSystem

    system = CompiledSystem.build(kidym.derive(model))
    pkg = worker.package(system)
    stl.unlink()   # (the worker's folder has no mesh file)
    monkeypatch.setattr(worker, "_SYSTEMS", {})
    remote, _ = worker.system_of(pkg)
    assert remote.equations.model.shapes[0].mesh is None
    y0, p = np.array([0.5, 0.0]), system.parameter_vector()
    np.testing.assert_array_equal(remote.rhs(0.3, y0, p), system.rhs(0.3, y0, p))
    with pytest.raises(kidym.ModelError, match=r"cart\.stl"):   # (a client still reads it)
        kidym.parse(path.read_text(), filename=str(path))
