"""M and F of kidym vs SymPy ``KanesMethod`` on the same system (independent oracle)."""

import numpy as np
import pytest
import sympy

import kidym
from kidym.simulation.simulate import NumpySystem
from tests.fixtures import DOUBLE_PENDULUM, chain_text
from tests.oracles import sympy_mechanics as oracles


def _random_states(eq, rng, n=8):
    for _ in range(n):
        yield {str(s): rng.uniform(-np.pi, np.pi) for s in (*eq.coordinates, *eq.speeds)}


def _params(rng, names):
    # moments of inertia in [0.5, 1]: any three satisfy the triangle inequality, which
    # parameter_vector checks (a real body)
    return {k: rng.uniform(0.5, 1.0) if k.startswith("J") else rng.uniform(0.5, 2.0)
            for k in names}


CASES = [
    ("double pendulum", DOUBLE_PENDULUM, oracles.double_pendulum),
    ("chain n=3", chain_text(3), lambda: oracles.chain(3)),
]


@pytest.mark.parametrize("label,text,oracle", CASES, ids=[c[0] for c in CASES])
def test_numpy_engine_matches_kanes_method(label, text, oracle):
    eq = kidym.derive(kidym.parse(text))
    ref = oracle()
    assert [str(q) for q in eq.coordinates] == [str(q) for q in ref.coordinates]
    assert [str(w) for w in eq.speeds] == [str(w) for w in ref.speeds]
    system = NumpySystem.build(eq)
    rng = np.random.default_rng(7)
    for state in _random_states(eq, rng):
        params = _params(rng, eq.model.parameter_values)
        p = system.parameter_vector(params)
        y = np.array([state[n] for n in system.state_names])
        _, M, F, _ = system.evaluate(0.0, y, p)
        M_ref, F_ref = ref.evaluate({**state, **params})
        np.testing.assert_allclose(M, M_ref, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(F, F_ref, rtol=1e-10, atol=1e-10)


def test_expanded_sympy_form_matches_kanes_method_symbolically():
    eq = kidym.derive(kidym.parse(DOUBLE_PENDULUM))
    ref = oracles.double_pendulum()
    diff_m = sympy.simplify(eq.mass_matrix - ref.mass_matrix)
    diff_f = sympy.simplify(sympy.expand_trig(eq.forcing - ref.forcing))
    assert diff_m == sympy.zeros(2, 2)
    assert diff_f == sympy.zeros(2, 1)


@pytest.mark.parametrize("label,text,oracle", CASES, ids=[c[0] for c in CASES])
def test_energy_output_matches_oracle(label, text, oracle):
    eq = kidym.derive(kidym.parse(text))
    ref = oracle()
    E_ref = sympy.lambdify([*ref.coordinates, *ref.speeds, *ref.parameters],
                           ref.kinetic_energy + ref.potential_energy)
    system = NumpySystem.build(eq)
    rng = np.random.default_rng(11)
    for state in _random_states(eq, rng, 4):
        p = system.parameter_vector()
        y = np.array([state[n] for n in system.state_names])
        ours = system.outputs(0.0, y, p)[system.output_names.index("energy")]
        args = [state[str(s)] for s in (*ref.coordinates, *ref.speeds)]
        args += [eq.model.parameter_values[str(s)] for s in ref.parameters]
        assert ours == pytest.approx(E_ref(*args), rel=1e-12, abs=1e-12)
