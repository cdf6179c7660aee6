"""The omni-wheel vehicle of seed 002 (examples/omni_vehicle) against the paper.

Oracles, none of them kidym's:

* the paper's kinetic energy (3.2) and constraint matrix V of (2.1)–(2.3), with
  ``M, I_S, J`` summed by hand from the bodies of the model: Maggi's equations
  ``Vᵀ(𝓜 q̈ + c) = 0``, ``q̈ = V ν̇ + V̇ ν``, formed here in SymPy, give ``ν̇``;
* the paper's ``𝓜*`` (7.1) for the mass matrix (with its slip corrected: ``m33*`` has
  ``Λ⁻²``, not ``Λ⁻¹``);
* the first integrals (3.7) ``ν_s + sin(χ_i + κ_j) ν3/Λ`` and the energy, constant
  between roller changes; the roller changes at ``χ = ±π/n`` with the resets of
  section 4, in both engines.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import kidym
from kidym.simulation.layout import parameter_vector
from kidym.simulation.numpy_engine import generate_python

HERE = Path(__file__).resolve().parents[2] / "examples" / "omni_vehicle"
N, n = 3, 5


@pytest.fixture(scope="module")
def full():
    return kidym.derive(kidym.load(HERE / "omni_3_5.kdm"))


def _values(eq) -> dict[str, float]:
    p = parameter_vector(eq.model, None)
    return {str(s): float(v) for s, v in zip(eq.parameters, p)}


def _paper(par: dict[str, float], N: int = N, n: int = n):
    """The paper's 𝓜 (3.2) and V (2.1)–(2.3) in kidym's order of coordinates and
    speeds, as SymPy matrices of the coordinates ``q``, with ``M, I_S, J`` of the bodies."""
    R, l, Lam, B, A = (par[k] for k in ("R", "l", "Lam", "B", "A"))
    mp, mw, mr = par["mp"], par["mw"], par["mr"]
    r = l * math.cos(math.pi / (n - 1))
    Mtot = mp + N * (mw + n * mr)
    # platform disc, wheels (discs and rollers) at R, own moments about the vertical;
    # Σ_j sin²(κ_j + χ) = n/2 makes the rollers' share constant
    IS = (mp * R**2 / 2 + N * ((mw + n * mr) * R**2 + mw * l**2 / 4
                                + n * mr * r**2 / 2 + n * (A + B) / 2))
    J = mw * l**2 / 2 + n * (mr * r**2 + A)
    names = ["x", "y", "th"]
    for i in range(1, N + 1):
        names += [f"chi{i}"] + [f"phi{i}_{j}" for j in range(1, n + 1)]
    q = sp.symbols(names)
    qs = dict(zip(names, q))
    qd = sp.symbols([f"d{k}" for k in names])
    d = dict(zip(names, qd))
    T2 = Mtot * (d["x"]**2 + d["y"]**2) + IS * d["th"]**2
    for i in range(1, N + 1):
        T2 += J * d[f"chi{i}"]**2
        for j in range(1, n + 1):
            kap = 2 * sp.pi * (j - 1) / n
            T2 += B * (d[f"phi{i}_{j}"]**2
                       + 2 * d["th"] * sp.sin(kap + qs[f"chi{i}"]) * d[f"phi{i}_{j}"])
    T = T2 / 2
    Mq = sp.Matrix(len(q), len(q), lambda a, b: sp.diff(T, qd[a], qd[b]))
    speeds = [f"phi{i}_{j}'t" for i in range(1, N + 1) for j in range(2, n + 1)]
    speeds += ["nu1", "nu2", "nu3"]
    nu = dict(zip(speeds, sp.symbols([f"w{k}" for k in range(len(speeds))])))
    th = qs["th"]
    rate = {"x": R * (nu["nu1"] * sp.cos(th) - nu["nu2"] * sp.sin(th)),
            "y": R * (nu["nu1"] * sp.sin(th) + nu["nu2"] * sp.cos(th)),
            "th": nu["nu3"] / Lam}
    for i in range(1, N + 1):
        a = 2 * sp.pi * (i - 1) / N
        chi = qs[f"chi{i}"]
        rate[f"chi{i}"] = R / l * (nu["nu1"] * sp.sin(a) - nu["nu2"] * sp.cos(a)
                                   - nu["nu3"] / Lam)                         # (2.2)
        rate[f"phi{i}_1"] = (R / (l * sp.cos(chi) - r)
                             * (nu["nu1"] * sp.cos(a) + nu["nu2"] * sp.sin(a)))  # (2.1)
        for j in range(2, n + 1):
            rate[f"phi{i}_{j}"] = nu[f"phi{i}_{j}'t"]
    qdot = sp.Matrix([rate[k] for k in names])
    w = sp.Matrix([nu[s] for s in speeds])
    V = qdot.jacobian(w)
    return dict(q=q, qd=qd, w=list(w), T=T, M=Mq, V=V, names=names, speeds=speeds,
                consts=dict(M=Mtot, IS=IS, J=J, R=R, l=l, r=r, Lam=Lam, B=B))


def _maggi(paper):
    """``(M*, ν̇)`` at a state, by Maggi's equations from (3.2) and V."""
    q, qd, w, T, Mq, V = (paper[k] for k in ("q", "qd", "w", "T", "M", "V"))
    # c = d/dt ∂T/∂q̇ at q̈ = 0, minus ∂T/∂q
    c = sp.Matrix([sum(sp.diff(T, qd[a], q[k]) * qd[k] for k in range(len(q)))
                   - sp.diff(T, q[a]) for a in range(len(q))])
    Vw = V * sp.Matrix(w)
    Vdot_w = Vw.jacobian(q) * sp.Matrix(qd)          # V̇ ν with q̇ in qd
    f_M = sp.lambdify([q], Mq)
    f_V = sp.lambdify([q], V)
    f_rest = sp.lambdify([q, qd, w], Mq * Vdot_w + c)

    def at(qv, wv):
        Vn = np.asarray(f_V(qv), float)
        qdv = Vn @ wv
        Mn = np.asarray(f_M(qv), float)
        Mstar = Vn.T @ Mn @ Vn
        rhs = -Vn.T @ np.asarray(f_rest(qv, qdv, wv), float).ravel()
        return Mstar, np.linalg.solve(Mstar, rhs), qdv
    return at


