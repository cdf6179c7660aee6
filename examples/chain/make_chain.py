"""Write the spatial n-link chain model: ``python make_chain.py N > chainN.kdm``.

Link k turns about the x axis (odd k) or y axis (even k) of the previous link's
end; links hang along -z. The same mechanism is built with SymPy's KanesMethod in
``tests/oracles/sympy_mechanics.py`` and ``benchmarks/derive.py``.
"""

from __future__ import annotations

import sys


def chain_text(n: int) -> str:
    """Model text of the n-link spatial chain."""
    lines = [
        f"# Spatial {n}-link chain: revolute joints about alternating axes x, y, x, ...;",
        "  identical links of length l hanging along -z, centre of mass at mid-length. #",
        "CALCULATION := DYNAMICS;",
        "m = 1;", "l = 0.5;", "Jx = 0.025;", "Jy = 0.02;", "Jz = 0.005;", "g = 9.81;",
    ]   # one statement a line: the canonical form of `kidym fmt`
    for k in range(1, n + 1):
        axis = "x" if k % 2 else "y"
        if k == 1:
            lines.append(f"L1 | R{axis}(q1) | Sz(-l/2), m, Jx, Jy, Jz;")
        else:
            lines.append(f"L{k}~L{k - 1} | Sz(-l), R{axis}(q{k}) | Sz(-l/2), m, Jx, Jy, Jz;")
    lines.append("GRAVITY := 0, 0, -g;")
    init = ", ".join(f"q{k}({0.3 if k % 2 else -0.2})" for k in range(1, n + 1))
    lines.append(f"INITIAL := t(0), {init};")
    lines.append("TIME := t(0, 5);")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(chain_text(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
