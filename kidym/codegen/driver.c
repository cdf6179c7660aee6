/* kidym integration driver: the whole time loop in C on SUNDIALS (CVODE, ARKODE).
 *
 * Compiled together with a generated model source (kidym/codegen/emit.py), which
 * provides kidym_constants, kidym_rhs, kidym_events, kidym_reset and the layout.
 * No Python is called during the integration.
 *
 * Methods: 0 CVODE BDF (stiff, dense Newton; with jacobian = 1 and a library built
 * with the analytic Jacobian, kidym_jac gives CVODE the Newton matrix's J, else CVODE
 * forms it by difference quotients), 1 CVODE Adams (non-stiff, functional
 * iteration), 2 ARKODE ERK order 8 (Fehlberg 13-7-8), 3 ARKODE ERK order 5
 * (Dormand-Prince 7-4-5), 4 ARKODE ERK with a Butcher table given by the caller
 * (kidym passes Hairer's DOP853 coefficients, see kidym/simulation/compiled.py).
 *
 * ARKODE does the stepping, the error control and the root finding. Around it, for
 * the ERK methods, this file adds what ARKODE 6.4 lacks:
 *   - outputs from the method's own continuous extension (DOP853's, of order 7):
 *     the stage derivatives of each accepted step are kept as kd_f computes them,
 *     and the three extra stages of the extension are evaluated only for steps that
 *     hold an output time (as SciPy does); without an extension the steps end on
 *     the output times, or ARKODE's Hermite interpolant is used on request;
 *   - event times and states as accurate as the steps: ARKODE's root, found on its
 *     Hermite interpolant, is refined (Illinois) on the continuous extension, or,
 *     without one, by re-stepping: one step of the method itself from the start of
 *     the last accepted step (kept only in runs with events) to the trial time;
 *   - a one-entry memo of f: ARKODE 6.4 re-evaluates f at the new solution after
 *     every step although the last (FSAL) stage is that very point;
 *   - the initial step of Hairer, Norsett & Wanner (Solving ODEs I, II.4), as SciPy
 *     picks it: ARKODE's own first step on these problems is some 1e-11 and costs
 *     about ten steps of growth at every start and restart;
 *   - a linear combination of vectors (the stage sums) that accumulates each entry
 *     in a register and skips zero coefficients, in place of the serial N_Vector's.
 *
 * Status: 0 reached t_end, 1 stopped by a terminal event, <0 failure (the message
 * says which, with the time and state of the failure in fail_t, fail_y): -100 set-up,
 * -101 integrator set-up, -102 restart after a reset, -103 unexpected return, -104 an
 * event left at zero by a reset (event storm), -105 accumulating events (Zeno,
 * message "<events> <first instant> <accumulation time>"), -106 the projection onto
 * the constraints failed, -108 stopped on request (kidym_watch), -201 singular mass
 * matrix, -202 right-hand side not finite, -203 step size collapsed (KD_STALL_CALLS),
 * other negative values SUNDIALS flags.
 *
 * Watching a run (kidym_watch): a thread may name a cell of two doubles before it calls
 * kidym_simulate; every evaluation of f then writes the model time reached into cell[0]
 * (progress for another thread to read) and reads cell[1]: non-zero stops the run at
 * once with status -108, its outputs up to then kept (Ctrl-C). One store and one load
 * per evaluation; the cell serves the calling thread's runs only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arkode/arkode_erkstep.h>
#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

extern const int kidym_layout[7];
extern const int kidym_event_direction[];
extern const int kidym_event_action[];
extern const int kidym_jacobian;
int kidym_jac(double t, const double *y, const double *p, const double *c, double *J);
void kidym_constants(const double *p, double *c);
int kidym_rhs(double t, const double *y, const double *p, const double *c, double *ydot);
void kidym_events(double t, const double *y, const double *p, const double *c, double *g);
int kidym_project(double t, double *y, const double *p, const double *c);
void kidym_reset(int k, double t, const double *y, const double *p, const double *c,
                 double *ynew);

/* Output modes of the ERK methods (table[3]). */
#define KD_OUT_HERMITE 0   /* ARKODE's interpolant */
#define KD_OUT_STEP 1      /* steps end on every output time */
#define KD_OUT_EXTENSION 2 /* the method's continuous extension (table gives it) */

typedef struct {
    const double *p;
    const double *c;
    int status;        /* first failure of the right-hand side: 1 singular, 2 not finite,
                          3 the step size collapsed (KD_STALL_CALLS) */
    double fail_t;
    double *fail_y;
    long nfev;         /* evaluations of the right-hand side (memo hits not counted) */
    double stall_t, stall_tol;  /* calls of f in a row within stall_tol of stall_t */
    long stall_n;
    int ny;
    /* memo of the last evaluation and record of the stage derivatives */
    int record;        /* 1: keep the derivatives of the last ns-1 calls */
    double last_t;
    double *last_y;    /* [ny] */
    int have_last;
    int ring_n;        /* slots in the ring (ns - 1) */
    long calls;        /* calls of kd_f since the last (re)start */
    double *ring_t;    /* [ring_n] */
    double *ring_f;    /* [ring_n * ny] */
    /* the accepted step [t_old, t_old + h] and its continuous extension */
    int ns, n_ext;     /* stages of the step (FSAL last), extra stages of the extension */
    const double *tab_c;  /* the step's stage times c[ns] */
    const double *ext_c, *ext_A, *ext_D;  /* c[n_ext], A[n_ext*n_all], D[4*n_all] */
    double t_old, t_new, h;
    double *y_old, *y_new;  /* [ny] */
    double *K;         /* [(ns + n_ext) * ny]: K[0] = f(t_old, y_old), ..., K[ns-1] = f(new) */
    double *F;         /* [7 * ny] coefficients of the extension (when ready) */
    int step_ok;       /* K holds the last step's stages */
    int ext_ready;     /* F holds the extension of the last step */
    long steps;        /* accepted steps (ARKODE; its own count restarts at a reset) */
    double *jac;       /* [ny * ny] row-major J of kidym_jac (BDF, analytic Jacobian) */
    long fallbacks;    /* outputs that had to use ARKODE's interpolant */
    /* re-stepping (events of the ERK methods without an extension): the method's own
     * table, the last accepted step kept by kd_post, scratch for the stages */
    ARKodeButcherTable rs;  /* NULL: runs without events, CVODE */
    int step_kept;     /* t_old, y_old hold the last accepted step's start */
    int rs_f0_ready;   /* rs_K[0] holds f(t_old, y_old) */
    unsigned char *rs_need;  /* [stages] stage needed for the solution */
    double *rs_K, *rs_z;     /* [stages * ny], [ny] */
} kd_data;

/* The watched cell of this thread's runs (kidym_watch), or NULL. */
static __thread volatile double *kd_watch_cell;

void kidym_watch(volatile double *cell) {
    kd_watch_cell = cell;
}

static int kd_fail(kd_data *d, int s, double t, const double *y) {
    if (!d->status) {
        d->status = s;
        d->fail_t = t;
        memcpy(d->fail_y, y, sizeof(double) * d->ny);
    }
    return -1;  /* unrecoverable: the equations themselves fail here */
}