def _states(rng, eq, count, n=n):
    names = [str(s) for s in eq.coordinates]
    for _ in range(count):
        q = rng.uniform(-3, 3, len(names))
        for chi in (k for k in names if k.startswith("chi")):   # the contact roller's range
            q[names.index(chi)] = rng.uniform(-math.pi / n, math.pi / n)
        yield q, rng.uniform(-2, 2, eq.n_w)


def test_equations_equal_maggis_from_the_papers_energy_and_constraints(full):
    par = _values(full)
    paper = _paper(par)
    assert [str(s) for s in full.coordinates] == paper["names"]
    assert [str(s) for s in full.speeds] == paper["speeds"]
    oracle = _maggi(paper)
    rhs = generate_python(full).function
    p = parameter_vector(full.model, None).tolist()
    rng = np.random.default_rng(2)
    for q, w in _states(rng, full, 6):
        qdot, M, F = rhs(0.0, [*q, *w], p)
        Mstar, wdot, qdot_paper = oracle(q, w)
        assert np.allclose(qdot, qdot_paper, rtol=1e-12, atol=1e-12)
        assert np.abs(M - Mstar).max() < 1e-12 * np.abs(Mstar).max()
        wdot_kidym = np.linalg.solve(M, F)
        assert np.abs(wdot_kidym - wdot).max() < 1e-9 * max(1.0, np.abs(wdot).max())


