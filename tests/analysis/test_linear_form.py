"""The printed (symbolic) linearisation of models with constraints: the descriptor form
``M δẇ + C δw + K δq − Gᵀ δλ = E δu``, ``G δẇ + C_c δw + K_c δq = E_c δu``,
``Φ_q δq = 0``, ``c_q δq + c_w δw = 0`` (kidym/analysis/linear_form.py).

Each test puts the parameter and multiplier values into the symbolic matrices, solves
the descriptor system for ``δẇ, δλ`` and eliminates the dependent states with the
constraint rows — a reduction written here with NumPy — and compares the reduced
``A`` with SymPy ``LagrangesMethod.linearize`` on the mechanism built independently
(tests/oracles/closed_loops.py) and with kidym's numeric ``A``. Before this form
existed, ``Linearization.symbolic()`` raised ``ValueError`` for every model here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import kidym
from tests.eom.test_constraints import FOUR_BAR, SLIDER, SLIDER_TEXT, consistent_states
from tests.oracles.closed_loops import LoopOracle, four_bar, slider_crank, t

from .sympy_linear import chain_linearizer, rolling_disc
from .test_linearize import DISC, DISC_CONSTRAINED, RHEONOMIC, _central_differences

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples" / "four_bar"


def _numeric(sym, lin) -> dict[str, np.ndarray]:
    """The matrices with the parameters and multipliers at their values; a symbol left
    over (a state, the time) is an error."""
    values = {**lin.parameters, **sym.multipliers}
    out = {}
    for k, m in sym.items():
        if m.rows == 0 or m.cols == 0:
            out[k] = np.zeros((m.rows, m.cols))
            continue
        rep = {s: values[s.name] for s in m.free_symbols}
        out[k] = np.array(m.xreplace(rep).evalf(), dtype=float)
    return out


def reduce_descriptor(sym, lin, independent: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``A``, ``B`` over ``independent`` from the descriptor form: ``[δẇ; δλ]`` from
    ``[M −Gᵀ; G 0]``, the dependent states from ``[Φ_q 0; c_q c_w] δy = 0``."""
    n = _numeric(sym, lin)
    coords, speeds = list(sym.columns["K"]), list(sym.columns["C"])
    n_q, n_w = len(coords), len(speeds)
    constrained = "G" in n
    m = n["G"].shape[0] if constrained else 0
    G = n["G"] if constrained else np.zeros((0, n_w))
    aug = np.block([[n["M"], -G.T], [G, np.zeros((m, m))]])
    lhs = np.block([[n["K"], n["C"]]])
    if constrained:
        lhs = np.vstack([lhs, np.hstack([n["K_c"], n["C_c"]])])
    Ay = np.vstack([np.hstack([n["Q_q"], n["Q_w"]]), np.linalg.solve(aug, -lhs)[:n_w]])
    n_u = n["E"].shape[1] if "E" in n else 0
    Bu = np.zeros((n_q + n_w, n_u))
    if n_u:
        rhs = np.vstack([n["E"], n["E_c"]]) if constrained else n["E"]
        Bu[n_q:] = np.linalg.solve(aug, rhs)[:n_w]
    names = coords + speeds
    ind = [names.index(s) for s in independent]
    if not constrained:
        return Ay[np.ix_(ind, ind)], Bu[ind]
    rows = np.vstack([np.hstack([n["Phi_q"], np.zeros((n["Phi_q"].shape[0], n_w))]),
                      np.hstack([n["c_q"], n["c_w"]])])
    dep = [i for i in range(n_q + n_w) if i not in ind]
    T = np.zeros((n_q + n_w, len(ind)))
    T[ind, np.arange(len(ind))] = 1.0
    T[dep] = -np.linalg.solve(rows[:, dep], rows[:, ind])
    return (Ay @ T)[ind], Bu[ind]


