"""C of the controls' solve (seed 004 (5.6)), the same system as
:func:`kidym.eom.controls.solve_controls`.

``kd_eval`` fills ``F`` with ``[F⁰, b, G, H]`` (:attr:`Equations.forcing_extended`);
``kd_controlled`` solves ``M X = [F⁰ | H]`` (Gaussian elimination with partial
pivoting), forms ``Γ = G X_H`` and solves ``Γ u = b − G X_0`` (as many controls as
constraints) or ``Γ Γᵀ ν = b − G X_0``, ``u = Γᵀ ν`` (more controls: least norm), and
writes ``ẇ = X_0 + X_H u`` into ``F[0..n_w)`` and ``u`` after it. It returns 1 where
``M`` or ``Γ`` (``Γ Γᵀ``) is singular (a constraint the controls cannot reach); the Python side
then names the constraint (:func:`kidym.simulate.compiled.simulate_compiled`).
"""

from __future__ import annotations

from kidym.eom.equations import Equations

#: Gaussian elimination with partial pivoting (as :mod:`kidym.codegen.constraints_c`'s;
#: a model has either constraints or controls, so one of the two is emitted).
_GAUSS = """\
static int kd_gauss(int n, double *A, double *b) {
    double big = 0.0;
    for (int i = 0; i < n * n; ++i) big = fmax(big, fabs(A[i]));
    if (!(big > 0.0)) return 1;
    for (int k = 0; k < n; ++k) {
        int piv = k;
        for (int i = k + 1; i < n; ++i)
            if (fabs(A[i*n+k]) > fabs(A[piv*n+k])) piv = i;
        if (!(fabs(A[piv*n+k]) > 1e-13 * big)) return 1;
        if (piv != k) {
            for (int j = 0; j < n; ++j) {
                double s = A[k*n+j]; A[k*n+j] = A[piv*n+j]; A[piv*n+j] = s;
            }
            double s = b[k]; b[k] = b[piv]; b[piv] = s;
        }
        for (int i = k + 1; i < n; ++i) {
            double f = A[i*n+k] / A[k*n+k];
            if (f == 0.0) continue;
            for (int j = k; j < n; ++j) A[i*n+j] -= f * A[k*n+j];
            b[i] -= f * b[k];
        }
    }
    for (int i = n - 1; i >= 0; --i) {
        double s = b[i];
        for (int j = i + 1; j < n; ++j) s -= A[i*n+j] * b[j];
        b[i] = s / A[i*n+i];
    }
    return 0;
}
"""


def _least_norm(r: int, s: int) -> str:
    """C that turns ``ν = b − G X_0`` into ``u``: with as many controls as constraints
    ``Γ u = ν`` itself (the normal equations would square Γ's condition number), else
    ``u = Γᵀ (Γ Γᵀ)⁻¹ ν``."""
    if r == s:
        return f"""    for (int i = 0; i < {r * r}; ++i) W[i] = Gam[i];
    if (kd_gauss({r}, W, nu)) return 1;
    for (int q = 0; q < {s}; ++q) u[q] = nu[q];"""
    return f"""    for (int p = 0; p < {r}; ++p)
        for (int q = 0; q < {r}; ++q) {{
            double v = 0.0;
            for (int j = 0; j < {s}; ++j) v += Gam[p*{s}+j] * Gam[q*{s}+j];
            W[p*{r}+q] = v;
        }}
    if (kd_gauss({r}, W, nu)) return 1;
    for (int q = 0; q < {s}; ++q) {{
        double v = 0.0;
        for (int p = 0; p < {r}; ++p) v += Gam[p*{s}+q] * nu[p];
        u[q] = v;
    }}"""


def controls_source(eq: Equations) -> str:
    """The routine ``kd_controlled`` of ``eq`` (empty without controls)."""
    if eq.controls is None:
        return ""
    nw, r, s = eq.n_w, eq.controls.r, eq.controls.s
    k = s + 1
    off_g, off_h = nw + r, nw + r + r * nw
    return _GAUSS + f"""
/* controls: {s}, programmed constraints: {r}; F = [F0({nw}), b({r}), G({r}x{nw}),
   H({nw}x{s})]. M w' = F0 + H u, G w' = b, u of least norm: w' into F[0..{nw}),
   u into F[{nw}..{nw + s}). 1 if M or G M^-1 H (G M^-1 H)^T is singular. */
static int kd_controlled(const double *M, double *F) {{
    double A[{nw * nw}], x[{nw}], X[{nw * k}], Gam[{r * s}], W[{r * r}], nu[{r}], u[{s}];
    const double *b = F + {nw}, *G = F + {off_g}, *H = F + {off_h};
    for (int col = 0; col < {k}; ++col) {{
        for (int i = 0; i < {nw * nw}; ++i) A[i] = M[i];
        for (int i = 0; i < {nw}; ++i) x[i] = col == 0 ? F[i] : H[i*{s} + col - 1];
        if (kd_gauss({nw}, A, x)) return 1;
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
{_least_norm(r, s)}
    for (int i = 0; i < {nw}; ++i) {{
        double v = X[i*{k}];
        for (int q = 0; q < {s}; ++q) v += X[i*{k} + 1 + q] * u[q];
        F[i] = v;
    }}
    for (int q = 0; q < {s}; ++q) F[{nw} + q] = u[q];
    return 0;
}}
"""
