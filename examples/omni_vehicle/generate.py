"""Write the omni-wheel vehicle of seed 002 for any N wheels and n rollers.

``python generate.py [N] [n]`` writes ``omni_N_n.kdm`` (massive rollers, roller changes
as events) and ``omni_N_n_inertialess.kdm`` (the limit B = 0: rollers locked into
the wheels, no roller bodies) next to this script; ``python generate.py 3 5`` writes
the two files of the example.

The model (Gerasimov & Zobova 2018, seed 002): a platform with centre of mass S at
``(x, y)`` and heading ``th``; wheel ``i`` turns by ``chi_i`` about its axis, the ray
from S at the angle ``al_i = 2 pi (i - 1)/N`` at the distance ``R``; roller ``j`` of
wheel ``i`` sits on the wheel at ``kappa_j = 2 pi (j - 1)/n`` from the downward
direction, its axis at the distance ``r`` from the wheel centre, tangent to the rim,
and spins by ``phi_i_j``. Roller 1 of each wheel is the one in contact: the
no-slip conditions (2.1), (2.2) are velocity formulas in the pseudo-velocities
``nu1, nu2, nu3`` (``v_S = R nu1 e_xi + R nu2 e_eta``, ``nu3 = Lam th'``); the free
rollers' speeds ``phi_i_j't`` (j ≥ 2) are the paper's ``nu_s``. When ``chi_i``
reaches ``±pi/n`` the next roller takes the contact: an event resets ``chi_i`` by
``∓2 pi/n`` and shifts the roller labels of that wheel (section 4 of the paper):
the leaving roller keeps the speed it had in contact, the arriving one gets the
speed of the constraint (2.1).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Parameter values: the paper's where it states them (section 5), ours otherwise.
PARAMETERS = {
    "R": "0.15",      # distance S to wheel centres (paper)
    "l": "0.05",      # wheel radius (paper: 0.05)
    "Lam": "5",       # nu3 = Lam*th't (not stated: chosen, see README)
    "mp": "1",        # platform mass (paper)
    "mw": "0.15",     # wheel disc mass (paper)
    "mr": "0.05",     # roller mass (paper)
    "B": "1.6e-5",    # roller moment about its axis (paper: B ≈ 1.6e-5)
    "A": "1.6e-5",    # roller moment about a transverse axis (not stated: A = B)
}


def _angle(k: int, count: int) -> str:
    """``2 pi k/count`` as model text (radians: never a bare number, see §2.4)."""
    if k == 0:
        return "0"
    return f"2*pi*{k}/{count}"


def _header(N: int, n: int, what: str) -> list[str]:
    return [
        f"# Omni-wheel vehicle of seed 002 (Gerasimov & Zobova 2018): N = {N} wheels, "
        f"n = {n} rollers each, {what}.",
        "  Written by examples/omni_vehicle/generate.py; do not edit by hand. #",
        "РАСЧЕТ := ДИНАМИКА;",
        "; ".join(f"{k} = {v}" for k, v in PARAMETERS.items()) + ";",
        f"r = l*cos(pi/{n - 1});               # roller axis to wheel centre: truncated "
        "rollers, section 4 #",
        "Ip = mp*R^2/2;  Jwa = mw*l^2/2;  Jwt = mw*l^2/4;   # uniform discs #",
    ]


def _kinematics(N: int) -> list[str]:
    out = [
        "ПСЕВДОСКОРОСТИ := nu1, nu2, nu3;",
        "x't = R*(nu1*cos(th) - nu2*sin(th));",
        "y't = R*(nu1*sin(th) + nu2*cos(th));",
        "th't = nu3/Lam;",
    ]
    for i in range(1, N + 1):
        a = _angle(i - 1, N)
        out.append(f"chi{i}'t = R/l*(nu1*sin({a}) - nu2*cos({a}) - nu3/Lam);   # (2.2) #")
    return out


def massive(N: int, n: int) -> str:
    """Model text with massive rollers and the roller changes as events."""
    lines = _header(N, n, "massive rollers, roller changes as events (section 4)")
    lines.append("Platform | Sx(x), Sy(y), Rz(th) | mp, 0, 0, Ip;")
    for i in range(1, N + 1):
        lines.append(f"Wheel{i}~Platform | Rz({_angle(i - 1, N)}), Sx(R), Rx(chi{i}) "
                     "| mw, Jwa, Jwt, Jwt;")
        for j in range(1, n + 1):
            turn = f"Rx({_angle(j - 1, n)}), " if j > 1 else ""
            lines.append(f"Roller{i}_{j}~Wheel{i} | {turn}Sz(-r), Ry(phi{i}_{j}) "
                         "| mr, A, B, A;")
    lines += _kinematics(N)
    for i in range(1, N + 1):
        a = _angle(i - 1, N)
        lines.append(f"phi{i}_1't = R/(l*cos(chi{i}) - r)*(nu1*cos({a}) + nu2*sin({a}));"
                     "   # (2.1) #")
    lines.append("# roller changes (section 4): wheel i turning forward reaches chi = pi/n, "
                 "roller n arrives;\n  turning back it reaches chi = -pi/n, roller 2 "
                 "arrives #")
    items = []
    for i in range(1, N + 1):
        # forward: new 1 = old n, new j = old j - 1
        fwd = [f"chi{i} = chi{i} - 2*pi/{n}", f"phi{i}_1 = phi{i}_{n}"]
        fwd += [f"phi{i}_{j} = phi{i}_{j - 1}" for j in range(2, n + 1)]
        fwd += [f"phi{i}_{j}'t = phi{i}_{j - 1}'t" for j in range(2, n + 1)]
        # backward: new j = old j + 1, new n = old 1
        back = [f"chi{i} = chi{i} + 2*pi/{n}", f"phi{i}_{n} = phi{i}_1"]
        back += [f"phi{i}_{j} = phi{i}_{j + 1}" for j in range(1, n)]
        back += [f"phi{i}_{j}'t = phi{i}_{j + 1}'t" for j in range(2, n)]
        back += [f"phi{i}_{n}'t = phi{i}_1't"]
        items.append(f"Forward{i}(chi{i} - pi/{n}, ВВЕРХ, " + ", ".join(fwd) + ")")
        items.append(f"Back{i}(chi{i} + pi/{n}, ВНИЗ, " + ", ".join(back) + ")")
    lines.append("СОБЫТИЯ := " + ",\n           ".join(items) + ";")
    lines += _initial(N, n)
    return "\n".join(lines) + "\n"


def inertialess(N: int, n: int) -> str:
    """The limit B = 0: each wheel carries its n rollers locked (the paper's choice)."""
    lines = _header(N, n, "the inertialess limit: rollers locked into the wheels")
    lines.append(f"mW = mw + {n}*mr;                       # wheel with its rollers #")
    lines.append(f"JWa = Jwa + {n}*(mr*r^2 + A);             # about the wheel axis #")
    lines.append(f"JWt = Jwt + {n}*(mr*r^2/2 + (A + B)/2);   # about a diameter #")
    lines.append("Platform | Sx(x), Sy(y), Rz(th) | mp, 0, 0, Ip;")
    for i in range(1, N + 1):
        lines.append(f"Wheel{i}~Platform | Rz({_angle(i - 1, N)}), Sx(R), Rx(chi{i}) "
                     "| mW, JWa, JWt, JWt;")
    lines += _kinematics(N)
    lines += _initial(N, 0)
    return "\n".join(lines) + "\n"


def _initial(N: int, n: int) -> list[str]:
    return ["НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), nu1(1), nu2(0), nu3(1);",
            "ВРЕМЯ := t(0, 60);",
            "ПОКАЗАТЬ := nu1, nu2, nu3;"]


def write(N: int, n: int, folder: Path = HERE) -> tuple[Path, Path]:
    """Write both models; returns their paths."""
    full = folder / f"omni_{N}_{n}.kdm"
    limit = folder / f"omni_{N}_{n}_inertialess.kdm"
    full.write_text(massive(N, n), encoding="utf-8")
    limit.write_text(inertialess(N, n), encoding="utf-8")
    return full, limit


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]] or [3, 5]
    for path in write(*[*args, 5][:2]):
        print(path.name)
