"""The C side of external inputs (``ВХОДЫ``): tables interpolated in C, callbacks through
a C function pointer (:mod:`kidym.simulation.inputs`, :mod:`kidym.simulation.compiled_inputs`).

The generated routines read input ``k`` as ``kidym_u[k]``, a thread-local array that a
routine using inputs fills first with ``kidym_input_values(t, y)``. What it interpolates
or calls is bound per thread by ``kidym_bind_inputs`` before a run and unbound after it:
the binding is data (kinds, lengths, arrays, a function pointer), so no text of a table
or callback reaches the code. A failing callback (or no binding) leaves NaN in its slots,
which the right-hand side reports as not finite, stopping the run; the Python side then
raises the callback's own error.

Kinds: 0 linear interpolation, 1 the value of the last breakpoint (zero-order hold), 2 a
callback (one call fills every callback slot). Beyond the table's ends its end values.
While a run restarted at the breakpoints integrates the piece that starts at ``a``
(``kidym_input_window(a)``; NaN: none), every table is evaluated on its segment that
holds ``a``, extended to the whole step (:meth:`kidym.simulation.inputs.InputTable.__call__`).
"""

from __future__ import annotations

#: The name of input ``k`` in the generated C.
SLOT = "kidym_u[{k}]"

#: The statement a routine using inputs starts with (``t``, ``y`` its arguments).
FILL = "    kidym_input_values(t, y);"

#: What each part (a further translation unit) using inputs declares.
EXTERN = ("extern __thread double kidym_u[];\n"
          "int kidym_input_values(double t, const double *y);\n")

_RUNTIME = """\
/* external inputs (ВХОДЫ): bound per thread by kidym_bind_inputs; kinds 0 linear,
   1 zero-order hold, 2 callback */
#define KIDYM_NU {n}
const int kidym_n_inputs = KIDYM_NU;
__thread double kidym_u[KIDYM_NU];
typedef int (*kidym_input_callback)(double t, const double *y, double *u);
static __thread const int *kd_in_kind = 0;
static __thread const int *kd_in_n = 0;
static __thread const double *const *kd_in_t = 0;
static __thread const double *const *kd_in_v = 0;
static __thread kidym_input_callback kd_in_cb = 0;
void kidym_bind_inputs(const int *kind, const int *n, const double *const *t,
                       const double *const *v, kidym_input_callback cb) {{
    kd_in_kind = kind; kd_in_n = n; kd_in_t = t; kd_in_v = v; kd_in_cb = cb;
}}
static __thread double kd_in_a = NAN;   /* the piece a restarted run is in, or NaN */
void kidym_input_window(double a) {{ kd_in_a = a; }}
static int kd_segment(int n, const double *t, double x) {{  /* t[lo] <= x < t[lo+1] */
    int lo = 0, hi = n - 1;
    if (!(x > t[0])) return 0;
    if (x >= t[n - 1]) return n - 1;
    while (hi - lo > 1) {{
        int mid = lo + (hi - lo) / 2;
        if (t[mid] <= x) lo = mid; else hi = mid;
    }}
    return lo;
}}
static double kd_table(int kind, int n, const double *t, const double *v, double x) {{
    /* inside a piece [a, b] between breakpoints, the piece's own segment, extended: a
       step never sees the next segment's kink or jump; else the end values beyond */
    int window = !isnan(kd_in_a);
    int lo = kd_segment(n, t, window ? kd_in_a : x);
    if (kind == 1 || lo == n - 1) return v[lo];
    if (!window && !(x > t[0])) return v[0];
    return v[lo] + (v[lo + 1] - v[lo]) * ((x - t[lo]) / (t[lo + 1] - t[lo]));
}}
int kidym_input_values(double t, const double *y) {{
    int k, calls = 0;
    if (!kd_in_kind) {{
        for (k = 0; k < KIDYM_NU; ++k) kidym_u[k] = NAN;
        return 1;
    }}
    for (k = 0; k < KIDYM_NU; ++k) {{
        if (kd_in_kind[k] == 2) calls = 1;
        else kidym_u[k] = kd_table(kd_in_kind[k], kd_in_n[k], kd_in_t[k], kd_in_v[k], t);
    }}
    if (calls && (!kd_in_cb || kd_in_cb(t, y, kidym_u))) {{
        for (k = 0; k < KIDYM_NU; ++k) if (kd_in_kind[k] == 2) kidym_u[k] = NAN;
        return 1;
    }}
    return 0;
}}
"""


def runtime_source(n_inputs: int) -> str:
    """The runtime of ``n_inputs`` inputs (empty without)."""
    return _RUNTIME.format(n=n_inputs) if n_inputs else ""
