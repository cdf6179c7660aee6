"""C of the analytic Jacobian ``J = ∂ẏ/∂y`` of the compiled right-hand side.

The same mathematics as :mod:`kidym.simulate.jacobian` (the NumPy engine's): with
``x`` the solution of ``A x = b`` — ``A = M``, ``b = F``, or with constraints
``A = [M −Gᵀ; G 0]``, ``b = [F; γ − 2α c − β² Φ]`` (:mod:`kidym.codegen.constraints_c`)
— the derivative by a state ``y_k`` is ``∂x/∂y_k = A⁻¹ (∂b/∂y_k − ∂A/∂y_k · x)``.

The partial derivatives of ``q̇``, ``M`` (upper triangle) and ``F`` (extended) by
every state are named quantities of the graph (``X'q1``, formed by the chain rule
through the direct dependencies and memoised, :meth:`kidym.symbolic.graph.Graph.diff`),
emitted by the emitter like any routine (hoisting, CSE, parts) into ``kd_jac_eval``;
only the non-zero ones are written (the arrays start at zero). ``kidym_jac`` factors
``A`` once (LU with partial pivoting) and solves for all ``n_y`` columns. Nothing is
differentiated numerically.
"""

from __future__ import annotations

from collections.abc import Sequence

import symengine as se

from kidym.eom.equations import Equations

Expr = se.Basic


def jacobian_roots(eq: Equations) -> tuple[list[Expr], list[str]]:
    """The non-zero partial derivatives and where ``kd_jac_eval`` stores them.

    For state ``k`` (coordinates, then speeds): ``kd_dq[k·n_q + i] = ∂q̇_i/∂y_k``,
    ``kd_dM[k·n_up + u] = ∂M_u/∂y_k`` (``u`` the packed upper triangle, row by row)
    and ``kd_dF[k·n_F + f] = ∂F_f/∂y_k`` (``F`` extended,
    :attr:`Equations.forcing_extended`).
    """
    n_w = eq.n_w
    upper = [eq.mass_matrix_named[i][j] for i in range(n_w) for j in range(i, n_w)]
    forcing = list(eq.forcing_extended)
    groups = (("kd_dq", list(eq.qdot)), ("kd_dM", upper), ("kd_dF", forcing))
    roots: list[Expr] = []
    targets: list[str] = []
    for k, s in enumerate((*eq.coordinates, *eq.speeds)):
        for array, exprs in groups:
            for i, e in enumerate(exprs):
                d = eq.graph.diff(e, s)
                if d != 0:
                    roots.append(d)
                    targets.append(f"{array}[{k * len(exprs) + i}]")
    return roots, targets


def _packed_upper(n: int) -> list[int]:
    """``index[i·n + j]`` of entry ``(i, j)`` of a symmetric ``n × n`` matrix in its
    packed upper triangle (row by row)."""
    index = [0] * (n * n)
    u = 0
    for i in range(n):
        for j in range(i, n):
            index[i * n + j] = index[j * n + i] = u
            u += 1
    return index