/* Calls of f in a row at one time (within 16 ulps of the time scale) after which the
 * step size has collapsed: CVODE goes on with steps that no longer advance t (it only
 * warns that t + h = t) up to its largest number of steps, 10^7 per output. No run
 * that advances needs this many evaluations at one instant. */
#define KD_STALL_CALLS 10000

static int kd_f(realtype t, N_Vector y, N_Vector ydot, void *user) {
    kd_data *d = (kd_data *)user;
    const int ny = d->ny;
    double *yd = N_VGetArrayPointer(y), *fd = N_VGetArrayPointer(ydot);
    volatile double *cell = kd_watch_cell;
    if (cell) {
        cell[0] = t;
        if (cell[1] != 0.0) return kd_fail(d, 4, t, yd);  /* stopped on request */
    }
    if (fabs(t - d->stall_t) <= d->stall_tol) {
        if (++d->stall_n >= KD_STALL_CALLS) return kd_fail(d, 3, t, yd);
    } else {
        d->stall_t = t;
        d->stall_n = 0;
    }
    if (!d->record) {
        d->nfev++;
        int s = kidym_rhs(t, yd, d->p, d->c, fd);
        return s ? kd_fail(d, s, t, yd) : 0;
    }
    double *slot = d->ring_f + (size_t)(d->calls % d->ring_n) * ny;
    double *prev = d->ring_f + (size_t)((d->calls + d->ring_n - 1) % d->ring_n) * ny;
    if (d->have_last && t == d->last_t && memcmp(yd, d->last_y, sizeof(double) * ny) == 0) {
        memcpy(fd, prev, sizeof(double) * ny);  /* the same point again: same value */
    } else {
        d->nfev++;
        int s = kidym_rhs(t, yd, d->p, d->c, fd);
        if (s) return kd_fail(d, s, t, yd);
        memcpy(d->last_y, yd, sizeof(double) * ny);
        d->last_t = t;
        d->have_last = 1;
    }
    memcpy(slot, fd, sizeof(double) * ny);
    d->ring_t[d->calls % d->ring_n] = t;
    d->calls++;
    return 0;
}

/* Start (or restart after a reset) at t0, y0 with f0 = f(t0, y0): the memo holds that
 * point, so ARKODE's own first call there is free, and it is K[0] of the first step. */
static void kd_record_start(kd_data *d, double t0, const double *y0, const double *f0) {
    const int ny = d->ny;
    if (!d->record) return;
    d->calls = 0;
    memcpy(d->last_y, y0, sizeof(double) * ny);
    d->last_t = t0;
    d->have_last = 1;
    memcpy(d->ring_f + (size_t)(d->ring_n - 1) * ny, f0, sizeof(double) * ny);
    d->ring_t[d->ring_n - 1] = t0;
    d->t_new = t0;
    memcpy(d->y_new, y0, sizeof(double) * ny);
    if (d->K) memcpy(d->K + (size_t)(d->ns - 1) * ny, f0, sizeof(double) * ny);
    d->step_ok = 0;
    d->ext_ready = 0;
    d->step_kept = 0;
}

/* After every accepted step (ARKODE's step postprocessing). With an extension, the
 * step [t_new, t] gets its stage derivatives from the record of kd_f: the last ns-1
 * calls, each checked against its stage time; K[0] is the previous step's last
 * (FSAL) stage, f at the start. */
static int kd_post(realtype t, N_Vector y, void *user) {
    kd_data *d = (kd_data *)user;
    const int ny = d->ny, ns = d->ns;
    double *yd = N_VGetArrayPointer(y);
    d->steps++;
    if (!d->K) {
        if (!d->rs) return 0;
        /* events without an extension: keep the step's start for kd_restep */
        double *tmp = d->y_old;
        d->y_old = d->y_new;
        d->y_new = tmp;
        memcpy(d->y_new, yd, sizeof(double) * ny);
        d->t_old = d->t_new;
        d->t_new = t;
        d->h = t - d->t_old;
        d->step_kept = d->h != 0.0;
        d->rs_f0_ready = 0;
        return 0;
    }
    const double t_start = d->t_new, h = t - t_start;
    const double tol = 64.0 * 2.220446049250313e-16 * (fabs(t_start) + fabs(h));
    int ok = d->calls >= ns - 1 && h != 0.0;
    for (int i = 1; ok && i < ns; ++i) {
        long call = d->calls - (ns - 1) + (i - 1);
        if (fabs(d->ring_t[call % d->ring_n] - (t_start + d->tab_c[i] * h)) > tol) ok = 0;
    }
    double *K = d->K;
    memcpy(K, K + (size_t)(ns - 1) * ny, sizeof(double) * ny);  /* FSAL: f(t_start) */
    if (ok) {
        for (int i = 1; i < ns; ++i) {
            long call = d->calls - (ns - 1) + (i - 1);
            memcpy(K + (size_t)i * ny, d->ring_f + (size_t)(call % d->ring_n) * ny,
                   sizeof(double) * ny);
        }
    } else {
        /* not the expected sequence of evaluations: no extension for this step (its
         * outputs use ARKODE's interpolant), but f at its end for the next one */
        d->nfev++;
        int s = kidym_rhs(t, yd, d->p, d->c, K + (size_t)(ns - 1) * ny);
        if (s) return kd_fail(d, s, t, yd);
    }
    double *tmp = d->y_old;
    d->y_old = d->y_new;
    d->y_new = tmp;
    memcpy(d->y_new, yd, sizeof(double) * ny);
    d->t_old = t_start;
    d->t_new = t;
    d->h = h;
    d->step_ok = ok;
    d->ext_ready = 0;
    d->step_kept = h != 0.0;
    d->rs_f0_ready = 0;
    return 0;
}

/* The continuous extension of the last step at t (Hairer's DOP853 dense output: three
 * extra stages, then a polynomial of degree 7 in x = (t - t_old)/h). Returns 0, or 1
 * when the last step has no extension or t is outside it, or <0 when f fails. */
