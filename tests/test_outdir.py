"""Output directories appear whole or not at all (kidym/outdir.py and the commands that
write one): a run killed at any moment leaves the complete old run or the complete new
one, never a mix; nothing of an old run survives a new one; leftovers of killed runs
are removed; a directory kidym did not make is replaced only with --force."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kidym.cli import main
from kidym.simulation.result import load_results
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES, ROOT

OLD_T, NEW_T = 1.0, 3.0


def _snapshot(directory: Path) -> dict[str, str]:
    """Every file under ``directory`` (hidden ones too) by relative path: its SHA-256."""
    return {p.relative_to(directory).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith("."))


@pytest.fixture
def model(tmp_path) -> Path:
    path = tmp_path / "dp.kdm"
    path.write_text(DOUBLE_PENDULUM + "INITIAL := t(0), phi1(0.5);", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def old_run(tmp_path_factory) -> Path:
    """A complete run (t_end = 1, csv+npz, report and animation) to copy from."""
    root = tmp_path_factory.mktemp("old")
    path = root / "dp.kdm"
    path.write_text(DOUBLE_PENDULUM + "INITIAL := t(0), phi1(0.5);", encoding="utf-8")
    out = root / "run" / "out"
    assert main(["run", str(path), "--t-end", str(OLD_T), "--points", "6", "--out", str(out),
                 "--format", "csv,npz", "--no-plots", "--report", "--animate", "-q"]) == 0
    return out


def _new_run_args(model: Path, out: Path) -> list[str]:
    return ["run", str(model), "--t-end", str(NEW_T), "--points", "6", "--out", str(out),
            "--format", "csv,npz", "--no-plots", "-q"]


# A kidym process that dies (os._exit: no clean-up, like SIGKILL) at a chosen moment.
KILLER = textwrap.dedent("""
    import importlib, os, sys
    try:
        outdir = importlib.import_module("kidym.outdir")
    except ImportError:  # a kidym that writes file by file
        outdir = None
    point = os.environ["KILL_AT"]
    real_replace, real_rename, real_fsync = os.replace, os.rename, os.fsync
    renames = []

    def replace(src, dst, *a, **k):
        real_replace(src, dst, *a, **k)
        if point == "after " + os.path.basename(os.fspath(dst)):
            os._exit(9)

    def fsync(fd):
        if point == "writing results.npz" and "results.npz" in os.readlink(
                f"/proc/self/fd/{fd}"):
            os._exit(9)          # the temporary file is half written
        real_fsync(fd)

    def rename(src, dst):
        real_rename(src, dst)
        renames.append(dst)
        if point == f"after rename {len(renames)}":
            os._exit(9)

    def exchange(a, b):
        if point.startswith("after rename"):
            return False         # a system without renameat2: two renames
        done = real_exchange(a, b)
        if point == "after exchange":
            os._exit(9)
        return done

    def publish(stage, out):
        if point == "before publication":
            os._exit(9)
        real_publish(stage, out)

    os.replace, os.rename, os.fsync = replace, rename, fsync
    if outdir is not None:
        real_exchange, real_publish = outdir.exchange, outdir._publish
        outdir.exchange, outdir._publish = exchange, publish
    from kidym.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def _killed_run(args: list[str], point: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KILL_AT": point, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", KILLER, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("point", ["after results.csv", "writing results.npz",
                                   "after results.json", "before publication"])
def test_a_run_killed_before_publication_leaves_the_old_run_whole(point, old_run, model,
                                                                  tmp_path):
    out = tmp_path / "out"
    shutil.copytree(old_run, out)
    before = _snapshot(out)
    proc = _killed_run(_new_run_args(model, out), point)
    assert proc.returncode == 9, proc.stderr[-2000:]
    assert _snapshot(out) == before                       # byte for byte the old run
    result, _ = load_results(out)
    assert result.t[-1] == OLD_T
    assert main(["animate", str(out), "-q"]) == 0           # and it is still usable
    # the next run removes what the killed one left, and replaces the old run whole
    assert _leftovers(out) != []
    assert main(_new_run_args(model, out)) == 0
    assert _leftovers(out) == []
    assert load_results(out)[0].t[-1] == NEW_T
    assert not (out / "report.html").exists() and not (out / "animation.html").exists()


@pytest.mark.parametrize("point", ["after exchange", "after rename 2"])
def test_a_run_killed_after_publication_leaves_the_new_run_whole(point, old_run, model,
                                                                 tmp_path):
    out = tmp_path / "out"
    shutil.copytree(old_run, out)
    fresh = tmp_path / "fresh"                      # the same run, undisturbed
    assert main(_new_run_args(model, fresh)) == 0
    proc = _killed_run(_new_run_args(model, out), point)
    assert proc.returncode == 9, proc.stderr[-2000:]
    assert set(_snapshot(out)) == set(_snapshot(fresh))  # nothing of the old run
    assert load_results(out)[0].t[-1] == NEW_T
    assert main(["run", str(model), "--out", str(tmp_path / "x"), "--t-end", "0.1",
                 "--no-plots", "-q"]) == 0               # a run elsewhere leaves them
    assert _leftovers(out) != []
    assert main(_new_run_args(model, out)) == 0
    assert _leftovers(out) == []


def test_without_an_atomic_exchange_a_kill_between_the_renames_keeps_both_runs_whole(
        old_run, model, tmp_path):
    """The fallback (two renames): the target is briefly absent; a kill then leaves the
    complete old and new runs under their leftover names, and the next run cleans up."""
    out = tmp_path / "out"
    shutil.copytree(old_run, out)
    before = _snapshot(out)
    proc = _killed_run(_new_run_args(model, out), "after rename 1")
    assert proc.returncode == 9, proc.stderr[-2000:]
    assert not out.exists()
    aside = [p for p in tmp_path.iterdir() if p.name.startswith(".out.kidym-old-")]
    new = [p for p in tmp_path.iterdir() if p.name.startswith(".out.kidym-new-")]
    assert len(aside) == len(new) == 1
    assert _snapshot(aside[0]) == before
    assert load_results(new[0])[0].t[-1] == NEW_T
    assert main(_new_run_args(model, out)) == 0
    assert _leftovers(out) == [] and load_results(out)[0].t[-1] == NEW_T


def test_a_new_run_keeps_nothing_of_the_old_one(model, tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(model), "--t-end", "0.5", "--points", "6", "--out", str(out),
                 "--format", "csv,npz", "--report", "-q"]) == 0
    assert (out / "coordinates.png").exists() and (out / "results.npz").exists()
    assert main(["run", str(model), "--t-end", "0.2", "--points", "6", "--out", str(out),
                 "--no-plots", "-q"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["kidym-run.json", "results.csv",
                                                       "results.json"]
    marker = json.loads((out / "kidym-run.json").read_text(encoding="utf-8"))
    side = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert marker["run_id"] == side["run_id"] and len(side["run_id"]) == 32
    assert marker["files"] == ["results.csv", "results.json"]


def test_a_kinematics_run_replaces_the_task_folders_of_the_last_one(tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(EXAMPLES / "kinematics" / "point.kdm"), "--out", str(out),
                 "--points", "11"]) == 0
    assert (out / "task2" / "results.csv").exists()
    one = tmp_path / "one.kdm"
    one.write_text("РАСЧЕТ := КИНЕМАТИКА; x = 2*t; v = x't; ВАРЬИРОВАТЬ := t, 0, 1; "
                   "ПОКАЗАТЬ := v;", encoding="utf-8")
    assert main(["run", str(one), "--out", str(out), "--points", "11"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["01_v.png", "kidym-run.json",
                                                       "results.csv"]
    assert _leftovers(out) == []


def test_leftovers_of_killed_runs_are_removed_but_not_those_of_a_live_run(model, tmp_path):
    fcntl = pytest.importorskip("fcntl")
    out = tmp_path / "out"
    dead_new, dead_old, live = (tmp_path / n for n in (
        ".out.kidym-new-dead", ".out.kidym-old-dead", ".out.kidym-new-live"))
    for d in (dead_new, dead_old, live):
        d.mkdir()
        (d / ".results.csv.x1y2z3").write_text("half a row", encoding="utf-8")
    other = tmp_path / ".other.kidym-new-dead"    # another output's: not ours to remove
    other.mkdir()
    fd = os.open(live, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)                  # as a running kidym holds its own
    try:
        assert main(_new_run_args(model, out)) == 0
    finally:
        os.close(fd)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [
        ".other.kidym-new-dead", ".out.kidym-new-live"]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_a_directory_kidym_did_not_make_is_replaced_only_with_force(model, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes", encoding="utf-8")
    assert main(_new_run_args(model, out)) == 1
    err = capsys.readouterr().err
    assert "`" + str(out) + "` holds files kidym did not write (notes.txt)" in err
    assert "--force" in err and "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert _leftovers(out) == []
    assert main([*_new_run_args(model, out), "--force"]) == 0
    assert "notes.txt" not in {p.name for p in out.iterdir()}
    assert load_results(out)[0].t[-1] == NEW_T
    # a file put into a kidym run directory is not the run's: refused again
    (out / "plot-by-hand.png").write_bytes(b"\x89PNG")
    assert main(_new_run_args(model, out)) == 1
    assert "(plot-by-hand.png): they are not files of the kidym run" in capsys.readouterr().err
    assert (out / "plot-by-hand.png").exists()


def test_directories_that_are_never_replaced(model, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(model.parent)
    for out, why in ((".", "the working directory"), (str(model.parent.parent),
                                                      "the working directory"),
                     (str(model), "dp.kdm`, which this command reads")):
        assert main([*_new_run_args(model, Path(out)), "--force"]) == 1
        err = capsys.readouterr().err
        assert "refusing to use" in err and why in err, err
    assert model.exists()
    (model.parent / "in").mkdir()
    inner = model.parent / "in" / "m.kdm"
    shutil.copy(model, inner)
    assert main([*_new_run_args(inner, model.parent / "in"), "--force"]) == 1
    assert "m.kdm`, which this command reads" in capsys.readouterr().err
    assert inner.exists()


def test_animate_into_its_own_directory_is_published_whole(old_run, model, tmp_path,
                                                           capsys):
    from kidym.outdir import foreign_files

    anim = tmp_path / "anim"
    anim.mkdir()
    (anim / "old.txt").write_text("x", encoding="utf-8")
    assert main(["animate", str(old_run), "--out", str(anim)]) == 1
    assert "holds files kidym did not write (old.txt)" in capsys.readouterr().err
    assert main(["animate", str(old_run), "--out", str(anim), "--force"]) == 0
    assert sorted(p.name for p in anim.iterdir()) == ["animation.html", "kidym-run.json"]
    # beside the results it joins their run: the next run still replaces them unasked
    res = tmp_path / "res"
    assert main(_new_run_args(model, res)) == 0
    assert main(["animate", str(res)]) == 0
    assert (res / "animation.html").exists() and foreign_files(res) == []
    assert main(_new_run_args(model, res)) == 0
    assert not (res / "animation.html").exists()


def test_codegen_output_is_published_whole_beside_the_run_output(model, tmp_path,
                                                                  monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["codegen", str(model)]) == 0
    assert main(["run", str(model), "--t-end", "0.1", "--points", "3", "--no-plots",
                 "-q"]) == 0
    assert (tmp_path / "kidym-out" / "dp-c" / "dp.c").exists()       # both kept
    assert (tmp_path / "kidym-out" / "dp" / "results.csv").exists()
    assert not (tmp_path / "kidym-out" / "dp" / "dp.c").exists()
    assert main(["codegen", str(model), "--out", "kidym-out/dp"]) == 0  # a run's: replaced
    assert sorted(p.name for p in (tmp_path / "kidym-out" / "dp").iterdir()) == [
        "dp.c", "kidym-run.json"]


def test_staged_publishes_nothing_on_an_error_or_cancel(tmp_path):
    from kidym import outdir

    out = tmp_path / "o"
    with pytest.raises(RuntimeError, match="boom"), outdir.staged(out) as stage:
        (stage.path / "a.txt").write_text("a", encoding="utf-8")
        raise RuntimeError("boom")
    assert not out.exists() and _leftovers(out) == []
    with outdir.staged(out) as stage:
        (stage.path / "a.txt").write_text("a", encoding="utf-8")
    with outdir.staged(out) as stage:
        (stage.path / "b.txt").write_text("b", encoding="utf-8")
        stage.cancel()
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "kidym-run.json"]
    assert oct(out.stat().st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
