"""Which CAS core? SymPy vs SymEngine on the operations kidym's derivation is made of.

The derivation builds many small expressions over named symbols, differentiates
them and substitutes into them (``kidym/symbolic/graph.py``). This times that mix
in both libraries, side by side in one run, and prints the ratio.

Run: ``python benchmarks/cas_core.py``
"""

from __future__ import annotations

import platform
import time


def workload(mod, n: int = 20000) -> float:
    """Seconds to build, differentiate and substitute ``n`` small expressions."""
    syms = mod.symbols("x0:200")
    start = time.perf_counter()
    keep = []
    for i in range(n):
        a, b, c, d = syms[i % 200], syms[(i * 7) % 200], syms[(i * 13) % 200], syms[(i * 31) % 200]
        e = a * mod.sin(b) + c * d - a * c
        keep.append(e.diff(a))
        keep.append(e.subs({d: 0}))
    return time.perf_counter() - start


def main() -> None:
    import symengine
    import sympy

    print(f"python {platform.python_version()}, sympy {sympy.__version__}, "
          f"symengine {symengine.__version__}, {platform.machine()}")
    t_sympy = workload(sympy)
    t_se = workload(symengine)
    print(f"{'core':<10} {'seconds':>9}")
    print(f"{'sympy':<10} {t_sympy:9.3f}")
    print(f"{'symengine':<10} {t_se:9.3f}")
    print(f"ratio sympy/symengine: {t_sympy / t_se:.1f}x")


if __name__ == "__main__":
    main()