def test_mass_matrix_block_is_the_papers_7_1(full):
    """m11*, m22*, m12*, m13*, m23*, m33* of (7.1) and the entries B Λ⁻¹ sin χ_kl."""
    par = _values(full)
    c = _paper(par)["consts"]
    R, l, r, Lam, B, J, M = (c[k] for k in ("R", "l", "r", "Lam", "B", "J", "M"))
    rhs = generate_python(full).function
    p = parameter_vector(full.model, None).tolist()
    names = [str(s) for s in full.coordinates]
    speeds = [str(s) for s in full.speeds]
    k1, k2, k3 = (speeds.index(s) for s in ("nu1", "nu2", "nu3"))
    rng = np.random.default_rng(3)
    for q, w in _states(rng, full, 4):
        _qd, Mk, _F = rhs(0.0, [*q, *w], p)
        chi = np.array([q[names.index(f"chi{i}")] for i in range(1, N + 1)])
        al = 2 * np.pi * np.arange(N) / N
        rho = l * np.cos(chi) - r
        m11 = M * R**2 + np.sum(J * R**2 / l**2 * np.sin(al)**2
                                + B * R**2 / rho**2 * np.cos(al)**2)
        m22 = M * R**2 + np.sum(J * R**2 / l**2 * np.cos(al)**2
                                + B * R**2 / rho**2 * np.sin(al)**2)
        m12 = np.sum((-J * R**2 / l**2 + B * R**2 / rho**2) * np.sin(al) * np.cos(al))
        m13 = np.sum(B * R / rho * np.sin(chi) * np.cos(al)) / Lam
        m23 = np.sum(B * R / rho * np.sin(chi) * np.sin(al)) / Lam
        IS = c["IS"]
        m33 = (IS + N * J * R**2 / l**2) / Lam**2       # the paper prints Λ⁻¹: a slip
        block = np.array([[m11, m12, m13], [m12, m22, m23], [m13, m23, m33]])
        got = Mk[np.ix_([k1, k2, k3], [k1, k2, k3])]
        assert np.abs(got - block).max() < 1e-12 * np.abs(block).max()
        for i in range(1, N + 1):
            for j in range(2, n + 1):
                s = speeds.index(f"phi{i}_{j}'t")
                kap = 2 * np.pi * (j - 1) / n
                assert Mk[s, s] == pytest.approx(B, rel=1e-12)
                assert Mk[k3, s] == pytest.approx(B / Lam * np.sin(chi[i - 1] + kap),
                                                  rel=1e-10, abs=1e-18)
                assert Mk[k1, s] == pytest.approx(0, abs=1e-18)


def _run(eq, engine, nu=(1.0, 0.0, 1.0), t_end=6.0):
    return kidym.simulate(eq, t_end=t_end, engine=engine, rtol=1e-10, atol=1e-12,
                          n_points=3001, initial=dict(zip(("nu1", "nu2", "nu3"), nu)))


@pytest.fixture(scope="module")
def runs(full):
    return {engine: _run(full, engine) for engine in ("numpy", "compiled")}


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_linear_integrals_3_7_and_energy_are_constant_between_roller_changes(runs, engine):
    res = runs[engine]
    v, Lam = res.values, 5.0
    ev = np.asarray(res.stats["events"]["t"])
    assert len(ev) > 20
    seg = np.searchsorted(ev, res.t, side="left")
    inside = ~np.isin(res.t, ev)
    stretches = 0
    for i in range(1, N + 1):
        for j in range(2, n + 1):
            I = v[f"phi{i}_{j}'t"] + np.sin(v[f"chi{i}"] + 2 * np.pi * (j - 1) / n) * v["nu3"] / Lam
            for k in np.unique(seg):
                sel = (seg == k) & inside
                if sel.sum() > 1:
                    stretches += 1
                    assert np.abs(I[sel] - I[sel][0]).max() < 1e-10
    assert stretches > 100
    T = v["energy"]
    for k in np.unique(seg):
        sel = (seg == k) & inside
        if sel.sum() > 1:
            assert np.abs(T[sel] - T[sel][0]).max() < 1e-9 * T[0]
    # … and the integrals are not constant across the changes: the resets matter
    assert np.abs(np.diff(T)).max() > 1e-3 * T[0]


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_roller_changes_at_chi_pi_over_n_with_the_papers_resets(runs, engine):
    res = runs[engine]
    ev = res.stats["events"]
    names = list(res.state_names)
    par = {k: float(x) for k, x in res.parameters.items()}
    r = par["l"] * math.cos(math.pi / (n - 1))
    for name, before, after in zip(ev["name"], ev["state"], ev["state_after"]):
        i = int(name[-1])
        forward = name.startswith("Forward")
        b = dict(zip(names, before))
        a = dict(zip(names, after))
        sign = 1 if forward else -1
        assert abs(b[f"chi{i}"] - sign * math.pi / n) < 1e-9           # located
        assert a[f"chi{i}"] == pytest.approx(-sign * math.pi / n, abs=1e-9)
        al = 2 * math.pi * (i - 1) / N
        contact = (par["R"] / (par["l"] * math.cos(b[f"chi{i}"]) - r)
                   * (b["nu1"] * math.cos(al) + b["nu2"] * math.sin(al)))   # (2.1)
        if forward:   # labels move up: the leaving roller becomes 2, roller n arrives
            assert a[f"phi{i}_2't"] == pytest.approx(contact, rel=1e-12)
            for j in range(3, n + 1):
                assert a[f"phi{i}_{j}'t"] == b[f"phi{i}_{j - 1}'t"]
            assert a[f"phi{i}_1"] == b[f"phi{i}_{n}"]
        else:         # labels move down: the leaving roller becomes n, roller 2 arrives
            assert a[f"phi{i}_{n}'t"] == pytest.approx(contact, rel=1e-12)
            for j in range(2, n):
                assert a[f"phi{i}_{j}'t"] == b[f"phi{i}_{j + 1}'t"]
            assert a[f"phi{i}_1"] == b[f"phi{i}_2"]
        for k in ("nu1", "nu2", "nu3"):                  # ν1, ν2, ν3 kept
            assert a[k] == b[k]


