"""The standalone C library (kidym/export/clib.py) against the compiled engine and the
NumPy engine, which evaluate the same equations by other routes (the engine's library
with its own flags and driver; Python floats through the NumPy engine's generated code
and NumPy's solves)."""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import kidym
from kidym.export.clib import c_library, c_string, write_c_library
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem
from tests.export.clib_build import Loaded, compile_files
from tests.fixtures import DOUBLE_PENDULUM, EXAMPLES, MOMENTS_ON_BODY_AXES

MODELS = {
    "double pendulum": DOUBLE_PENDULUM,
    "quaternion (free body)": (EXAMPLES / "free_body" / "free_body.kdm").read_text("utf-8"),
    "non-holonomic (rolling disc)":
        (EXAMPLES / "rolling_disc" / "rolling_disc.kdm").read_text("utf-8"),
    "closed loop (four-bar)": (EXAMPLES / "four_bar" / "four_bar.kdm").read_text("utf-8"),
    "time-dependent moment": MOMENTS_ON_BODY_AXES,
    "events (bouncing ball)":
        (EXAMPLES / "bouncing_ball" / "bouncing_ball.kdm").read_text("utf-8"),
}
#: Relative agreement of the routes: the same formulas in double precision, summed in
#: other orders (CSE, fused multiply-adds in the engine's build, NumPy's LAPACK solve).
REL = 1e-13


def _close(a: np.ndarray, b: np.ndarray, rel: float = REL) -> bool:
    return bool(np.all(np.abs(a - b) <= rel * max(1.0, float(np.max(np.abs(b))))))


@pytest.fixture(scope="module", params=list(MODELS), ids=list(MODELS))
def model(request, tmp_path_factory):
    eq = kidym.derive(kidym.parse(MODELS[request.param]))
    lib = c_library(eq)
    return eq, lib, Loaded(lib, tmp_path_factory.mktemp("clib"))


def _states(eq, n: int, seed: int = 31) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, size=(n, eq.n_q + eq.n_w))


def test_rhs_equals_both_engines(model):
    eq, lib, loaded = model
    engine = CompiledSystem.build(eq)
    numpy = NumpySystem.build(eq)
    rng = np.random.default_rng(7)
    p = engine.parameter_vector() * rng.uniform(0.8, 1.25, size=len(lib.parameter_names))
    loaded.set_parameters(p)
    for k, x in enumerate(_states(eq, 100)):
        t = 0.37 * k
        ours = loaded.rhs(t, x)
        assert _close(ours, engine.rhs(t, x, p)), (k, x)
        assert _close(ours, numpy.rhs(t, x, p)), (k, x)


def test_outputs_and_jacobian_equal_the_engine(model):
    eq, _lib, loaded = model
    engine = CompiledSystem.build(eq, jacobian=True)
    p = engine.parameter_vector()
    loaded.set_parameters(p)
    for k, x in enumerate(_states(eq, 20, seed=5)):
        t = 0.21 * k
        assert _close(loaded.outputs(t, x), engine.outputs_at(np.array([t]), x[None, :], p)[0])
        assert _close(loaded.jacobian(t, x), engine.jacobian(t, x, p), rel=1e-12)


def test_defaults_and_tables_are_the_model(model, tmp_path):
    eq, lib, _ = model
    meta = json.loads(lib.metadata)
    assert [s["name"] for s in meta["states"]] == [str(s) for s in (*eq.coordinates,
                                                                     *eq.speeds)]
    values = eq.model.parameter_values
    assert [p["default"] for p in meta["parameters"]] == [values[str(s)]
                                                          for s in eq.parameters]
    # the C tables, read back through a tiny program: names and defaults as in the model
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\n#include "model.h"\nint main(void) {\n'
                    '    int i; model_parameters p; model_default_parameters(&p);\n'
                    '    for (i = 0; i < MODEL_NX; ++i) printf("%s\\n", model_state_names[i]);\n'
                    '    for (i = 0; i < MODEL_NP; ++i) printf("%s=%.17g\\n", '
                    'model_parameter_names[i], p.value[i]);\n    return 0;\n}\n')
    exe = compile_files(lib, tmp_path, "main.c", output="main")
    lines = subprocess.run([str(exe)], capture_output=True, check=True).stdout.decode(
        "utf-8").splitlines()
    n_x = eq.n_q + eq.n_w
    assert lines[:n_x] == list(lib.state_names)
    read = [line.rsplit("=", 1) for line in lines[n_x:]]
    assert [(n, float(v)) for n, v in read] == [(str(s), values[str(s)])
                                                 for s in eq.parameters]


def test_events_and_resets_equal_the_engine(tmp_path):
    eq = kidym.derive(kidym.parse(MODELS["events (bouncing ball)"]))
    lib = c_library(eq)
    assert lib.event_names, "the bouncing ball declares an event"
    loaded = Loaded(lib, tmp_path)
    engine = CompiledSystem.build(eq)
    p = engine.parameter_vector()
    loaded.set_parameters(p)
    dll = loaded.dll
    for x in _states(eq, 10, seed=11):
        _status, g = loaded.call("model_event_indicators", 0.3, x, len(lib.event_names))
        assert _close(g, engine.events_at(0.3, x, p))
        for k in range(len(lib.event_names)):
            new = np.zeros_like(x)
            dll.model_reset(ctypes.c_int(k), ctypes.c_double(0.3),
                            x.ctypes.data_as(ctypes.c_void_p), ctypes.byref(loaded.params),
                            new.ctypes.data_as(ctypes.c_void_p))
            assert _close(new, engine.reset_at(k, 0.3, x, p))


