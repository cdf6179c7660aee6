"""Size and time of the CasADi export on the spatial n-link chain (``kidym.to_casadi``).

For each chain: the named quantities the right-hand side needs, the operations of the
exported ``f`` (CasADi's instruction count of the SX function: every named quantity
once, then the symbolic solve of ``M ẇ = F``), the operations per call of kidym's
generated C for the same right-hand side and solve (its ``rhs`` and ``solve`` routines,
after CSE), and the time ``to_casadi`` takes.

Run: ``python benchmarks/casadi_export.py``
"""

from __future__ import annotations

import time

from _common import machine

import kidym
from kidym.codegen import generate_c
from tests.fixtures import chain_text


def main() -> None:
    print(machine())
    print(f"  {'links':>5} {'named':>6} {'CasADi f':>9} {'C rhs+solve':>12} {'export':>8}")
    for links in (3, 5, 10, 20):
        eq = kidym.derive(kidym.parse(chain_text(links)))
        start = time.perf_counter()
        cm = kidym.to_casadi(eq)
        took = time.perf_counter() - start
        counts = generate_c(eq).counts
        c_ops = counts["rhs"].total + counts["solve"].total
        print(f"  {links:>5} {len(eq.intermediates()):>6} {cm.f.n_instructions():>9}"
              f" {c_ops:>12} {took:>6.2f} s")


if __name__ == "__main__":
    main()