static int kd_extension(kd_data *d, double t, double *yout) {
    const int ny = d->ny, ns = d->ns, ne = d->n_ext, na = ns + ne;
    const double h = d->h;
    if (!d->step_ok) return 1;
    const double slack = 1e-8 * fabs(h);
    if (t < fmin(d->t_old, d->t_new) - slack || t > fmax(d->t_old, d->t_new) + slack)
        return 1;
    const double *K = d->K;
    double *F = d->F;
    if (!d->ext_ready) {
        double *z = F;  /* scratch: F is filled only after the extra stages */
        for (int s = 0; s < ne; ++s) {
            const double *a = d->ext_A + (size_t)s * na;
            for (int j = 0; j < ny; ++j) z[j] = 0.0;
            for (int k = 0; k < ns + s; ++k) {
                if (a[k] == 0.0) continue;
                const double ak = a[k], *Kk = K + (size_t)k * ny;
                for (int j = 0; j < ny; ++j) z[j] += ak * Kk[j];
            }
            for (int j = 0; j < ny; ++j) z[j] = d->y_old[j] + h * z[j];
            double ts = d->t_old + d->ext_c[s] * h;
            d->nfev++;
            int st = kidym_rhs(ts, z, d->p, d->c, d->K + (size_t)(ns + s) * ny);
            if (st) {
                kd_fail(d, st, ts, z);
                return -1;
            }
        }
        const double *Kl = K + (size_t)(ns - 1) * ny;
        for (int j = 0; j < ny; ++j) {
            double dy = d->y_new[j] - d->y_old[j];
            F[j] = dy;
            F[ny + j] = h * K[j] - dy;
            F[2 * ny + j] = 2.0 * dy - h * (Kl[j] + K[j]);
        }
        for (int i = 0; i < 4; ++i) {
            const double *Di = d->ext_D + (size_t)i * na;
            double *Fi = F + (size_t)(3 + i) * ny;
            for (int j = 0; j < ny; ++j) Fi[j] = 0.0;
            for (int k = 0; k < na; ++k) {
                if (Di[k] == 0.0) continue;
                const double dk = h * Di[k], *Kk = K + (size_t)k * ny;
                for (int j = 0; j < ny; ++j) Fi[j] += dk * Kk[j];
            }
        }
        d->ext_ready = 1;
    }
    const double x = (t - d->t_old) / h, u = 1.0 - x;
    for (int j = 0; j < ny; ++j) {
        double v = F[6 * ny + j];
        v = (v * x + F[5 * ny + j]) * u;
        v = (v + F[4 * ny + j]) * x;
        v = (v + F[3 * ny + j]) * u;
        v = (v + F[2 * ny + j]) * x;
        v = (v + F[ny + j]) * u;
        v = (v + F[j]) * x;
        yout[j] = d->y_old[j] + v;
    }
    return 0;
}

/* The state at t in the last accepted step by one step of the method itself from the
 * step's start: y_old + (t - t_old) sum b_i K_i with the stages of that step size (the
 * table's unused stages skipped; f at the start computed once per step). This is as
 * accurate as the steps are, where ARKODE's Hermite interpolant (degree at most 5) is
 * not at the large steps of the 8th-order methods. Returns 0, or 1 when no step is kept
 * or t is outside it, or <0 when f fails. */
static int kd_restep(kd_data *d, double t, double *yout) {
    const int ny = d->ny;
    const ARKodeButcherTable B = d->rs;
    if (!B || !d->step_kept) return 1;
    const double slack = 1e-8 * fabs(d->h);
    if (t < fmin(d->t_old, d->t_new) - slack || t > fmax(d->t_old, d->t_new) + slack)
        return 1;
    const double h = t - d->t_old;
    if (h == 0.0) {
        memcpy(yout, d->y_old, sizeof(double) * ny);
        return 0;
    }
    double *K = d->rs_K, *z = d->rs_z;
    for (int i = 0; i < B->stages; ++i) {
        if (!d->rs_need[i]) continue;
        double *Ki = K + (size_t)i * ny;
        if (i == 0) {
            if (d->rs_f0_ready) continue;
            d->nfev++;
            int st = kidym_rhs(d->t_old, d->y_old, d->p, d->c, Ki);
            if (st) {
                kd_fail(d, st, d->t_old, d->y_old);
                return -1;
            }
            d->rs_f0_ready = 1;
            continue;
        }
        for (int j = 0; j < ny; ++j) z[j] = 0.0;
        for (int l = 0; l < i; ++l) {
            const double a = B->A[i][l];
            if (a == 0.0) continue;
            const double *Kl = K + (size_t)l * ny;
            for (int j = 0; j < ny; ++j) z[j] += a * Kl[j];
        }
        for (int j = 0; j < ny; ++j) z[j] = d->y_old[j] + h * z[j];
        const double ts = d->t_old + B->c[i] * h;
        d->nfev++;
        int st = kidym_rhs(ts, z, d->p, d->c, Ki);
        if (st) {
            kd_fail(d, st, ts, z);
            return -1;
        }
    }
    for (int j = 0; j < ny; ++j) z[j] = 0.0;
    for (int i = 0; i < B->stages; ++i) {
        const double b = B->b[i];
        if (b == 0.0) continue;
        const double *Ki = K + (size_t)i * ny;
        for (int j = 0; j < ny; ++j) z[j] += b * Ki[j];
    }
    for (int j = 0; j < ny; ++j) yout[j] = d->y_old[j] + h * z[j];
    return 0;
}

/* The state at t in the last accepted step, as accurate as the step: on the continuous
 * extension where the step has one, else by re-stepping (kd_restep). Returns 0, 1
 * (neither can be had: t outside the step, no step kept) or <0 (f failed). */
static int kd_state_at(kd_data *d, double t, double *yout) {
    if (d->step_ok) {
        int r = kd_extension(d, t, yout);
        if (r <= 0) return r;
    }
    return kd_restep(d, t, yout);
}

/* g_k at t on the state of kd_state_at (y: scratch [ny], g: [nev]); NaN where that
 * state cannot be had (f failed there, t outside the step). */
static double kd_event_at(kd_data *d, int k, double t, double *y, double *g) {
    if (kd_state_at(d, t, y)) return NAN;
    kidym_events(t, y, d->p, d->c, g);
    return g[k];
}

/* The root of event k near ARKODE's t, on the state of kd_state_at: ARKODE locates
 * roots on its own Hermite interpolant (cubic with an extension, to spare
 * evaluations; degree 5 otherwise), whose error at the large steps of the 8th-order
 * methods is far above their tolerance (Fehlberg78 at rtol 1e-10: 2e-7 in the time of
 * a crossing, tests/simulation/test_event_accuracy.py). A sign change of g_k is
 * bracketed around t within the step, then closed by the Illinois method to 100 ulps
 * of the time scale; the later end of the bracket (the side where g_k has crossed) is
 * returned. Without a sign change in the step (a touching root), t stays. */
static double kd_refine_root(kd_data *d, int k, double t, int nev) {
    const int ny = d->ny;
    double y[ny], g[nev > 0 ? nev : 1];
    const double lo = fmin(d->t_old, d->t_new), hi = fmax(d->t_old, d->t_new);
    const double tol = 100.0 * 2.220446049250313e-16 * (fabs(t) + fabs(d->h));
    double ft = kd_event_at(d, k, t, y, g);
    if (ft == 0.0 || isnan(ft)) return t;
    double a = t, fa = ft, b = t, fb = ft;
    int found = 0;
    /* the first bracket: the tolerance on the extension (cheap to evaluate), 1e-6 of
     * the step when re-stepping (each state costs the stages of a step; about the
     * interpolant's error there); a root farther away widens it */
    const double delta0 = d->step_ok ? tol : fmax(tol, 1e-6 * fabs(d->h));
    for (double delta = delta0; !found && delta < 4.0 * (hi - lo) + tol; delta *= 4.0) {
        double tl = fmax(lo, t - delta), tr = fmin(hi, t + delta);
        double fl = kd_event_at(d, k, tl, y, g);
        if (isnan(fl)) return t;
        if ((fl < 0.0) != (ft < 0.0) || fl == 0.0) {
            a = tl; fa = fl; b = t; fb = ft; found = 1;
            break;
        }
        double fr = kd_event_at(d, k, tr, y, g);
        if (isnan(fr)) return t;
        if ((fr < 0.0) != (ft < 0.0) || fr == 0.0) {
            a = t; fa = ft; b = tr; fb = fr; found = 1;
            break;
        }
        if (tl == lo && tr == hi) break;
    }
    if (!found) return t;
    if (fa == 0.0) return a;
    if (fb == 0.0) return b;
    /* Illinois: [a, b] (either order) keeps fa, fb of opposite signs */
    for (int it = 0; it < 200 && fabs(b - a) > tol; ++it) {
        double c = (a * fb - b * fa) / (fb - fa);
        if (!(c > fmin(a, b) && c < fmax(a, b))) c = 0.5 * (a + b);
        double fc = kd_event_at(d, k, c, y, g);
        if (isnan(fc)) return t;
        if (fc == 0.0) return c;
        if ((fc < 0.0) != (fb < 0.0)) {
            a = b;
            fa = fb;
        } else {
            fa *= 0.5;
        }
        b = c;
        fb = fc;
    }
    return fmax(a, b);
}

