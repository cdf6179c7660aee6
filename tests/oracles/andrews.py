"""Andrews' squeezing mechanism as published: the equations and the reference solution.

Hairer & Wanner, *Solving Ordinary Differential Equations II*, 2nd ed., Springer 1996,
§VII.7 ("Multibody systems"), and the Test Set for IVP Solvers (Mazzia & Magherini,
University of Bari; earlier CWI, Lioen & de Swart), problem ``andrews``: seven rigid
bodies in the plane, coordinates ``q = (β, Θ, γ, Φ, δ, Ω, ε)``, the index-3 system

    M(q) q̈ = f(q, q̇) − G(q)ᵀλ,    0 = g(q)     (g: 6 loop-closure equations)

Transcribed here from the published formulas — ``M``, ``f``, ``g``, ``G = ∂g/∂q`` —
nothing from kidym, so that kidym's equations, formed from the body records of
``examples/andrews_squeezer``, can be checked against them term by term. The test
set's multipliers enter with ``−Gᵀλ``; kidym's with ``+Gᵀλ``, so ``λ_kidym = −λ``.
"""

from __future__ import annotations

import numpy as np

#: The 42 parameters (SI units), as published.
PARAMETERS: dict[str, float] = dict(
    m1=.04325, m2=.00365, m3=.02373, m4=.00706, m5=.07050, m6=.00706, m7=.05498,
    xa=-.06934, ya=-.00227, xb=-0.03635, yb=.03273, xc=.014, yc=.072, c0=4530.0,
    i1=2.194e-6, i2=4.410e-7, i3=5.255e-6, i4=5.667e-7, i5=1.169e-5, i6=5.667e-7,
    i7=1.912e-5, d=28e-3, da=115e-4, e=2e-2, ea=1421e-5, rr=7e-3, ra=92e-5, l0=7785e-5,
    ss=35e-3, sa=1874e-5, sb=1043e-5, sc=18e-3, sd=2e-2, ta=2308e-5, tb=916e-5, u=4e-2,
    ua=1228e-5, ub=449e-5, zf=2e-2, zt=4e-2, fa=1421e-5, mom=33e-3)

#: Consistent initial positions (the velocities start at 0), as published.
Q0 = np.array([-0.0617138900142764496358948458001, 0.0,
               0.455279819163070380255912382449, 0.222668390165885884674473185609,
               0.487364979543842550225598953530, -0.222668390165885884674473185609,
               1.23054744454982119249735015568])

#: The reference solution at ``T_REF``: PSIDE, rtol = atol = 1e-14 (test set).
T_REF = 0.03
Q_REF = np.array([0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
                  -0.5347301163226948e+0, 0.5244099658805304e+0, 0.5347301163226948e+0,
                  0.1048080741042263e+1])
QD_REF = np.array([0.1139920302151208e+4, -0.1424379294994111e+4, 0.1103291221937134e+2,
                   0.1929337464421385e+2, 0.5735699284790808e+0, -0.1929337464421385e+2,
                   0.3231791658026955e+0])
LAMBDA_REF = np.array([0.1991753333731910e+3, -0.2975531228015052e+2,
                       0.2306654119098399e+2, 0.3145271365475927e+2,
                       0.2264249232082739e+2, 0.1161740700019673e+2])

#: kidym's names of the published coordinates, in their order.
COORDINATES = ("be", "th", "ga", "ph", "de", "om", "ep")


def mass_matrix(q: np.ndarray, P: dict[str, float] = PARAMETERS) -> np.ndarray:
    """``M(q)``, shape (7, 7)."""
    m1, m2, m3, m4, m5, m6, m7 = (P[f"m{k}"] for k in range(1, 8))
    i1, i2, i3, i4, i5, i6, i7 = (P[f"i{k}"] for k in range(1, 8))
    ra, rr, da, sa, sb, e, ea, zt = (P[k] for k in ("ra", "rr", "da", "sa", "sb", "e", "ea",
                                                    "zt"))
    ta, tb, zf, fa, u, ua, ub = (P[k] for k in ("ta", "tb", "zf", "fa", "u", "ua", "ub"))
    cth, sph, som = np.cos(q[1]), np.sin(q[3]), np.sin(q[5])
    M = np.zeros((7, 7))
    M[0, 0] = m1 * ra ** 2 + m2 * (rr ** 2 - 2 * da * rr * cth + da ** 2) + i1 + i2
    M[1, 0] = m2 * (da ** 2 - da * rr * cth) + i2
    M[1, 1] = m2 * da ** 2 + i2
    M[2, 2] = m3 * (sa ** 2 + sb ** 2) + i3
    M[3, 3] = m4 * (e - ea) ** 2 + i4
    M[4, 3] = m4 * ((e - ea) ** 2 + zt * (e - ea) * sph) + i4
    M[4, 4] = (m4 * (zt ** 2 + 2 * zt * (e - ea) * sph + (e - ea) ** 2)
               + m5 * (ta ** 2 + tb ** 2) + i4 + i5)
    M[5, 5] = m6 * (zf - fa) ** 2 + i6
    M[6, 5] = m6 * ((zf - fa) ** 2 - u * (zf - fa) * som) + i6
    M[6, 6] = (m6 * ((zf - fa) ** 2 - 2 * u * (zf - fa) * som + u ** 2)
               + m7 * (ua ** 2 + ub ** 2) + i6 + i7)
    return np.tril(M) + np.tril(M, -1).T


