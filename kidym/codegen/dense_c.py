"""The one dense solver of the generated C: LU with partial pivoting.

``kd_lu`` factors ``P A = L U`` in place (row-major; the multipliers of ``L`` below
the diagonal, the row swaps in ``piv``) and ``kd_lu_solve`` solves ``A x = b`` from the
factors, overwriting ``b`` by ``x``. The augmented solve and the projection
(:mod:`kidym.codegen.constraints_c`), the controls' solve (:mod:`kidym.codegen.controls_c`)
and the analytic Jacobian (:mod:`kidym.codegen.jacobian_c`) use it; a factor is reused
for several right-hand sides. The mass matrix alone is solved by ``kd_solve``
(:mod:`kidym.codegen.mass_c`), a Cholesky / ``L D Lᵀ`` factorisation written for its
symmetry and its zero entries.

A pivot is refused (return 1) when it is not above ``1e-13`` of the largest entry of
``A``. The elimination applied to ``b`` after the factorisation takes the same steps,
in the same order, as elimination applied to ``b`` alongside it (Gaussian elimination
with partial pivoting): the row swaps first, then the multipliers column by column,
a zero multiplier skipped.
"""

from __future__ import annotations

#: ``kd_lu`` and ``kd_lu_solve``, emitted once into a source that solves a dense system.
DENSE_SOLVER = """\
/* A = L U (n x n, row-major, in place) with partial pivoting: the row swaps in piv,
   L's multipliers below the diagonal. 1 if a pivot vanishes (relative to the largest
   entry of A). */
static int kd_lu(int n, double *A, int *piv) {
    double big = 0.0;
    for (int i = 0; i < n * n; ++i) big = fmax(big, fabs(A[i]));
    if (!(big > 0.0)) return 1;
    for (int k = 0; k < n; ++k) {
        int r = k;
        for (int i = k + 1; i < n; ++i)
            if (fabs(A[i*n+k]) > fabs(A[r*n+k])) r = i;
        if (!(fabs(A[r*n+k]) > 1e-13 * big)) return 1;
        piv[k] = r;
        if (r != k)
            for (int j = 0; j < n; ++j) {
                double s = A[k*n+j]; A[k*n+j] = A[r*n+j]; A[r*n+j] = s;
            }
        for (int i = k + 1; i < n; ++i) {
            double f = A[i*n+k] / A[k*n+k];
            A[i*n+k] = f;
            if (f == 0.0) continue;
            for (int j = k + 1; j < n; ++j) A[i*n+j] -= f * A[k*n+j];
        }
    }
    return 0;
}

/* b = A^-1 b from kd_lu's factors (the row swaps first: they moved L's rows too) */
static void kd_lu_solve(int n, const double *A, const int *piv, double *b) {
    for (int k = 0; k < n; ++k)
        if (piv[k] != k) { double s = b[k]; b[k] = b[piv[k]]; b[piv[k]] = s; }
    for (int k = 0; k < n; ++k)
        for (int i = k + 1; i < n; ++i)
            if (A[i*n+k] != 0.0) b[i] -= A[i*n+k] * b[k];
    for (int i = n - 1; i >= 0; --i) {
        double s = b[i];
        for (int j = i + 1; j < n; ++j) s -= A[i*n+j] * b[j];
        b[i] = s / A[i*n+i];
    }
}
"""
