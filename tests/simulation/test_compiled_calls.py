"""The thin Python calls into the compiled library (``kidym.simulation.compiled_calls``).

:meth:`CompiledSystem.rhs` (cached constants, fixed buffers) is checked against two
routes independent of it: the NumPy engine's right-hand side (generated Python and
LAPACK), and the plain ctypes route the call path used before (the constants computed
by ``kidym_constants`` for every call, a pointer built for every array), which must
agree bit for bit since it runs the same C on the same numbers. ``rhs_batch`` and
``dynamics_many`` are checked against single calls (exactly), the parameter cache against
a changed parameter vector, and bad shapes against clear errors.
"""

from __future__ import annotations

import ctypes
import threading
from functools import cache

import numpy as np
import pytest

import kidym
from kidym.errors import SimulationError
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem
from tests.codegen.shared import kidym_cache  # noqa: F401
from tests.fixtures import EXAMPLES

#: one model of each kind: holonomic, chain, constrained (closed loop), time-dependent
#: (a length prescribed as a formula of t), with controls (and t in its constraints)
MODELS = {
    "holonomic": "double_pendulum/double_pendulum.kdm",
    "chain": "chain/chain3.kdm",
    "constrained": "four_bar/four_bar.kdm",
    "time-dependent": "variable_links/one_link_prescribed.kdm",
    "controls": "two_link_control/two_link_control.kdm",
}
#: NumPy vs C: different solves of M ẇ = F (LU vs Cholesky) on the same M and F, whose
#: rounding is a few units in the last place times the condition number of M (below
#: 100 at these states); 1e-13 relative to the largest entry leaves a margin of ~5
REL = 1e-13


@cache
def _built(name: str):
    eq = kidym.derive(kidym.load(EXAMPLES / MODELS[name]))
    return NumpySystem.build(eq), CompiledSystem.build(eq, jacobian=True)


def _systems(name: str):
    """The two systems, the compiled one's stabilization set to the NumPy one's (the
    library keeps it as process state: another test in this process may have loaded the
    same library with Baumgarte terms)."""
    ns, cs = _built(name)
    if cs.equations.constraints is not None:
        cs.set_stabilization(ns.stabilization)
    return ns, cs


