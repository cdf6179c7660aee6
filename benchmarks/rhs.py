"""One right-hand-side evaluation of the spatial n-link chain: kidym vs peers.

Every engine is driven the same way — a Python loop calling one function per
state over the same random states — and timed in the same run:

* ``compiled``: kidym's generated C (``kidym_rhs`` through ``ctypes``: q̇ and the
  Cholesky solve of ``M ẇ = F``); ``C loop`` is the same function called from C
  over all states (``kidym_rhs_many``), i.e. without the per-call Python overhead;
* ``numpy``: kidym's reference engine (generated Python + ``numpy.linalg.solve``);
* ``pydy``: PyDy's Cython backend (``generate_ode_function(generator="cython")``)
  over SymPy ``KanesMethod`` equations of the same chain (``_kane_chain.py``);
  only up to ``--pydy-max`` links, KanesMethod takes minutes beyond;
* ``pinocchio``: Pinocchio's articulated-body algorithm ``pin.aba`` on the same
  chain built as a Pinocchio model (revolute joints about x, y, x, …).

All engines are checked to give the same accelerations before they are timed.

Run: ``python benchmarks/rhs.py [--ns 2 3 4 5 6 8 10 12 16 24] [--pydy-max 6]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import best_time, machine, optional
from make_chain import chain_text

import kidym
from kidym.simulate.compiled import CompiledSystem
from kidym.simulate.simulate import NumpySystem

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
    ap.add_argument("--ns", type=int, nargs="+", default=[2, 3, 4, 5, 6, 8, 10, 12, 16, 24])
    ap.add_argument("--pydy-max", type=int, default=6)
    ap.add_argument("--states", type=int, default=200)
    args = ap.parse_args(argv)
    pin = optional("pinocchio")
    pydy = optional("pydy")
    print(machine())
    if pin is None:
        print("note: pinocchio (pip package `pin`) not installed: its column is skipped")
    if pydy is None or optional("Cython") is None:
        print("note: pydy/Cython not installed: the PyDy column is skipped")
    print("microseconds per evaluation (best of 5 over the same states); ratios side by side")
    print(f"{'n':>3} {'compiled':>9} {'C loop':>8} {'numpy':>8} {'pydy':>8} {'pinocchio':>10}"
          f" {'numpy/comp':>10} {'pin/comp':>9} {'pin/Cloop':>9} {'build[s]':>8}")
    rng = np.random.default_rng(0)
    for n in args.ns:
        eq = kidym.derive(kidym.parse(chain_text(n)))
        start = time.perf_counter()
        cs = CompiledSystem.build(eq)
        build_s = time.perf_counter() - start
        ns = NumpySystem.build(eq)
        p = cs.parameter_vector()
        c = cs.constants(p)
        Y = np.ascontiguousarray(rng.uniform(-1, 1, (args.states, 2 * n)))
        out = np.empty(2 * n)
        ptrs = [Y[k].ctypes.data for k in range(len(Y))]
        pp, cp, op = p.ctypes.data, c.ctypes.data, out.ctypes.data
        rhs = cs.lib.kidym_rhs

        def run_compiled(rhs=rhs, ptrs=ptrs, pp=pp, cp=cp, op=op):
            for yp in ptrs:
                rhs(0.0, yp, pp, cp, op)

        T = np.zeros(len(Y))
        Ydot = np.empty_like(Y)
        many = cs.lib.kidym_rhs_many

        def run_loop(many=many, T=T, Y=Y, Ydot=Ydot, pp=pp):
            many(len(Y), T.ctypes.data, Y.ctypes.data, pp, Ydot.ctypes.data)

        def run_numpy(ns=ns, Y=Y, p=p):
            for y in Y:
                ns.rhs(0.0, y, p)

        t_comp = best_time(run_compiled) / len(Y) * 1e6
        t_loop = best_time(run_loop) / len(Y) * 1e6
        t_np = best_time(run_numpy, repeat=2) / len(Y) * 1e6
        ref = cs.rhs(0.0, Y[0], p)
        assert np.allclose(ref, ns.rhs(0.0, Y[0], p), rtol=1e-10, atol=1e-10)
        t_pin = t_pydy = float("nan")
        if pin is not None:
            model, data = pinocchio_chain(pin, n)
            qs = [np.ascontiguousarray(y[:n]) for y in Y]
            vs = [np.ascontiguousarray(y[n:]) for y in Y]
            tau = np.zeros(n)
            aba = pin.aba
            acc = aba(model, data, qs[0], vs[0], tau)
            err = np.abs(acc - ref[n:]).max() / np.abs(ref[n:]).max()
            assert err < 1e-9, f"pinocchio disagrees with kidym at n={n}: {err:.2e}"

            def run_pin(aba=aba, model=model, data=data, qs=qs, vs=vs, tau=tau):
                for q, v in zip(qs, vs):
                    aba(model, data, q, v, tau)

            t_pin = best_time(run_pin) / len(Y) * 1e6
        if pydy is not None and n <= args.pydy_max:
            f, args_ = pydy_chain(n)
            xs = [np.ascontiguousarray(y) for y in Y]
            got = f(xs[0], 0.0, args_)
            err = np.abs(got - ref).max() / np.abs(ref).max()
            assert err < 1e-9, f"pydy disagrees with kidym at n={n}: {err:.2e}"

            def run_pydy(f=f, xs=xs, a=args_):
                for x in xs:
                    f(x, 0.0, a)

            t_pydy = best_time(run_pydy) / len(Y) * 1e6

        def fmt(x: float, w: int) -> str:
            return f"{'-':>{w}}" if np.isnan(x) else f"{x:{w}.2f}"

        print(f"{n:>3} {t_comp:9.2f} {t_loop:8.2f} {t_np:8.1f} {fmt(t_pydy, 8)} "
              f"{fmt(t_pin, 10)} {t_np / t_comp:9.0f}x {fmt(t_pin / t_comp, 8)}x "
              f"{fmt(t_pin / t_loop, 8)}x {build_s:8.2f}", flush=True)


if __name__ == "__main__":
    main()
