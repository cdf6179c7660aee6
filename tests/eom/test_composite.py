"""Composite-body sums of ``M`` and ``F`` against the body-by-body structural sums.

Two independent routes of our own: the structural form pairs every body's partial
velocities (seed 000 eqs. (14)–(16)); the composite one carries inertia and wrench
up the tree (``kidym.eom.composite``). The SymPy ``KanesMethod`` oracles in
``tests/oracles`` check the default (composite where it applies) against a third.
"""

from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy as sp
from make_chain import chain_text

import kidym
from kidym.codegen import generate_c
from kidym.eom.composite import _rotate_inertia
from kidym.eom.system import SystemGraph
from kidym.errors import DerivationError
from kidym.kinematics import vectors as vx
from kidym.simulation.inputs import InputBinding
from kidym.simulation.simulate import NumpySystem
from tests.eom.test_inertia_routes import PLATE
from tests.fixtures import BIPED_FIG2

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*/*.kdm")
                  if "КИНЕМАТИКА" not in p.read_text(encoding="utf-8")
                  and p.parent.name != "kinematics")

# every kind of step: a prismatic (q-dependent) shift, a rheonomic shift, a
# constant turn, products of inertia, central frames shifted and turned, a branch
# and an inertial element
MIXED = """m = 2; g = 9.81; k = 3;
Slider | Sx(s), Sy(0.1*sin(2*t)), Rz(a) | Sx(0.1), Sy(0.05), Rx(0.3),
         m(m), Jx(0.3), Jy(0.2), Jz(0.4), Jxy(0.05), Jyz(-0.03), Jxz(0.02);
Arm~Slider | Sz(0.2), Ry(0.4), Rx(b) | Sz(-0.1), m(0.5), Jx(0.01), Jy(0.02), Jz(0.015),
         Jxy(0.004);
Other~Slider | Sy(-0.3), Ry(c), Sx(0.1*c) | Sx(0.05), m(0.7), Jx(0.02), Jy(0.03),
         Jz(0.01);
Jfly.b = 0.02;
Cspring.s = k;
Ddamp.c = 0.1;
GRAVITY := 0, -g, -g/2;"""


def _mf(eq, ys):
    system = NumpySystem.build(eq)
    if eq.model.inputs:   # external inputs (ВХОДЫ) at one value: both formations see it
        system = system.with_inputs(InputBinding(
            tuple(eq.model.inputs), tuple((lambda t, s: 0.7) for _ in eq.model.inputs),
            system.state_names))
    p = system.parameter_vector()
    out = []
    for y in ys:
        _, M, F, _ = system.evaluate(0.37, y, p)
        out.append((M, F))
    return out


def _compare(text: str, seed: int = 1, route: str = "auto"):
    model = kidym.parse(text)
    comp = kidym.derive(model, route=route, formation="composite")
    struct = kidym.derive(model, route=route, formation="structural")
    assert struct.formation == "structural"
    rng = np.random.default_rng(seed)
    ys = [rng.uniform(-1.5, 1.5, comp.n_q + comp.n_w) for _ in range(5)]
    for (M1, F1), (M2, F2) in zip(_mf(comp, ys), _mf(struct, ys)):
        scale = max(1.0, np.abs(M2).max(), np.abs(F2).max())
        np.testing.assert_allclose(M1, M2, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(F1, F2, rtol=0, atol=1e-12 * scale)
    return comp


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_composite_equals_structural(path):
    eq = _compare(path.read_text(encoding="utf-8"))
    assert eq.formation == "composite"


@pytest.mark.parametrize("text", [MIXED, PLATE, BIPED_FIG2, chain_text(6)],
                         ids=["mixed", "plate", "biped-fig2", "chain6"])
def test_models_composite_equals_structural(text):
    assert _compare(text).formation == "composite"


def test_speeds_entering_at_several_steps():
    """On the direct route the ball's pseudo-velocities enter at the rolling shift and
    at the quaternion both (and the disc's at several turns): pairs of increments
    at different steps and at one step are both summed."""
    for name in ("ball", "rolling_disc"):
        text = (ROOT / f"examples/{name}/{name}.kdm").read_text(encoding="utf-8")
        assert _compare(text, seed=4, route="direct").route == "direct"


def test_principal_route_is_structural():
    model = kidym.parse(PLATE)
    assert kidym.derive(model, inertia="principal").formation == "structural"
    with pytest.raises(DerivationError, match="full central tensors"):
        kidym.derive(model, inertia="principal", formation="composite")


def test_composite_grows_slower_than_structural():
    """O(n²) against O(n³) products: the per-call operation count of the generated
    code for an n-link chain (a count, not a timing)."""
    def ops(n, formation):
        eq = kidym.derive(kidym.parse(chain_text(n)), formation=formation)
        return generate_c(eq).mf_counts.total

    comp = [ops(n, "composite") for n in (6, 12)]
    struct = [ops(n, "structural") for n in (6, 12)]
    assert comp[1] < struct[1]
    assert comp[1] / comp[0] < struct[1] / struct[0]


def _random_symmetric(rng: np.random.Generator) -> list[list[float]]:
    A = rng.normal(size=(3, 3))
    return (A + A.T).tolist()


@pytest.mark.parametrize("axis", [0, 1, 2, None])
def test_rotate_inertia_equals_r_i_rt(axis: int | None) -> None:
    """The axis-turn shortcut (trace for one diagonal entry) against ``R I Rᵀ`` in NumPy."""
    rng = np.random.default_rng(7 if axis is None else axis)
    theta = 0.83
    if axis is None:  # a general turn: no axis kept, the full product
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    else:
        c, s = np.cos(theta), np.sin(theta)
        a, b = (x for x in range(3) if x != axis)
        R = np.eye(3)
        R[a, a], R[a, b], R[b, a], R[b, b] = c, -s, s, c
    I = _random_symmetric(rng)
    Rs = [[se.Integer(1) if x == 1.0 else (se.Integer(0) if x == 0.0 else se.Float(x))
           for x in row] for row in R]
    got = np.array([[float(x) for x in row]
                    for row in _rotate_inertia(Rs, [[se.Float(x) for x in r] for r in I])])
    np.testing.assert_allclose(got, R @ np.array(I) @ R.T, rtol=0, atol=1e-14)


def test_gyroscopic_collects_the_cross_product() -> None:
    """``w × J w`` with collected coefficients equals the plain cross product (SymPy)."""
    J = [[se.Symbol(f"J{min(i, j)}{max(i, j)}") for j in range(3)] for i in range(3)]
    w = [se.Symbol(f"w{i}") for i in range(3)]
    got = vx.gyroscopic(J, w)
    want = sp.Matrix(sp.sympify(w)).cross(sp.Matrix(sp.sympify(J)) * sp.Matrix(sp.sympify(w)))
    for x, y in zip(got, want):
        assert sp.expand(sp.sympify(x) - y) == 0
    # a diagonal tensor: one product of speeds per component, times J_kk − J_jj
    D = [[se.Symbol("A"), 0, 0], [0, se.Symbol("B"), 0], [0, 0, se.Symbol("C")]]
    x = sp.sympify(vx.gyroscopic(D, w)[0])
    assert sp.expand(x - (sp.Symbol("C") - sp.Symbol("B")) * sp.Symbol("w1") * sp.Symbol("w2")) == 0
    assert len(sp.Add.make_args(x)) == 1


@pytest.mark.parametrize("text", [MIXED, BIPED_FIG2], ids=["mixed", "biped"])
def test_gravity_carried_in_the_kinematics(text: str) -> None:
    """``acc_g`` (carried from ``−g`` at the fixed frame) equals ``a⁰ − Sᵀg`` per frame.

    The second route turns ``g`` by each frame's ``S`` directly; both are expanded
    to plain formulas and compared at random values of every symbol.
    """

    model = kidym.parse(text)
    system = SystemGraph(model)
    gravity = [system.resolve(x) for x in model.gravity]
    rng = np.random.default_rng(3)
    values: dict = {}
    for name, kin in system.bodies.items():
        for frame in (kin.frame, kin.centre):
            want = vx.add(frame.acc, vx.scale(-1, vx.tmatvec(frame.S, gravity)))
            for x, y in zip(frame.acc_g, want):
                diff = system.graph.expand(x - y)
                for s in diff.free_symbols:
                    values.setdefault(s, rng.uniform(-1.0, 1.0))
                got = float(diff.subs({s: values[s] for s in diff.free_symbols}))
                assert abs(got) < 1e-12, name