def _old_route(cs: CompiledSystem, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The call path before the thin one: constants per call, a pointer per array."""
    dp = ctypes.POINTER(ctypes.c_double)
    p = np.ascontiguousarray(p, dtype=float)
    y = np.ascontiguousarray(y, dtype=float)
    c = np.zeros(max(cs.code.n_constants, 1))
    cs.lib.kidym_constants(p.ctypes.data_as(dp), c.ctypes.data_as(dp))
    ydot = np.empty(cs.n_y)
    status = cs.lib.kidym_rhs(float(t), y.ctypes.data_as(dp), p.ctypes.data_as(dp),
                              c.ctypes.data_as(dp), ydot.ctypes.data_as(dp))
    assert status == 0
    return ydot


def _states(cs: CompiledSystem, k: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (k, cs.n_y))


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.max(np.abs(a - b)) <= REL * max(1.0, np.max(np.abs(b))))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_thin_rhs_equals_numpy_and_the_old_route(name):
    ns, cs = _systems(name)
    p = cs.parameter_vector()
    rng = np.random.default_rng(3)
    for y in _states(cs, 6, 1):
        t = float(rng.uniform(0.0, 3.0))
        got = cs.rhs(t, y, p)
        assert np.array_equal(got, _old_route(cs, t, y, p))
        assert _close(got, ns.rhs(t, y, p)), (got, ns.rhs(t, y, p))
        out = np.full(cs.n_y, np.nan)
        assert cs.rhs(t, y, p, out=out) is out and np.array_equal(out, got)
        # a fresh array each call: the result is not the call's buffer
        assert cs.rhs(t, y, p) is not got and not np.shares_memory(got, cs.rhs(t, y, p))
        # lists and integer arrays are converted, as before
        assert np.array_equal(cs.rhs(t, list(y), list(p)), got)


@pytest.mark.parametrize("name", ["holonomic", "time-dependent", "constrained"])
def test_rhs_batch_equals_single_calls_exactly(name):
    _ns, cs = _systems(name)
    p = cs.parameter_vector()
    Y = _states(cs, 17, 2)
    batch = cs.rhs_batch(0.7, Y, p)
    assert batch.shape == Y.shape
    assert np.array_equal(batch, np.array([cs.rhs(0.7, y, p) for y in Y]))
    out = np.empty_like(Y)
    assert cs.rhs_batch(0.7, Y, p, out=out) is out and np.array_equal(out, batch)
    assert cs.rhs_batch(0.7, Y[:0], p).shape == (0, cs.n_y)
    # a non-contiguous Y (every other row) is read correctly
    assert np.array_equal(cs.rhs_batch(0.7, Y[::2], p), batch[::2])


@pytest.mark.parametrize("name", ["holonomic", "time-dependent", "constrained"])
def test_dynamics_many_equals_single_calls_exactly(name):
    """``dynamics_many`` (the energy monitor's bound on every run of a study) is
    ``evaluate`` row by row, each row at its own time; a wrong shape is an error."""
    _ns, cs = _systems(name)
    p = cs.parameter_vector()
    Y = _states(cs, 9, 3)
    t = np.linspace(0.1, 0.9, len(Y))
    many = cs.dynamics_many(t, Y, p)
    for k, part in enumerate(zip(*(cs.evaluate(tk, y, p) for tk, y in zip(t, Y)))):
        assert many[k].shape == (len(Y), *part[0].shape)
        assert np.array_equal(many[k], np.array(part))
    # a non-contiguous Y (every other row) is read correctly
    assert np.array_equal(cs.dynamics_many(t[::2], Y[::2], p)[1], many[1][::2])
    with pytest.raises(ValueError, match="one state a row"):
        cs.dynamics_many(t, Y[:, 1:], p)


def test_changed_parameters_are_honoured():
    """The cached constants follow p: a new vector, the same vector changed in place,
    and back again (each against the old route, which computes them every call)."""
    ns, cs = _systems("holonomic")
    p = cs.parameter_vector().copy()
    y = _states(cs, 1, 4)[0]
    first = cs.rhs(0.0, y, p)
    rng = np.random.default_rng(9)
    for _ in range(3):
        # a new vector (each value scaled differently: scaling all of them at once
        # leaves the pendulum's accelerations unchanged, g/l and mass ratios are kept)
        p2 = cs.parameter_vector() * rng.uniform(0.5, 2.0, len(p))
        assert not _close(_old_route(cs, 0.0, y, p2), first)
        assert np.array_equal(cs.rhs(0.0, y, p2), _old_route(cs, 0.0, y, p2))
        assert _close(cs.rhs(0.0, y, p2), ns.rhs(0.0, y, p2))
        p[:] = p2                                    # the same array, changed in place
        assert np.array_equal(cs.rhs(0.0, y, p), _old_route(cs, 0.0, y, p2))
        assert np.array_equal(cs.rhs_batch(0.0, y[None], p)[0], _old_route(cs, 0.0, y, p2))
        J = cs.jacobian(0.0, y, p)
        p[:] = cs.parameter_vector()
        assert not np.array_equal(cs.jacobian(0.0, y, p), J)
    assert np.array_equal(cs.rhs(0.0, y, p), first)
    # explicit constants still override the cached ones
    p3 = cs.parameter_vector() * 3.0
    assert np.array_equal(cs.rhs(0.0, y, p, cs.constants(p)), first)
    assert np.array_equal(cs.rhs(0.0, y, p3, cs.constants(p3)), _old_route(cs, 0.0, y, p3))


def test_jacobian_thin_call_matches_central_differences():
    _ns, cs = _systems("chain")
    p = cs.parameter_vector()
    y = _states(cs, 1, 6)[0]
    J = cs.jacobian(0.2, y, p)
    h = 1e-6
    fd = np.column_stack([(_old_route(cs, 0.2, y + e, p) - _old_route(cs, 0.2, y - e, p))
                          / (2 * h) for e in np.eye(cs.n_y) * h])
    # central differences: error O(h²·f''') plus rounding O(eps·|f|/h) ≈ 1e-9
    np.testing.assert_allclose(J, fd, rtol=0, atol=1e-6 * max(1.0, np.abs(fd).max()))
    out = np.empty((cs.n_y, cs.n_y))
    assert cs.jacobian(0.2, y, p, out=out) is out and np.array_equal(out, J)
    assert cs.jacobian(0.2, y, p) is not J


def test_threads_do_not_share_buffers():
    """Threads calling one system at once each get their own buffers."""
    _ns, cs = _systems("chain")
    p = cs.parameter_vector()
    Y = _states(cs, 4, 7)
    want = [_old_route(cs, 0.0, y, p) for y in Y]
    bad = []

    def work(k):
        for _ in range(300):
            if not np.array_equal(cs.rhs(0.0, Y[k], p), want[k]):
                bad.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not bad


def test_wrong_shapes_give_clear_errors():
    _ns, cs = _systems("holonomic")
    p = cs.parameter_vector()
    y = np.zeros(cs.n_y)
    with pytest.raises(ValueError, match=r"the state y has shape \(3,\); .*\(4,\).*phi"):
        cs.rhs(0.0, y[:3], p)
    with pytest.raises(ValueError, match=r"the state y has shape \(1, 4\)"):
        cs.rhs(0.0, y[None], p)
    with pytest.raises(ValueError, match=r"the parameter vector p has shape \(2,\)"):
        cs.rhs(0.0, y, p[:2])
    with pytest.raises(ValueError, match=r"the parameter vector p has shape \(2,\)"):
        cs.rhs_batch(0.0, y[None], p[:2])
    with pytest.raises(ValueError, match=r"the states Y have shape \(4,\); .*\(K, 4\)"):
        cs.rhs_batch(0.0, y, p)
    with pytest.raises(ValueError, match=r"the states Y have shape \(2, 3\)"):
        cs.rhs_batch(0.0, np.zeros((2, 3)), p)
    with pytest.raises(ValueError, match=r"out= must be a float64 array of shape \(4,\)"):
        cs.rhs(0.0, y, p, out=np.empty(3))
    with pytest.raises(ValueError, match=r"out= must be a float64 array of shape \(2, 4\)"):
        cs.rhs_batch(0.0, np.zeros((2, 4)), p, out=np.empty((4, 2)))
    with pytest.raises(ValueError, match=r"out= must be a float64 array .* not a float32"):
        cs.jacobian(0.0, y, p, out=np.empty((4, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="the time t must be a number"):
        cs.rhs(None, y, p)
    with pytest.raises(ValueError, match="the state y must be an array of 4 numbers"):
        cs.rhs(0.0, ["a", "b", "c", "d"], p)
    # a NumPy scalar or a 0-d array is a time
    assert np.array_equal(cs.rhs(np.float32(0.5), y, p), cs.rhs(0.5, y, p))
    assert np.array_equal(cs.rhs(np.array(0.5), y, p), cs.rhs(0.5, y, p))


def test_batch_failure_names_the_row():
    """A row whose right-hand side is not finite: the error names the row and its
    state, as a single call names its state."""
    _ns, cs = _systems("holonomic")
    p = cs.parameter_vector()
    Y = _states(cs, 5, 8)
    Y[3, 0] = np.nan
    with pytest.raises(SimulationError, match="row 3 of Y") as err:
        cs.rhs_batch(1.0, Y, p)
    assert err.value.time == 1.0 and np.isnan(err.value.state[cs.state_names[0]])
    with pytest.raises(SimulationError, match="not finite"):
        cs.rhs(1.0, Y[3], p)


def test_model_without_parameters():
    """An empty parameter vector (every value written as a number) works both ways."""
    eq = kidym.derive(kidym.parse("Rod | Rz(phi) | Sx(0.5), 1, 0, 0.1, 0.1;"
                                  "GRAVITY := 0, -9.81, 0;"))
    ns, cs = NumpySystem.build(eq), CompiledSystem.build(eq)
    p = cs.parameter_vector()
    assert p.shape == (0,)
    Y = _states(cs, 3, 10)
    for y in Y:
        assert _close(cs.rhs(0.4, y, p), ns.rhs(0.4, y, p))
        assert np.array_equal(cs.rhs(0.4, y, []), _old_route(cs, 0.4, y, p))
    assert np.array_equal(cs.rhs_batch(0.4, Y, p), np.array([cs.rhs(0.4, y, p) for y in Y]))


def test_outputs_at_follows_parameters_and_checks_shapes():
    """outputs_at against the NumPy engine's outputs, after a change of p in place."""
    ns, cs = _systems("holonomic")
    p = cs.parameter_vector().copy()
    Y = _states(cs, 3, 11)
    t = np.array([0.0, 0.5, 1.0])
    first = cs.outputs_at(t, Y, p)
    p *= np.random.default_rng(12).uniform(0.5, 2.0, len(p))
    got = cs.outputs_at(t, Y, p)
    for k in range(len(t)):
        want = np.asarray(ns.evaluate(t[k], Y[k], p)[3], float)
        assert np.max(np.abs(got[k] - want)) <= 1e-12 * max(1.0, np.abs(want).max())
    assert not np.allclose(got, first)
    with pytest.raises(ValueError, match=r"states Y \(shape \(2, 4\)\) do not fit"):
        cs.outputs_at(t, Y[:2], p)
    with pytest.raises(ValueError, match=r"the parameter vector p has shape \(1,\)"):
        cs.outputs_at(t, Y, p[:1])
