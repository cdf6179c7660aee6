"""`kidym equations` on a kinematics file (issue 18): the formulas and the derivatives,
checked against SymPy's own differentiation of the law of motion."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import sympy

ROOT = Path(__file__).resolve().parents[2]


def test_equations_of_a_kinematics_file_give_its_derivatives(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "kidym", "equations",
                          str(ROOT / "examples" / "kinematics" / "point.kdm")],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    task1 = out.stdout.split("\n\nModel ")[0]
    assert "kinematics calculation" in task1 and "No equations of motion" in task1
    formulas = {}
    for line in task1.splitlines():
        if line.startswith("  ") and " = " in line:
            name, _, rhs = line.strip().removeprefix("* ").partition(" = ")
            formulas[name] = rhs
    t = sympy.Symbol("t")
    x = 3 * sympy.sin(sympy.pi * t / 3)     # the law of motion of examples/kinematics
    for name, exact in (("x't", sympy.diff(x, t)), ("x't't", sympy.diff(x, t, 2))):
        printed = sympy.parse_expr(formulas[name], local_dict={"t": t, "pi": sympy.pi})
        assert sympy.simplify(printed - exact) == 0, (name, formulas[name])
    assert "+ -" not in task1
