"""Closed loops through singular positions (issue 27): time and error of each route.

The parallelogram four-bar with a diagonal spring and IFToMM A02 (the N-four-bar) pass
positions where all links lie in line. For each case and route (the augmented
formulation and ``formulation="ali3"``, each in both engines) this prints
whether the run succeeded, how far it got, the largest error of the first crank's
angle (A02: of its tip) against the exact 1-DOF motion of the parallelogram branch
(``tests/oracles/loop_branches.py``), and the wall time.

    python3 benchmarks/singular_passages.py            # spring 10 s, A02 N = 1 20 s
    python3 benchmarks/singular_passages.py --n 2 10   # A02 with other N
    python3 benchmarks/singular_passages.py --ali3-only --n 1 2 10
    python3 benchmarks/singular_passages.py --ali3-only --no-spring --engines compiled --n 40
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import machine

import kidym
from tests.fixtures import FOUR_BAR_SPRING, iftomm_a02
from tests.oracles.loop_branches import n_four_bar_motion, parallelogram_motion

ROUTES = (("numpy", "augmented"), ("compiled", "augmented"), ("numpy", "ali3"),
          ("compiled", "ali3"))


def run(name: str, eq, coordinate: str, exact, t_end: float, n_points: int,
        tip: bool, routes=ROUTES) -> None:
    for engine, formulation in routes:
        started = time.perf_counter()
        r = kidym.simulate(eq, engine=engine, formulation=formulation, rtol=1e-10,
                           t_end=t_end, n_points=n_points, raise_on_failure=False)
        wall = time.perf_counter() - started
        ref = exact(r.t)
        q = r.values[coordinate]
        err = (np.hypot(np.cos(q) - np.cos(ref), np.sin(q) - np.sin(ref)) if tip
               else np.abs(np.angle(np.exp(1j * (q - ref)))))
        outcome = "success" if r.success else "failure"
        print(f"{name:14s} {engine:8s} {formulation:9s} {outcome:7s} t_end {r.t[-1]:6.3f} "
              f"max error {err.max():.2g}  wall {wall:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="*", default=[1],
                        help="A02's N (1 by default)")
    parser.add_argument("--no-spring", action="store_true")
    parser.add_argument("--ali3-only", action="store_true",
                        help="only formulation='ali3'")
    parser.add_argument("--engines", nargs="*", default=["numpy", "compiled"],
                        choices=["numpy", "compiled"], help="the engines (both by default)")
    args = parser.parse_args()
    routes = tuple(r for r in ROUTES if (r[1] == "ali3" or not args.ali3_only)
                   and r[0] in args.engines)
    print(machine())
    if not args.no_spring:
        spring = dict(l=1.0, m=1.0, g=9.81, k=25.0, rest=np.sqrt(2.0), theta0=1.0,
                      omega0=0.0)
        run("spring 10 s", kidym.derive(kidym.parse(FOUR_BAR_SPRING)), "q1",
            lambda t: parallelogram_motion(**spring, times=t), 10.0, 1001, tip=False,
            routes=routes)
    for n in args.n:
        run(f"A02 N={n} 20 s", kidym.derive(kidym.parse(iftomm_a02(n))), "c0",
            lambda t, n=n: n_four_bar_motion(n, l=1.0, m=1.0, g=9.81, theta0=np.pi / 2,
                                             omega0=-1.0, times=t),
            20.0, 401, tip=True, routes=routes)


if __name__ == "__main__":
    main()
