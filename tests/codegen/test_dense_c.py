"""The one dense solver of the generated C (kidym/codegen/dense_c.py): LU with partial
pivoting, compiled with the engine's flags and called through ctypes, against
``numpy.linalg.solve`` (LAPACK's LU with partial pivoting) on random matrices,
ill-conditioned ones and a matrix that needs pivoting; singular matrices refused.

The bound: the solution of a backward-stable solve has a relative error of about
``cond(A) · ε``; the test allows ``100 n cond(A) ε`` for both and compares each with
the exact solution of a system made from a known ``x``."""

from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

from kidym.codegen.build import BASE_FLAGS, compiler
from kidym.codegen.dense_c import DENSE_SOLVER

pytestmark = pytest.mark.compiled

WRAPPER = """
int solve(int n, double *A, double *b, int *piv) {
    if (kd_lu(n, A, piv)) return 1;
    kd_lu_solve(n, A, piv, b);
    return 0;
}
"""


@pytest.fixture(scope="module")
def solve(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dense")
    source = folder / "dense.c"
    source.write_text("#include <math.h>\n" + DENSE_SOLVER + WRAPPER, encoding="utf-8")
    library = folder / "dense.so"
    subprocess.run([*compiler(), *BASE_FLAGS, "-o", str(library), str(source), "-lm"],
                   check=True, capture_output=True)
    lib = ctypes.CDLL(str(library))
    lib.solve.restype = ctypes.c_int
    pd = ctypes.POINTER(ctypes.c_double)

    def call(A: np.ndarray, b: np.ndarray) -> tuple[int, np.ndarray]:
        n = len(b)
        a = np.ascontiguousarray(A, dtype=float).copy()
        x = np.ascontiguousarray(b, dtype=float).copy()
        piv = np.zeros(n, dtype=np.intc)
        rc = lib.solve(n, a.ctypes.data_as(pd), x.ctypes.data_as(pd),
                       piv.ctypes.data_as(ctypes.POINTER(ctypes.c_int)))
        return rc, x

    return call


def ill_conditioned(n: int, cond: float, rng: np.random.Generator) -> np.ndarray:
    """``U diag(s) Vᵀ`` with singular values from 1 down to ``1/cond``."""
    u, _ = np.linalg.qr(rng.standard_normal((n, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return u @ np.diag(np.logspace(0, -np.log10(cond), n)) @ v.T


def check(solve, A: np.ndarray, x: np.ndarray) -> None:
    b = A @ x
    rc, got = solve(A, b)
    assert rc == 0
    ref = np.linalg.solve(A, b)
    # b = A x is rounded, so x is the exact solution only up to cond(A) ε as well
    bound = 100 * len(x) * np.linalg.cond(A) * np.finfo(float).eps * np.linalg.norm(x)
    assert np.linalg.norm(ref - x) <= bound
    assert np.linalg.norm(got - x) <= bound
    # and the residual of a backward-stable solve: about ε |A| |x|
    res = np.linalg.norm(A @ got - b)
    assert res <= 100 * len(x) * np.finfo(float).eps * np.linalg.norm(A) * np.linalg.norm(got)


@pytest.mark.parametrize("n", [1, 2, 5, 12, 40])
def test_random_matrices_as_numpy(solve, n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(5):
        check(solve, rng.standard_normal((n, n)), rng.standard_normal(n))


@pytest.mark.parametrize("cond", [1e4, 1e8, 1e11])
def test_ill_conditioned_matrices_as_numpy(solve, cond: float) -> None:
    rng = np.random.default_rng(int(np.log10(cond)))
    for n in (3, 8, 20):
        check(solve, ill_conditioned(n, cond, rng), rng.standard_normal(n))


def test_a_matrix_that_needs_pivoting(solve) -> None:
    """A zero and a tiny leading entry: without row swaps the first is a division by
    zero and the second loses every digit."""
    for lead in (0.0, 1e-20):
        A = np.array([[lead, 1.0, 2.0], [1.0, 1.0, 1.0], [2.0, -1.0, 3.0]])
        check(solve, A, np.array([1.0, -2.0, 0.5]))


def test_an_augmented_saddle_point_matrix(solve) -> None:
    """``[M −Gᵀ; G 0]`` as the constraint solve forms it (a zero block on the diagonal)."""
    rng = np.random.default_rng(7)
    L = rng.standard_normal((6, 6))
    M = L @ L.T + 6 * np.eye(6)
    G = rng.standard_normal((2, 6))
    A = np.block([[M, -G.T], [G, np.zeros((2, 2))]])
    check(solve, A, rng.standard_normal(8))


def test_singular_matrices_are_refused(solve) -> None:
    rng = np.random.default_rng(3)
    A = rng.standard_normal((5, 5))
    A[4] = A[0] + 2 * A[1]                      # a dependent row
    assert solve(A, rng.standard_normal(5))[0] == 1
    assert solve(np.zeros((3, 3)), np.ones(3))[0] == 1
    assert solve(np.full((2, 2), np.nan), np.ones(2))[0] == 1
