"""Derivation speed: kidym vs SymPy ``KanesMethod`` on the spatial n-link chain.

Both build the equations of motion of the same chain (``examples/chain/make_chain.py``)
to the point where code can be generated: kidym to its Cauchy form over named
quantities (``derive`` plus the ordered list of intermediates), KanesMethod to its
``mass_matrix`` and ``forcing``. Both are timed in the same run; the ratio is printed
per n. KanesMethod is run only up to ``--kane-max`` links (it takes minutes at n=10).

Run: ``python benchmarks/derive.py [--ns 2 3 5 10 20 30] [--kane-max 10]``
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "chain"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_chain import chain_text  # noqa: E402

import kidym  # noqa: E402


def time_kidym(text: str, repeat: int = 3) -> tuple[float, int]:
    """Best-of-``repeat`` seconds to parse and derive, and the number of named quantities."""
    best = float("inf")
    size = 0
    for _ in range(repeat):
        start = time.perf_counter()
        eq = kidym.derive(kidym.parse(text))
        size = len(eq.intermediates())
        best = min(best, time.perf_counter() - start)
    return best, size


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", type=int, nargs="+", default=[2, 3, 5, 10, 20, 30])
    ap.add_argument("--kane-max", type=int, default=10,
                    help="largest n to run KanesMethod for (default 10)")
    args = ap.parse_args(argv)
    import symengine
    import sympy
    from _kane_chain import time_kane

    print(f"python {platform.python_version()}, sympy {sympy.__version__}, "
          f"symengine {symengine.__version__}, kidym {kidym.__version__}, "
          f"{platform.machine()}")
    print(f"{'n':>3} {'kidym [s]':>10} {'named':>7} {'Kane [s]':>10} {'Kane/kidym':>11}")
    for n in args.ns:
        ours, named = time_kidym(chain_text(n))
        if n <= args.kane_max:
            kane = time_kane(n)
            print(f"{n:>3} {ours:10.4f} {named:>7} {kane:10.2f} {kane / ours:10.0f}x")
        else:
            print(f"{n:>3} {ours:10.4f} {named:>7} {'-':>10} {'-':>11}")
    biped = ROOT / "examples" / "biped" / "biped.kdm"
    start = time.perf_counter()
    eq = kidym.derive(kidym.load(biped))
    named = len(eq.intermediates())
    print(f"biped (seed 003 Fig. 3, 12 DOF): {time.perf_counter() - start:.3f} s, "
          f"{named} named quantities")


if __name__ == "__main__":
    main()