def test_deterministic_and_no_model_text_in_the_code(tmp_path):
    text = ("Масса = 1.5; y = 2; NAN = 0.5;  # names a C compiler must never see as C #\n"
            "Стержень | Rz(φ) | Sx(y/2), Масса, 0, Масса*y^2/12, Масса*y^2/12;\n"
            "Pm.ωZСтержень = -NAN*φ't;  GRAVITY := 0, -g, 0;")
    eq = kidym.derive(kidym.parse(text))
    first = write_c_library(eq, tmp_path / "a")
    second = write_c_library(kidym.derive(kidym.parse(text)), tmp_path / "b")
    for name in first:
        assert first[name].read_bytes() == second[name].read_bytes(), name
    # and in another process, with another hash seed
    code = ("import sys, kidym; from kidym.export.clib import c_library; "
            "sys.stdout.write(c_library(kidym.derive(kidym.parse(sys.stdin.read()))).source)")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], input=text.encode("utf-8"),
                           capture_output=True, check=True, env=env).stdout.decode("utf-8")
    assert other == first["model.c"].read_text("utf-8")
    # outside comments (which show names through comment_text), the model's names are
    # in the C only as the escaped bytes of string literals
    for name in ("model.c", "model.h"):
        src = re.sub(r"/\*.*?\*/", "", first[name].read_text("utf-8"), flags=re.S)
        assert src.isascii()
        assert "Масса" not in src and "Стержень" not in src
        assert c_string("Масса") in src or name == "model.h"
    meta = json.loads(first["model.json"].read_text("utf-8"))
    assert {"Масса", "y"} <= {p["name"] for p in meta["parameters"]}
    lib = c_library(eq)
    Loaded(lib, tmp_path)   # compiles warning-free under -Wall -Wextra -pedantic -Werror


def test_c_string_escapes_every_byte_that_could_act():
    assert c_string('a*/b"?\\') == '"a\\052\\057b\\042\\077\\134"'
    assert c_string("λ") == '"\\316\\273"'
    assert c_string("x y_1") == '"x y_1"'


def test_bad_prefix_is_a_clear_error():
    eq = kidym.derive(kidym.parse(DOUBLE_PENDULUM))
    for bad in ("Model", "kidym", "kd_x", "1x", "a-b", "x" * 40):
        with pytest.raises(ValueError, match="C library prefix"):
            c_library(eq, prefix=bad)


def test_controls_model_has_its_solve_and_says_it_has_no_jacobian(tmp_path):
    eq = kidym.derive(kidym.load(EXAMPLES / "two_link_control" / "two_link_control.kdm"))
    lib = c_library(eq)
    assert "#define MODEL_HAS_JACOBIAN 0" in lib.header
    loaded = Loaded(lib, tmp_path)
    engine = CompiledSystem.build(eq)
    p = engine.parameter_vector()
    for k, x in enumerate(_states(eq, 20, seed=3) * 0.5):
        assert _close(loaded.rhs(0.1 * k, x), engine.rhs(0.1 * k, x, p))
    status, _ = loaded.call("model_jacobian", 0.0, x, x.size ** 2)
    assert status == -1


def test_model_names_that_look_like_the_api(tmp_path):
    """Quantities named like the library's macros and functions (`MODEL_X_phi`,
    `model_rhs`, `kidym_model_rhs` is no name a model can give C): the routines come
    before the header, so its macros never meet them, and the library still agrees with
    the engine."""
    text = """l = 1; m = 1; b = 0.5; g = 9.81;
    MODEL_X_phi = b*sin(phi); model_rhs = MODEL_X_phi*phi't; MODEL_NX = model_rhs/2;
    Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
    Pm.ωZRod = -model_rhs - MODEL_NX;
    GRAVITY := 0, -g, 0;  SHOW := MODEL_X_phi;"""
    eq = kidym.derive(kidym.parse(text))
    loaded = Loaded(c_library(eq), tmp_path)
    engine = CompiledSystem.build(eq)
    p = engine.parameter_vector()
    for k, x in enumerate(_states(eq, 10)):
        assert _close(loaded.rhs(0.1 * k, x), engine.rhs(0.1 * k, x, p))


EXAMPLE_MODELS = sorted(EXAMPLES.glob("*/*.kdm"))


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLE_MODELS, ids=[p.stem for p in EXAMPLE_MODELS])
def test_every_example_model_compiles_warning_free_and_agrees(path, tmp_path):
    """The library of every example model with equations of motion compiles under
    -Wall -Wextra -pedantic -Werror, and its right-hand side equals the NumPy engine's:
    to 1e-11 here, not the 1e-13 of the models above, because the two solve the
    augmented systems of the constrained examples by different eliminations (Gaussian in
    the C, LAPACK in NumPy), whose rounding grows with the system's condition number (the
    slider-crank's rates differ by about 1e-13 near its start)."""
    model = kidym.load(path)
    try:
        eq = kidym.derive(model)
        eq.require_motion()
    except ValueError as exc:
        pytest.skip(f"no equations of motion: {exc}")
    if model.inputs:   # the refusal is tested by tests/simulation/test_inputs.py
        pytest.skip("external inputs (ВХОДЫ): the C library takes none")
    lib = c_library(eq)
    loaded = Loaded(lib, tmp_path)
    numpy = NumpySystem.build(eq)
    p = numpy.parameter_vector()
    rng = np.random.default_rng(1)
    y0 = np.array(lib.initial_state)
    for k in range(5):
        x = y0 + 0.01 * rng.standard_normal(y0.size)   # near the start: away from
        t = 0.1 * k                                     # singular configurations
        assert _close(loaded.rhs(t, x), numpy.rhs(t, x, p), rel=1e-11)
