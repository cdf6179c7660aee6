"""How close FMPy's runs of a kidym FMU come to kidym's own runs (docs/export.md).

A damped pendulum (not chaotic) exported as an FMU. Model Exchange: integrated by FMPy's
CVode (BDF, atol = rtol × the states' nominal 1) and by kidym's compiled engine with the
same method and the same tolerances handed to CVODE (kidym hands CVODE its rtol ×
``BDF_TOL_FACTOR``, so it is asked for rtol / ``BDF_TOL_FACTOR``). Co-Simulation: the
FMU's own fmi3DoStep (Dormand–Prince 5(4)) at the tolerance FMPy hands it, outputs
every 0.1 s. All against kidym's ERK8 at rtol 1e-13; the largest error of ``phi`` over
the 4 s. Run:
``python3 examples/export/cvode_accuracy.py``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
from fmpy import simulate_fmu

import kidym
from kidym.export.fmu import write_fmu
from kidym.simulation.compiled_methods import BDF_TOL_FACTOR

DAMPED_PENDULUM = """
m = 1; l = 1; g = 9.81; b = 0.4;
Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
D1.ωZRod = -b*ωZRod;
GRAVITY := 0, -g, 0;
INITIAL := phi(0.3), phi't(0);
TIME := t(0, 4);
"""


def main() -> int:
    eq = kidym.derive(kidym.parse(DAMPED_PENDULUM))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "damped.fmu"
        write_fmu(eq, path)
        print(f"{'rtol':>8} {'ME - exact':>11} {'kidym BDF - exact':>18} {'ME - kidym BDF':>15}"
              f" {'CS - exact':>11}")
        for rtol in (1e-6, 1e-8, 1e-10):
            res = simulate_fmu(str(path), fmi_type="ModelExchange",
                               solver="CVode", relative_tolerance=rtol,
                               output_interval=0.01, output=["phi"])
            t = res["time"]
            asked = rtol / BDF_TOL_FACTOR   # (CVODE is handed rtol, as FMPy's)
            own = kidym.simulate(eq, t_eval=t, engine="compiled", method="BDF", rtol=asked,
                                 atol=asked)
            exact = kidym.simulate(eq, t_eval=t, rtol=1e-13, atol=1e-15)
            cs = simulate_fmu(str(path), fmi_type="CoSimulation", relative_tolerance=rtol,
                              output_interval=0.1, output=["phi"])
            cs_exact = kidym.simulate(eq, t_eval=cs["time"], rtol=1e-13, atol=1e-15)
            err = [np.max(np.abs(a - b)) for a, b in ((res["phi"], exact["phi"]),
                                                      (own["phi"], exact["phi"]),
                                                      (res["phi"], own["phi"]),
                                                      (cs["phi"], cs_exact["phi"]))]
            print(f"{rtol:8.0e} {err[0]:11.1e} {err[1]:18.1e} {err[2]:15.1e} {err[3]:11.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