/* Linear combination z = sum c[i] X[i] for ARKODE's stage sums: zero coefficients
 * skipped, entries summed eight at a time in registers (the fixed-size inner loops
 * vectorise), each entry of z written once. z may be one of the X (every entry is
 * read before it is written). */
static int kd_linear_combination(int nvec, realtype *c, N_Vector *X, N_Vector z) {
    const double *xs[64];
    double cs[64];
    if (nvec > 64) {
        N_VScale(c[0], X[0], z);
        for (int i = 1; i < nvec; ++i) N_VLinearSum(1.0, z, c[i], X[i], z);
        return 0;
    }
    int m = 0;
    for (int i = 0; i < nvec; ++i) {
        if (c[i] == 0.0) continue;
        xs[m] = NV_DATA_S(X[i]);
        cs[m] = c[i];
        ++m;
    }
    double *zd = NV_DATA_S(z);
    const sunindextype n = NV_LENGTH_S(z);
    sunindextype j = 0;
    for (; j + 8 <= n; j += 8) {
        double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        for (int k = 0; k < m; ++k) {
            const double ck = cs[k], *x = xs[k] + j;
            for (int l = 0; l < 8; ++l) acc[l] += ck * x[l];
        }
        for (int l = 0; l < 8; ++l) zd[j + l] = acc[l];
    }
    for (; j < n; ++j) {
        double acc = 0.0;
        for (int k = 0; k < m; ++k) acc += cs[k] * xs[k][j];
        zd[j] = acc;
    }
    return 0;
}

/* Initial step of Hairer, Norsett & Wanner (Solving ODEs I, II.4): one evaluation. */
static double kd_initial_step(kd_data *d, double t0, const double *y0, const double *f0,
                              double t_end, double rtol, double atol, int order,
                              double max_step) {
    const int ny = d->ny;
    double span = fabs(t_end - t0), dir = t_end >= t0 ? 1.0 : -1.0;
    if (span == 0.0 || ny == 0) return 0.0;
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, h0, h1;
    double y1[ny], f1[ny];
    for (int j = 0; j < ny; ++j) {
        double sc = atol + fabs(y0[j]) * rtol;
        d0 += (y0[j] / sc) * (y0[j] / sc);
        d1 += (f0[j] / sc) * (f0[j] / sc);
    }
    d0 = sqrt(d0 / ny);
    d1 = sqrt(d1 / ny);
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (h0 > span) h0 = span;
    for (int j = 0; j < ny; ++j) y1[j] = y0[j] + h0 * dir * f0[j];
    d->nfev++;
    if (kidym_rhs(t0 + h0 * dir, y1, d->p, d->c, f1)) return 0.0;  /* ARKODE's own then */
    for (int j = 0; j < ny; ++j) {
        double sc = atol + fabs(y0[j]) * rtol, e = (f1[j] - f0[j]) / sc;
        d2 += e * e;
    }
    d2 = sqrt(d2 / ny) / h0;
    double dm = d1 > d2 ? d1 : d2;
    h1 = (d1 <= 1e-15 && d2 <= 1e-15) ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dm, 1.0 / (order + 1));
    double h = fmin(100.0 * h0, h1);
    h = fmin(h, span);
    if (max_step > 0) h = fmin(h, max_step);
    return h;
}

/* Whether an event function of direction dir went from g0 to g1 across zero: from
 * positive to zero or below (dir -1 or 0), from negative to zero or above (+1 or 0). */
static int kd_crossed(int dir, double g0, double g1) {
    return (dir <= 0 && g0 > 0.0 && g1 <= 0.0) || (dir >= 0 && g0 < 0.0 && g1 >= 0.0);
}

/* Accumulating events (Zeno behaviour), the test of kidym.simulation.faults.ZenoWatch:
 * after KD_ZENO_RUN intervals between event instants in a row, each shorter than the
 * one before, the remaining time to the accumulation point is extrapolated
 * geometrically (d r / (1 - r), r the ratio of the last two intervals); below
 * KD_ZENO_TOLERANCE of the time scale the events accumulate: the run stops before the
 * intervals reach the root finder's tolerance, where the motion would go through the
 * event surface unseen. */
/* (their values: kidym.eom.events.ZENO_RUN, ZENO_TOLERANCE, emitted with the model) */
extern const int kidym_zeno_run;
extern const double kidym_zeno_tolerance;
#define KD_ZENO_RUN kidym_zeno_run
#define KD_ZENO_TOLERANCE kidym_zeno_tolerance

typedef struct {
    double last[2];    /* the last two distinct event instants */
    int n_last;
    int run;           /* intervals in a row, each shorter than the one before */
    double run_start;  /* the instant before the run */
    long run_events;   /* events after run_start */
} kd_zeno_watch;

/* Record n events at instant t; 1 (and *t_inf) when the events accumulate. */
static int kd_zeno(kd_zeno_watch *z, double t, int n, double span, double *t_inf) {
    int zeno = 0;
    if (z->n_last && t <= z->last[z->n_last - 1]) {
        z->run_events += n;
        return 0;
    }
    if (z->n_last == 2) {
        double d1 = z->last[1] - z->last[0], d2 = t - z->last[1];
        if (d2 < d1) {
            z->run++;
            double r = d2 / d1, remaining = d2 * r / (1.0 - r);
            if (z->run >= KD_ZENO_RUN && remaining < KD_ZENO_TOLERANCE * fmax(span, fabs(t))) {
                *t_inf = t + remaining;
                zeno = 1;
            }
        } else {
            z->run = 0;
        }
    }
    if (z->run == 0) {
        z->run_start = z->n_last ? z->last[z->n_last - 1] : t;
        z->run_events = 0;
    }
    z->run_events += n;
    if (z->n_last == 2) z->last[0] = z->last[1];
    else z->n_last++;
    z->last[z->n_last - 1] = t;
    return zeno;
}

/* CVODE's Jacobian function: the analytic J of kidym_jac, copied into the dense
 * (column-major) matrix. A failure there is the right-hand side's own (singular M,
 * not finite): unrecoverable, with the time and state. */
