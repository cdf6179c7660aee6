"""The exact motions of seed 001's six tests (rigid constraints, elastic impacts).

Independent of kidym: closed forms (tests 1–4, 6) and an event-by-event solution of
parabolas and mirror reflections (test 5). Each function takes the output times and
the model's parameter values (a mapping by name, as ``Model.parameter_values``) and
returns ``(x, y, z)``, arrays of shape (n_t,).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy.special import ellipj, ellipk

Array = np.ndarray


def circle(t: Array, p: Mapping[str, float]) -> tuple[Array, Array, Array]:
    """Test 1: uniform motion on the circle of radius R normal to the fixed axis
    ``(0, sin β, cos β)``, from ``(R, 0, 0)`` with the speed ``v0``."""
    R, v0, beta = p["R"], p["v0"], p["beta"]
    ang = v0 * t / R
    return (R * np.cos(ang), R * np.sin(ang) * np.cos(beta), -R * np.sin(ang) * np.sin(beta))


def line(t: Array, p: Mapping[str, float]) -> tuple[Array, Array, Array]:
    """Test 2: ``R n + u t l`` with ``l = (1, 1, 1)/√3``, ``n = (1, −1, 0)/√2``."""
    R, u = p["R"], p["u"]
    s = u * t / np.sqrt(3.0)
    return (R / np.sqrt(2.0) + s, -R / np.sqrt(2.0) + s, s)


def cycloid(t: Array, p: Mapping[str, float]) -> tuple[Array, Array, Array]:
    """Test 3: hinge at ``(V t, 0, 0)``; the rod turns at ``V sin(th0)/R`` from ``th0``
    (the part of the relative velocity ``−V`` normal to the rod survives the start)."""
    R, V, th0 = p["R"], p["V"], p["th0"]
    th = th0 + V * np.sin(th0) * t / R
    return (V * t + R * np.cos(th), R * np.sin(th), np.zeros_like(t))


def sinusoid(t: Array, p: Mapping[str, float]) -> tuple[Array, Array, Array]:
    """Test 4: hinge at ``(a t²/2, 0, 0)``; the rod's angle ``φ`` from ``−Ox`` is a
    pendulum ``φ'' = −(a/R) sin φ`` released at ``ph0``:
    ``sin(φ/2) = k sn(K(k) − ω t, k)``, ``k = sin(ph0/2)``, ``ω = √(a/R)``."""
    R, a, ph0 = p["R"], p["a"], p["ph0"]
    k = np.sin(ph0 / 2)
    m = k * k
    sn, _cn, _dn, _ph = ellipj(ellipk(m) - np.sqrt(a / R) * t, m)
    phi = 2 * np.arcsin(k * sn)
    return (a * t**2 / 2 - R * np.cos(phi), R * np.sin(phi), np.zeros_like(t))


def _next_hit(r: Array, v: Array, gvec: Array, R: float) -> float:
    """First time > 0 at which ``r + v τ + g τ²/2`` reaches the sphere ``|r| = R``."""
    a = gvec / 2
    coeffs = [a @ a, 2 * v @ a, v @ v + 2 * r @ a, 2 * r @ v, r @ r - R * R]
    roots = np.roots(coeffs)
    best = np.inf
    for z in roots:
        if abs(z.imag) > 1e-7 * max(1.0, abs(z)) or z.real <= 1e-9:
            continue
        tau = z.real
        for _ in range(3):   # polish (Newton on the quartic)
            tau -= np.polyval(coeffs, tau) / np.polyval(np.polyder(coeffs), tau)
        mid = r + v * tau / 2 + a * (tau / 2) ** 2
        if mid @ mid < R * R and tau < best:   # inside on the way: a true hit
            best = tau
    if not np.isfinite(best):
        raise RuntimeError("no wall hit found")
    return best


def sphere(t: Array, p: Mapping[str, float]) -> tuple[Array, Array, Array]:
    """Test 5: parabolas in the sphere ``|r| < R`` under gravity ``−g`` along Oz, joined
    by mirror reflections ``v → v − 2 (v·n) n`` at the wall (``n = r/R``)."""
    R, g = p["R"], p["g"]
    gvec = np.array([0.0, 0.0, -g])
    r = np.array([p["x0"], p["y0"], p["z0"]])
    v = np.array([p["u0"], p["v0"], p["w0"]])
    t0 = float(t[0])
    out = np.empty((len(t), 3))
    k = 0
    while k < len(t):
        hit = t0 + _next_hit(r, v, gvec, R)
        while k < len(t) and t[k] <= hit:
            tau = t[k] - t0
            out[k] = r + v * tau + gvec * tau**2 / 2
            k += 1
        tau = hit - t0
        r, v = r + v * tau + gvec * tau**2 / 2, v + gvec * tau
        n = r / np.linalg.norm(r)
        r = n * R
        v = v - 2 * (v @ n) * n
        t0 = hit
    return out[:, 0], out[:, 1], out[:, 2]


def planes(t: Array, p: Mapping[str, float]) -> tuple[Array, Array, Array]:
    """Test 6: as test 3 from ``y(0) = ys`` behind the hinge, with the rod's angle
    ``θ`` (from Ox) reflected between the planes ``y = y1`` and ``y = y2``: a
    triangle wave between ``π − asin(y1/R)`` and ``π − asin(y2/R)`` at the rate
    ``V ys/R²``."""
    R, V, y1, y2, ys = p["R"], p["V"], p["y1"], p["y2"], p["ys"]
    lo, hi = np.pi - np.arcsin(y1 / R), np.pi - np.arcsin(y2 / R)
    th0 = np.pi - np.arcsin(ys / R)
    rate = V * ys / R**2
    width = hi - lo
    # unfold: a free angle lo + s, folded back into [lo, hi] (period 2 width)
    s = np.mod(th0 - lo + rate * t, 2 * width)
    th = lo + np.where(s <= width, s, 2 * width - s)
    return (V * t + R * np.cos(th), R * np.sin(th), np.zeros_like(t))


EXACT = {"test1_circle": circle, "test2_line": line, "test3_cycloid": cycloid,
         "test4_sinusoid": sinusoid, "test5_sphere": sphere, "test6_planes": planes}
