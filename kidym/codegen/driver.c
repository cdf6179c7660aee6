/* kidym integration driver: the whole time loop in C on SUNDIALS (CVODE, ARKODE).
 *
 * Compiled together with a generated model source (kidym/codegen/emit.py), which
 * provides kidym_constants, kidym_rhs, kidym_events, kidym_reset and the layout.
 * No Python is called during the integration.
 *
 * Methods: 0 CVODE BDF (stiff, dense Newton), 1 CVODE Adams (non-stiff, functional
 * iteration), 2 ARKODE ERK order 8 (Fehlberg 13-7-8), 3 ARKODE ERK order 5
 * (Dormand-Prince 7-4-5), 4 ARKODE ERK with a Butcher table given by the caller
 * (kidym passes Hairer's DOP853 coefficients, see kidym/simulate/compiled.py).
 *
 * Status: 0 reached t_end, 1 stopped by a terminal event, <0 failure (the message
 * says which, with the time and state of the failure in fail_t, fail_y).
 */
#include <math.h>
#include <stdio.h>
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
void kidym_constants(const double *p, double *c);
int kidym_rhs(double t, const double *y, const double *p, const double *c, double *ydot);
void kidym_events(double t, const double *y, const double *p, const double *c, double *g);
void kidym_reset(int k, double t, const double *y, const double *p, const double *c,
                 double *ynew);

typedef struct {
    const double *p;
    const double *c;
    int status;        /* first failure of the right-hand side: 1 singular, 2 not finite */
    double fail_t;
    double *fail_y;
    long nfev;
} kd_data;

