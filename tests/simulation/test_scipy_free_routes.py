"""The routes of a compiled run that do without importing ``scipy.integrate`` give
SciPy's own numbers (issue 18: a cached compiled run loads no SciPy).

Each is compared, bit for bit, with SciPy itself: the Simpson rule of the energy
balance with :func:`scipy.integrate.cumulative_simpson`, the ``ERK8`` tables with
those built from ``scipy.integrate._ivp.dop853_coefficients`` imported the usual way.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import cumulative_simpson as scipy_cumulative_simpson
from scipy.integrate._ivp import dop853_coefficients as dop

from kidym.simulation import compiled_methods
from kidym.simulation.energy import cumulative_simpson, work_done


@pytest.mark.parametrize("n", [3, 4, 5, 8, 101, 502])
def test_cumulative_simpson_is_scipys_bit_for_bit(n):
    rng = np.random.default_rng(n)
    for x in (np.linspace(0.0, 3.0, n), np.cumsum(rng.uniform(0.01, 0.3, n))):
        y = np.sin(3 * x) + rng.normal(size=n)
        ours = cumulative_simpson(y, x)
        theirs = scipy_cumulative_simpson(y, x=x, initial=0.0)
        assert ours.shape == theirs.shape
        assert np.array_equal(ours, theirs)


def test_work_done_integrates_a_cubic_exactly_on_an_even_grid():
    """Independent of SciPy: Simpson's rule is exact for cubics on equal steps (at the
    ends of even numbers of intervals, where both formulas agree)."""
    t = np.linspace(0.0, 2.0, 9)
    w = work_done(t, 4 * t**3 - 3 * t**2 + 1)
    assert w[-1] == pytest.approx(2.0**4 - 2.0**3 + 2.0, rel=1e-14)


def test_erk8_tables_are_those_of_scipy_imported_by_name():
    s = dop.N_STAGES + 1
    A = np.zeros((s, s))
    A[:s - 1, :s - 1] = dop.A[:s - 1, :s - 1]
    A[s - 1, :s - 1] = dop.B
    b = np.r_[dop.B, 0.0]
    table = np.concatenate([[s, 8.0, 5.0], np.r_[dop.C[:s - 1], 1.0], A.ravel(), b,
                            b - dop.E5[:s]])
    assert np.array_equal(compiled_methods.erk8_table(), table)
    n_all = dop.N_STAGES_EXTENDED
    extension = np.concatenate([[n_all - s], dop.C[s:n_all],
                                dop.A[s:n_all, :n_all].ravel(), dop.D.ravel()])
    assert np.array_equal(compiled_methods.erk8_extension(), extension)
    # loaded by its file
    assert compiled_methods.dop853_coefficients().__name__ == "_kidym_dop853_coefficients"
