/* A tiny standalone program around a model's C library (kidym export MODEL --c-library):
   the classical Runge-Kutta method of order 4 with a fixed step, written here, over the
   library's right-hand side; energy from the library's outputs. No Python, no SUNDIALS.

   cc -std=c99 -O2 -I LIBDIR main.c LIBDIR/model.c -o pendulum -lm
*/
#include <math.h>
#include <stdio.h>
#include "model.h"

static int rk4_step(double t, double h, double *x, const model_parameters *p) {
    double k1[MODEL_NX], k2[MODEL_NX], k3[MODEL_NX], k4[MODEL_NX], y[MODEL_NX];
    int i;
    if (model_rhs(t, x, p, k1)) return 1;
    for (i = 0; i < MODEL_NX; ++i) y[i] = x[i] + 0.5*h*k1[i];
    if (model_rhs(t + 0.5*h, y, p, k2)) return 1;
    for (i = 0; i < MODEL_NX; ++i) y[i] = x[i] + 0.5*h*k2[i];
    if (model_rhs(t + 0.5*h, y, p, k3)) return 1;
    for (i = 0; i < MODEL_NX; ++i) y[i] = x[i] + h*k3[i];
    if (model_rhs(t + h, y, p, k4)) return 1;
    for (i = 0; i < MODEL_NX; ++i) x[i] += h/6.0*(k1[i] + 2.0*k2[i] + 2.0*k3[i] + k4[i]);
    return 0;
}

int main(void) {
    model_parameters p;
    double x[MODEL_NX], out[MODEL_NOUT], t = MODEL_T_START;
    const double h = 1e-3;
    int step;
    model_default_parameters(&p);
    model_default_state(x);
    printf("%6s %12s %12s %14s\n", "t", model_state_names[MODEL_X_phi1],
           model_state_names[MODEL_X_phi2], "energy");
    for (step = 0; step <= 2000; ++step) {
        if (step % 500 == 0) {
            model_outputs(t, x, &p, out);
            printf("%6.2f %12.8f %12.8f %14.9f\n", t, x[MODEL_X_phi1], x[MODEL_X_phi2],
                   out[MODEL_OUT_energy]);
        }
        if (step < 2000 && rk4_step(t, h, x, &p)) {
            fprintf(stderr, "the right-hand side failed at t = %g\n", t);
            return 1;
        }
        t = MODEL_T_START + (step + 1)*h;
    }
    return 0;
}