def test_both_engines_find_the_same_roller_changes(runs):
    a, b = runs["numpy"].stats["events"], runs["compiled"].stats["events"]
    assert list(a["name"]) == list(b["name"])
    assert np.abs(np.asarray(a["t"]) - np.asarray(b["t"])).max() < 1e-7


def test_inertialess_limit_keeps_nu3_and_speed(full):
    """B = 0 (3.6): ν3 is an integral, and |v_S| too; the path of S is a circle."""
    limit = kidym.derive(kidym.load(HERE / "omni_3_5_inertialess.kdm"))
    res = kidym.simulate(limit, t_end=20, rtol=1e-10, atol=1e-12,
                         initial={"nu1": 1.0, "nu3": 1.0})
    v = res.values
    assert np.ptp(v["nu3"]) < 1e-12
    assert np.ptp(np.hypot(v["nu1"], v["nu2"])) < 1e-9
    x, y = v["x"], v["y"]
    # the circle through three points of the path holds every point
    A = np.column_stack([2 * x, 2 * y, np.ones_like(x)])
    cx, cy, c = np.linalg.lstsq(A, x**2 + y**2, rcond=None)[0]
    radius = math.sqrt(c + cx**2 + cy**2)
    assert np.abs(np.hypot(x - cx, y - cy) - radius).max() < 1e-7 * radius


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_full_model_with_B_zero_is_a_clear_error(full, engine):
    """The free rollers' speeds have no inertia: the hint names them, and only them."""
    with pytest.raises(kidym.SimulationError, match="mass matrix is singular") as e:
        kidym.simulate(full, t_end=1, engine=engine, parameters={"B": 0.0},
                       initial={"nu1": 1.0})
    hint = e.value.hint
    assert hint.startswith("no inertia along the speeds phi1_2't, phi1_3't")
    assert "(12 speeds)" in hint and "nu1" not in hint and "limit model" in hint


def _generator():
    spec = importlib.util.spec_from_file_location("omni_generate", HERE / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_files_are_the_generators_output():
    gen = _generator()
    assert (HERE / "omni_3_5.kdm").read_text(encoding="utf-8") == \
        gen.canonical(gen.massive(3, 5))
    assert (HERE / "omni_3_5_inertialess.kdm").read_text(encoding="utf-8") == \
        gen.canonical(gen.inertialess(3, 5))


def test_other_numbers_of_wheels_and_rollers_against_maggi():
    """N = 4 wheels with n = 4 rollers: the generator's model against the oracle."""
    eq = kidym.derive(kidym.parse(_generator().massive(4, 4)))
    paper = _paper(_values(eq), 4, 4)
    assert [str(s) for s in eq.speeds] == paper["speeds"]
    oracle = _maggi(paper)
    rhs = generate_python(eq).function
    p = parameter_vector(eq.model, None).tolist()
    for q, w in _states(np.random.default_rng(5), eq, 3, n=4):
        _qd, M, F = rhs(0.0, [*q, *w], p)
        Mstar, wdot, _ = oracle(q, w)
        assert np.abs(M - Mstar).max() < 1e-12 * np.abs(Mstar).max()
        assert np.abs(np.linalg.solve(M, F) - wdot).max() < 1e-9 * max(1.0, np.abs(wdot).max())
