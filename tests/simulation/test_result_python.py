"""What a Python user does with a result (issue 29): a short ``repr``, pandas and xarray
tables, ``Result.plot`` one physical kind per axis with the model's units."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import kidym
from tests.fixtures import DOUBLE_PENDULUM

#: a cart on a spring with a pendulum, in units: an angle, a length, and a force output
CART = """UNITS := m(kg), l(m), t(s);
m = 1, kg; M = 2, kg; l = 0.5, m; g = 9.81, m/s^2; k = 20, N/m;
Cart | Sx(x) | M, 0, 0, 0;
Pole ~ Cart | Rz(th) | Sx(l), m, 0, 0, 0;
Fk = -k*x, N;
Px.x = Fk;
GRAVITY := 0, -g, 0;
INITIAL := x(0.1), th(-1);
SHOW := Fk;
"""


def pint_equal(a: str, b: str) -> bool:
    import pint

    ureg = pint.UnitRegistry()
    return ureg.Quantity(1, a) == ureg.Quantity(1, b)


@pytest.fixture(scope="module")
def pendulum():
    model = kidym.parse(DOUBLE_PENDULUM)
    return model, kidym.simulate(model, t_end=0.5, n_points=26, engine="numpy")


def test_repr_is_a_summary_without_arrays(pendulum):
    _, r = pendulum
    text = repr(r)
    assert "array" not in text and len(text) < 400
    for part in ("engine='numpy'", "status=0", "t=0…0.5 (26 points)", "'phi1'", "\"phi2't\""):
        assert part in text


def test_to_pandas_and_to_xarray_hold_the_arrays_by_name(pendulum):
    _, r = pendulum
    frame = r.to_pandas()
    assert list(frame.columns) == r.names and frame.index.name == "t"
    np.testing.assert_array_equal(frame.index.to_numpy(), r.t)
    data = r.to_xarray()
    assert list(data.data_vars) == r.names
    np.testing.assert_array_equal(data["t"].to_numpy(), r.t)
    for name in r.names:
        np.testing.assert_array_equal(frame[name].to_numpy(), r[name])
        np.testing.assert_array_equal(data[name].to_numpy(), r[name])
    assert data.attrs["engine"] == "numpy" and data.attrs["parameter:l2"] == r.parameters["l2"]
    assert frame.attrs["parameters"] == r.parameters


def test_to_pandas_without_pandas_says_what_to_install(pendulum, monkeypatch):
    _, r = pendulum
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"to_pandas needs pandas: pip install pandas"):
        r.to_pandas()


def test_plot_one_kind_per_axis_with_the_models_units():
    pytest.importorskip("pint")
    model = kidym.parse(CART)
    r = kidym.simulate(model, t_end=0.2, n_points=11)
    axes = r.plot(["x", "th", "x't", "th't", "Fk"], model=model)
    labels = [ax.get_ylabel() for ax in axes]
    # x is a length (Sx), th an angle (Rz), their rates per second, Fk in the unit given;
    # one quantity a panel: its name (a rate with its dot) on the axis
    # (a force: not on the axis of x, as outputs.png had it)
    assert labels == ["x, m", "th, rad", r"$\dot{\mathregular{x}}$, m/s",
                      r"$\overset{\bullet}{\mathregular{th}}$, rad/s",
                      f"Fk, {model.units['Fk']}"]
    assert pint_equal(model.units["Fk"], "N")
    legends = [ax.get_legend() for ax in axes]
    assert legends == [None] * 5
    assert axes[-1].get_xlabel() == "t, s"
    for ax, name in zip(axes, ["x", "th", "x't", "th't", "Fk"]):
        (line,) = ax.get_lines()
        np.testing.assert_array_equal(line.get_ydata(), r[name])
    import matplotlib.pyplot as plt

    plt.close("all")


def test_plot_into_one_axes_takes_one_kind(pendulum):
    import matplotlib.pyplot as plt

    model, r = pendulum
    _, ax = plt.subplots()
    assert r.plot(["phi1", "phi2"], ax=ax, model=model) == [ax]
    assert ax.get_ylabel() == "angle, rad" and len(ax.get_lines()) == 2
    with pytest.raises(ValueError, match=r"one axes takes quantities of one kind; these are "
                                         r"of 2: phi1; phi1't \(pass names="):
        r.plot(["phi1", "phi1't"], ax=ax, model=model)
    with pytest.raises(KeyError, match="no quantity `psi`"):
        r.plot("psi")
    # without the model: the coordinates and the speeds, a panel each
    assert [a.get_ylabel() for a in r.plot()] == ["coordinates", "speeds"]
    plt.close("all")


def test_the_angular_velocity_projections_are_angular_speeds():
    """The ball's pseudo-velocities ωXКуля … are its angular velocity: one axis, rad/s."""
    from tests.fixtures import EXAMPLES

    model = kidym.load(EXAMPLES / "ball" / "ball.kdm")
    r = kidym.simulate(model, t_end=0.1, n_points=5)
    speeds = [n for n in r.state_names if n.startswith("ω")]
    assert len(speeds) == 3
    (ax,) = r.plot(speeds, model=model)
    assert ax.get_ylabel() == "angular speed, rad/s"
    import matplotlib.pyplot as plt

    plt.close("all")


def test_a_backend_the_user_chose_is_kept():
    """Jupyter chooses its inline backend through MPLBACKEND: importing kidym's plots
    must not replace it by Agg (Result.plot would then show nothing there)."""
    import os
    import subprocess
    from pathlib import Path

    code = ("import matplotlib, kidym.report.plots\n"
            "print(matplotlib.get_backend())")
    root = Path(__file__).resolve().parents[2]
    for chosen, want in (("svg", "svg"), (None, "agg")):
        env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
        if chosen:
            env["MPLBACKEND"] = chosen
        env["PYTHONPATH"] = str(root)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, cwd=root, timeout=120)
        assert out.stdout.strip().lower() == want, out.stderr
