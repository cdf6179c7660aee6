"""Engines behind one interface, looked up by name (:mod:`kidym.simulation.engine`).

An engine added to the registry is run by ``kidym.simulate`` like the built-in ones:
it gets the prepared run (:class:`~kidym.simulation.spec.RunSpec`) and its result is
finished by the dispatcher. The oracle of the added engine (a recording wrapper of the
NumPy engine) is the NumPy engine itself: the same run gives the same arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

import kidym
from kidym.simulation import engine as registry
from kidym.simulation.simulate import ENGINE as NUMPY
from kidym.simulation.spec import RunSpec

PENDULUM = """l = 1; m = 2; g = 9.81;
Rod | Rz(phi) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
GRAVITY := 0, -g, 0;
INITIAL := phi(0.3);
TIME := t(0, 1);
"""


class RecordingEngine:
    """The NumPy engine under another name, recording what it is given."""

    name = "recording"

    def __init__(self) -> None:
        self.specs: list[RunSpec] = []

    def owns(self, system: object) -> bool:
        return False

    def check(self, options, system) -> None:
        NUMPY.check(options, system)

    def system(self, eq, options):
        return NUMPY.system(eq, options)

    def run(self, system, spec, options):
        self.specs.append(spec)
        return NUMPY.run(system, spec, options)


ENGINE = RecordingEngine()


def test_an_unknown_engine_lists_the_registered_ones() -> None:
    with pytest.raises(ValueError, match=r"engine must be one of numpy, compiled, auto, "
                                         r"got 'nosuch'"):
        kidym.simulate(kidym.parse(PENDULUM), engine="nosuch")
    with pytest.raises(ValueError, match=r"numpy, compiled, auto"):
        registry.engine_named("nosuch")


def test_a_registered_engine_runs_the_prepared_run(monkeypatch) -> None:
    monkeypatch.setitem(registry.ENGINES, "recording", __name__)
    ENGINE.specs.clear()
    eq = kidym.derive(kidym.parse(PENDULUM))
    got = kidym.simulate(eq, engine="recording", n_points=11, parameters={"m": 3.0},
                         initial={"phi't": 0.5})
    ref = kidym.simulate(eq, engine="numpy", n_points=11, parameters={"m": 3.0},
                         initial={"phi't": 0.5})
    (spec,) = ENGINE.specs
    assert np.array_equal(spec.y0, [0.3, 0.5]) and spec.parameters == {"m": 3.0}
    assert np.array_equal(spec.times, np.linspace(0.0, 1.0, 11))
    for name in ref.values:
        assert np.array_equal(got[name], ref[name]), name
    assert "energy_balance" in got.stats   # finished by the dispatcher


def test_each_system_belongs_to_its_engine() -> None:
    eq = kidym.derive(kidym.parse(PENDULUM))
    numpy_system = registry.engine_named("numpy").system(eq, None)
    assert registry.engine_of(numpy_system).name == "numpy"
    assert registry.engine_of(eq) is None and registry.engine_of(eq.model) is None