static int kd_jac(realtype t, N_Vector y, N_Vector fy, SUNMatrix Jm, void *user,
                  N_Vector t1, N_Vector t2, N_Vector t3) {
    kd_data *d = (kd_data *)user;
    const int ny = d->ny;
    double *yd = N_VGetArrayPointer(y);
    (void)fy; (void)t1; (void)t2; (void)t3;
    int s = kidym_jac(t, yd, d->p, d->c, d->jac);
    if (s) return kd_fail(d, s == 3 ? 2 : s, t, yd);
    for (int j = 0; j < ny; ++j) {
        double *col = SM_COLUMN_D(Jm, j);
        for (int i = 0; i < ny; ++i) col[i] = d->jac[(size_t)i * ny + j];
    }
    return 0;
}

static int kd_g(realtype t, N_Vector y, realtype *g, void *user) {
    kd_data *d = (kd_data *)user;
    kidym_events(t, N_VGetArrayPointer(y), d->p, d->c, g);
    return 0;
}

typedef struct {
    void *mem;
    int arkode;
    SUNMatrix A;
    SUNLinearSolver LS;
    SUNNonlinearSolver NLS;
    ARKodeButcherTable table;
    int out_mode;      /* ERK: KD_OUT_* */
    int order;         /* ERK: order of the embedding (initial step) */
    double rtol, atol, max_step, t_end;
    long nst, nje, nfe_dq;  /* CVODE's counts of steps and Jacobians before its last
                               restart (ReInit sets its own to zero) */
} kd_solver;

/* Failed error tests within one step after which the solver stops (ARK_ERR_FAILURE,
 * CV_ERR_FAILURE): kidym.eom.events.MAX_ERROR_TEST_FAILURES, emitted with the model,
 * the rule the NumPy engine applies to SciPy's explicit Runge-Kutta methods; the cut
 * of a step after each failure beyond the second (ERROR_TEST_CUT,
 * SMALL_ERROR_TEST_FAILURES: ARKODE's defaults, set explicitly). */
extern const int kidym_max_error_test_fails;
extern const int kidym_small_error_test_fails;
extern const double kidym_error_test_cut;

static int kd_create(kd_solver *s, int method, SUNContext ctx, double t0, N_Vector y,
                     kd_data *d, double rtol, double atol, double max_step, long max_steps,
                     double t_end, int nev, int *dirs, const double *table, int jacobian) {
    int flag = 0;
    s->arkode = method >= 2;
    s->table = NULL;
    s->out_mode = table ? (int)table[3] : KD_OUT_HERMITE;
    s->order = table && table[2] > 0 ? (int)table[2] : 4;
    s->rtol = rtol;
    s->atol = atol;
    s->max_step = max_step;
    s->t_end = t_end;
    s->A = NULL;
    s->LS = NULL;
    s->nst = s->nje = s->nfe_dq = 0;
    s->NLS = NULL;
    if (!s->arkode) {
        s->mem = CVodeCreate(method == 0 ? CV_BDF : CV_ADAMS, ctx);
        if (!s->mem) return -100;
        flag |= CVodeInit(s->mem, kd_f, t0, y);
        flag |= CVodeSStolerances(s->mem, rtol, atol);
        flag |= CVodeSetUserData(s->mem, d);
        flag |= CVodeSetErrFile(s->mem, NULL);  /* failures are reported to the caller */
        flag |= CVodeSetMaxNumSteps(s->mem, max_steps);
        flag |= CVodeSetMaxErrTestFails(s->mem, kidym_max_error_test_fails);
        if (max_step > 0) flag |= CVodeSetMaxStep(s->mem, max_step);
        flag |= CVodeSetStopTime(s->mem, t_end);
        if (method == 0) {
            /* BDF: Newton iteration, dense Jacobian: analytic (kidym_jac) or by
             * CVODE's difference quotients */
            s->A = SUNDenseMatrix(kidym_layout[2], kidym_layout[2], ctx);
            s->LS = SUNLinSol_Dense(y, s->A, ctx);
            flag |= CVodeSetLinearSolver(s->mem, s->LS, s->A);
            if (jacobian && d->jac) flag |= CVodeSetJacFn(s->mem, kd_jac);
        } else {
            /* Adams: fixed-point (functional) iteration, the non-stiff setting */
            s->NLS = SUNNonlinSol_FixedPoint(y, 0, ctx);
            flag |= CVodeSetNonlinearSolver(s->mem, s->NLS);
        }
        if (nev) {
            flag |= CVodeRootInit(s->mem, nev, kd_g);
            flag |= CVodeSetRootDirection(s->mem, dirs);
        }
    } else {
        /* ERK: the stage sums through kd_linear_combination (clones inherit the ops) */
        y->ops->nvlinearcombination = kd_linear_combination;
        s->mem = ERKStepCreate(kd_f, t0, y, ctx);
        if (!s->mem) return -100;
        if (method == 4) {
            if (!table) return -100;
            /* a Butcher table given by the caller (see kidym_simulate) */
            int ns = (int)table[0];
            const double *c = table + 4, *A = c + ns, *b = A + ns * ns, *e = b + ns;
            s->table = ARKodeButcherTable_Create(ns, (int)table[1], (int)table[2],
                                                 (realtype *)c, (realtype *)A,
                                                 (realtype *)b, (realtype *)e);
            if (!s->table) return -100;
            flag |= ERKStepSetTable(s->mem, s->table);
        } else {
            flag |= ERKStepSetTableNum(s->mem, method == 2 ? ARKODE_FEHLBERG_13_7_8
                                                            : ARKODE_DORMAND_PRINCE_7_4_5);
        }
        flag |= ERKStepSStolerances(s->mem, rtol, atol);
        flag |= ERKStepSetUserData(s->mem, d);
        flag |= ERKStepSetPostprocessStepFn(s->mem, kd_post);
        /* with the extension ARKODE's interpolant serves root finding only: the cubic
         * Hermite needs no evaluations beyond the step's (degree 4-5 take up to 4) */
        if (s->out_mode == KD_OUT_EXTENSION) flag |= ERKStepSetInterpolantDegree(s->mem, 3);
        flag |= ERKStepSetErrFile(s->mem, NULL);
        flag |= ERKStepSetMaxNumSteps(s->mem, max_steps);
        flag |= ERKStepSetMaxErrTestFails(s->mem, kidym_max_error_test_fails);
        flag |= ERKStepSetSmallNumEFails(s->mem, kidym_small_error_test_fails);
        flag |= ERKStepSetMaxEFailGrowth(s->mem, kidym_error_test_cut);
        if (max_step > 0) flag |= ERKStepSetMaxStep(s->mem, max_step);
        flag |= ERKStepSetStopTime(s->mem, t_end);
        if (nev) {
            flag |= ERKStepRootInit(s->mem, nev, kd_g);
            flag |= ERKStepSetRootDirection(s->mem, dirs);
        }
    }
    return flag ? -101 : 0;
}

/* (Re)start bookkeeping of the ERK methods at t0, y0 with f0 = f(t0, y0): the record
 * and memo, and the initial step. */
static int kd_start(kd_solver *s, kd_data *d, double t0, const double *y0,
                    const double *f0) {
    if (!s->arkode) return 0;
    kd_record_start(d, t0, y0, f0);
    double h0 = kd_initial_step(d, t0, y0, f0, s->t_end, s->rtol, s->atol, s->order,
                                s->max_step);
    return h0 > 0.0 ? ERKStepSetInitStep(s->mem, h0) : 0;
}

