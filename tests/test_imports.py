"""What ``import kidym`` and the quick commands load (issue 18: instant commands).

Structural, not timed: each case runs in a fresh interpreter and lists the heavy
libraries present in ``sys.modules`` afterwards. The times are measured by
``benchmarks/cli.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sympy", "matplotlib", "pint", "scipy")


def loaded_after(code: str) -> list[str]:
    """The HEAVY top-level packages imported by running ``code`` in a fresh Python."""
    probe = (f"{code}\nimport sys, json\n"
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} "
             f"& {set(HEAVY)!r})))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_kidym_loads_no_heavy_library():
    assert loaded_after("import kidym") == []


def test_help_loads_no_heavy_library():
    code = ("from kidym.cli import main\n"
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(['--help'])\n    except SystemExit:\n        pass")
    assert loaded_after(code) == []


def test_version_is_the_package_metadata_and_loads_no_heavy_library():
    from importlib.metadata import version

    code = ("from kidym.cli import main\n"
            "import contextlib, io\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            "    try:\n        main(['--version'])\n    except SystemExit as e:\n"
            "        assert e.code == 0\n"
            f"assert buf.getvalue() == 'kidym {version('kidym')}\\n', buf.getvalue()")
    assert loaded_after(code) == []


def test_check_of_a_holonomic_model_loads_no_sympy_pint_scipy_matplotlib():
    code = ("from kidym.cli import main\n"
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['check', 'examples/biped/biped.kdm']) == 0")
    assert loaded_after(code) == []


def test_public_names_resolve_on_first_use():
    code = ("import kidym\n"
            "missing = [n for n in kidym.__all__ if getattr(kidym, n, None) is None]\n"
            "assert not missing, missing\n"
            "import kidym.simulation.result\n"   # the subpackage never hides the function
            "assert callable(kidym.simulate) and kidym.simulate.__module__ == "
            "'kidym.simulation.api'")
    loaded_after(code)


def test_analysis_functions_are_not_hidden_by_their_modules():
    """``kidym.continuation`` imports ``kidym.analysis.modes``, which the package binds
    as its attribute ``modes``: ``kidym.modes`` is still the function (it was the
    module, on the old code, when asked for second), in either order of imports."""
    for first in ("import kidym\nkidym.continuation, kidym.equilibrium\n"
                  "import kidym.analysis.linearize\n",
                  "import kidym.analysis.modes, kidym.analysis.linearize, "
                  "kidym.analysis.statics\nimport kidym\n"):
        loaded_after(first + "for n in ('modes', 'linearize', 'equilibrium', 'continuation'):\n"
                     "    assert callable(getattr(kidym, n)), n")


def test_a_model_with_units_still_converts_them():
    """pint is imported when a file has ``РАЗМЕРНОСТИ``, and converts as before."""
    import kidym

    model = kidym.parse("РАЗМЕРНОСТИ := m(кг), l(м), t(с);\nl = 30, см;\nm = 1;\n"
                        "Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;\n")
    assert {p.name: p.value for p in model.parameters}["l"] == pytest.approx(0.3)


def test_sympy_clash_names_are_sympys():
    """The written-out list of names ``sympify`` reads as SymPy objects is SymPy's own."""
    from sympy.abc import _clash

    from kidym.symbolic.identifiers import RESERVED, SYMPY_CLASH

    assert set(_clash) <= SYMPY_CLASH <= RESERVED


def test_a_cached_compiled_run_loads_no_scipy_sympy_matplotlib(tmp_path):
    """A compiled run integrates in C: SciPy is not imported (it was, on the old code,
    for ``solve_ivp``, the Simpson rule of the energy balance and the coefficients of
    ``ERK8``: half a second of a cached run), nor SymPy, nor matplotlib without plots."""
    code = ("import os\n"
            f"os.environ['KIDYM_CACHE_DIR'] = {str(tmp_path / 'cache')!r}\n"
            "from kidym.cli import main\n"
            "import contextlib, io\n"
            "run = ['run', 'examples/double_pendulum/double_pendulum.kdm', '--engine', "
            f"'compiled', '--no-plots', '--force', '--out', {str(tmp_path / 'out')!r}]\n"
            "with contextlib.redirect_stdout(io.StringIO()) as text:\n"
            "    assert main(run) == 0\n"
            "assert 'energy balance: max |E - E(0) - W|' in text.getvalue()\n"
            "assert 'first integral E (energy)' in text.getvalue()")
    assert loaded_after(code) == []


def test_plots_are_drawn_by_a_process_forked_before_the_run(tmp_path):
    """Where a core is idle (forced here), matplotlib is imported by the plot worker,
    never by the command's process, and the plots are the same files, byte for byte,
    as those drawn in the command's process (``--plot`` request included)."""
    runs = {}
    for idle in (True, False):
        out = tmp_path / f"out{idle}"
        code = ("import os\n"
                f"os.environ['KIDYM_CACHE_DIR'] = {str(tmp_path / 'cache')!r}\n"
                "import kidym.report.plot_worker as w\n"
                f"w.idle_core = lambda: {idle}\n"
                "from kidym.cli import main\n"
                "import contextlib, io\n"
                "run = ['run', 'examples/double_pendulum/double_pendulum.kdm', '--engine', "
                "'compiled', '--force', '--plot', 'phi2(phi1)', '--out', "
                f"{str(out)!r}]\n"
                "with contextlib.redirect_stdout(io.StringIO()):\n"
                "    assert main(run) == 0")
        runs[idle] = (loaded_after(code), out)
    assert "matplotlib" not in runs[True][0]
    assert "matplotlib" in runs[False][0]
    drawn = sorted(p.name for p in runs[False][1].glob("*.png"))
    assert len(drawn) >= 6 and any(n.startswith("plot1_") for n in drawn)
    assert sorted(p.name for p in runs[True][1].glob("*.png")) == drawn
    for name in [*drawn, "results.csv"]:
        assert (runs[True][1] / name).read_bytes() == (runs[False][1] / name).read_bytes()
