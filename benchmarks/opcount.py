"""Operation counts of the biped of seed 003 (Fig. 3, symbolic parameters) vs its Table 1.

Seed 003 Table 1 counts the operations "in the equations" of its 12-DOF biped:
old record form (Fig. 2) 724 additions, 695 multiplications, 2 divisions,
28 functions; new form (Fig. 3) 364, 421, 2, 28. The paper does not define its
counting convention, so several are printed, each exactly defined:

* ``code, per call``: every operation the generated C executes per evaluation of
  ``M`` and ``F`` — all kinematic intermediates included, after CSE, with
  parameter-only quantities hoisted out (they run once per parameter vector and
  are listed separately as ``once per p``). Subtraction counts as addition, a
  leading unary minus is free, ``x^n`` costs its repeated-squaring products,
  ``sqrt``/``sin``/``cos``/``fabs`` … are functions.
* ``code, no hoisting``: the same with parameter-only quantities computed in every
  call (all parameters symbolic, nothing precomputed) — this is the convention
  whose function count reproduces the seed's 28 exactly (sin and cos of the 12
  joint angles and of the 2 fixed hip tilts ``psiL``, ``psiR``).
* ``no CSE, no hoisting``: the structural form as derived, each named
  quantity's formula counted once.
* ``M, F formulas only``: the entries of ``M`` (upper triangle) and ``F`` as
  printed, each named intermediate counted as a variable (its formula not counted).

The solve of ``M ẇ = F`` is not part of any of these (Table 1 counts equations).

Run: ``python benchmarks/opcount.py``
"""

from __future__ import annotations

from _common import machine

import kidym
from kidym.codegen import generate_c
from kidym.codegen.cprint import CPrinter, OpCount
from tests.fixtures import BIPED_FIG2, BIPED_FIG3

SEED = {"Fig. 2 (old form)": OpCount(724, 695, 2, 28),
        "Fig. 3 (new form)": OpCount(364, 421, 2, 28)}


def formulas_only(eq) -> OpCount:
    printer = CPrinter(str)
    n = eq.n_w
    for i in range(n):
        for j in range(i, n):
            printer(eq.mass_matrix_named[i][j])
    for f in eq.forcing_named:
        printer(f)
    return printer.count


def row(label: str, c: OpCount) -> str:
    return (f"  {label:<34}{c.additions:>6}{c.multiplications:>6}{c.divisions:>6}"
            f"{c.functions:>6}{c.total:>7}")


def main() -> None:
    print(machine())
    print(f"  {'':<34}{'add':>6}{'mul':>6}{'div':>6}{'fun':>6}{'total':>7}")
    for (label, text), seed in zip((("Fig. 2 (old form)", BIPED_FIG2),
                                    ("Fig. 3 (new form)", BIPED_FIG3)), SEED.values()):
        eq = kidym.derive(kidym.parse(text))
        print(f"{label}: {eq.n_w} DOF, {len(eq.intermediates())} named quantities")
        print(row("seed 003 Table 1", seed))
        best = generate_c(eq)
        print(row("code, per call (CSE, hoisted)", best.mf_counts))
        print(row("  + once per p (hoisted)", best.counts["constants"]))
        plain = generate_c(eq, hoist=False).mf_counts
        print(row("code, no hoisting (CSE)", plain))
        print(row("no CSE, no hoisting", generate_c(eq, cse=False, hoist=False).mf_counts))
        print(row("M, F formulas only", formulas_only(eq)))
        folded = generate_c(eq, fold=True).mf_counts
        print(row("code, numeric values folded", folded))
    print("Table 1's ratio old/new form: additions 724/364 = 1.99, multiplications "
          "695/421 = 1.65")
    print(f"kidym/seed, Fig. 3, code with no hoisting: additions {plain.additions}/"
          f"{seed.additions} = {plain.additions / seed.additions:.2f}, multiplications "
          f"{plain.multiplications}/{seed.multiplications} = "
          f"{plain.multiplications / seed.multiplications:.2f}")


if __name__ == "__main__":
    main()
