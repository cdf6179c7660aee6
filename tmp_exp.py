import sys; sys.path.insert(0, "benchmarks")
import work_precision as wp, kidym, math
import importlib; cm = importlib.import_module("kidym.simulate.compiled_methods")
ms = wp.models(False)
refs = {}
for name, eq, t_end in ms:
    refs[name] = wp.reference(name, eq, t_end)
    if False:
        r2 = kidym.simulate(eq, engine="compiled", method="ERK8", rtol=1e-13, atol=1e-16, t_end=t_end, n_points=2)
        print(name, "ref check ERK8@1e-13 vs F78@1e-13:", wp.final_error(name, eq, r2, refs[name]))
for expo in (0.9, 0.95):
    cm.ERK8_TOL_EXPONENT = expo
    for name, eq, t_end in ms:
        for rtol in (1e-6, 1e-9):
            r, wall, note = wp.timed(eq, t_end, rtol, 3, 10, engine="compiled", method="ERK8")
            e = wp.final_error(name, eq, r, refs[name])
            print(f"expo={expo} {name:12} {rtol:7.0e} err/rtol={e/rtol:8.3g} wall={wall:.4f} nfev={r.nfev}", flush=True)