def forces(q: np.ndarray, qd: np.ndarray, P: dict[str, float] = PARAMETERS) -> np.ndarray:
    """``f(q, q̇)``: the driving torque, the spring, the velocity terms; shape (7,)."""
    m2, m4, m6 = P["m2"], P["m4"], P["m6"]
    da, rr, e, ea, zt, u, zf, fa = (P[k] for k in ("da", "rr", "e", "ea", "zt", "u", "zf",
                                                   "fa"))
    sc, sd, xb, yb, xc, yc, c0, l0 = (P[k] for k in ("sc", "sd", "xb", "yb", "xc", "yc",
                                                     "c0", "l0"))
    bep, thp, _gap, php, dep, omp, epp = qd
    sth, cga, sga = np.sin(q[1]), np.cos(q[2]), np.sin(q[2])
    cph, com = np.cos(q[3]), np.cos(q[5])
    xd, yd = sd * cga + sc * sga + xb, sd * sga - sc * cga + yb
    length = np.hypot(xd - xc, yd - yc)
    force = -c0 * (length - l0) / length
    fx, fy = force * (xd - xc), force * (yd - yc)
    return np.array([
        P["mom"] - m2 * da * rr * thp * (thp + 2 * bep) * sth,
        m2 * da * rr * bep ** 2 * sth,
        fx * (sc * cga - sd * sga) + fy * (sd * cga + sc * sga),
        m4 * zt * (e - ea) * dep ** 2 * cph,
        -m4 * zt * (e - ea) * php * (php + 2 * dep) * cph,
        -m6 * u * (zf - fa) * epp ** 2 * com,
        m6 * u * (zf - fa) * omp * (omp + 2 * epp) * com])


def constraints(q: np.ndarray, P: dict[str, float] = PARAMETERS) -> np.ndarray:
    """``g(q)``, shape (6,)."""
    rr, d, ss, e, zt, zf, u = (P[k] for k in ("rr", "d", "ss", "e", "zt", "zf", "u"))
    be, th, ga, ph, de, om, ep = q
    x = rr * np.cos(be) - d * np.cos(be + th)
    y = rr * np.sin(be) - d * np.sin(be + th)
    return np.array([
        x - ss * np.sin(ga) - P["xb"],
        y + ss * np.cos(ga) - P["yb"],
        x - e * np.sin(ph + de) - zt * np.cos(de) - P["xa"],
        y + e * np.cos(ph + de) - zt * np.sin(de) - P["ya"],
        x - zf * np.cos(om + ep) - u * np.sin(ep) - P["xa"],
        y - zf * np.sin(om + ep) + u * np.cos(ep) - P["ya"]])


def jacobian(q: np.ndarray, P: dict[str, float] = PARAMETERS) -> np.ndarray:
    """``G = ∂g/∂q``, shape (6, 7)."""
    rr, d, ss, e, zt, zf, u = (P[k] for k in ("rr", "d", "ss", "e", "zt", "zf", "u"))
    be, th, ga, ph, de, om, ep = q
    a = -rr * np.sin(be) + d * np.sin(be + th)
    b = rr * np.cos(be) - d * np.cos(be + th)
    G = np.zeros((6, 7))
    G[0::2, 0] = a
    G[0::2, 1] = d * np.sin(be + th)
    G[1::2, 0] = b
    G[1::2, 1] = -d * np.cos(be + th)
    G[0, 2], G[1, 2] = -ss * np.cos(ga), -ss * np.sin(ga)
    G[2, 3], G[2, 4] = -e * np.cos(ph + de), -e * np.cos(ph + de) + zt * np.sin(de)
    G[3, 3], G[3, 4] = -e * np.sin(ph + de), -e * np.sin(ph + de) - zt * np.cos(de)
    G[4, 5], G[4, 6] = zf * np.sin(om + ep), zf * np.sin(om + ep) - u * np.cos(ep)
    G[5, 5], G[5, 6] = -zf * np.cos(om + ep), -zf * np.cos(om + ep) - u * np.sin(ep)
    return G
