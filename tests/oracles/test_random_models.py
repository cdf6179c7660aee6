"""Differential tests on random models: kidym vs SymPy ``KanesMethod``, NumPy vs compiled.

The models come from :func:`tests.oracles.random_models.models`; the reference equations
are built from the same random description with ``KanesMethod``
(:func:`tests.oracles.random_models.oracle`), never from kidym's parse or derivation.
The models include quaternion bodies, pseudo-velocities and velocity formulas
(non-holonomic constraints); see the module docstring of ``random_models``.
Hypothesis runs derandomized, so CI sees the same models every time: about 260 models
in all (200 parsed and derived, 42 against KanesMethod, 8 compiled, 7 integrated with
the energy checked), ~30 s. A longer run:
``python3 -m tests.oracles.run_random_models --models 10000 --jobs 2`` (docs/oracles.md).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import kidym
from kidym.eom.equations import Equations
from kidym.simulation.simulate import NumpySystem

from .random_models import RandomModel, models, oracle

SETTINGS = dict(deadline=None, derandomize=True, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: Relative tolerance of kidym vs KanesMethod (different expression trees, same numbers).
RTOL_ORACLE = 1e-9
#: Relative tolerance of NumPy vs compiled evaluation of the same equations.
RTOL_ENGINES = 1e-12


def derive(model: RandomModel) -> Equations:
    """Parse and derive the model's text with kidym."""
    return kidym.derive(kidym.parse(model.text()))


