"""What tuning for the building processor buys: the portable build against ``-march=native``.

kidym compiles the generated C portably by default (``BASE_FLAGS``: ``-O2
-ffp-contract=off``, the architecture's baseline instructions), so that a model gives
the same step counts and digits on every machine of the architecture. ``native=True``
(or ``KIDYM_NATIVE=1``) adds ``-march=native -ffp-contract=fast``. This script builds
both libraries of each model, loads them in one process and times the same compiled
ERK8 integration with each, alternating, the median of ``--rounds`` rounds, in CPU
seconds of the calling thread (the integration runs in it; a loaded machine leaves
this figure nearly alone, where wall time varied 5x); the ratio
``portable/native`` is the cost of the portable default (above 1: native is faster).
It also prints how far the two trajectories lie apart against the requested tolerance.

Run: ``python benchmarks/native.py [--chains 10] [--rounds 15]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _common import ROOT, machine
from make_chain import chain_text

import kidym
from kidym.codegen.build import native_flags
from kidym.simulation.compiled import CompiledSystem


def cases(chains: list[int]) -> list[tuple[str, str]]:
    out = [(f"chain{n}", chain_text(n)) for n in chains]
    for path in ("double_pendulum/double_pendulum.kdm", "biped/biped.kdm"):
        p = ROOT / "examples" / path
        out.append((p.stem, p.read_text(encoding="utf-8")))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, nargs="*", default=[10])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--rtol", type=float, default=1e-9)
    ap.add_argument("--atol", type=float, default=1e-12)
    args = ap.parse_args(argv)
    print(machine())
    if not native_flags(True):
        print("note: the compiler does not take -march=native -ffp-contract=fast")
        return
    print(f"ERK8, rtol={args.rtol:g}, atol={args.atol:g}, each model's own span; median "
          f"CPU ms of {args.rounds} alternated rounds")
    print(f"{'model':<16}{'portable':>10}{'native':>10}{'ratio':>8}{'nfev p/n':>14}"
          f"{'max |dy|':>10}")
    for name, text in cases(args.chains):
        model = kidym.parse(text)
        eq = kidym.derive(model)
        builds = [CompiledSystem.build(eq, native=native) for native in (False, True)]
        kw = dict(t_end=model.t_end, n_points=101, method="ERK8", rtol=args.rtol,
                  atol=args.atol)
        times: list[list[float]] = [[], []]
        runs = [kidym.simulate(cs, **kw) for cs in builds]      # warm up
        for _ in range(args.rounds):
            for k, cs in enumerate(builds):
                start = time.thread_time()
                kidym.simulate(cs, **kw)
                times[k].append(time.thread_time() - start)
        portable, native = (statistics.median(t) for t in times)
        dy = float(np.max(np.abs(runs[0].y - runs[1].y)))
        print(f"{name:<16}{1e3 * portable:>10.2f}{1e3 * native:>10.2f}"
              f"{portable / native:>7.2f}x{f'{runs[0].nfev}/{runs[1].nfev}':>14}"
              f"{dy:>10.1e}")


if __name__ == "__main__":
    main()
