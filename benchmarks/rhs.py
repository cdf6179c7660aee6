"""One right-hand-side evaluation of the spatial n-link chain: kidym vs peers.

Every engine is driven the same way — a Python loop calling one function per
state over the same random states — and timed in the same run:

* ``compiled``: kidym's generated C as kidym builds it (``kidym_rhs`` through
  ``ctypes``: q̇ and ``ẇ = M⁻¹F``; from ``RECURSIVE_FROM`` speeds on, the
  articulated-body recursion of :mod:`kidym.codegen.aba_c`, else the ``LDLᵀ`` solve
  of the formed ``M``); ``C loop`` is the same function called from C over all
  states (``kidym_rhs_many``), i.e. without the per-call Python overhead;
* ``dense``: the same library with the dense solve forced (``solve="dense"``), up to
  ``--dense-max`` links (its C grows as n², its build takes minutes beyond);
* ``numpy``: kidym's reference engine (generated Python + ``numpy.linalg.solve``),
  up to ``--numpy-max`` links;
* ``pydy``: PyDy's Cython backend (``generate_ode_function(generator="cython")``)
  over SymPy ``KanesMethod`` equations of the same chain (``_kane_chain.py``);
  only up to ``--pydy-max`` links, KanesMethod takes minutes beyond;
* ``pinocchio``: Pinocchio's articulated-body algorithm ``pin.aba`` on the same
  chain built as a Pinocchio model (revolute joints about x, y, x, …);
* ``mujoco``: MuJoCo's ``mj_forward`` on the same chain as an MJCF model (hinges
  about x, y, x, …, no geometry, so nothing to collide), after setting
  ``qpos``/``qvel``.

All engines are checked to give the same accelerations before they are timed,
relative to ``cond(M)`` (Pinocchio's ``crba``): ``|Δẇ| ≤ 10⁴·ε·cond(M)·|ẇ|``.

Run: ``python benchmarks/rhs.py [--ns 2 3 4 6 8 12 16 24 32 48 64 100] [--pydy-max 6]``
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np
from _common import best_time, machine, optional
from make_chain import chain_text

import kidym
from kidym.codegen.build import build
from kidym.codegen.emit import generate_c
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem

M_, L_, JX, JY, JZ, G = 1.0, 0.5, 0.025, 0.02, 0.005, 9.81


def pinocchio_chain(pin, n: int):
    """The n-link chain as a Pinocchio model (same geometry and inertia as make_chain)."""
    model = pin.Model()
    parent = 0
    for k in range(1, n + 1):
        joint = pin.JointModelRX() if k % 2 else pin.JointModelRY()
        place = pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.0 if k == 1 else -L_]))
        parent = model.addJoint(parent, joint, place, f"j{k}")
        inertia = pin.Inertia(M_, np.array([0.0, 0.0, -L_ / 2]), np.diag([JX, JY, JZ]))
        model.appendBodyToJoint(parent, inertia, pin.SE3.Identity())
    model.gravity.linear = np.array([0.0, 0.0, -G])
    return model, model.createData()


def mujoco_chain(mujoco, n: int):
    """The n-link chain as a MuJoCo model and data (same geometry and inertia)."""
    def body(k: int) -> str:
        axis = "1 0 0" if k % 2 else "0 1 0"
        inner = body(k + 1) if k < n else ""
        return (f'<body name="L{k}" pos="0 0 {0.0 if k == 1 else -L_}">'
                f'<joint type="hinge" axis="{axis}"/>'
                f'<inertial pos="0 0 {-L_ / 2}" mass="{M_}" diaginertia="{JX} {JY} {JZ}"/>'
                f"{inner}</body>")

    xml = (f'<mujoco><option gravity="0 0 {-G}" timestep="0.001"/>'
           f"<worldbody>{body(1)}</worldbody></mujoco>")
    model = mujoco.MjModel.from_xml_string(xml)
    return model, mujoco.MjData(model)


def interleaved(runs: dict, count: int, rounds: int = 15) -> dict[str, float]:
    """µs per state of each run: the best of ``rounds`` rounds, every run once a round
    in turn (on a shared machine a burst of load then hits all of them alike)."""
    best = dict.fromkeys(runs, float("inf"))
    # the garbage collector off while timing: the peers' calls allocate their results,
    # and a collection over the heap the earlier (bigger) models left behind had cost
    # them up to 4x at n = 100 late in a run
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            for name, run in runs.items():
                start = time.perf_counter()
                run()
                best[name] = min(best[name], (time.perf_counter() - start) / count * 1e6)
    finally:
        gc.enable()
    return best


def agree(name: str, got, ref: np.ndarray, conds: list[float], part: slice) -> None:
    """``got`` (rows) against kidym's ``ref`` rows: ``|Δ| ≤ 10⁴·ε·cond(M)·|ref|``."""
    for k, (g, cond) in enumerate(zip(got, conds)):
        want = ref[k][part]
        err = np.abs(g - want).max() / np.abs(want).max()
        bound = 1e4 * np.finfo(float).eps * cond
        assert err <= bound, f"{name} disagrees with kidym: {err:.2e} > {bound:.2e}"