def jacobian_source(eq: Equations, eval_lines: Sequence[str] | None) -> str:
    """``kidym_jacobian``, ``kd_jac_eval`` and ``kidym_jac`` (see the module docstring).

    ``eval_lines`` are the emitted statements of the derivatives
    (:func:`jacobian_roots`); ``None`` gives the stub of a library built without the
    Jacobian (``kidym_jacobian = 0``, ``kidym_jac`` returns -1).
    """
    if eval_lines is None:
        return """\
/* built without the analytic Jacobian (generate_c(..., jacobian=True) has it) */
const int kidym_jacobian = 0;
int kidym_jac(double t, const double *y, const double *p, const double *c, double *J) {
    (void)t; (void)y; (void)p; (void)c; (void)J;
    return -1;
}
"""
    nq, nw, m = eq.n_q, eq.n_w, eq.m
    ny = nq + nw
    n = nw + m
    nup = nw * (nw + 1) // 2
    nf = len(eq.forcing_extended)
    per = ny * (nq + nup + nf)
    packed = ", ".join(map(str, _packed_upper(nw)))
    if m:
        assemble = f"""\
    const double *gam = F + {nw}, *phi = F + {nw + m}, *cv = F + {nw + 2 * m};
    const double *G = F + {nw + 3 * m};
    const double a = kidym_stabilization[0], b2 = kidym_stabilization[1];
    for (int i = 0; i < {n * n}; ++i) A[i] = 0.0;
    for (int i = 0; i < {nw}; ++i) {{
        for (int j = 0; j < {nw}; ++j) A[i*{n}+j] = M[i*{nw}+j];
        x[i] = F[i];
    }}
    for (int l = 0; l < {m}; ++l) {{
        for (int j = 0; j < {nw}; ++j) {{
            A[({nw}+l)*{n}+j] = G[l*{nw}+j];
            A[j*{n}+{nw}+l] = -G[l*{nw}+j];
        }}
        x[{nw}+l] = gam[l] - a*cv[l] - b2*phi[l];
    }}"""
        column = f"""\
            const double *dG = df + {nw + 3 * m};
            for (int l = 0; l < {m}; ++l) s += dG[l*{nw}+i] * x[{nw}+l];
            col[i] = s;
        }}
        for (int l = 0; l < {m}; ++l) {{
            const double *dG = df + {nw + 3 * m};
            double s = df[{nw}+l] - a*df[{nw + 2 * m}+l] - b2*df[{nw + m}+l];
            for (int j = 0; j < {nw}; ++j) s -= dG[l*{nw}+j] * x[j];
            col[{nw}+l] = s;
        }}"""
        what = ("the augmented matrix A = [M -G^T; G 0], b = [F; gamma - 2 alpha c - "
                "beta^2 Phi]")
    else:
        assemble = f"""\
    for (int i = 0; i < {nw * nw}; ++i) A[i] = M[i];
    for (int i = 0; i < {nw}; ++i) x[i] = F[i];"""
        column = """\
            col[i] = s;
        }"""
        what = "A = M, b = F"
    return f"""\
/* The analytic Jacobian J = d ydot / d y (row-major): the partial derivatives of q',
   M (packed upper triangle) and F by every state, named quantities formed by the
   chain rule; then d x / d y_k = A^-1 (d b / d y_k - d A / d y_k x) with {what}. */
const int kidym_jacobian = 1;
static const int kd_upper[{nw * nw}] = {{{packed}}};

static void kd_jac_eval(double t, const double *y, const double *p, const double *c,
                        double *kd_dq, double *kd_dM, double *kd_dF) {{
{chr(10).join(eval_lines)}
}}

/* A = L U (row-major, in place) with partial pivoting; 1 if a pivot vanishes
   (relative to the largest entry). */
static int kd_lu(int n, double *A, int *piv) {{
    double big = 0.0;
    for (int i = 0; i < n * n; ++i) big = fmax(big, fabs(A[i]));
    if (!(big > 0.0)) return 1;
    for (int k = 0; k < n; ++k) {{
        int r = k;
        for (int i = k + 1; i < n; ++i)
            if (fabs(A[i*n+k]) > fabs(A[r*n+k])) r = i;
        if (!(fabs(A[r*n+k]) > 1e-13 * big)) return 1;
        piv[k] = r;
        if (r != k)
            for (int j = 0; j < n; ++j) {{
                double s = A[k*n+j]; A[k*n+j] = A[r*n+j]; A[r*n+j] = s;
            }}
        for (int i = k + 1; i < n; ++i) {{
            double f = A[i*n+k] / A[k*n+k];
            A[i*n+k] = f;
            if (f == 0.0) continue;
            for (int j = k + 1; j < n; ++j) A[i*n+j] -= f * A[k*n+j];
        }}
    }}
    return 0;
}}

/* b = A^-1 b from kd_lu's factors (the row swaps first: they moved L's rows too) */
static void kd_lu_solve(int n, const double *A, const int *piv, double *b) {{
    for (int k = 0; k < n; ++k)
        if (piv[k] != k) {{ double s = b[k]; b[k] = b[piv[k]]; b[piv[k]] = s; }}
    for (int k = 0; k < n; ++k)
        for (int i = k + 1; i < n; ++i) b[i] -= A[i*n+k] * b[k];
    for (int i = n - 1; i >= 0; --i) {{
        double s = b[i];
        for (int j = i + 1; j < n; ++j) s -= A[i*n+j] * b[j];
        b[i] = s / A[i*n+i];
    }}
}}

int kidym_jac(double t, const double *y, const double *p, const double *c, double *J) {{
    double qd[{nq}], M[{nw * nw}], F[{nf}], A[{n * n}], x[{n}], col[{n}];
    int piv[{n}];
    kidym_eval(t, y, p, c, qd, M, F);
{assemble}
    if (kd_lu({n}, A, piv)) return 1;
    kd_lu_solve({n}, A, piv, x);
    double *d = malloc(sizeof(double) * {per});
    if (!d) return 3;
    for (int i = 0; i < {per}; ++i) d[i] = 0.0;
    kd_jac_eval(t, y, p, c, d, d + {ny * nq}, d + {ny * (nq + nup)});
    int finite = 1;
    for (int k = 0; k < {ny}; ++k) {{
        const double *dq = d + k*{nq}, *dm = d + {ny * nq} + k*{nup};
        const double *df = d + {ny * (nq + nup)} + k*{nf};
        for (int i = 0; i < {nq}; ++i) J[i*{ny}+k] = dq[i];
        for (int i = 0; i < {nw}; ++i) {{
            double s = df[i];
            for (int j = 0; j < {nw}; ++j) s -= dm[kd_upper[i*{nw}+j]] * x[j];
{column}
        kd_lu_solve({n}, A, piv, col);
        for (int i = 0; i < {nw}; ++i) J[({nq}+i)*{ny}+k] = col[i];
    }}
    free(d);
    for (int i = 0; i < {ny * ny}; ++i) finite &= isfinite(J[i]) != 0;
    return finite ? 0 : 2;
}}
"""