static void kd_free(kd_solver *s) {
    if (s->arkode) ERKStepFree(&s->mem);
    else CVodeFree(&s->mem);
    if (s->table) ARKodeButcherTable_Free(s->table);
    if (s->LS) SUNLinSolFree(s->LS);
    if (s->NLS) SUNNonlinSolFree(s->NLS);
    if (s->A) SUNMatDestroy(s->A);
}

static int kd_step(kd_solver *s, double tout, N_Vector y, double *t) {
    if (s->arkode) {
        if (s->out_mode == KD_OUT_STEP) ERKStepSetStopTime(s->mem, tout);
        int f = ERKStepEvolve(s->mem, tout, y, t, ARK_NORMAL);
        return f == ARK_ROOT_RETURN ? 2 : (f == ARK_TSTOP_RETURN ? 0 : f);
    }
    int f = CVode(s->mem, tout, y, t, CV_NORMAL);
    return f == CV_ROOT_RETURN ? 2 : (f == CV_TSTOP_RETURN ? 0 : f);
}

/* The state at t (ARKODE's return): from the continuous extension where there is one;
 * otherwise as ARKODE gave it (counted as a fallback when an extension was wanted). */
static int kd_output_state(kd_solver *s, kd_data *d, double t, N_Vector y) {
    if (!s->arkode || s->out_mode != KD_OUT_EXTENSION) return 0;
    int r = kd_extension(d, t, N_VGetArrayPointer(y));
    if (r > 0) d->fallbacks++;
    return r < 0 ? r : 0;
}

static int kd_reinit(kd_solver *s, double t, N_Vector y) {
    if (s->arkode) return ERKStepReInit(s->mem, kd_f, t, y);
    long nst = 0;
    CVodeGetNumSteps(s->mem, &nst);
    s->nst += nst;
    if (s->LS) {
        long nje = 0, nfe = 0;
        CVodeGetNumJacEvals(s->mem, &nje);
        CVodeGetNumLinRhsEvals(s->mem, &nfe);
        s->nje += nje;
        s->nfe_dq += nfe;
    }
    return CVodeReInit(s->mem, t, y);
}

static const char *kd_flag_name(kd_solver *s, int flag) {
    if (s->arkode) return ERKStepGetReturnFlagName(flag);
    return CVodeGetReturnFlagName(flag);
}

static void kd_counts(kd_solver *s, kd_data *d, long *stats) {
    long nst = 0, nje = 0, nfe_dq = 0;
    if (s->arkode) {
        nst = d->steps;
    } else {
        CVodeGetNumSteps(s->mem, &nst);
        nst += s->nst;
        if (s->LS) {
            CVodeGetNumJacEvals(s->mem, &nje);
            CVodeGetNumLinRhsEvals(s->mem, &nfe_dq);
        }
    }
    stats[1] += nst;
    stats[6] += s->nje + nje;
    stats[7] += s->nfe_dq + nfe_dq;
    stats[4] = d->fallbacks;
}

/* Re-stepping for the events of the ERK methods (kd_restep): the method's table
 * (ARKODE's for Fehlberg78 and ERK5, the caller's for method 4), the stages it needs
 * for the solution, and scratch. Only for runs with events: others are unchanged.
 * Returns 0, or -1 (out of memory, no table). */
static int kd_restep_setup(kd_data *d, int method, const double *table) {
    ARKodeButcherTable B = NULL;
    if (method == 2) B = ARKodeButcherTable_LoadERK(ARKODE_FEHLBERG_13_7_8);
    else if (method == 3) B = ARKodeButcherTable_LoadERK(ARKODE_DORMAND_PRINCE_7_4_5);
    else if (method == 4 && table) {
        int ns = (int)table[0];
        const double *c = table + 4, *A = c + ns, *b = A + ns * ns, *e = b + ns;
        B = ARKodeButcherTable_Create(ns, (int)table[1], (int)table[2], (realtype *)c,
                                      (realtype *)A, (realtype *)b, (realtype *)e);
    }
    if (!B) return -1;
    const int ns = B->stages, ny = d->ny;
    d->rs = B;
    d->rs_need = calloc((size_t)ns, 1);
    d->rs_K = malloc(sizeof(double) * ((size_t)(ns + 1) * ny + 1));
    if (!d->rs_need || !d->rs_K) return -1;
    d->rs_z = d->rs_K + (size_t)ns * ny;
    /* a stage is needed when the solution weighs it or a needed later stage uses it */
    for (int i = ns - 1; i >= 0; --i) {
        int need = B->b[i] != 0.0;
        for (int j = i + 1; j < ns && !need; ++j) need = d->rs_need[j] && B->A[j][i] != 0.0;
        d->rs_need[i] = (unsigned char)need;
    }
    return 0;
}

static void kd_restep_free(kd_data *d) {
    if (d->rs) ARKodeButcherTable_Free(d->rs);
    free(d->rs_need);
    free(d->rs_K);
    d->rs = NULL;
    d->rs_need = NULL;
    d->rs_K = NULL;
}

/* Integrate from t0, y0 to t_out[n_out-1], writing the state at every t_out[i] into
 * y_out[i*ny..]. Events are written to ev_t, ev_k, ev_y (state before any reset).
 * stats: [0] right-hand-side evaluations, [1] steps, [2] outputs written,
 * [3] events recorded, [4] outputs that wanted the continuous extension but got
 * ARKODE's interpolant, [5] projections, [6] Jacobian evaluations (BDF), [7] of [0],
 * the evaluations of CVODE's difference-quotient Jacobian.
 * jacobian: 1 for BDF's analytic Jacobian (kidym_jac; the library must have it).
 * table (may be NULL): for the ARKODE methods {s, q, p, output mode (KD_OUT_*)}, with
 * p the embedding's order; for method 4 followed by its Butcher table c[s],
 * A[s*s] (row-major), b[s], d[s] (order q, embedding of order p), and with
 * KD_OUT_EXTENSION by the continuous extension: n_ext, c_ext[n_ext],
 * A_ext[n_ext*(s+n_ext)], D[4*(s+n_ext)] (Hairer's DOP853 layout: the step's last
 * stage is f at the new solution). */
/* Restart the integrator at (t, y) after the state was changed (a reset or a
   projection): the integrator's flag, and *status set if f cannot be evaluated. */
static int kd_restart(kd_solver *s, kd_data *d, double t, N_Vector y, double *f0,
                      int *status) {
    double *ycur = N_VGetArrayPointer(y);
    int rf = kd_reinit(s, t, y);
    if (!rf && s->arkode) {
        d->nfev++;
        int sr = kidym_rhs(t, ycur, d->p, d->c, f0);
        if (sr) {
            kd_fail(d, sr, t, ycur);
            *status = -200 - sr;
            return 0;
        }
        rf = kd_start(s, d, t, ycur, f0);
    }
    return rf;
}

