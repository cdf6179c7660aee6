"""C of the constraint layer: the augmented solve and the projection (both engines
solve the same system, :mod:`kidym.eom.constraints`).

``kd_eval`` fills ``F`` with ``[F, γ, Φ, c, G]`` (:attr:`Equations.forcing_extended`);
``kd_constrained`` solves ``[M −Gᵀ; G 0][ẇ; λ] = [F; γ − 2α c − β² Φ]`` by LU with
partial pivoting (:mod:`kidym.codegen.dense_c`, the one dense solver); ``kidym_project``
moves a state back onto ``Φ = 0`` (Gauss–Newton, ``Δq = B δ``, least ``δ``) and ``G w +
g = 0`` (least change in the kinetic metric) when the drift exceeds the tolerance, as
:func:`kidym.simulation.constrained.project` does.
"""

from __future__ import annotations

from kidym.eom.equations import Equations

#: Newton iterations of the projection (as kidym.simulation.constrained.MAX_NEWTON).
MAX_NEWTON = 50


def constraint_source(eq: Equations) -> str:
    """The constraint routines of ``eq`` (trivial ones without constraints)."""
    if eq.constraints is None:
        return """\
/* no holonomic constraints: M w' = F, nothing to project */
double kidym_stabilization[3] = {0.0, 0.0, 0.0};
int kidym_project(double t, double *y, const double *p, const double *c) {
    (void)t; (void)y; (void)p; (void)c;
    return 0;
}
"""
    nq, nw, m = eq.n_q, eq.n_w, eq.m
    n = nw + m
    nf = nw + m * (3 + nw)
    return f"""\
/* holonomic constraints: {m}; F = [F({nw}), gamma({m}), Phi({m}), c({m}), G({m}x{nw})] */
#define KD_NF {nf}
/* 2 alpha, beta^2 (Baumgarte), drift that triggers a projection (0: never) */
double kidym_stabilization[3] = {{0.0, 0.0, 0.0}};

/* [M -G^T; G 0] [w'; lambda] = [F; gamma - 2 alpha c - beta^2 Phi]: w' into F[0..{nw}),
   lambda into F[{nw}..{n}). 1 if singular (M, or dependent constraints). */
static int kd_constrained(const double *M, double *F) {{
    double A[{n * n}], b[{n}];
    int piv[{n}];
    const double *gam = F + {nw}, *phi = F + {nw + m}, *cv = F + {nw + 2 * m};
    const double *G = F + {nw + 3 * m};
    for (int i = 0; i < {n * n}; ++i) A[i] = 0.0;
    for (int i = 0; i < {nw}; ++i) {{
        for (int j = 0; j < {nw}; ++j) A[i*{n}+j] = M[i*{nw}+j];
        b[i] = F[i];
    }}
    for (int k = 0; k < {m}; ++k) {{
        for (int j = 0; j < {nw}; ++j) {{
            A[({nw}+k)*{n}+j] = G[k*{nw}+j];
            A[j*{n}+{nw}+k] = -G[k*{nw}+j];
        }}
        b[{nw}+k] = gam[k] - kidym_stabilization[0]*cv[k] - kidym_stabilization[1]*phi[k];
    }}
    if (kd_lu({n}, A, piv)) return 1;
    kd_lu_solve({n}, A, piv, b);
    for (int i = 0; i < {n}; ++i) F[i] = b[i];
    return 0;
}}

/* The state onto Phi = 0 and G w + g = 0 where the drift exceeds the tolerance:
   0 unchanged, 1 projected, 2 the projection failed. */
int kidym_project(double t, double *y, const double *p, const double *c) {{
    const double tol = kidym_stabilization[2];
    double qd[{nq}], qd0[{nq}], M[{nw * nw}], F[KD_NF], z[{nq + nw}];
    double B[{nq * nw}], S[{m * m}], x[{max(m, nw)}], X[{nw * m}], Mc[{nw * nw}];
    int piv[{max(m, nw)}];
    if (!(tol > 0.0)) return 0;
    kd_eval(t, y, p, c, qd, M, F);
    double res = 0.0;
    for (int i = 0; i < {2 * m}; ++i) res = fmax(res, fabs(F[{nw + m}+i]));
    if (!(res > tol)) return isfinite(res) ? 0 : 2;
    int done = 0;
    for (int it = 0; it <= {MAX_NEWTON}; ++it) {{
        kd_eval(t, y, p, c, qd, M, F);
        const double *phi = F + {nw + m}, *G = F + {nw + 3 * m};
        double r = 0.0;
        for (int i = 0; i < {m}; ++i) r = fmax(r, fabs(phi[i]));
        if (!isfinite(r)) return 2;
        if (r <= 1e-3 * tol) {{ done = 1; break; }}
        if (it == {MAX_NEWTON}) break;
        /* B = dq'/dw from q' itself (linear in w) */
        for (int i = 0; i < {nq + nw}; ++i) z[i] = i < {nq} ? y[i] : 0.0;
        kd_eval(t, z, p, c, qd0, Mc, F);
        for (int j = 0; j < {nw}; ++j) {{
            z[{nq}+j] = 1.0;
            kd_eval(t, z, p, c, qd, Mc, F);
            for (int i = 0; i < {nq}; ++i) B[i*{nw}+j] = qd[i] - qd0[i];
            z[{nq}+j] = 0.0;
        }}
        kd_eval(t, y, p, c, qd, M, F);
        /* delta = -G^T (G G^T)^-1 Phi, q += B delta */
        for (int i = 0; i < {m}; ++i) {{
            x[i] = phi[i];
            for (int k = 0; k < {m}; ++k) {{
                double s = 0.0;
                for (int j = 0; j < {nw}; ++j) s += G[i*{nw}+j] * G[k*{nw}+j];
                S[i*{m}+k] = s;
            }}
        }}
        if (kd_lu({m}, S, piv)) return 2;
        kd_lu_solve({m}, S, piv, x);
        for (int i = 0; i < {nq}; ++i) {{
            double s = 0.0;
            for (int j = 0; j < {nw}; ++j) {{
                double dj = 0.0;
                for (int k = 0; k < {m}; ++k) dj -= G[k*{nw}+j] * x[k];
                s += B[i*{nw}+j] * dj;
            }}
            y[i] += s;
        }}
    }}
    if (!done) return 2;
    /* w -= M^-1 G^T (G M^-1 G^T)^-1 c */
    kd_eval(t, y, p, c, qd, M, F);
    const double *cv = F + {nw + 2 * m}, *G = F + {nw + 3 * m};
    for (int i = 0; i < {nw * nw}; ++i) Mc[i] = M[i];
    if (kd_lu({nw}, Mc, piv)) return 2;
    for (int k = 0; k < {m}; ++k) {{
        for (int j = 0; j < {nw}; ++j) x[j] = G[k*{nw}+j];
        kd_lu_solve({nw}, Mc, piv, x);
        for (int j = 0; j < {nw}; ++j) X[j*{m}+k] = x[j];
    }}
    double mu[{m}];
    for (int i = 0; i < {m}; ++i) {{
        mu[i] = cv[i];
        for (int k = 0; k < {m}; ++k) {{
            double s = 0.0;
            for (int j = 0; j < {nw}; ++j) s += G[i*{nw}+j] * X[j*{m}+k];
            S[i*{m}+k] = s;
        }}
    }}
    if (kd_lu({m}, S, piv)) return 2;
    kd_lu_solve({m}, S, piv, mu);
    for (int j = 0; j < {nw}; ++j) {{
        double s = 0.0;
        for (int k = 0; k < {m}; ++k) s += X[j*{m}+k] * mu[k];
        y[{nq}+j] -= s;
    }}
    return 1;
}}
"""