static int kd_f(realtype t, N_Vector y, N_Vector ydot, void *user) {
    kd_data *d = (kd_data *)user;
    d->nfev++;
    int s = kidym_rhs(t, N_VGetArrayPointer(y), d->p, d->c, N_VGetArrayPointer(ydot));
    if (s) {
        if (!d->status) {
            d->status = s;
            d->fail_t = t;
            memcpy(d->fail_y, N_VGetArrayPointer(y), sizeof(double) * kidym_layout[2]);
        }
        return -1;  /* unrecoverable: the equations themselves fail here */
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
    int exact;         /* ERK: step onto every output time instead of interpolating */
} kd_solver;

static int kd_create(kd_solver *s, int method, SUNContext ctx, double t0, N_Vector y,
                     kd_data *d, double rtol, double atol, double max_step, long max_steps,
                     double t_end, int nev, int *dirs, const double *table) {
    int flag = 0;
    s->arkode = method >= 2;
    s->table = NULL;
    s->exact = table && table[3] != 0.0;
    s->A = NULL;
    s->LS = NULL;
    s->NLS = NULL;
    if (!s->arkode) {
        s->mem = CVodeCreate(method == 0 ? CV_BDF : CV_ADAMS, ctx);
        if (!s->mem) return -100;
        flag |= CVodeInit(s->mem, kd_f, t0, y);
        flag |= CVodeSStolerances(s->mem, rtol, atol);
        flag |= CVodeSetUserData(s->mem, d);
        flag |= CVodeSetErrFile(s->mem, NULL);  /* failures are reported to the caller */
        flag |= CVodeSetMaxNumSteps(s->mem, max_steps);
        if (max_step > 0) flag |= CVodeSetMaxStep(s->mem, max_step);
        flag |= CVodeSetStopTime(s->mem, t_end);
        if (method == 0) {
            /* BDF: Newton iteration, dense difference-quotient Jacobian */
            s->A = SUNDenseMatrix(kidym_layout[2], kidym_layout[2], ctx);
            s->LS = SUNLinSol_Dense(y, s->A, ctx);
            flag |= CVodeSetLinearSolver(s->mem, s->LS, s->A);
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
        flag |= ERKStepSetErrFile(s->mem, NULL);
        flag |= ERKStepSetMaxNumSteps(s->mem, max_steps);
        if (max_step > 0) flag |= ERKStepSetMaxStep(s->mem, max_step);
        flag |= ERKStepSetStopTime(s->mem, t_end);
        if (nev) {
            flag |= ERKStepRootInit(s->mem, nev, kd_g);
            flag |= ERKStepSetRootDirection(s->mem, dirs);
        }
    }
    return flag ? -101 : 0;
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
        if (s->exact) ERKStepSetStopTime(s->mem, tout);
        int f = ERKStepEvolve(s->mem, tout, y, t, ARK_NORMAL);
        return f == ARK_ROOT_RETURN ? 2 : (f == ARK_TSTOP_RETURN ? 0 : f);
    }
    int f = CVode(s->mem, tout, y, t, CV_NORMAL);
    return f == CV_ROOT_RETURN ? 2 : (f == CV_TSTOP_RETURN ? 0 : f);
}

static int kd_reinit(kd_solver *s, double t, N_Vector y) {
    if (s->arkode) return ERKStepReInit(s->mem, kd_f, t, y);
    return CVodeReInit(s->mem, t, y);
}

static const char *kd_flag_name(kd_solver *s, int flag) {
    if (s->arkode) return ERKStepGetReturnFlagName(flag);
    return CVodeGetReturnFlagName(flag);
}

static void kd_counts(kd_solver *s, long *stats) {
    long nst = 0;
    if (s->arkode) ERKStepGetNumSteps(s->mem, &nst);
    else CVodeGetNumSteps(s->mem, &nst);
    stats[1] += nst;
}

/* Integrate from t0, y0 to t_out[n_out-1], writing the state at every t_out[i] into
 * y_out[i*ny..]. Events are written to ev_t, ev_k, ev_y (state before any reset).
 * stats: [0] right-hand-side evaluations, [1] steps, [2] outputs written,
 * [3] events recorded.
 * table (may be NULL): for the ARKODE methods {s, q, p, exact outputs (0/1)}, followed
 * for method 4 by its Butcher table c[s], A[s*s] (row-major), b[s], d[s] (order q,
 * embedding of order p). With exact outputs the ERK steps end on every output time,
 * so outputs carry the method's accuracy rather than that of ARKODE's interpolant. */
int kidym_simulate(const double *p, double t0, const double *y0, int n_out,
                   const double *t_out, int method, double rtol, double atol,
                   double max_step, long max_steps, double *y_out, int max_events,
                   double *ev_t, int *ev_k, double *ev_y, long *stats, double *fail_t,
                   double *fail_y, char *message, int message_len, const double *table) {
    const int ny = kidym_layout[2];
    const int nc = kidym_layout[4];
    const int nev = kidym_layout[6];
    double c_work[nc > 0 ? nc : 1];
    double ynew[ny];
    int dirs[nev > 0 ? nev : 1], roots[nev > 0 ? nev : 1];
    int status = 0, done = 0, n_ev = 0;
    double t = t0;
    kd_data d = {p, c_work, 0, 0.0, fail_y, 0};
    kd_solver s;
    SUNContext ctx = NULL;
    N_Vector y = NULL;

    message[0] = '\0';
    stats[0] = stats[1] = stats[2] = stats[3] = 0;
    kidym_constants(p, c_work);
    for (int k = 0; k < nev; ++k) dirs[k] = kidym_event_direction[k];
    if (SUNContext_Create(NULL, &ctx)) {
        snprintf(message, message_len, "cannot create the SUNDIALS context");
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
        double ydot0[ny];
        int s0 = kidym_rhs(t0, y0, p, c_work, ydot0);
        if (s0) {
            d.status = s0;
            d.fail_t = t0;
            memcpy(fail_y, y0, sizeof(double) * ny);
            status = -200 - s0;
            goto finish_noint;
        }
    }
    status = kd_create(&s, method, ctx, t0, y, &d, rtol, atol, max_step, max_steps,
                       n_out ? t_out[n_out - 1] : t0, nev, dirs, table);
    if (status) {
        snprintf(message, message_len, "the integrator could not be set up (flag %d)", status);
        kd_free(&s);
        N_VDestroy(y);
        SUNContext_Free(&ctx);
        return status;
    }
    while (done < n_out) {
        int flag = kd_step(&s, t_out[done], y, &t);
        if (flag == 0) {
            memcpy(y_out + (size_t)done * ny, N_VGetArrayPointer(y), sizeof(double) * ny);
            ++done;
            continue;
        }
        if (flag == 2) {  /* an event */
            if (s.arkode) ERKStepGetRootInfo(s.mem, roots);
            else CVodeGetRootInfo(s.mem, roots);
            int stop = 0, reset = 0;
            double *ycur = N_VGetArrayPointer(y);
            for (int k = 0; k < nev; ++k) {
                if (!roots[k]) continue;
                if (n_ev < max_events) {
                    ev_t[n_ev] = t;
                    ev_k[n_ev] = k;
                    memcpy(ev_y + (size_t)n_ev * ny, ycur, sizeof(double) * ny);
                }
                ++n_ev;
                if (kidym_event_action[k] == 1) stop = 1;
                if (kidym_event_action[k] == 2 && !reset) {
                    kidym_reset(k, t, ycur, p, c_work, ynew);
                    memcpy(ycur, ynew, sizeof(double) * ny);
                    reset = 1;
                }
            }
            if (stop) {
                status = 1;
                snprintf(message, message_len, "stopped by a terminal event at t = %.17g", t);
                break;
            }
            if (reset) {
                int rf = kd_reinit(&s, t, y);
                if (rf) {
                    status = -102;
                    snprintf(message, message_len, "restart after a reset failed (%s)",
                             kd_flag_name(&s, rf));
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
        *fail_t = t;
        memcpy(fail_y, N_VGetArrayPointer(y), sizeof(double) * ny);
        if (d.status == 1) {
            status = -201;
        } else if (d.status == 2) {
            status = -202;
        } else {
            snprintf(message, message_len, "%s", kd_flag_name(&s, flag));
        }
        break;
    }
    kd_counts(&s, stats);
    kd_free(&s);
finish_noint:
    if (d.status && status <= -200) *fail_t = d.fail_t;
    stats[0] = d.nfev;
    stats[2] = done;
    stats[3] = n_ev;
    N_VDestroy(y);
    SUNContext_Free(&ctx);
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