int kidym_simulate(const double *p, double t0, const double *y0, int n_out,
                   const double *t_out, int method, double rtol, double atol,
                   double max_step, long max_steps, double *y_out, int max_events,
                   double *ev_t, int *ev_k, double *ev_y, long *stats, double *fail_t,
                   double *fail_y, char *message, int message_len, const double *table,
                   int jacobian) {
    const int ny = kidym_layout[2];
    const int nc = kidym_layout[4];
    const int nev = kidym_layout[6];
    double c_work[nc > 0 ? nc : 1];
    double ynew[ny], f0[ny];
    int dirs[nev > 0 ? nev : 1], roots[nev > 0 ? nev : 1];
    double g_prev[nev > 0 ? nev : 1], g_now[nev > 0 ? nev : 1];
    int status = 0, done = 0, n_ev = 0;
    double t = t0;
    kd_zeno_watch zeno;
    kd_data d;
    kd_solver s;
    SUNContext ctx = NULL;
    N_Vector y = NULL;
    double *work = NULL;

    memset(&d, 0, sizeof d);
    memset(&zeno, 0, sizeof zeno);
    d.p = p;
    d.c = c_work;
    d.fail_y = fail_y;
    d.ny = ny;
    d.stall_t = NAN;
    d.stall_tol = 16.0 * 2.220446049250313e-16 *
                  fmax(fabs(t0), fabs(n_out ? t_out[n_out - 1] : t0));
    message[0] = '\0';
    for (int i = 0; i < 8; ++i) stats[i] = 0;
    kidym_constants(p, c_work);
    for (int k = 0; k < nev; ++k) dirs[k] = kidym_event_direction[k];
    if (method >= 2) {
        /* ERK: memo and record of f; with an extension, its stages and coefficients */
        int ns = method == 4 && table ? (int)table[0] : 1;
        int mode = table ? (int)table[3] : KD_OUT_HERMITE;
        int ext = method == 4 && mode == KD_OUT_EXTENSION;
        int ne = 0;
        if (ext) {
            const double *q = table + 4 + (size_t)ns * (ns + 3);
            ne = (int)q[0];
            d.ext_c = q + 1;
            d.ext_A = d.ext_c + ne;
            d.ext_D = d.ext_A + (size_t)ne * (ns + ne);
            d.tab_c = table + 4;
        }
        d.record = 1;
        d.ns = ns;
        d.n_ext = ne;
        d.ring_n = ns > 1 ? ns - 1 : 1;
        size_t nwork = (size_t)ny * (1 + d.ring_n + 2) + d.ring_n;
        if (ext) nwork += (size_t)ny * (ns + ne + 7);
        work = malloc(sizeof(double) * (nwork > 0 ? nwork : 1));
        if (!work) {
            snprintf(message, message_len, "out of memory");
            return -100;
        }
        d.last_y = work;
        d.ring_f = d.last_y + ny;
        d.y_old = d.ring_f + (size_t)d.ring_n * ny;
        d.y_new = d.y_old + ny;
        d.ring_t = d.y_new + ny;
        if (ext) {
            d.K = d.ring_t + d.ring_n;
            d.F = d.K + (size_t)ny * (ns + ne);
        }
        if (nev && kd_restep_setup(&d, method, table)) {
            snprintf(message, message_len, "out of memory");
            kd_restep_free(&d);
            free(work);
            return -100;
        }
    }
    if (method == 0 && jacobian && kidym_jacobian) {
        work = malloc(sizeof(double) * ((size_t)ny * ny > 0 ? (size_t)ny * ny : 1));
        if (!work) {
            snprintf(message, message_len, "out of memory");
            return -100;
        }
        d.jac = work;
    }
    if (SUNContext_Create(NULL, &ctx)) {
        snprintf(message, message_len, "cannot create the SUNDIALS context");
        kd_restep_free(&d);
        free(work);
        return -100;
    }
    y = N_VNew_Serial(ny, ctx);
    N_VEnableFusedOps_Serial(y, SUNTRUE);  /* fused linear combinations: less overhead */
    memcpy(N_VGetArrayPointer(y), y0, sizeof(double) * ny);
    /* outputs at t0 (and before) are the initial state */
    while (done < n_out && t_out[done] <= t0) {
        memcpy(y_out + (size_t)done * ny, y0, sizeof(double) * ny);
        ++done;
    }
    {
        d.nfev++;
        int s0 = kidym_rhs(t0, y0, p, c_work, f0);
        if (s0) {
            d.status = s0;
            d.fail_t = t0;
            memcpy(fail_y, y0, sizeof(double) * ny);
            status = -200 - s0;
            goto finish_noint;
        }
    }
    if (nev) kidym_events(t0, y0, p, c_work, g_prev);
    status = kd_create(&s, method, ctx, t0, y, &d, rtol, atol, max_step, max_steps,
                       n_out ? t_out[n_out - 1] : t0, nev, dirs, table, jacobian);
    if (!status && kd_start(&s, &d, t0, y0, f0)) status = -101;
    if (status) {
        snprintf(message, message_len, "the integrator could not be set up (flag %d)", status);
        kd_free(&s);
        kd_restep_free(&d);
        N_VDestroy(y);
        SUNContext_Free(&ctx);
        free(work);
        return status;
    }
    while (done < n_out) {
        int flag = kd_step(&s, t_out[done], y, &t), located = 0;
        if (flag == 2) {
            if (s.arkode) ERKStepGetRootInfo(s.mem, roots);
            else CVodeGetRootInfo(s.mem, roots);
            if (s.arkode && (d.step_ok || d.step_kept)) {
                /* the event time and state as accurate as the steps: on the extension,
                 * else by re-stepping (the earliest of the events found) */
                double tr = INFINITY;
                for (int k = 0; k < nev; ++k)
                    if (roots[k]) tr = fmin(tr, kd_refine_root(&d, k, t, nev));
                if (isfinite(tr)) t = tr;
                int r = kd_state_at(&d, t, N_VGetArrayPointer(y));
                if (r < 0) flag = -1;
                else if (r == 0) located = 1;
            }
        }
        if ((flag == 0 || (flag == 2 && !located)) && kd_output_state(&s, &d, t, y))
            flag = -1;
        if (flag == 0) {
            /* holonomic constraints: back onto them where the drift exceeds the
             * tolerance, and restart from there (a no-op without constraints) */
            double *ycur = N_VGetArrayPointer(y);
            int pj = kidym_project(t, ycur, p, c_work);
            if (pj == 2) {
                status = -106;
                *fail_t = t;
                memcpy(fail_y, ycur, sizeof(double) * ny);
                snprintf(message, message_len, "the projection onto the constraints failed");
                break;
            }
            memcpy(y_out + (size_t)done * ny, ycur, sizeof(double) * ny);
            if (nev) kidym_events(t, ycur, p, c_work, g_prev);
            ++done;
            if (pj == 1) {
                ++stats[5];
                int rf = kd_restart(&s, &d, t, y, f0, &status);
                if (status) break;
                if (rf) {
                    status = -102;
                    snprintf(message, message_len, "restart after a projection failed (%s)",
                             kd_flag_name(&s, rf));
                    break;
                }
            }
            continue;
        }
        if (flag == 2) {  /* an event (roots read above) */
            int stop = 0, reset = 0;
            double *ycur = N_VGetArrayPointer(y);
            /* Simultaneous events: every event whose function has crossed zero (in its
             * direction) since the last return is due now as well, flagged by the root
             * finder or not: its root lies within the root finder's tolerance of t (an
             * earlier one would have been returned first), and after a restart it would
             * be missed (its function starts on the far side of zero). */
            kidym_events(t, ycur, p, c_work, g_now);
            for (int k = 0; k < nev; ++k)
                if (kd_crossed(dirs[k], g_prev[k], g_now[k])) roots[k] = 1;
            /* all due events are recorded with the state before any reset; their
             * resets are applied one after the other in the order of the events */
            for (int k = 0; k < nev; ++k) {
                if (!roots[k]) continue;
                if (n_ev < max_events) {
                    ev_t[n_ev] = t;
                    ev_k[n_ev] = k;
                    memcpy(ev_y + (size_t)n_ev * ny, ycur, sizeof(double) * ny);
                }
                ++n_ev;
            }
            int n_due = 0;
            for (int k = 0; k < nev; ++k) {
                if (roots[k] && kidym_event_action[k] == 1) stop = 1;
                n_due += roots[k] != 0;
            }
            double t_inf = t;
            if (!stop && kd_zeno(&zeno, t, n_due, t_out[n_out - 1] - t0, &t_inf)) {
                status = -105;  /* accumulating events; the state before the resets */
                *fail_t = t;
                memcpy(fail_y, ycur, sizeof(double) * ny);
                snprintf(message, message_len, "%ld %.17g %.17g", zeno.run_events,
                         zeno.run_start, t_inf);
                break;
            }
            for (int k = 0; k < nev && !stop; ++k) {
                if (!roots[k] || kidym_event_action[k] != 2) continue;
                kidym_reset(k, t, ycur, p, c_work, ynew);
                memcpy(ycur, ynew, sizeof(double) * ny);
                reset = 1;
            }
            if (nev) kidym_events(t, ycur, p, c_work, g_prev);
            if (stop) {
                status = 1;
                snprintf(message, message_len, "stopped by a terminal event at t = %.17g", t);
                break;
            }
            if (reset) {
                int rf = kd_restart(&s, &d, t, y, f0, &status);
                if (status) break;
                if (rf) {
                    status = -102;
                    snprintf(message, message_len, "restart after a reset failed (%s)",
                             kd_flag_name(&s, rf));
                    break;
                }
                /* An event function that the resets left at exactly zero is masked by
                 * the root finders until it leaves zero, and its leaving is never
                 * reported: it counts with the sign it takes just after (a step of f
                 * from the new state). Still zero there (the state at rest on the
                 * surface, a ball put down on the floor): the event would recur at
                 * once, again and again, and the motion go through the surface unseen
                 * (an event storm), so the run stops with status -104. */
                int stuck = -1;
                for (int k = 0; k < nev && stuck < 0; ++k) {
                    if (g_prev[k] != 0.0) continue;
                    if (!s.arkode) {
                        d.nfev++;
                        int sr = kidym_rhs(t, ycur, p, c_work, f0);
                        if (sr) {
                            kd_fail(&d, sr, t, ycur);
                            status = -200 - sr;
                            break;
                        }
                    }
                    const double dt = 1e-8 * fmax(1.0, fabs(t));
                    for (int j = 0; j < ny; ++j) ynew[j] = ycur[j] + dt * f0[j];
                    kidym_events(t + dt, ynew, p, c_work, g_now);
                    for (int i = 0; i < nev; ++i) {
                        if (g_prev[i] != 0.0) continue;
                        if (g_now[i] == 0.0 && stuck < 0) stuck = i;
                        g_prev[i] = g_now[i];
                    }
                }
                if (status) break;
                if (stuck >= 0) {
                    status = -104;
                    *fail_t = t;
                    memcpy(fail_y, ycur, sizeof(double) * ny);
                    snprintf(message, message_len, "event %d", stuck);
                    break;
                }
            }
            /* an output time equal to the event time is the state after the event */
            while (done < n_out && t_out[done] <= t) {
                memcpy(y_out + (size_t)done * ny, N_VGetArrayPointer(y),
                       sizeof(double) * ny);
                ++done;
            }
            continue;
        }
        status = flag < 0 ? flag : -103;
        if (d.status == 4) {
            /* stopped on request (kidym_watch): the solver's last state */
            status = -108;
            *fail_t = t;
            memcpy(fail_y, N_VGetArrayPointer(y), sizeof(double) * ny);
            snprintf(message, message_len, "stopped on request");
        } else if (d.status >= 1 && d.status <= 3) {
            /* a failed evaluation: kd_fail kept its own time and state (the stage where
             * the formula failed), not the solver's last accepted state */
            status = -200 - d.status;
        } else {
            *fail_t = t;
            memcpy(fail_y, N_VGetArrayPointer(y), sizeof(double) * ny);
            snprintf(message, message_len, "%s", kd_flag_name(&s, flag));
        }
        break;
    }
    kd_counts(&s, &d, stats);
    kd_free(&s);
finish_noint:
    kd_restep_free(&d);
    if (d.status && status <= -200) *fail_t = d.fail_t;
    stats[0] = d.nfev;
    stats[2] = done;
    stats[3] = n_ev;
    N_VDestroy(y);
    SUNContext_Free(&ctx);
    free(work);
    return status;
}

