"""Simulation driver: options, failures named with time and state, atomic output."""

import numpy as np
import pytest

import kidym
from kidym.simulation.result import write_atomically
from tests.fixtures import DOUBLE_PENDULUM


def test_methods_agree_and_converge():
    model = kidym.parse(DOUBLE_PENDULUM)
    init = {"phi1": 0.4, "phi2": -0.3}
    ref = kidym.simulate(model, t_end=2, initial=init, rtol=1e-12, atol=1e-13)
    for method in ("RK45", "Radau"):
        r = kidym.simulate(model, t_end=2, initial=init, method=method, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(r.y, ref.y, atol=1e-6)


def test_small_oscillation_period_of_a_physical_pendulum():
    text = "m = 1; l = 1; Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12; GRAVITY := g, 0, 0;"
    r = kidym.simulate(kidym.parse(text), t_end=10, initial={"phi": 1e-4},
                       t_eval=np.linspace(0, 10, 10001), rtol=1e-11, atol=1e-14)
    phi = r["phi"]
    ups = [r.t[k - 1] - phi[k - 1] * (r.t[k] - r.t[k - 1]) / (phi[k] - phi[k - 1])
           for k in range(1, len(phi)) if phi[k - 1] < 0 <= phi[k]]
    period = np.diff(ups).mean()
    # physical pendulum: T = 2π sqrt(I_O / (m g d)), I_O = m l²/3, d = l/2, g = 9.8062
    assert period == pytest.approx(2 * np.pi * np.sqrt((1 / 3) / (9.8062 / 2)), rel=1e-6)


def test_singular_mass_matrix_is_named_with_time_and_state():
    text = "m = 1; Spin | Rz(phi) | m, 0, 0, 0;"   # a point mass spinning about itself
    with pytest.raises(kidym.SimulationError,
                       match=r"mass matrix is singular: at this state no mass moves "
                             r"with the speed phi't at t = 0") as e:
        kidym.simulate(kidym.parse(text), t_end=1)
    assert "phi" in e.value.state and "try:" in str(e.value)


@pytest.mark.parametrize("engine", ["numpy", "compiled", "auto"])
def test_non_finite_rhs_is_reported_and_optional(engine):
    text = "m = 1; Slider | Sx(x) | m, 0, 0, 0; Pf.x = 1/(1 - x);"
    model = kidym.parse(text)
    with pytest.raises(kidym.SimulationError, match=r"cannot be evaluated.* at t = 0\n"):
        kidym.simulate(model, t_end=5, initial={"x": 1.0}, engine=engine)
    r = kidym.simulate(model, t_end=5, initial={"x": 1.0}, raise_on_failure=False,
                       engine=engine)
    assert not r.success


def test_unknown_initial_name():
    with pytest.raises(KeyError, match="not a state"):
        kidym.simulate(kidym.parse(DOUBLE_PENDULUM), t_end=1, initial={"phi3": 1})


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    class Boom(str):
        def __len__(self):
            raise RuntimeError("boom")

    target = tmp_path / "r.csv"
    write_atomically(target, "a,b\n")
    with pytest.raises(TypeError):
        write_atomically(target, 12345)  # type: ignore[arg-type]
    assert target.read_text() == "a,b\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.csv"]


@pytest.mark.parametrize(("option", "message"), [
    ({"t_end": float("inf")}, "t_end must be a finite time"),
    ({"t_start": float("nan")}, "t_start must be a finite time"),
    ({"n_points": 0}, "n_points must be a whole number of at least 2"),
    ({"n_points": 1}, "n_points must be a whole number of at least 2"),
    ({"rtol": -1}, "rtol must be a positive number"),
    ({"rtol": 0}, "rtol must be a positive number"),
    ({"atol": -1}, "atol must be zero or a positive number"),
    ({"max_step": 0}, "max_step must be positive"),
    ({"t_eval": [0.0, float("inf")]}, "t_eval must be a non-empty sequence of finite"),
])
@pytest.mark.parametrize("engine", ["numpy", "compiled", "batch"])
def test_options_that_cannot_work_are_named(option, message, engine):
    """`t_end=inf` ran forever, `n_points=0` raised IndexError, `n_points=1` ran 0 to 0,
    negative tolerances were taken."""
    model = kidym.parse("m = 1; B | Sx(x) | m(m), Jx(1), Jy(1), Jz(1); Cs.x = 1;"
                        "INITIAL := t(0), x(1);")
    with pytest.raises(ValueError, match=message):
        if engine == "batch":
            kidym.simulate_batch(model, initial=[{"x": 1.0}], **option)
        else:
            kidym.simulate(model, engine=engine, **option)


@pytest.mark.parametrize("engine", ["numpy", "compiled", "codegen", "batch"])
def test_a_model_without_degrees_of_freedom_is_named(engine):
    """It failed with `max() arg is an empty sequence` (C) and an IndexError (NumPy)."""
    model = kidym.parse("B | Sx(1 + sin(t)) | m(1), Jx(1), Jy(1), Jz(1);")
    with pytest.raises(ValueError, match="has no degrees of freedom"):
        if engine == "codegen":
            kidym.codegen.generate_c(kidym.derive(model))
        elif engine == "batch":
            kidym.simulate_batch(model, parameters=[{}])
        else:
            kidym.simulate(model, engine=engine)


def test_run_time_parameters_that_make_an_inertia_impossible_are_refused() -> None:
    from make_chain import chain_text

    model = kidym.parse(chain_text(2))
    with pytest.raises(ValueError, match=r"body `L1`: the moments of inertia violate the "
                                         r"triangle inequality: Jz = 0\.5 exceeds .* with "
                                         r"parameters Jx = 0\.025, Jy = 0\.02, Jz = 0\.5"):
        kidym.simulate(model, t_end=0.1, engine="numpy", parameters={"Jz": 0.5})
    pendulum = kidym.parse(DOUBLE_PENDULUM)
    with pytest.raises(ValueError, match=r"body `Rod2`: the mass is negative \(m = -0\.7\), "
                                         r"with parameters l2 = 0\.9, m2 = -0\.7"):
        kidym.simulate(pendulum, t_end=0.1, engine="numpy", parameters={"m2": -0.7})
    # a change that keeps the bodies real is accepted
    kidym.simulate(model, t_end=0.1, engine="numpy", parameters={"Jx": 0.02})