def sympy_reduced_A(oracle: LoopOracle, state: dict[str, float]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """SymPy's ``LagrangesMethod.linearize`` with the first coordinate independent, at
    ``state`` with the oracle's own ``q̈, λ`` (``x = [q1, q1't]``)."""
    lm = oracle.lagrange
    q = oracle.q
    qd = [x.diff(t) for x in q]
    qdd = [x.diff(t, 2) for x in q]
    acc, _lam = oracle.solve(state)
    op = {**{x: state[n] for x, n in zip(q, oracle.coordinates)},
          **{x: state[f"{n}'t"] for x, n in zip(qd, oracle.coordinates)}}
    # the multipliers as SymPy's linearizer takes them (its own solve_multipliers, as in
    # SymPy's docs; their sign is opposite to the λ of ``mass_matrix_full``)
    lam = lm.solve_multipliers(op, sol_type="dict")
    op.update({k: float(v.subs(oracle.params).subs(t, state.get("t", 0.0)))
               for k, v in lam.items()})
    op.update(dict(zip(qdd, acc)))
    A, _B, _r = lm.linearize(q_ind=q[:1], qd_ind=qd[:1], q_dep=q[1:], qd_dep=qd[1:],
                             op_point=op, A_and_B=True)
    A = A.subs(oracle.params).subs(t, state.get("t", 0.0))
    return np.array(A.evalf(), dtype=float), acc


def _close(a: np.ndarray, b: np.ndarray, rtol: float = 1e-10) -> None:
    assert a.shape == b.shape
    assert np.abs(a - b).max() <= rtol * max(1.0, np.abs(b).max()), (a, b)


@pytest.fixture(scope="module")
def oracle() -> LoopOracle:
    return four_bar(FOUR_BAR)


def _points(oracle: LoopOracle) -> dict[str, dict[str, float]]:
    """The hanging equilibrium (ẇ = 0, λ ≠ 0: the loop carries the weight) and a
    moving state on the constraints (ẇ ≠ 0), both with the oracle's ``Φ``."""
    from scipy.optimize import fsolve

    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    m1, m2, m3, g = (FOUR_BAR[k] for k in ("m1", "m2", "m3", "g"))

    def balance(z):   # Φ = 0 and the virtual work of gravity along the mechanism is 0
        q1, q2, q3 = z
        Phi = [a * np.cos(q1) + b * np.cos(q1 + q2) - d - c * np.cos(q3),
               a * np.sin(q1) + b * np.sin(q1 + q2) - c * np.sin(q3)]
        J = np.array([[-a * np.sin(q1) - b * np.sin(q1 + q2), -b * np.sin(q1 + q2),
                       c * np.sin(q3)],
                      [a * np.cos(q1) + b * np.cos(q1 + q2), b * np.cos(q1 + q2),
                       -c * np.cos(q3)]])
        dV = g * np.array([m1 * a / 2 * np.cos(q1) + m2 * (a * np.cos(q1)
                                                           + b / 2 * np.cos(q1 + q2)),
                           m2 * b / 2 * np.cos(q1 + q2), m3 * c / 2 * np.cos(q3)])
        null = np.linalg.svd(J)[2][-1]
        return [*Phi, dV @ null]

    q = fsolve(balance, [-1.0, 0.5, -1.5], xtol=1e-14)
    rest = {"q1": q[0], "q2": q[1], "q3": q[2], "q1't": 0.0, "q2't": 0.0, "q3't": 0.0}
    moving = consistent_states(oracle, np.random.default_rng(7), 1, [-0.4, 1.4], False)[0]
    moving.pop("t")
    return {"equilibrium": rest, "moving": moving}


@pytest.mark.parametrize("file", ["four_bar.kdm", "four_bar_coincide.kdm"])
@pytest.mark.parametrize("where", ["equilibrium", "moving"])
def test_four_bar_descriptor_form_reduces_to_sympy(oracle, file: str, where: str) -> None:
    """The four-bar with ``УРАВНЕНИЯ`` and with ``СОВПАДЕНИЕ``, at its equilibrium and at
    a moving state: the reduced descriptor form equals SymPy's ``linearize`` and
    kidym's numeric ``A``."""
    state = _points(oracle)[where]
    eq = kidym.derive(kidym.load(EXAMPLES / file))
    lin = kidym.linearize(eq, state)
    sym = lin.symbolic()
    assert sym.constrained and set(sym.multipliers) == set(eq.constraints.multiplier_names)
    expected, acc = sympy_reduced_A(oracle, {**state, "t": 0.0})
    if where == "moving":
        assert not lin.stationary and np.abs(acc).max() > 1.0
        assert any(v != 0 for v in sym.wdot.values())
    else:
        assert np.abs(acc).max() < 1e-9 and lin.stationary
        assert max(abs(v) for v in sym.multipliers.values()) > 1.0
    A_sym, _ = reduce_descriptor(sym, lin, ["q1", "q1't"])
    _close(A_sym, expected)
    A_lin, _ = reduce_descriptor(sym, lin, list(lin.states))
    _close(A_lin, lin.A)
    # the parameters stay symbols; the multipliers too, named like the outputs
    names = {s.name for s in sym["K"].free_symbols}
    assert {"a", "b", "c", "g"} <= names
    if where == "equilibrium":
        assert set(sym.multipliers) <= names


def test_four_bar_frequency_by_energy(oracle) -> None:
    """A closed form beside SymPy: the hanging four-bar is a one-degree-of-freedom
    system in ``q1``, ``ω² = V''(q1) / m(q1)`` with the loop closed by hand (two circles,
    tests/analysis/test_statics.py), ``V = g Σ mᵢ yᵢ`` and ``m(q1)`` the kinetic energy's
    coefficient of ``q̇1²/2``; the reduced descriptor form has ``−ω²`` in ``A``."""
    from .test_statics import _four_bar_branch

    state = _points(oracle)["equilibrium"]
    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    m1, m2, m3, g = (FOUR_BAR[k] for k in ("m1", "m2", "m3", "g"))
    q1 = state["q1"]
    P = np.array([a * np.cos(q1), a * np.sin(q1)])
    Q = np.array([d + c * np.cos(state["q3"]), c * np.sin(state["q3"])])
    u = np.array([d, 0.0]) - P
    sign = float(np.sign(u[0] * (Q - P)[1] - u[1] * (Q - P)[0]))

    def V(x: float) -> float:
        th2, r3, _Qx, _Qy, Py = _four_bar_branch(x, sign)
        return g * (m1 * a / 2 * np.sin(x) + m2 * (Py + b / 2 * np.sin(th2))
                    + m3 * c / 2 * np.sin(r3))

    h = 1e-4
    d2V = (V(q1 + h) - 2 * V(q1) + V(q1 - h)) / h ** 2
    plus, minus = _four_bar_branch(q1 + h, sign), _four_bar_branch(q1 - h, sign)
    th2 = _four_bar_branch(q1, sign)[0]
    dth2, dq3 = (plus[0] - minus[0]) / (2 * h), (plus[1] - minus[1]) / (2 * h)
    vG2 = (a * np.array([-np.sin(q1), np.cos(q1)])
           + b / 2 * np.array([-np.sin(th2), np.cos(th2)]) * dth2)
    mass = m1 * a**2 / 3 + m2 * vG2 @ vG2 + m2 * b**2 / 12 * dth2**2 + m3 * c**2 / 3 * dq3**2
    lin = kidym.linearize(kidym.derive(kidym.load(EXAMPLES / "four_bar.kdm")), state)
    A, _ = reduce_descriptor(lin.symbolic(), lin, ["q1", "q1't"])
    assert A[1, 0] == pytest.approx(-d2V / mass, rel=1e-6)
    assert d2V > 0                                   # hanging: stable


def test_rheonomic_slider_crank() -> None:
    """A slider-crank whose guide moves, ``e(t) = A sin(W t)``, driven by
    ``M0 sin(W t)``, at t ≠ 0 and a moving state: the time is put in (no ``t`` left),
    and the reduced form equals SymPy's and the numeric ``A``."""
    oracle = slider_crank(SLIDER)
    state = consistent_states(oracle, np.random.default_rng(3), 1, [-0.2, 0.45], True)[0]
    tt = state.pop("t")
    assert tt > 0.1
    eq = kidym.derive(kidym.parse(SLIDER_TEXT))
    lin = kidym.linearize(eq, state, t=tt)
    sym = lin.symbolic()
    assert not lin.stationary and sym.t == tt
    assert all(s.name != "t" for m in sym.values() for s in m.free_symbols)
    expected, _acc = sympy_reduced_A(oracle, {**state, "t": tt})
    _close(reduce_descriptor(sym, lin, ["q1", "q1't"])[0], expected)
    _close(reduce_descriptor(sym, lin, list(lin.states))[0], lin.A)
    # the moving guide: γ depends on t only, so K_c holds ∂(Gẇ)/∂q at the point's ẇ
    assert sym["K_c"] != sp.zeros(2, 3)


def test_time_is_put_in_without_constraints() -> None:
    """The pendulum on a shaking support (``Sy(a*sin(w*t))``) at t = 0.7, moving: the
    form has the time put in too (before, ``t`` stayed a symbol beside the point's
    numbers), and it reduces to the engine's right-hand side differenced."""
    eq = kidym.derive(kidym.parse(RHEONOMIC))
    lin = kidym.linearize(eq, {"phi": 0.4, "phi't": -1.3}, t=0.7)
    sym = lin.symbolic()
    assert not sym.constrained and not lin.stationary
    assert all(s.name != "t" for m in sym.values() for s in m.free_symbols)
    J = _central_differences(eq, 0.7, np.array([0.4, -1.3]))
    np.testing.assert_allclose(reduce_descriptor(sym, lin, ["phi", "phi't"])[0], J,
                               rtol=1e-7, atol=1e-7)


def test_rolling_disc_with_rolling_constraints() -> None:
    """The disc with ``КАЧЕНИЕ`` (one holonomic contact, two no-slip rows) rolling at a
    constant spin: the reduced form equals the numeric ``A`` and has SymPy's spectrum
    (the disc with the rolling as velocity formulas, KanesMethod)."""
    eq = kidym.derive(kidym.parse(DISC_CONSTRAINED))
    W = 4.0
    lin = kidym.linearize(eq, {"z": 0.3, "theta": 0.0, "psi": 0.0, "phi't": W,
                               "x't": 0.3 * W})
    sym = lin.symbolic()
    assert sym["Phi_q"].shape == (1, 6) and sym["c_w"].shape == (3, 6)
    A, _ = reduce_descriptor(sym, lin, list(lin.states))
    _close(A, lin.A)
    op = {"x": 0.0, "y": 0.0, "psi": 0.0, "theta": 0.0, "phi": 0.0, "psi't": 0.0,
          "theta't": 0.0, "phi't": W, "x't": 0.3 * W, "y't": 0.0}
    expected = np.linalg.eigvals(rolling_disc(op, DISC))
    ours = list(np.linalg.eigvals(A))
    for s in expected:
        k = int(np.argmin([abs(s - o) for o in ours]))
        assert abs(ours.pop(k) - s) <= 1e-9 * max(1.0, np.abs(expected).max())
    assert np.abs(expected.imag).max() > 0.1


def test_input_of_a_constrained_model() -> None:
    """The loaded four-bar of four_bar_statics.kdm at its equilibrium, the load ``H`` as
    input: ``E`` is the generalized force of ``H`` at ``x_Q = d + c cos q3`` (by hand:
    ``−c sin q3`` in the rocker's row), and the reduced ``B`` is the numeric one."""
    eq = kidym.derive(kidym.load(EXAMPLES / "four_bar_statics.kdm"))
    eqm = kidym.equilibrium(eq)
    lin = kidym.linearize(eq, dict(eqm.coordinates), inputs=["H"])
    sym = lin.symbolic()
    c = sp.Symbol("c")
    q3 = eqm.coordinates["q3"]
    E = np.array(sym["E"].subs(c, 1.0).evalf(), dtype=float).ravel()
    np.testing.assert_allclose(E, [0.0, 0.0, -np.sin(q3)], rtol=1e-12, atol=1e-15)
    assert sym["E"].free_symbols == {c}
    assert sym["E_c"] == sp.zeros(2, 1)
    A, B = reduce_descriptor(sym, lin, list(lin.states))
    _close(A, lin.A)
    _close(B, lin.B)


@pytest.mark.parametrize("seed", [1, 2])
def test_chain_form_equals_sympy_linearizer(seed: int) -> None:
    """The spatial 3-link chain (examples/chain) at a random moving state with random
    parameter values, gravity as the input: the symbolic form with the values put in,
    reduced, equals kidym's numeric ``A, B`` and SymPy's ``Linearizer`` (parameters as
    symbols there too) to 1e-10; the text output (no SymPy) lists the same entries."""
    import sys
    sys.path.insert(0, str(ROOT / "examples" / "chain"))
    from make_chain import chain_text

    rng = np.random.default_rng(seed)
    n = 3
    params = {"m": rng.uniform(0.5, 2), "l": rng.uniform(0.3, 1.2),
              "Jx": rng.uniform(0.03, 0.035), "Jy": rng.uniform(0.03, 0.035),
              "Jz": rng.uniform(0.01, 0.02), "g": rng.uniform(5, 15)}   # a real body
    op = {f"q{k}": rng.uniform(-1.2, 1.2) for k in range(1, n + 1)}
    op.update({f"q{k}'t": rng.uniform(-2, 2) for k in range(1, n + 1)})
    eq = kidym.derive(kidym.parse(chain_text(n)))
    lin = kidym.linearize(eq, op, parameters=params, inputs=["g"])
    assert not lin.stationary
    sym = lin.symbolic()
    text = sym.to_text()
    assert not sym._sympy                   # printed without SymPy
    for k, m in sym.items():                # every non-zero entry printed as it is
        for i, r in enumerate(sym.rows[k]):
            for j, c in enumerate(sym.columns[k]):
                if m[i, j] != 0:
                    assert f"  {k}[{r}, {c}] = " in text
    assert sym["M"].free_symbols == {sp.Symbol(s) for s in ("m", "l", "Jx", "Jy", "Jz")}
    A, B = reduce_descriptor(sym, lin, list(lin.states))
    _close(A, lin.A)
    _close(B, lin.B)
    A_ref, B_ref = chain_linearizer(n, op, params)
    _close(A, A_ref)
    _close(B, B_ref)


def test_printed_outputs(oracle) -> None:
    """Text, LaTeX and JSON of the descriptor form; the JSON entries read back as the
    same matrices."""
    eq = kidym.derive(kidym.load(EXAMPLES / "four_bar.kdm"))
    lin = kidym.linearize(eq, _points(oracle)["equilibrium"])
    sym = lin.symbolic()
    text = sym.to_text()
    assert "M δẇ + C δw + K δq − Gᵀ δλ = 0" in text and "Φ_q δq = 0" in text
    assert "multipliers at the point: λf1 = " in text and "K[q1't, q1] = " in text
    tex = sym.to_latex()
    assert "G^{\\mathsf{T}}" in tex and "\\Phi_q = \\begin{pmatrix}" in tex
    assert "\\lambda_{f_{1}}" in tex and "λ" not in tex
    data = json.loads(lin.to_json(symbolic=True))["symbolic"]
    assert data["multipliers"] == sym.multipliers
    for k, m in sym.items():
        names = {s.name: s for s in m.free_symbols}
        back = sp.Matrix([[sp.sympify(e, locals=names) for e in row]
                          for row in data["matrices"][k]["entries"]])
        assert back.shape == m.shape and (m.rows == 0 or back == m), k
    assert data["matrices"]["Phi_q"]["rows"] == ["f1", "f2"]


def test_cli_symbolic() -> None:
    """``kidym linearize --symbolic`` in the three formats."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    base = [sys.executable, "-m", "kidym", "linearize", str(EXAMPLES / "four_bar_statics.kdm"),
            "--state", "q1=-0.9577651802463485", "--state", "q2=0.37097573330678846",
            "--state", "q3=-1.4410255368546294", "--inputs", "H", "--symbolic"]
    out = {fmt: subprocess.run([*base, "--format", fmt], capture_output=True, text=True,
                               env=env, check=True).stdout
           for fmt in ("text", "latex", "json")}
    assert "A =" in out["text"] and "G δẇ + C_c δw + K_c δq = E_c δu" in out["text"]
    assert "\\delta\\dot{x} =" in out["latex"] and "K_c = \\begin{pmatrix}" in out["latex"]
    data = json.loads(out["json"])
    assert "A" in data and data["symbolic"]["matrices"]["E"]["columns"] == ["H"]