def expanded(eq: Equations, values: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """``(M, F)`` of kidym's expanded SymPy ``mass_matrix`` and ``forcing`` at ``values``.

    The expanded view can hold ~10^5 operations for three bodies (lambdify then takes
    tens of seconds), so it is evaluated by substituting floats and ``evalf``.
    """
    def number(matrix: sp.Matrix) -> np.ndarray:
        rule = {s: sp.Float(values[str(s)], 17) for s in matrix.free_symbols}
        return np.array([[float(e.xreplace(rule).evalf(17)) for e in row]
                         for row in matrix.tolist()])

    return number(eq.mass_matrix), number(eq.forcing).reshape(-1)


def random_states(model: RandomModel, seed: int, count: int) -> list[dict[str, float]]:
    """States ``{q, w, t}`` drawn with a NumPy generator seeded by Hypothesis.

    Quaternions have a norm in [0.5, 1.5] (kidym's rotation is homogeneous in ``Λ``); the
    speeds are kidym's independent ones (``q't``, ``v1``, ``ωXB1``).
    """
    rng = np.random.default_rng(seed)
    quaternions = [b.quaternion for b in model.bodies if b.quaternion is not None]
    states = []
    for _ in range(count):
        state = {q: rng.uniform(-np.pi, np.pi) for q in model.coordinates}
        for lam in quaternions:
            x = rng.normal(size=4)
            x *= rng.uniform(0.5, 1.5) / np.linalg.norm(x)
            state.update(zip(lam, x))
        state.update({w: rng.uniform(-2.0, 2.0) for w in model.speeds()})
        state["t"] = rng.uniform(0.0, 5.0)
        states.append(state)
    return states


def assert_close(got: np.ndarray, expected: np.ndarray, rtol: float, what: str,
                 model: RandomModel, state: dict[str, float]) -> None:
    """``|got − expected| ≤ rtol·max(1, max|expected|)`` elementwise, with a full report."""
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    err = float(np.abs(got - expected).max(initial=0.0))
    assert err <= rtol * scale, (
        f"{what} differs by {err:.3e} (scale {scale:.3e})\nmodel:\n{model.text()}"
        f"state: {state}\ngot:\n{got}\nexpected:\n{expected}")


def check_against_oracle(model: RandomModel, seed: int, n_states: int = 3, *,
                         sympy_view: bool | None = None) -> None:
    """Compare kidym's ``q̇``, ``M``, ``F`` and ``M⁻¹F`` with KanesMethod's at random states.

    kidym's side is its NumPy evaluation (the named intermediates that simulations use)
    at every state, and, with ``sympy_view``, the expanded SymPy
    ``Equations.mass_matrix``/``forcing`` at the first one. By default the SymPy view is
    checked for models of at most two bodies (with three, a quaternion body and velocity
    formulas it can hold ~5·10^5 operations, several seconds to evaluate).
    """
    if sympy_view is None:
        sympy_view = len(model.bodies) <= 2
    eq = derive(model)
    assert [str(q) for q in eq.coordinates] == list(model.coordinates)
    assert [str(w) for w in eq.speeds] == list(model.speeds())
    ref = oracle(model)
    system = NumpySystem.build(eq)
    p = system.parameter_vector()
    values = model.parameter_values
    for i, state in enumerate(random_states(model, seed, n_states)):
        m_ref, f_ref = ref.evaluate({**values, **state})
        if i == 0 and sympy_view:  # the SymPy matrices of Equations (slow: one state)
            m, f = expanded(eq, {**values, **state})
            assert_close(m, m_ref, RTOL_ORACLE, "M (SymPy)", model, state)
            assert_close(f, f_ref, RTOL_ORACLE, "F (SymPy)", model, state)
        y = np.array([state[n] for n in system.state_names])
        # M and F as they are (no solve: a generated M may be singular somewhere)
        qdot, m, f = system.rhs_function(state["t"], y.tolist(), p.tolist())
        m, f = np.asarray(m, float).reshape(m_ref.shape), np.asarray(f, float).reshape(-1)
        assert_close(np.asarray(qdot, float), ref.rates({**values, **state}), RTOL_ORACLE,
                     "q̇", model, state)
        assert_close(m, m_ref, RTOL_ORACLE, "M", model, state)
        assert_close(f, f_ref, RTOL_ORACLE, "F", model, state)
        if np.linalg.cond(m_ref) < 1e6:
            assert_close(np.linalg.solve(m, f), np.linalg.solve(m_ref, f_ref),
                         RTOL_ORACLE * 1e3, "M⁻¹F", model, state)


# ------------------------------------------------------------------------------ tests

@pytest.mark.parametrize("axis", ["x", "y", "z"])
def test_oracle_quaternion_turns_as_the_elementary_rotation(axis):
    """The oracle's ``S(Λ)`` of ``Λ = (cos a/2, sin a/2 e)`` is SymPy's turn by ``a`` about
    ``e`` (``orient_axis``), also for a non-unit ``Λ`` (homogeneous form)."""
    from sympy.physics.mechanics import ReferenceFrame

    from .random_models import quaternion_matrix

    a, k = sp.symbols("a k", positive=True)
    lam = [sp.cos(a / 2), sp.S.Zero, sp.S.Zero, sp.S.Zero]
    lam["xyz".index(axis) + 1] = sp.sin(a / 2)
    fixed, turned = ReferenceFrame("N"), ReferenceFrame("B")
    turned.orient_axis(fixed, getattr(fixed, axis), a)
    for scale in (1, k):
        difference = quaternion_matrix(tuple(scale * x for x in lam)) - fixed.dcm(turned)
        assert sp.simplify(difference) == sp.zeros(3, 3)


@settings(max_examples=200, **SETTINGS)
@given(models())
def test_generated_models_are_valid(model: RandomModel) -> None:
    """Every generated text parses and derives, with the coordinates in the listed order."""
    eq = derive(model)
    assert [str(q) for q in eq.coordinates] == list(model.coordinates)
    assert [str(w) for w in eq.speeds] == list(model.speeds())
    assert set(eq.model.parameter_values) == set(model.parameter_values)


@settings(max_examples=30, **SETTINGS)
@given(models(max_bodies=2), st.integers(0, 2**32 - 1))
def test_small_models_match_kanes_method(model: RandomModel, seed: int) -> None:
    check_against_oracle(model, seed)


@pytest.mark.slow
@settings(max_examples=12, **SETTINGS)
@given(models(), st.integers(0, 2**32 - 1))
def test_models_match_kanes_method(model: RandomModel, seed: int) -> None:
    check_against_oracle(model, seed)


@pytest.mark.slow
@settings(max_examples=8, **SETTINGS)
@given(models(), st.integers(0, 2**32 - 1))
def test_numpy_and_compiled_agree(model: RandomModel, seed: int) -> None:
    """``q̇``, ``M``, ``F`` and ``ẏ`` of both engines at random states, to 1e-12."""
    compiled = pytest.importorskip("kidym.simulation.compiled")
    eq = derive(model)
    numpy_system = NumpySystem.build(eq)
    try:
        c_system = compiled.CompiledSystem.build(eq)
    except kidym.CompileError as exc:  # pragma: no cover - depends on the toolchain
        if exc.kind == "internal":
            raise
        pytest.skip(f"no C compiler: {exc}")
    assert c_system.state_names == numpy_system.state_names
    p = numpy_system.parameter_vector()
    for state in random_states(model, seed, 3):
        y = np.array([state[n] for n in numpy_system.state_names])
        qdot, m, f = numpy_system.rhs_function(state["t"], y.tolist(), p.tolist())
        c_qdot, c_m, c_f = c_system.evaluate(state["t"], y, p)
        for got, expected, what in ((c_qdot, qdot, "q̇"), (c_m, m, "M"), (c_f, f, "F")):
            assert_close(got, np.asarray(expected, float).reshape(got.shape), RTOL_ENGINES,
                         what, model, state)
        if np.linalg.cond(np.asarray(m, float)) < 1e6:
            assert_close(c_system.rhs(state["t"], y, p), numpy_system.rhs(state["t"], y, p),
                         1e-10, "ẏ", model, state)


def trajectories_agree_and_conserve_energy(model: RandomModel, seed: int) -> None:
    """Short runs of both engines agree to 1e-8; KanesMethod's energy stays constant.

    ``model`` is conservative: no time dependence, only ``J`` and ``C`` elements, and
    velocity constraints (if any) homogeneous in the speeds, so they do no work.
    """
    pytest.importorskip("kidym.simulation.compiled")
    assert model.is_conservative()
    eq = derive(model)
    rng = np.random.default_rng(seed)
    initial = {n: rng.uniform(-1.0, 1.0) for n in (*model.coordinates, *model.speeds())}
    for b in model.bodies:
        if b.quaternion is not None:  # a unit quaternion
            x = rng.normal(size=4)
            initial.update(zip(b.quaternion, x / np.linalg.norm(x)))
    ref = oracle(model)
    mass, _ = ref.evaluate({**model.parameter_values, **initial, "t": 0.0})
    assume(np.linalg.cond(mass) < 1e4)
    runs = {}
    for engine in ("numpy", "compiled"):
        try:
            runs[engine] = kidym.simulate(eq, t_end=1.0, initial=initial, engine=engine,
                                          n_points=21, rtol=1e-12, atol=1e-12)
        except kidym.SimulationError:  # a singular configuration on the way
            assume(False)
    names = [*model.coordinates, *model.speeds()]
    y_np = np.array([runs["numpy"][n] for n in names])
    y_c = np.array([runs["compiled"][n] for n in names])
    assert_close(y_c, y_np, 1e-8, "trajectory", model, initial)
    energy = []
    for k in range(y_np.shape[1]):
        values = {**model.parameter_values, **dict(zip(names, y_np[:, k])), "t": 0.0}
        energy.append(sum(ref.energy(values)))
    energy = np.array(energy)
    scale = max(1.0, float(np.abs(energy).max()))
    assert np.ptp(energy) <= 1e-8 * scale, (energy, model.text())


@pytest.mark.slow
@settings(max_examples=4, **SETTINGS)
@given(models(max_bodies=2, time_dependent=False, element_classes=("J", "C")),
       st.integers(0, 2**32 - 1))
def test_trajectories_agree_and_conserve_energy(model: RandomModel, seed: int) -> None:
    trajectories_agree_and_conserve_energy(model, seed)


@pytest.mark.slow
@settings(max_examples=3, **SETTINGS)
@given(models(max_bodies=2, max_coordinates=2, time_dependent=False,
              element_classes=("J", "C"), require=("quaternion", "velocity formulas")),
       st.integers(0, 2**32 - 1))
def test_constrained_quaternion_trajectories_conserve_energy(model: RandomModel,
                                                             seed: int) -> None:
    """The same for quaternion bodies with velocity formulas (non-holonomic as a rule)."""
    trajectories_agree_and_conserve_energy(model, seed)


#: The one disagreement of the long run (docs/oracles.md, "What the long run found").
LONG_RUN_FINDING = (
    "A1 = -0.233; W1 = 2.0; a1 = -0.0; a2 = 0.247; d1 = -1.174; m1 = 1.365; Jx1 = 1.35; "
    "Jy1 = 1.058; Jz1 = 1.0; a3 = 0.847; m2 = 1.0; Jx2 = 1.0; Jy2 = 1.0; Jz2 = 1.0; "
    "Jxy1 = 0.0; Jyz1 = -0.049; Jxz1 = 0.0; k1 = -0.191; k2 = -0.293; k3 = 0.517;\n"
    "COORDINATES := q1, q2;\n"
    "B1 | Rz(a1) | Ry(a2), Sx(d1), m(m1), Jx(Jx1), Jy(Jy1), Jz(Jz1);\n"
    "B2~B1 | Ry(q1), Sx(178), Ry(q2), Sy(A1*sin(W1*t)) | Rx(a3), m(m2), Jx(Jx2), Jy(Jy2), "
    "Jz(Jz2), Jxy(Jxy1), Jyz(Jyz1), Jxz(Jxz1);\n"
    "PSEUDOVELOCITIES := v1;\n"
    "q2't = k1*cos(q1)*q1't + k2*cos(q1)*q1't + k3*v1;\n")


def test_long_run_finding_is_rounding_of_cancelling_terms():
    """The long run's one disagreement: both engines' ``F`` against a 40-digit evaluation
    of kidym's ``Equations.forcing``; errors within 1e-15 of the 178 m lever arm's terms
    (``178²·|w|² ≈ 6e4``), i.e. rounding, not a formula."""
    compiled = pytest.importorskip("kidym.simulation.compiled")
    eq = kidym.derive(kidym.parse(LONG_RUN_FINDING))
    state = {"q1": 1.8657077457399858, "q2": -2.718653411875727,
             "q1't": 1.3759034660057399, "v1": 0.9749794478748117, "t": 3.2642181091437967}
    numpy_system = NumpySystem.build(eq)
    y = np.array([state[n] for n in numpy_system.state_names])
    p = numpy_system.parameter_vector()
    f_numpy = np.asarray(numpy_system.rhs_function(state["t"], y.tolist(), p.tolist())[2],
                         float).reshape(-1)
    f_c = np.asarray(compiled.CompiledSystem.build(eq).evaluate(state["t"], y, p)[2],
                     float).reshape(-1)
    values = {**eq.model.parameter_values, **state}
    rule = {s: sp.Float(repr(values[str(s)]), 40) for s in eq.forcing.free_symbols}
    exact = np.array([float(e.xreplace(rule).evalf(40)) for e in eq.forcing])
    terms = 178.0**2 * (state["q1't"] ** 2 + state["v1"] ** 2)
    for f in (f_numpy, f_c):
        assert np.abs(f - exact).max() < 1e-15 * terms
