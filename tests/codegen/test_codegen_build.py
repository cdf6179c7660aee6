"""Build and cache: reuse, concurrent builds, a broken or missing compiler."""

from __future__ import annotations

import dataclasses
import importlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kidym
from kidym.codegen import build, generate_c, library_path
from kidym.codegen.build import BASE_FLAGS
from kidym.errors import CompileError
from kidym.simulation.compiled import CompiledSystem
from tests.codegen.shared import equations
from tests.fixtures import ROOT

PENDULUM = ("m = 2; l = 0.7; Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12; "
            "GRAVITY := 0, -g, 0; g = 9.81;")


def test_flags_make_warnings_errors():
    assert "-Wall" in BASE_FLAGS and "-Werror" in BASE_FLAGS


def test_a_cached_library_is_reused(kidym_cache):
    code = generate_c(equations(PENDULUM))
    first = build(code)
    stamp = first.stat().st_mtime_ns
    assert build(code) == first and first.stat().st_mtime_ns == stamp
    assert first.parent == kidym_cache and first.with_suffix(".c").read_text() == code.source
    other = library_path(code, (*BASE_FLAGS, "-O3"))
    assert other != first and not other.exists()   # flags are part of the key


@pytest.mark.parametrize("damage", ["truncated", "random bytes", "code overwritten",
                                    "no digest"])
