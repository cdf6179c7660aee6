"""One word for one thing: ``parameters=`` and ``state=`` across the analyses; the old
keywords (``params=``, ``equilibrium(initial=…)``) still work for one release and warn.

The oracle of each old call is the same call with the new name (and, for the spring,
the closed form ``y* = −m g / c``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import kidym

SPRING = """m = 1; c = 100; g = 9.81;
Block | Sy(y) | m(m), Jx(0), Jy(0), Jz(0);
Cspring.y = c;
GRAVITY := 0, -g, 0;
"""


@pytest.fixture(scope="module")
def eq() -> kidym.Equations:
    return kidym.derive(kidym.parse(SPRING))


def test_new_names_do_not_warn(eq) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = kidym.equilibrium(eq, state={"y": 0.1}, parameters={"c": 50.0})
        lin = kidym.linearize(eq, {"y": -0.2}, parameters={"c": 50.0})
        md = kidym.modes(eq, {"y": -0.2}, parameters={"c": 50.0})
    assert found.coordinates["y"] == pytest.approx(-9.81 / 50.0, rel=1e-12)
    assert lin.A[1, 0] == pytest.approx(-50.0, rel=1e-12)   # ÿ = −(c/m) y + …
    assert np.sort(np.abs(np.imag(md.eigenvalues)))[-1] == pytest.approx(np.sqrt(50.0),
                                                                        rel=1e-12)


@pytest.mark.parametrize(("call", "old", "new"), [
    ("equilibrium", {"params": {"c": 50.0}}, {"parameters": {"c": 50.0}}),
    ("equilibrium", {"initial": {"y": 0.3}}, {"state": {"y": 0.3}}),
    ("linearize", {"params": {"c": 50.0}}, {"parameters": {"c": 50.0}}),
    ("modes", {"params": {"c": 50.0}}, {"parameters": {"c": 50.0}}),
])
def test_old_names_warn_and_mean_the_same(eq, call, old, new) -> None:
    function = getattr(kidym, call)
    with pytest.warns(DeprecationWarning, match=rf"{call}\({next(iter(old))}=…\) is "
                                                rf"deprecated .* use {next(iter(new))}=…"):
        before = function(eq, **old)
    after = function(eq, **new)
    if call == "equilibrium":
        assert before.to_json() == after.to_json()
    elif call == "linearize":
        assert np.array_equal(before.A, after.A) and before.parameters == after.parameters
    else:
        assert np.array_equal(before.eigenvalues, after.eigenvalues)


def test_continuation_takes_parameters(eq) -> None:
    with pytest.warns(DeprecationWarning, match=r"continuation\(params=…\)"):
        old = kidym.continuation(eq, "c", [50.0, 60.0], params={"g": 9.81})
    new = kidym.continuation(eq, "c", [50.0, 60.0], parameters={"g": 9.81})
    assert np.array_equal(old.eigenvalues, new.eigenvalues)


def test_old_and_new_name_together_is_an_error(eq) -> None:
    with pytest.raises(TypeError, match=r"got both params= and parameters="):
        kidym.linearize(eq, params={"c": 1.0}, parameters={"c": 1.0})
