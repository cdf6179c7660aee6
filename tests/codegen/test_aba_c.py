"""The recursive O(n) solve (:mod:`kidym.codegen.aba_c`) against the dense one.

Oracles: the dense route's ``LDLᵀ`` solve of the formed ``M``, ``F`` (compiled), the
NumPy engine's ``numpy.linalg.solve`` of the same formed equations, and Pinocchio's
articulated-body algorithm on the chain built as a Pinocchio model; differences are
bounded by ``cond(M)`` times the rounding unit with a margin of 10³.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import kidym
from kidym.codegen import aba_c
from kidym.codegen.aba_c import tree_plan
from kidym.codegen.build import build
from kidym.codegen.emit import generate_c
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem
from tests.fixtures import EXAMPLES

EPS = np.finfo(float).eps
MARGIN = 1e3

# a branched tree: a rotation by -q2 + a (sign and offset), a prismatic joint, fixed
# rotations before a joint and in a central record, products of inertia, a spring, a
# damper and a drive that changes with time
TREE = """\
CALCULATION := DYNAMICS;
m = 1.2; l = 0.4; k = 20; c = 0.3; F0 = 2; W = 3; a = 0.2; g = 9.81;
Base | Sz(0.1), Rz(q1) | Sx(l/2), m(m), Jx(0.01), Jy(0.02), Jz(0.03), Jxy(0.001);
Arm~Base | Sx(l), Ry(-q2 + a) | Rx(0.3), Sz(-l/2), m(m), Jx(0.02), Jy(0.03), Jz(0.01), Jxz(0.002);
Slide~Arm | Sz(-l), Sx(s) | m(0.5), Jx(0.01), Jy(0.01), Jz(0.01);
Twin~Base | Sy(l), Rx(0.4), Rz(q3) | Sx(l/2), m(0.7), Jx(0.01), Jy(0.015), Jz(0.02);
Tip~Twin | Sx(l), Ry(-q4) | Sx(l/2), m(0.3), Jx(0.002), Jy(0.003), Jz(0.004);
Cs.s = k;
Dd.q4 = c;
Pdrive.q1 = F0*cos(W*t);
GRAVITY := 0, 0, -g;
INITIAL := t(0), q1(0.1), q2(0.2), s(0.05), q3(-0.3), q4(0.4);
TIME := t(0, 1);
"""


def chain(n: int) -> str:
    """The spatial n-link chain of ``examples/chain/make_chain.py``."""
    lines = ["CALCULATION := DYNAMICS;",
             "m = 1; l = 0.5; Jx = 0.025; Jy = 0.02; Jz = 0.005; g = 9.81;",
             "L1 | Rx(q1) | Sz(-l/2), m, Jx, Jy, Jz;"]
    for k in range(2, n + 1):
        lines.append(f"L{k}~L{k - 1} | Sz(-l), R{'x' if k % 2 else 'y'}(q{k}) "
                     "| Sz(-l/2), m, Jx, Jy, Jz;")
    lines += ["GRAVITY := 0, 0, -g;", "INITIAL := t(0), q1(0.3);", "TIME := t(0, 1);"]
    return "\n".join(lines) + "\n"


@functools.cache
def systems(text: str) -> tuple:
    """The dense and the recursive library of ``text`` and its NumPy system."""
    eq = kidym.derive(kidym.parse(text))
    built = []
    for solve in ("dense", "recursive"):
        code = generate_c(eq, solve=solve)
        built.append(CompiledSystem.from_library(eq, code, build(code)))
    return eq, built[0], built[1], NumpySystem.build(eq)


def states(eq, count: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.uniform(0, 2, count), rng.uniform(-1.5, 1.5, (count, eq.n_q + eq.n_w))


@pytest.mark.slow
@pytest.mark.parametrize("text", [TREE, chain(8)], ids=["tree", "chain"])
def test_recursive_solve_agrees_with_dense_and_numpy(text):
    eq, dense, rec, ns = systems(text)
    p = dense.parameter_vector()
    for t, y in zip(*states(eq)):
        M, F = dense.evaluate(t, y, p)[1:]
        bound = MARGIN * EPS * np.linalg.cond(M)
        want = dense.rhs(t, y, p)
        got = rec.rhs(t, y, p)
        scale = np.abs(want[eq.n_q:]).max()
        assert np.abs(got - want).max() <= bound * scale
        assert np.abs(got - ns.rhs(t, y, p)).max() <= bound * scale
        # kidym_eval: M by composite bodies, F by Newton-Euler, against the formed ones
        _, M2, F2 = rec.evaluate(t, y, p)
        assert np.abs(M2 - M).max() <= MARGIN * EPS * np.abs(M).max()
        assert np.abs(F2 - F).max() <= MARGIN * EPS * (np.abs(F).max() + np.abs(M).max())


def test_energy_rate_of_the_recursion_is_zero_on_a_conservative_chain():
    eq, dense, rec, _ = systems(chain(8))
    p = dense.parameter_vector()
    t, Y = states(eq)
    names = list(rec.output_names)
    k = names.index("energy't")
    got = rec.outputs_at(t, Y, p)[:, k]
    want = dense.outputs_at(t, Y, p)[:, k]
    # the sizes of the terms that cancel: the kinetic rate w·M ẇ and gravity's power
    for y, rate, formula in zip(Y, got, want):
        M = dense.evaluate(0.0, y, p)[1]
        wdot = dense.rhs(0.0, y, p)[eq.n_q:]
        size = abs(y[eq.n_q:]) @ np.abs(M) @ abs(wdot) + 1.0
        bound = MARGIN * EPS * np.linalg.cond(M) * size
        assert abs(rate) <= bound and abs(formula) <= bound


def test_recursive_solve_agrees_with_pinocchio():
    pin = pytest.importorskip("pinocchio")
    n = 8
    eq, _, rec, _ = systems(chain(n))
    model = pin.Model()
    parent = 0
    for k in range(1, n + 1):
        joint = pin.JointModelRX() if k % 2 else pin.JointModelRY()
        place = pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.0 if k == 1 else -0.5]))
        parent = model.addJoint(parent, joint, place, f"j{k}")
        model.appendBodyToJoint(parent, pin.Inertia(1.0, np.array([0.0, 0.0, -0.25]),
                                                    np.diag([0.025, 0.02, 0.005])),
                                pin.SE3.Identity())
    model.gravity.linear = np.array([0.0, 0.0, -9.81])
    data = model.createData()
    p = rec.parameter_vector()
    for y in states(eq)[1]:
        q, v = y[:n], y[n:]
        want = pin.aba(model, data, q, v, np.zeros(n))
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        got = rec.rhs(0.0, y, p)[n:]
        assert np.abs(got - want).max() <= MARGIN * EPS * np.linalg.cond(M) * np.abs(want).max()


def test_auto_takes_the_recursion_from_its_size_only_on_open_trees(monkeypatch):
    monkeypatch.setattr(aba_c, "RECURSIVE_FROM", 4)
    small, big = (kidym.derive(kidym.parse(chain(n))) for n in (3, 4))
    assert "solve" not in generate_c(small).options
    assert generate_c(big).options["solve"] == "recursive"
    assert "solve" not in generate_c(big, solve="dense").options
    loop = kidym.derive(kidym.parse((EXAMPLES / "four_bar" / "four_bar.kdm").read_text()))
    assert tree_plan(loop) is None
    with pytest.raises(ValueError, match="open tree"):
        generate_c(loop, solve="recursive")
    with pytest.raises(ValueError, match="expected 'auto', 'dense' or 'recursive'"):
        generate_c(small, solve="aba")


@pytest.mark.slow
def test_analytic_jacobian_over_the_recursive_route():
    eq, _, _, _ = systems(chain(3))
    got = []
    for solve in ("dense", "recursive"):
        code = generate_c(eq, solve=solve, jacobian=True)
        cs = CompiledSystem.from_library(eq, code, build(code))
        got.append(cs.jacobian(0.0, np.linspace(-1, 1, 6), cs.parameter_vector()))
    assert np.abs(got[1] - got[0]).max() <= MARGIN * EPS * np.abs(got[0]).max()


def test_time_dependent_placement_and_shared_coordinate_are_not_trees():
    moving = chain(3).replace("L1 | Rx(q1)", "L1 | Sx(0.1*sin(t)), Rx(q1)")
    assert tree_plan(kidym.derive(kidym.parse(moving))) is None
    shared = chain(3).replace("Ry(q2)", "Ry(q2), Rz(q2)")
    assert tree_plan(kidym.derive(kidym.parse(shared))) is None