def test_a_damaged_cached_library_is_rebuilt_never_loaded(monkeypatch, tmp_path, damage):
    """Loading such a file crashed the process (Bus error, SIGTRAP, invalid ELF)."""
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path))
    eq = equations(PENDULUM)
    code = generate_c(eq)
    lib = build(code)
    good = lib.read_bytes()
    if damage == "truncated":
        lib.write_bytes(good[: len(good) // 3])
    elif damage == "random bytes":
        lib.write_bytes(os.urandom(len(good)))
    elif damage == "code overwritten":  # int3 over the middle of the file
        lib.write_bytes(good[: len(good) // 2] + b"\xcc" * 256 + good[len(good) // 2 + 256:])
    else:
        lib.with_suffix(".sha256").unlink()
    assert build(code) == lib
    assert len(lib.read_bytes()) == len(good)
    # and it runs: the same trajectory as the NumPy engine (in a fresh process, so that a
    # crash would show as a failed run, not a dead test session)
    script = textwrap.dedent(f"""
        import numpy as np, kidym
        eq = kidym.derive(kidym.parse({PENDULUM!r}))
        a = kidym.simulate(eq, t_end=0.5, initial={{"phi": 0.3}}, engine="compiled")
        b = kidym.simulate(eq, t_end=0.5, initial={{"phi": 0.3}}, engine="numpy")
        assert np.allclose(a["phi"], b["phi"], atol=1e-7)
        print("same")
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "KIDYM_CACHE_DIR": str(tmp_path)},
                         timeout=300)
    assert run.returncode == 0 and "same" in run.stdout, run.stderr[-2000:]


def test_native_tuning_keys_the_cache_by_processor(monkeypatch):
    b = importlib.import_module("kidym.codegen.build")  # the module, not the function

    code = generate_c(equations(PENDULUM))
    native = (*BASE_FLAGS, *b.NATIVE_FLAGS)
    here = b.cache_key(code, native)
    assert b.cache_key(code, BASE_FLAGS) != here
    # another processor: another library for native code, the same for portable code
    portable = b.cache_key(code, BASE_FLAGS)
    avx = b.cache_key(code, (*BASE_FLAGS, "-mavx2"))
    monkeypatch.setattr(b, "cpu_fingerprint", lambda: "x86_64|model name=Other CPU")
    assert b.cache_key(code, native) != here
    assert b.cache_key(code, (*BASE_FLAGS, "-mavx2")) != avx   # any -m… flag tunes
    assert b.cache_key(code, BASE_FLAGS) == portable
    # another architecture: another library even for portable code
    monkeypatch.setattr(b.platform, "machine", lambda: "aarch64")
    assert b.cache_key(code, BASE_FLAGS) != portable


def test_the_default_build_is_portable_and_native_is_an_opt_in(monkeypatch):
    b = importlib.import_module("kidym.codegen.build")
    monkeypatch.delenv("KIDYM_NATIVE", raising=False)
    monkeypatch.delenv("KIDYM_CFLAGS", raising=False)
    assert b.build_flags() == BASE_FLAGS
    assert "-ffp-contract=off" in BASE_FLAGS
    assert not b.tunes_for_processor(BASE_FLAGS)
    assert b.build_flags(native=False, extra_flags=("-O3",)) == (*BASE_FLAGS, "-O3")
    monkeypatch.setattr(b, "_accepts", lambda cmd, flags: True)
    monkeypatch.setattr(b.shutil, "which", lambda name: "/usr/bin/" + name)
    assert b.build_flags(native=True) == (*BASE_FLAGS, *b.NATIVE_FLAGS)
    monkeypatch.setenv("KIDYM_NATIVE", "1")
    assert b.build_flags() == (*BASE_FLAGS, *b.NATIVE_FLAGS)
    assert b.build_flags(native=False) == BASE_FLAGS
    monkeypatch.delenv("KIDYM_NATIVE")
    # $KIDYM_CFLAGS comes last, so that its -O3 or -ffp-contract=fast wins
    monkeypatch.setenv("KIDYM_CFLAGS", "-O3  -march=native")
    assert b.build_flags(extra_flags=("-g",)) == (*BASE_FLAGS, "-g", "-O3", "-march=native")
    monkeypatch.setenv("KIDYM_CFLAGS", "-O3 '-DX")
    with pytest.raises(CompileError, match=r"KIDYM_CFLAGS is not a list of compiler flags"):
        b.build_flags()


def test_a_native_build_agrees_with_the_portable_one_to_the_tolerance(kidym_cache,
                                                                      monkeypatch):
    """The two builds round differently (fused multiply-adds, vector instructions), so
    their trajectories differ — by far less than the requested tolerance."""
    b = importlib.import_module("kidym.codegen.build")
    if not b.native_flags(True):
        pytest.skip("the compiler does not take -march=native -ffp-contract=fast")
    monkeypatch.delenv("KIDYM_CFLAGS", raising=False)
    eq = equations(PENDULUM)
    runs = [kidym.simulate(CompiledSystem.build(eq, native=native), t_end=2.0,
                           initial={"phi": 1.0}, rtol=1e-9, atol=1e-12)
            for native in (False, True)]
    assert runs[0].stats["library"] != runs[1].stats["library"]
    # a global error of the order of the tolerance for each run; 100x margin on rtol
    assert np.max(np.abs(runs[0]["phi"] - runs[1]["phi"])) < 100 * 1e-9


def test_two_concurrent_builds_of_the_same_model(tmp_path):
    """Two processes compile one model into an empty cache at the same moment."""
    cache = tmp_path / "cache"
    script = textwrap.dedent(f"""
        import kidym, numpy as np
        from kidym.simulation.compiled import CompiledSystem
        cs = CompiledSystem.build(kidym.derive(kidym.parse({PENDULUM!r})))
        y = np.array([0.4, 0.0])
        print(cs.path, cs.rhs(0.0, y, cs.parameter_vector())[1])
    """)
    env = dict(os.environ, KIDYM_CACHE_DIR=str(cache))
    procs = [subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    paths = {o[0].split()[0] for o in outs}
    values = {float(o[0].split()[1]) for o in outs}
    assert len(paths) == 1 and len(values) == 1
    # pendulum: phi'' = -(m g l/2) cos(phi) / (m l^2 / 3)
    assert values.pop() == pytest.approx(-1.5 * 9.81 / 0.7 * np.cos(0.4), rel=1e-12)
    leftovers = [p.name for p in cache.iterdir() if p.name.startswith(".build-")]
    assert leftovers == [] and len(list(cache.glob("*.so"))) == 1


def test_a_broken_compiler_gives_a_compile_error_and_numpy_still_works(monkeypatch,
                                                                          tmp_path):
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "/bin/false")
    eq = equations(PENDULUM)
    with pytest.raises(kidym.CompileError,
                       match=r"C tool-chain cannot build the model .* \(exit status 1") as e:
        CompiledSystem.build(eq)
    assert e.value.command[0] == "/bin/false" and "engine='numpy'" in str(e.value)
    assert e.value.kind == "toolchain"
    assert not list(tmp_path.glob(".build-*")), "a failed build leaves no work directory"
    r = kidym.simulate(eq, t_end=0.5, initial={"phi": 0.3})
    assert r.success
    auto = kidym.simulate(eq, t_end=100, initial={"phi": 0.3}, engine="auto", n_points=11)
    assert auto.success and auto.stats["engine"] == "numpy"
    assert "compiling failed" in auto.stats["engine_choice"] or "numpy" in auto.stats[
        "engine_choice"]


def test_generated_c_a_working_compiler_rejects_is_called_our_bug(monkeypatch, tmp_path):
    """Not "install a compiler": the compiler works, kidym's C is wrong (a bug to report)."""
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path))
    code = generate_c(equations(PENDULUM))
    broken = dataclasses.replace(code, source=code.source + "\nint kidym_broken = ;\n")
    with pytest.raises(kidym.CompileError, match="bug in kidym, not in your set-up") as e:
        build(broken)
    assert e.value.kind == "internal" and "install a C compiler" not in str(e.value)
    kept = list((tmp_path / "failed").glob("*.c"))
    assert len(kept) == 1 and "kidym_broken" in kept[0].read_text(encoding="utf-8")
    assert not list(tmp_path.glob(".build-*")) and not list(tmp_path.glob("*.so"))
    eq = equations(PENDULUM)
    for where in ("kidym.simulation.compiled", "kidym.simulation.choice"):
        # (auto generates the C once, for its estimate, and builds that code)
        monkeypatch.setattr(importlib.import_module(where), "generate_c",
                            lambda *a, **k: broken)
    # auto, on a run whose NumPy estimate is far beyond any build (1e5 s of a pendulum:
    # about a minute of NumPy on any machine, a loaded one longer), so that it compiles:
    # kidym's own bug is raised, not hidden behind a NumPy run
    with pytest.raises(kidym.CompileError, match="bug in kidym"):
        kidym.simulate(eq, t_end=1e5, initial={"phi": 0.3}, engine="auto", n_points=11)


def test_a_missing_compiler_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(kidym.CompileError, match="no-such-cc` not found"):
        CompiledSystem.build(equations(PENDULUM))


def test_compiler_output_is_carried(monkeypatch, tmp_path):
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path))
    with pytest.raises(kidym.CompileError) as e:
        build(generate_c(equations(PENDULUM)), extra_flags=("-fno-such-option-kidym",))
    assert "no-such-option-kidym" in e.value.output
    assert list(tmp_path.glob("*.so")) == []


def test_cli_codegen_prints_the_table_and_writes_the_source(tmp_path, capsys):
    from kidym.cli import main

    model = tmp_path / "pendulum.kdm"
    model.write_text(PENDULUM, encoding="utf-8")
    assert main(["codegen", str(model), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "routine" in out and "rhs" in out and "solve" in out
    src = (tmp_path / "out" / "pendulum.c").read_text(encoding="utf-8")
    rhs_row = next(line for line in out.splitlines() if line.startswith("rhs"))
    header_row = next(line for line in src.splitlines() if line.startswith(" *   rhs "))
    assert rhs_row.split()[1:5] == header_row.split()[2:6]
    assert int(rhs_row.split()[4]) == 1     # one function: cos(phi)


def test_cli_run_compiled_and_auto(tmp_path, capsys):
    from kidym.cli import main

    model = tmp_path / "pendulum.kdm"
    model.write_text(PENDULUM + " INITIAL := t(0), phi(0.5);", encoding="utf-8")
    assert main(["run", str(model), "--engine", "auto", "--t-end", "1", "--points", "11",
                 "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "engine: auto → " in out
    assert main(["run", str(model), "--engine", "compiled", "--t-end", "1", "--points", "11",
                 "--out", str(tmp_path / "o")]) == 0
    assert "engine=compiled" in capsys.readouterr().out
    lines = (tmp_path / "o" / "results.csv").read_text().splitlines()
    assert lines[0].startswith("t,phi,phi't") and len(lines) == 12


def test_a_cached_model_starts_without_generating_c_again(monkeypatch, tmp_path):
    """The cache is also keyed on the equations: a hit skips generation (most of a
    cached start of a big model); a damaged library is not used through it either."""
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path))
    compiled_module = importlib.import_module("kidym.simulation.compiled")
    eq = equations(PENDULUM)
    first = CompiledSystem.build(eq)

    def no_generation(*args, **kwargs):
        raise AssertionError("C generated again for a cached model")

    monkeypatch.setattr(compiled_module, "generate_c", no_generation)
    again = CompiledSystem.build(equations(PENDULUM))   # derived anew: same equations
    assert again.path == first.path and again.code == first.code
    y, p = np.array([0.3, -0.2]), again.parameter_vector()
    np.testing.assert_array_equal(again.rhs(0.1, y, p), first.rhs(0.1, y, p))
    # other equations (another model, events) are other entries
    with pytest.raises(AssertionError, match="generated again"):
        CompiledSystem.build(equations(PENDULUM.replace("m = 2;", "m = 2; k = 3;")
                                       + " Cs.phi = k;"))
    with pytest.raises(AssertionError, match="generated again"):
        CompiledSystem.build(eq, events=[kidym.Event("phi", terminal=True)])
    # a damaged library is rebuilt, never loaded through the index (damaged as a new
    # file: truncating the one this process has mapped would crash it with SIGBUS)
    damaged = first.path.with_name("damaged.tmp")
    damaged.write_bytes(first.path.read_bytes()[:100])
    os.replace(damaged, first.path)
    with pytest.raises(AssertionError, match="generated again"):
        CompiledSystem.build(eq)
