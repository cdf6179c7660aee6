"""The biped of seed 003: the old record form (Fig. 2) and the new one (Fig. 3)
describe the same mechanism — same mass matrix and forcing at random states."""

import numpy as np

import kidym
from kidym.simulation.simulate import NumpySystem
from tests.fixtures import BIPED_FIG2, BIPED_FIG3


def test_fig2_and_fig3_records_give_the_same_equations():
    eq2 = kidym.derive(kidym.parse(BIPED_FIG2))
    eq3 = kidym.derive(kidym.parse(BIPED_FIG3))
    assert [str(q) for q in eq2.coordinates] == [str(q) for q in eq3.coordinates]
    assert eq3.n_w == 12 and len(eq3.model.bodies) == 12
    s2, s3 = NumpySystem.build(eq2), NumpySystem.build(eq3)
    rng = np.random.default_rng(9)
    for _ in range(6):
        y = rng.uniform(-1.5, 1.5, 24)
        _, M2, F2, _ = s2.evaluate(0.0, y, s2.parameter_vector())
        _, M3, F3, _ = s3.evaluate(0.0, y, s3.parameter_vector())
        np.testing.assert_allclose(M2, M3, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(F2, F3, rtol=1e-11, atol=1e-11)
        assert np.all(np.linalg.eigvalsh(M3) > 0)


def test_fig3_form_is_more_compact_than_fig2():
    """Seed 003 Table 1: the new record form needs fewer operations."""
    n2 = len(kidym.derive(kidym.parse(BIPED_FIG2)).intermediates())
    n3 = len(kidym.derive(kidym.parse(BIPED_FIG3)).intermediates())
    assert n3 < n2
