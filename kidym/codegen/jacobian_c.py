"""C of the analytic Jacobian ``J = ∂ẏ/∂y`` of the compiled right-hand side.

The same mathematics as :mod:`kidym.simulation.jacobian` (the NumPy engine's): with
``x`` the solution of ``A x = b`` — ``A = M``, ``b = F``, or with constraints
``A = [M −Gᵀ; G 0]``, ``b = [F; γ − 2α c − β² Φ]`` (:mod:`kidym.codegen.constraints_c`)
— the derivative by a state ``y_k`` is ``∂x/∂y_k = A⁻¹ (∂b/∂y_k − ∂A/∂y_k · x)``.

The right-hand side ``∂b/∂y_k − ∂A/∂y_k · x`` is the derivative of the residual ``b − A
x`` with ``x`` held fixed (read at run time), taken by the chain rule over the named
quantities (``X'q1`` is a named quantity, memoised,
:meth:`kidym.symbolic.graph.Graph.diff`) and emitted by the emitter like any routine
(hoisting, CSE, parts) into ``kd_jac_eval``: only its non-zero entries are written, so
an entry of ``∂M/∂y_k`` that vanishes costs nothing (measured first with the derivative
arrays of ``M`` and ``F`` and dense products, the analytic Jacobian of a damped spring
chain with a diagonal ``M`` cost more than CVODE's difference quotients). ``kidym_jac``
factors ``A`` once (LU with partial pivoting, the one dense solver of
:mod:`kidym.codegen.dense_c`) and solves for all ``n_y`` columns. Nothing is
differentiated numerically.
"""

from __future__ import annotations

from collections.abc import Sequence

import symengine as se

from kidym.eom.equations import Equations

Expr = se.Basic


def jacobian_roots(eq: Equations) -> tuple[list[Expr], list[str], dict[se.Symbol, str]]:
    """The non-zero entries of the Jacobian's known parts, where ``kd_jac_eval`` stores
    them, and the values it reads (``kd_x``).

    With ``x`` the solution of ``A x = b`` (read from ``kd_x[0..n)``, and the Baumgarte
    coefficients ``2α, β²`` from ``kd_x[n]``, ``kd_x[n + 1]``), for state ``k``
    (coordinates, then speeds): ``kd_J[i·n_y + k] = ∂q̇_i/∂y_k`` and
    ``kd_col[k·n + i] = (∂b/∂y_k − ∂A/∂y_k x)_i`` — the derivative, by the chain rule
    over the named quantities, of ``b_i − (A x)_i`` with ``x`` held fixed:
    ``F_i − Σ_j M_ij x_j + Σ_l G_li λ_l`` and, with constraints,
    ``γ_l − 2α c_l − β² Φ_l − Σ_j G_lj x_j``. Entries of ``∂M/∂y_k`` that vanish leave
    no term, so nothing is multiplied by a structural zero.
    """
    n_q, n_w, m = eq.n_q, eq.n_w, eq.m
    n, n_y = n_w + m, n_q + n_w
    x = [se.Symbol(f"kidym#x{i}") for i in range(n + 2)]   # no model name holds `#`
    inputs = {s: f"kd_x[{i}]" for i, s in enumerate(x)}
    a, b2 = x[n], x[n + 1]
    F = list(eq.forcing_extended)
    M = eq.mass_matrix_named

    def G(lo: int, j: int) -> Expr:
        return F[n_w + 3 * m + lo * n_w + j]

    residual = []
    for i in range(n_w):
        e = F[i] - se.Add(*[M[min(i, j)][max(i, j)] * x[j] for j in range(n_w)])
        residual.append(e + se.Add(*[G(lo, i) * x[n_w + lo] for lo in range(m)]))
    for lo in range(m):
        residual.append(F[n_w + lo] - a * F[n_w + 2 * m + lo] - b2 * F[n_w + m + lo]
                        - se.Add(*[G(lo, j) * x[j] for j in range(n_w)]))
    roots: list[Expr] = []
    targets: list[str] = []
    for k, s in enumerate((*eq.coordinates, *eq.speeds)):
        for i, e in enumerate(eq.qdot):
            d = eq.graph.diff(e, s)
            if d != 0:
                roots.append(d)
                targets.append(f"kd_J[{i * n_y + k}]")
        for i, e in enumerate(residual):
            d = eq.graph.diff(e, s)
            if d != 0:
                roots.append(d)
                targets.append(f"kd_col[{k * n + i}]")
    return roots, targets, inputs


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
    nf = len(eq.forcing_extended)
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
    }}
    x[{n}] = a;
    x[{n + 1}] = b2;"""
        what = ("the augmented matrix A = [M -G^T; G 0], b = [F; gamma - 2 alpha c - "
                "beta^2 Phi]")
    else:
        assemble = f"""\
    for (int i = 0; i < {nw * nw}; ++i) A[i] = M[i];
    for (int i = 0; i < {nw}; ++i) x[i] = F[i];
    x[{n}] = x[{n + 1}] = 0.0;"""
        what = "A = M, b = F"
    return f"""\
/* The analytic Jacobian J = d ydot / d y (row-major): d q' / d y and the columns
   d b / d y_k - d A / d y_k x, formed by the chain rule over the named quantities
   (only their non-zero entries), then d x / d y_k = A^-1 (...) with {what}. */
const int kidym_jacobian = 1;

static void kd_jac_eval(double t, const double *y, const double *p, const double *c,
                        const double *kd_x, double *kd_J, double *kd_col) {{
    (void)t; (void)y; (void)p; (void)c; (void)kd_x; (void)kd_J; (void)kd_col;
{chr(10).join(eval_lines)}
}}

int kidym_jac(double t, const double *y, const double *p, const double *c, double *J) {{
    double qd[{nq}], M[{nw * nw}], F[{nf}], A[{n * n}], x[{n + 2}];
    int piv[{n}];
    kidym_eval(t, y, p, c, qd, M, F);
{assemble}
    if (kd_lu({n}, A, piv)) return 1;
    kd_lu_solve({n}, A, piv, x);
    double *col = malloc(sizeof(double) * {ny * n});
    if (!col) return 3;
    for (int i = 0; i < {ny * n}; ++i) col[i] = 0.0;
    for (int i = 0; i < {nq * ny}; ++i) J[i] = 0.0;
    kd_jac_eval(t, y, p, c, x, J, col);
    int finite = 1;
    for (int k = 0; k < {ny}; ++k) {{
        double *ck = col + k*{n};
        kd_lu_solve({n}, A, piv, ck);
        for (int i = 0; i < {nw}; ++i) J[({nq}+i)*{ny}+k] = ck[i];
    }}
    free(col);
    for (int i = 0; i < {ny * ny}; ++i) finite &= isfinite(J[i]) != 0;
    return finite ? 0 : 2;
}}
"""
