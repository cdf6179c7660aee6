"""Canonical mechanisms as small inline model texts, shared by the tests."""

from __future__ import annotations

import re
from pathlib import Path

from make_chain import chain_text  # examples/chain/make_chain.py (on the pytest path)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

__all__ = [
    "BIPED_FIG2",
    "BIPED_FIG3",
    "DOUBLE_PENDULUM",
    "EXAMPLES",
    "FOUR_BAR_SPRING",
    "IFTOMM_A02_N1",
    "MOMENTS_ON_BODY_AXES",
    "ROD_WITH_MOMENT",
    "SLIDER_CRANK_DEAD_CENTRE",
    "chain_text",
]

DOUBLE_PENDULUM = """
m1 = 1.3; m2 = 0.7; l1 = 1.1; l2 = 0.9; g = 9.81;
Rod1      | Rz(phi1)         | Sx(l1/2), m1, 0, m1*l1^2/12, m1*l1^2/12;
Rod2~Rod1 | Sx(l1), Rz(phi2) | Sx(l2/2), m2, 0, m2*l2^2/12, m2*l2^2/12;
GRAVITY := 0, -g, 0;
"""

#: A rod turning about the fixed z axis, driven by a moment about its own z axis
#: (the issue-14 repro: the moment used to vanish from ``F``).
ROD_WITH_MOMENT = """
m = 1; l = 1; M0 = 2;
Rod | Rz(phi) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
Pm.ωZRod = M0;
"""

#: Spatial two-link chain with elements on angular-velocity projections of ``B2``
#: about body axes that are not joint axes: a time-dependent moment, a damper and a
#: rotor (inertial element). ``tests/oracles/sympy_mechanics.moments_on_body_axes``
#: is the same system built with SymPy's ``KanesMethod``.
MOMENTS_ON_BODY_AXES = """
m = 1.2; l = 0.8; Jx = 0.05; Jy = 0.07; Jz = 0.03; g = 9.81;
M0 = 0.7; W = 3; b = 0.15; Jr = 0.02;
B1    | Rz(q1)                 | Sx(l/2), m, Jx, Jy, Jz;
B2~B1 | Sx(l), Ry(q2), Rx(q3)  | Sz(l/2), m, Jx, Jy, Jz;
GRAVITY := 0, 0, -g;
Pm.ωZB2 = M0*sin(W*t);
Dd.ωYB2 = b;
Jrot.ωZB2 = Jr;
INITIAL := q1(0.3), q2(-0.4), q3(0.5), q1't(1), q2't(-0.5), q3't(0.8);
TIME := t(0, 2);
"""

#: Issue 27, item 2: a parallelogram four-bar (three uniform rods of 1 m and 1 kg, ground
#: pivots 1 m apart, gravity along -y) with a diagonal spring k = 25 of rest length √2
#: from the crank's ground pivot to the far coupler joint, released at rest at
#: q1 = 1. It falls through q1 = 0, where all links lie in line (a singular position:
#: the parallelogram, anti-parallelogram and kite branches meet). On the parallelogram
#: branch the coupler stays horizontal: q2 = -q1, q3 = q1.
FOUR_BAR_SPRING = """
l = 1; m = 1; g = 9.81; k = 25; L0 = sqrt(2);
Crank | Rz(q1) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
Coupler~Crank | Sx(l), Rz(q2) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
Rocker | Sx(l), Rz(q3) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
СОВПАДЕНИЕ := Coupler(l, 0, 0) = Rocker(l, 0, 0);
ds = sqrt((l + l*cos(q3))^2 + (l*sin(q3))^2) - L0;
Cs.ds = k;
ГРАВИТАЦИЯ := 0, -g, 0;
НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), q1(1), q2(-1), q3(1);
ВРЕМЯ := t(0, 3);
"""

#: IFToMM benchmark A02 (the N-four-bar) with N = 1: two cranks of 1 m and 1 kg hinged
#: to the ground at x = 0 and 1, a coupler of 1 m and 1 kg on their tips, gravity 9.81
#: along -y; the cranks start vertical (q1 = q3 = π/2) and the first crank's tip moves
#: at 1 m/s along +x (q1' = -1). The cranks turn over and over, through the singular
#: positions q1 = 0 and q1 = π where all links lie in line.
IFTOMM_A02_N1 = """
l = 1; m = 1; g = 9.81;
Crank1 | Rz(q1) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
Coupler~Crank1 | Sx(l), Rz(q2) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
Crank2 | Sx(l), Rz(q3) | Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12);
СОВПАДЕНИЕ := Coupler(l, 0, 0) = Crank2(l, 0, 0);
ГРАВИТАЦИЯ := 0, -g, 0;
НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), q1(pi/2), q2(-pi/2), q3(pi/2), q1't(-1);
ВРЕМЯ := t(0, 20);
"""

def iftomm_a02(n: int) -> str:
    """IFToMM A02, the N-four-bar: ``n + 1`` cranks hinged to the ground at x = 0…n,
    ``n`` couplers on their tips (all bars 1 m, 1 kg), closed by ``СОВПАДЕНИЕ``; the
    start of :data:`IFTOMM_A02_N1` (which is ``iftomm_a02(1)`` up to names)."""
    rod = "Sx(l/2), m(m), Jx(0), Jy(m*l^2/12), Jz(m*l^2/12)"
    lines = ["l = 1; m = 1; g = 9.81;"]
    for i in range(n + 1):
        lines.append(f"Crank{i} | Sx({i}), Rz(c{i}) | {rod};")
    for i in range(n):
        lines.append(f"Coupler{i}~Crank{i} | Sx(l), Rz(r{i}) | {rod};")
    pairs = ", ".join(f"Coupler{i}(l, 0, 0) = Crank{i + 1}(l, 0, 0)" for i in range(n))
    lines.append(f"СОВПАДЕНИЕ := {pairs};")
    lines.append("ГРАВИТАЦИЯ := 0, -g, 0;")
    start = ", ".join([f"c{i}(pi/2)" for i in range(n + 1)]
                      + [f"r{i}(-pi/2)" for i in range(n)])
    lines.append(f"НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), {start}, c0't(-1);")
    lines.append("ВРЕМЯ := t(0, 20);")
    return "\n".join(lines) + "\n"


