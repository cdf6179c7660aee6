"""Equations stored in the cache by their model file's text (issue 28, a cached start of
a big model under 1 s): read back equal to a fresh derivation, and never when the file,
kidym's code or the stored bytes changed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import kidym
import kidym.lang.files
from kidym.eom import stored
from kidym.eom.equations import derive
from kidym.eom.stored import derived

# a double pendulum (closed form: a second route below) with a parameter formula
TEXT = """m = 1; l = {l}; g = 9.81;
A | Rz(a) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
B~A | Sx(l), Rz(b) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
GRAVITY := 0, -g, 0;
INITIAL := t(0), a(0.4), b(-0.3), a't(0), b't(0);
"""


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """A cache of the test's own, and a count of the derivations actually made."""
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path / "cache"))
    calls = []

    def counted(model, **options):
        calls.append(model.name)
        return derive(model, **options)

    monkeypatch.setattr(stored, "derive", counted)
    return calls


def _write(tmp_path, l: str = "0.5"):
    path = tmp_path / "double.kdm"
    path.write_text(TEXT.format(l=l), encoding="utf-8")
    return path


def _same_equations(a, b) -> None:
    """Same named quantities, with the same formulas, and the same ``M``, ``F``."""
    assert a.graph.definitions == b.graph.definitions
    assert [str(x) for x in a.mass_matrix_named] == [str(x) for x in b.mass_matrix_named]
    assert [str(x) for x in a.forcing_named] == [str(x) for x in b.forcing_named]


def test_stored_equations_equal_a_fresh_derivation(cache, tmp_path):
    path = _write(tmp_path)
    first = derived(kidym.load(path))
    second = derived(kidym.load(path))   # models and equations read back from the cache
    assert cache == ["double"]            # derived once
    assert second is not first
    _same_equations(second, derive(kidym.load(path)))
    # and they move the pendulum as the fresh equations do (NumPy engine)
    runs = [kidym.simulate(eq, t_end=0.5, engine="numpy", rtol=1e-10, atol=1e-12)
            for eq in (second, derive(kidym.load(path)))]
    assert np.max(np.abs(runs[0]["a"] - runs[1]["a"])) < 1e-8


def test_a_changed_parameter_formula_is_derived_again(cache, tmp_path):
    derived(kidym.load(_write(tmp_path, "0.5")))
    eq = derived(kidym.load(_write(tmp_path, "0.5 + 0.25")))   # one formula changed
    assert cache == ["double", "double"]
    assert eq.model.parameter_values["l"] == pytest.approx(0.75)


def test_other_kidym_code_does_not_read_what_this_stored(cache, tmp_path, monkeypatch):
    path = _write(tmp_path)
    derived(kidym.load(path))
    monkeypatch.setattr(kidym.lang.files, "code_fingerprint", lambda: "another kidym")
    derived(kidym.load(path))
    assert cache == ["double", "double"]


def test_a_damaged_or_foreign_stored_file_is_not_read(cache, tmp_path):
    path = _write(tmp_path)
    derived(kidym.load(path))
    files = sorted((tmp_path / "cache" / "stored").glob("*.pickle"))
    assert [f.name.split("-")[0] for f in files] == ["equations", "tasks"]
    for f in files:   # one byte of the pickle changed: its HMAC no longer matches
        data = bytearray(f.read_bytes())
        data[-2] ^= 0xFF
        f.write_bytes(bytes(data))
    eq = derived(kidym.load(path))
    assert cache == ["double", "double"]
    _same_equations(eq, derive(kidym.load(path)))


def test_a_model_changed_after_reading_is_derived(cache, tmp_path):
    model = kidym.load(_write(tmp_path))
    derived(model)
    changed = dataclasses.replace(model, name="changed")
    assert derived(changed).model.name == "changed"
    assert cache == ["double", "changed"]


@pytest.mark.compiled
def test_compiled_runs_of_stored_equations_follow_the_file(cache, tmp_path):
    """The compiled library's key of stored equations is their text's hash: a changed
    parameter formula builds another library (checked against the NumPy engine)."""
    for l in ("0.5", "0.5 + 0.25", "0.5"):
        model = kidym.load(_write(tmp_path, l))
        a = kidym.simulate(model, t_end=0.5, engine="compiled", rtol=1e-10, atol=1e-12)
        b = kidym.simulate(derive(model), t_end=0.5, engine="numpy", rtol=1e-10,
                           atol=1e-12)
        assert a.stats["engine"] == "compiled"
        assert np.max(np.abs(a["a"] - b["a"])) < 1e-6
    assert cache == ["double", "double"]   # the third run read the first's equations


def test_a_second_kidym_run_reads_the_stored_equations(cache, tmp_path):
    """``kidym run`` derives a file once; the second run's results equal the first's
    (the same arithmetic on equal equations, which the first test compares with a
    fresh derivation)."""
    from kidym import cli

    path = _write(tmp_path)
    for k in (1, 2):
        out = tmp_path / f"out{k}"
        assert cli.main(["run", str(path), "--out", str(out), "--no-plots", "-q",
                         "--t-end", "0.2", "--engine", "numpy"]) == 0
    assert cache == ["double"]
    first, second = ((tmp_path / f"out{k}" / "results.csv").read_text() for k in (1, 2))
    assert first == second and len(first.splitlines()) > 10