def pydy_chain(n: int):
    """PyDy Cython right-hand side ``f(x, t, args)`` of the n-link chain."""
    import sympy as sp
    from _kane_chain import build_kane
    from pydy.codegen.ode_function_generators import generate_ode_function
    from sympy.physics.mechanics import dynamicsymbols

    mass, forcing = build_kane(n)
    q = dynamicsymbols(f"q1:{n + 1}")
    u = dynamicsymbols(f"u1:{n + 1}")
    consts = sp.symbols("m l Jx Jy Jz g")
    f = generate_ode_function(forcing, q, u, consts, mass_matrix=mass,
                              coordinate_derivatives=sp.Matrix(u), generator="cython")
    return f, np.array([M_, L_, JX, JY, JZ, G])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", type=int, nargs="+",
                    default=[2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 100])
    ap.add_argument("--pydy-max", type=int, default=6)
    ap.add_argument("--dense-max", type=int, default=24)
    ap.add_argument("--numpy-max", type=int, default=24)
    ap.add_argument("--states", type=int, default=200)
    args = ap.parse_args(argv)
    pin = optional("pinocchio")
    pydy = optional("pydy")
    mujoco = optional("mujoco")
    print(machine())
    if mujoco is None:
        print("note: mujoco not installed: its column is skipped")
    if pin is None:
        print("note: pinocchio (pip package `pin`) not installed: its column is skipped")
    if pydy is None or optional("Cython") is None:
        print("note: pydy/Cython not installed: the PyDy column is skipped")
    print("microseconds per evaluation (best of 15 rounds over the same states, the engines "
          "in turn); ratios side by side")
    print(f"{'n':>3} {'solve':>9} {'compiled':>9} {'C loop':>8} {'dense':>8} {'numpy':>8} "
          f"{'pydy':>8} {'pinocchio':>10} {'mujoco':>8} {'pin/comp':>9} {'mj/comp':>8} "
          f"{'build[s]':>8}")
    rng = np.random.default_rng(0)
    for n in args.ns:
        eq = kidym.derive(kidym.parse(chain_text(n)))
        start = time.perf_counter()
        cs = CompiledSystem.build(eq)
        build_s = time.perf_counter() - start
        solve = cs.code.options.get("solve", "dense")
        p = cs.parameter_vector()
        c = cs.constants(p)
        Y = np.ascontiguousarray(rng.uniform(-1, 1, (args.states, 2 * n)))
        out = np.empty(2 * n)
        ptrs = [Y[k].ctypes.data for k in range(len(Y))]
        pp, cp, op = p.ctypes.data, c.ctypes.data, out.ctypes.data

        def per_call(lib, ptrs=ptrs, pp=pp, cp=cp, op=op):
            rhs = lib.kidym_rhs

            def run():
                for yp in ptrs:
                    rhs(0.0, yp, pp, cp, op)
            return run

        T = np.zeros(len(Y))
        Ydot = np.empty_like(Y)
        many = cs.lib.kidym_rhs_many

        def run_loop(many=many, T=T, Y=Y, Ydot=Ydot, pp=pp):
            many(len(Y), T.ctypes.data, Y.ctypes.data, pp, Ydot.ctypes.data)

        ref = np.array([cs.rhs(0.0, y, p) for y in Y[:5]])
        nan = float("nan")
        t_np = nan
        # cond(M) at the checked states, for the agreement bound
        conds = [np.linalg.cond(cs.evaluate(0.0, y, p)[1]) for y in Y[:5]]
        acc = slice(n, 2 * n)

        runs = {"compiled": per_call(cs.lib), "loop": run_loop}
        if solve != "dense" and n <= args.dense_max:
            code = generate_c(eq, solve="dense")
            dense = CompiledSystem.from_library(eq, code, build(code))
            agree("the dense solve", [dense.rhs(0.0, y, p)[n:] for y in Y[:5]], ref, conds, acc)
            runs["dense"] = per_call(dense.lib)
        if n <= args.numpy_max:
            ns = NumpySystem.build(eq)
            agree("numpy", [ns.rhs(0.0, y, p)[n:] for y in Y[:5]], ref, conds, acc)

            def run_numpy(ns=ns, Y=Y, p=p):
                for y in Y:
                    ns.rhs(0.0, y, p)

            t_np = best_time(run_numpy, repeat=2) / len(Y) * 1e6
        if pin is not None:
            model, data = pinocchio_chain(pin, n)
            qs = [np.ascontiguousarray(y[:n]) for y in Y]
            vs = [np.ascontiguousarray(y[n:]) for y in Y]
            tau = np.zeros(n)
            aba = pin.aba
            agree("pinocchio", [aba(model, data, q, v, tau).copy() for q, v in zip(qs, vs)],
                  ref, conds, acc)

            def run_pin(aba=aba, model=model, data=data, qs=qs, vs=vs, tau=tau):
                for q, v in zip(qs, vs):
                    aba(model, data, q, v, tau)

            runs["pinocchio"] = run_pin
        if mujoco is not None:
            mm, md = mujoco_chain(mujoco, n)
            qs = [np.ascontiguousarray(y[:n]) for y in Y]
            vs = [np.ascontiguousarray(y[n:]) for y in Y]
            forward = mujoco.mj_forward
            got = []
            for q, v in zip(qs[:5], vs[:5]):
                md.qpos[:] = q
                md.qvel[:] = v
                forward(mm, md)
                got.append(md.qacc.copy())
            agree("mujoco", got, ref, conds, acc)

            def run_mj(forward=forward, mm=mm, md=md, qs=qs, vs=vs):
                qpos, qvel = md.qpos, md.qvel
                for q, v in zip(qs, vs):
                    qpos[:] = q
                    qvel[:] = v
                    forward(mm, md)

            runs["mujoco"] = run_mj
        if pydy is not None and n <= args.pydy_max:
            f, args_ = pydy_chain(n)
            xs = [np.ascontiguousarray(y) for y in Y]
            agree("pydy", [f(x, 0.0, args_) for x in xs[:5]], ref, conds, slice(0, 2 * n))

            def run_pydy(f=f, xs=xs, a=args_):
                for x in xs:
                    f(x, 0.0, a)

            runs["pydy"] = run_pydy
        best = interleaved(runs, len(Y))
        t_comp, t_loop = best["compiled"], best["loop"]
        t_dense = t_comp if solve == "dense" else best.get("dense", nan)
        t_pin, t_mj, t_pydy = (best.get(k, nan) for k in ("pinocchio", "mujoco", "pydy"))

        def fmt(x: float, w: int) -> str:
            return f"{'-':>{w}}" if np.isnan(x) else f"{x:{w}.2f}"

        print(f"{n:>3} {solve:>9} {t_comp:9.2f} {t_loop:8.2f} {fmt(t_dense, 8)} "
              f"{fmt(t_np, 8)} {fmt(t_pydy, 8)} {fmt(t_pin, 10)} {fmt(t_mj, 8)} "
              f"{fmt(t_pin / t_comp, 8)}x {fmt(t_mj / t_comp, 7)}x {build_s:8.2f}", flush=True)

if __name__ == "__main__":
    main()