#: A slider-crank in a horizontal plane (no gravity), its crank turning through the dead
#: centres q1 = 0, π, where crank and rod lie in line: regular positions of the loop
#: (the slider only reverses there; the constraint Jacobian keeps its rank).
SLIDER_CRANK_DEAD_CENTRE = """
a = 0.3; b = 1; m1 = 1; m2 = 2; ms = 1.5;
Crank | Rz(q1) | Sx(a/2), m(m1), Jx(0), Jy(m1*a^2/12), Jz(m1*a^2/12);
Rod~Crank | Sx(a), Rz(q2) | Sx(b/2), m(m2), Jx(0), Jy(m2*b^2/12), Jz(m2*b^2/12);
Slider | Sx(s) | m(ms), Jx(0), Jy(0), Jz(0);
СОВПАДЕНИЕ := Rod(b, 0, 0) = Slider(0, 0, 0);
НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), q1(0.5), q2(-0.64), s(1.25), q1't(5);
СВОБОДНЫЕ := q2, s;
ВРЕМЯ := t(0, 2);
"""

#: Seed 003, Fig. 2: the biped's records in the old form (1), character for character.
FIG2_RECORDS = """Taz |Sx(Ax), Sy(Ay), Sz(Az) | m(mt), Jx(Jtx), Jy(Jty), Jz(Jtz);
 Mvv~Taz |Sx(Tx-Ax), Sy(Ty-Ay), Sz(Tz+hv-Az) | m(mV), Jx(Jmvx), Jy(Jmvy), Jz(Jmvz);
 Efl~Taz |Sx(-Ax), Sy(a2L-Ay), Sz(-Az), Ry(psiL), Rz(tetaSL), Sz(-cL), Rx(alfaSL),
 Sx(Elx), Sy(Ely), Sz(Elz) | m(meL), Jx(Jex), Jy(Jey), Jz(Jez);
 BdL~Efl |Sx(-Elx), Sy(fL-Ely), Sz(-Elz-eL), Ry(-gammaSL-psiL),
 Sx(Blx), Sy(Bly), Sz(Blz) | m(mbL), Jx(Jbx), Jy(Jby), Jz(Jbz);
 GIL~BdL |Sx(-Blx), Sy(-Bly), Sz(-Blz-bL), Ry(betaSL),
 Sx(Glx), Sy(Gly), Sz(Glz) | m(mgL), Jx(Jgx), Jy(Jgy), Jz(Jgz);
 GsL~GIL |Sx(kL-Glx), Sy(-Gly), Sz(-Glz-qL), Ry(-nuSL),
 Sx(Qlx), Sy(Qly), Sz(Qlz) | m(mpL), Jx(Jpx), Jy(Jpy), Jz(Jpz);
 StL~GsL |Sx(-Qlx), Sy(-Qly), Sz(-Qlz-sL), Rx(epsilonSL),
 Sx(Slx), Sy(Sly), Sz(Slz) | m(msL), Jx(Jsx), Jy(Jsy), Jz(Jsz);
 Efr~Taz |Sx(-Ax), Sy(-Ay-a2R), Sz(-Az), Ry(psiR), Rz(-tetaSR), Sz(-cR), Rx(alfaSR),
 Sx(Erx), Sy(Ery), Sz(Erz) | m(meR), Jx(Jex), Jy(Jey), Jz(Jez);
 Bdr~Efr |Sx(-Erx), Sy(-fr-Ery), Sz(-Erz-eR), Ry(-gammaSR-psiR),
 Sx(Brx), Sy(Bry), Sz(Brz) | m(mbR), Jx(Jbx), Jy(Jby), Jz(Jbz);
 GIR~Bdr |Sx(-Brx), Sy(-Bry), Sz(-Brz-bR), Ry(betaSR),
 Sx(Grx), Sy(Gry), Sz(Grz) | m(mgR), Jx(Jgx), Jy(Jgy), Jz(Jgz);
 GsR~GIR |Sx(kR-Grx), Sy(-Gry), Sz(-qR-Grz), Ry(-nuSR),
 Sx(Qrx), Sy(Qry), Sz(Qrz) | m(mpR), Jx(Jpx), Jy(Jpy), Jz(Jpz);
 StR~GsR |Sx(-Qrx), Sy(-Qry), Sz(-Qrz-sR), Rx(-epsilonSR),
 Sx(Srx), Sy(Sry), Sz(Srz) | m(msR), Jx(Jsx), Jy(Jsy), Jz(Jsz);
"""


def _biped_fig3() -> str:
    return (EXAMPLES / "biped" / "biped.kdm").read_text(encoding="utf-8")


def _biped_fig2(fig3: str) -> str:
    start = fig3.index("Taz | Sx(XO)")
    end = fig3.index("ОБОБЩЕННЫЕ КООРДИНАТЫ")
    text = fig3[:start] + FIG2_RECORDS + "\n" + fig3[end:]
    # the old form has no separate frame origin: drop the XO/YO/ZO definitions
    return re.sub(r"XO = 0;\s+YO = 0;\s+ZO = 0;", "", text)


BIPED_FIG3 = _biped_fig3()
BIPED_FIG2 = _biped_fig2(BIPED_FIG3)
