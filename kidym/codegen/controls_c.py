"""C of the controls' solve (seed 004 (5.6)), the same system as
:func:`kidym.eom.controls.solve_controls`.

``kd_eval`` fills ``F`` with ``[F⁰, b, G, H]`` (:attr:`Equations.forcing_extended`);
``kd_controlled`` solves ``M X = [F⁰ | H]`` (one LU factor with partial pivoting,
:mod:`kidym.codegen.dense_c`), forms ``Γ = G X_H`` and takes the least-norm solution of
``Γ u = b − G X_0`` from the Householder QR factorisation ``Γᵀ = Q R``: ``Rᵀ z = b − G
X_0``, ``u = Q z`` (the unique solution with as many controls as constraints; the normal
equations ``Γ Γᵀ ν = …`` would square Γ's condition number), and writes ``ẇ = X_0 + X_H
u`` into ``F[0..n_w)`` and ``u`` after it. It returns 1 where ``M`` or ``Γ`` is singular
(a constraint the controls cannot reach: a row of ``Γ`` whose part outside the span of
the rows before it, ``|R_ρρ|``, is below :data:`kidym.eom.controls.RANK_TOLERANCE` of
``|G_ρ| |X_H|``, NumPy's test, for either shape); the Python side then names the
constraint (:func:`kidym.simulation.compiled_runs.simulate_compiled`).
"""

from __future__ import annotations

from kidym.eom.controls import RANK_TOLERANCE
from kidym.eom.equations import Equations


def _least_norm(r: int, s: int, nw: int, k: int) -> str:
    """C that turns ``ν = b − G X_0`` into ``u``: the least-norm solution from the
    Householder QR factorisation ``Γᵀ = Q R``: ``Rᵀ z = ν``, ``u = Q z`` — not the normal
    equations ``Γ Γᵀ``, which square Γ's condition number; with as many controls as
    constraints that is the solution of ``Γ u = ν`` itself (QR is as accurate there as
    NumPy's LU). ``|R_ρρ|`` is the part of row ``ρ`` of ``Γ`` outside the span of the
    rows before it, compared with the scale ``|G_ρ| |X_H|`` as
    :func:`kidym.eom.controls.unreachable_rows` does (1 below it): one rank rule for
    both engines and both shapes (Gaussian elimination's pivot test, used here before
    for the square case, let a row 1e-12 from dependent through where NumPy stops)."""
    return f"""    /* Rt = Gam^T ({s} x {r}), reduced to R in place; V: the Householder vectors */
    double Rt[{s * r}], V[{s * r}], beta[{r}], xh = 0.0;
    for (int i = 0; i < {nw}; ++i)
        for (int q = 0; q < {s}; ++q) xh += X[i*{k} + 1 + q] * X[i*{k} + 1 + q];
    xh = fmax(sqrt(xh), 1e-300);
    for (int i = 0; i < {s}; ++i)
        for (int p = 0; p < {r}; ++p) Rt[i*{r}+p] = Gam[p*{s}+i];
    for (int p = 0; p < {r}; ++p) {{
        double g = 0.0, norm = 0.0, vv = 0.0;
        for (int j = 0; j < {nw}; ++j) g += G[p*{nw}+j] * G[p*{nw}+j];
        for (int i = p; i < {s}; ++i) norm += Rt[i*{r}+p] * Rt[i*{r}+p];
        norm = sqrt(norm);
        if (!(norm > {RANK_TOLERANCE!r} * sqrt(g) * xh)) return 1;
        double alpha = Rt[p*{r}+p] > 0.0 ? -norm : norm;
        for (int i = 0; i < {s}; ++i) V[i*{r}+p] = i < p ? 0.0 : Rt[i*{r}+p];
        V[p*{r}+p] -= alpha;
        for (int i = p; i < {s}; ++i) vv += V[i*{r}+p] * V[i*{r}+p];
        beta[p] = 2.0 / vv;
        for (int c = p + 1; c < {r}; ++c) {{
            double d = 0.0;
            for (int i = p; i < {s}; ++i) d += V[i*{r}+p] * Rt[i*{r}+c];
            d *= beta[p];
            for (int i = p; i < {s}; ++i) Rt[i*{r}+c] -= d * V[i*{r}+p];
        }}
        Rt[p*{r}+p] = alpha;
    }}
    /* R^T z = nu (forward), then u = Q [z; 0] = H_0 ... H_{r - 1} [z; 0] */
    for (int p = 0; p < {r}; ++p) {{
        double v = nu[p];
        for (int j = 0; j < p; ++j) v -= Rt[j*{r}+p] * nu[j];
        nu[p] = v / Rt[p*{r}+p];
    }}
    for (int q = 0; q < {s}; ++q) u[q] = q < {r} ? nu[q] : 0.0;
    for (int p = {r - 1}; p >= 0; --p) {{
        double d = 0.0;
        for (int i = p; i < {s}; ++i) d += V[i*{r}+p] * u[i];
        d *= beta[p];
        for (int i = p; i < {s}; ++i) u[i] -= d * V[i*{r}+p];
    }}"""


def controls_source(eq: Equations) -> str:
    """The routine ``kd_controlled`` of ``eq`` (empty without controls)."""
    if eq.controls is None:
        return ""
    nw, r, s = eq.n_w, eq.controls.r, eq.controls.s
    k = s + 1
    off_g, off_h = nw + r, nw + r + r * nw
    return f"""
/* controls: {s}, programmed constraints: {r}; F = [F0({nw}), b({r}), G({r}x{nw}),
   H({nw}x{s})]. M w' = F0 + H u, G w' = b, u of least norm: w' into F[0..{nw}),
   u into F[{nw}..{nw + s}). 1 if M is singular or a row of G M^-1 H depends on
   the rows before it. */
static int kd_controlled(const double *M, double *F) {{
    double A[{nw * nw}], x[{nw}], X[{nw * k}], Gam[{r * s}], nu[{r}], u[{s}];
    int piv[{nw}];
    const double *b = F + {nw}, *G = F + {off_g}, *H = F + {off_h};
    for (int i = 0; i < {nw * nw}; ++i) A[i] = M[i];
    if (kd_lu({nw}, A, piv)) return 1;
    for (int col = 0; col < {k}; ++col) {{
        for (int i = 0; i < {nw}; ++i) x[i] = col == 0 ? F[i] : H[i*{s} + col - 1];
        kd_lu_solve({nw}, A, piv, x);
        for (int i = 0; i < {nw}; ++i) X[i*{k} + col] = x[i];
    }}
    for (int p = 0; p < {r}; ++p) {{
        double v = b[p];
        for (int j = 0; j < {nw}; ++j) v -= G[p*{nw}+j] * X[j*{k}];
        nu[p] = v;
        for (int q = 0; q < {s}; ++q) {{
            double g = 0.0;
            for (int j = 0; j < {nw}; ++j) g += G[p*{nw}+j] * X[j*{k} + 1 + q];
            Gam[p*{s}+q] = g;
        }}
    }}
{_least_norm(r, s, nw, k)}
    for (int i = 0; i < {nw}; ++i) {{
        double v = X[i*{k}];
        for (int q = 0; q < {s}; ++q) v += X[i*{k} + 1 + q] * u[q];
        F[i] = v;
    }}
    for (int q = 0; q < {s}; ++q) F[{nw} + q] = u[q];
    return 0;
}}
"""