void kidym_outputs(double t, const double *y, const double *p, const double *c, double *out);

/* Outputs at n states (rows of Y), for the recorded times. */
void kidym_outputs_many(int n, const double *t, const double *Y, const double *p,
                        double *out) {
    const int ny = kidym_layout[2], nc = kidym_layout[4], nout = kidym_layout[5];
    double c[nc > 0 ? nc : 1];
    kidym_constants(p, c);
    for (int i = 0; i < n; ++i)
        kidym_outputs(t[i], Y + (size_t)i * ny, p, c, out + (size_t)i * nout);
}

/* Right-hand side at n states (rows of Y): the per-evaluation cost without a
 * Python call per state (benchmarks). Returns the first non-zero status. */
int kidym_rhs_many(int n, const double *t, const double *Y, const double *p, double *Ydot) {
    const int ny = kidym_layout[2], nc = kidym_layout[4];
    double c[nc > 0 ? nc : 1];
    int status = 0;
    kidym_constants(p, c);
    for (int i = 0; i < n; ++i) {
        int s = kidym_rhs(t[i], Y + (size_t)i * ny, p, c, Ydot + (size_t)i * ny);
        if (s && !status) status = s;
    }
    return status;
}

/* Right-hand side at n states (rows of Y) at one time t, with the constants c
 * already computed (CompiledSystem.rhs_batch: one Python call for n states). Each row
 * is exactly what kidym_rhs gives for it alone. Returns 0, or the status of the first
 * row that fails, with that row's index in *bad. */
int kidym_rhs_batch(int n, double t, const double *Y, const double *p, const double *c,
                    double *Ydot, int *bad) {
    const int ny = kidym_layout[2];
    int status = 0;
    for (int i = 0; i < n; ++i) {
        int s = kidym_rhs(t, Y + (size_t)i * ny, p, c, Ydot + (size_t)i * ny);
        if (s && !status) {
            status = s;
            *bad = i;
        }
    }
    return status;
}
