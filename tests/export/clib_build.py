"""The C library of a model compiled as a test needs it: a shared library loaded by ctypes."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from kidym.export.clib import CLibrary

#: The strictest flags the library promises to compile under without a warning.
STRICT = ("-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror")


def compiler() -> str:
    """The C compiler, or skip the test."""
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc})")
    return cc


def compile_files(lib: CLibrary, directory: Path, *sources: str, flags: tuple = (),
                  output: str = "libmodel.so") -> Path:
    """Write ``lib``'s files into ``directory`` and compile ``model.c`` (and ``sources``)."""
    for name, text in lib.files.items():
        (directory / name).write_text(text, encoding="utf-8")
    out = directory / output
    cmd = [compiler(), *STRICT, "-O2", *flags, f"{lib.prefix}.c", *sources, "-o", out.name,
           "-lm"]
    r = subprocess.run(cmd, cwd=directory, capture_output=True, text=True, check=False)
    assert r.returncode == 0 and not r.stderr, f"{' '.join(cmd)}\n{r.stderr}"
    return out


class Loaded:
    """``lib`` as a shared library: its API called through ctypes."""

    def __init__(self, lib: CLibrary, directory: Path) -> None:
        self.lib = lib
        self.dll = ctypes.CDLL(str(compile_files(lib, directory, flags=("-fPIC", "-shared"))))
        n_p, n_c = max(len(lib.parameter_names), 1), lib.n_constants

        class Parameters(ctypes.Structure):
            _fields_ = [("value", ctypes.c_double * n_p), ("constants", ctypes.c_double * n_c)]

        self.params = Parameters()
        self.dll.model_default_parameters(ctypes.byref(self.params))
        self.n_x = len(lib.state_names)

    def set_parameters(self, values: np.ndarray) -> None:
        for i, v in enumerate(values):
            self.params.value[i] = float(v)
        self.dll.model_update_parameters(ctypes.byref(self.params))

    def call(self, name: str, t: float, x: np.ndarray, n_out: int) -> tuple[int, np.ndarray]:
        x = np.ascontiguousarray(x, dtype=float)
        out = np.zeros(n_out)
        fn = getattr(self.dll, name)
        status = fn(ctypes.c_double(t), x.ctypes.data_as(ctypes.c_void_p),
                    ctypes.byref(self.params), out.ctypes.data_as(ctypes.c_void_p))
        return status, out

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        status, xdot = self.call("model_rhs", t, x, self.n_x)
        assert status == 0, status
        return xdot

    def jacobian(self, t: float, x: np.ndarray) -> np.ndarray:
        status, J = self.call("model_jacobian", t, x, self.n_x * self.n_x)
        assert status == 0, status
        return J.reshape(self.n_x, self.n_x)

    def outputs(self, t: float, x: np.ndarray) -> np.ndarray:
        self.dll.model_outputs.restype = None
        return self.call("model_outputs", t, x, len(self.lib.output_names))[1]
