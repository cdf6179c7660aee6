"""kidym — analytical equations of motion of multibody systems, solved fast.

A compact model (KiDyM language, ``.kdm``) in; equations of motion formed by
structural matrices and the d'Alembert–Lagrange principle, kept compact as named
intermediate quantities; the Cauchy form integrated.

Examples
--------
>>> import kidym
>>> model = kidym.parse('''
...     m = 1; l = 1;
...     Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
...     GRAVITY := 0, -g, 0;
... ''')
>>> eq = kidym.derive(model)
>>> eq.n_w
1
"""

from typing import TYPE_CHECKING

# The public names are imported on first use (PEP 562): ``import kidym`` and ``kidym
# --help`` load no SymPy, SymEngine, SciPy, matplotlib or pint — a command loads what
# it needs (docs/cli.md, "Start-up time"; tests/test_imports.py).
_PUBLIC = {
    # the defining modules, not the package: importing kidym.analysis.modes binds the
    # submodule as the package's attribute `modes`, which would hide the function
    **dict.fromkeys(["Continuation", "Modes", "continuation", "modes"], "kidym.analysis.modes"),
    **dict.fromkeys(["Equilibrium", "equilibrium"], "kidym.analysis.statics"),
    **dict.fromkeys(["Linearization", "linearize"], "kidym.analysis.linearize"),
    "first_integrals": "kidym.analysis.integrals",
    "integral_drift": "kidym.analysis.integrals",
    "Equations": "kidym.eom.equations",
    **dict.fromkeys(["CasadiModel", "to_casadi", "write_casadi"], "kidym.export.casadi"),
    "derive": "kidym.eom.equations",
    "CompileError": "kidym.errors",
    "DerivationError": "kidym.errors",
    "Diagnostic": "kidym.errors",
    "ModelError": "kidym.errors",
    "ParseError": "kidym.errors",
    "RunInterrupted": "kidym.errors",
    "SimulationError": "kidym.errors",
    "Span": "kidym.errors",
    **dict.fromkeys(["CLibrary", "c_library", "write_c_library"], "kidym.export.clib"),
    **dict.fromkeys(["FMU", "fmu_archive", "write_fmu"], "kidym.export.fmu"),
    "load": "kidym.lang",
    "parse": "kidym.lang",
    "ImportedRobot": "kidym.robots",
    "import_robot": "kidym.robots",
    "Body": "kidym.model.model",
    "Element": "kidym.model.model",
    "Inertia": "kidym.model.model",
    "Model": "kidym.model.model",
    "Parameter": "kidym.model.model",
    "Transform": "kidym.model.model",
    "simulate_batch": "kidym.simulation.batch",
    "CompiledSystem": "kidym.simulation.compiled",
    "Event": "kidym.simulation.events",
    "InputTable": "kidym.simulation.inputs",
    "Result": "kidym.simulation.result",
    "simulate": "kidym.simulation.api",
    "Study": "kidym.study.design",
    "SweepResult": "kidym.study.sweep",
    "sweep": "kidym.study.sweep",
}

if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from kidym.analysis import (
        Continuation,
        Equilibrium,
        Linearization,
        Modes,
        continuation,
        equilibrium,
        linearize,
        modes,
    )
    from kidym.analysis.integrals import first_integrals, integral_drift
    from kidym.eom.equations import Equations, derive
    from kidym.errors import (
        CompileError,
        DerivationError,
        Diagnostic,
        ModelError,
        ParseError,
        RunInterrupted,
        SimulationError,
        Span,
    )
    from kidym.export.casadi import CasadiModel, to_casadi, write_casadi
    from kidym.export.clib import CLibrary, c_library, write_c_library
    from kidym.export.fmu import FMU, fmu_archive, write_fmu
    from kidym.lang import load, parse
    from kidym.model.model import Body, Element, Inertia, Model, Parameter, Transform
    from kidym.robots import ImportedRobot, import_robot
    from kidym.simulation.api import simulate
    from kidym.simulation.batch import simulate_batch
    from kidym.simulation.compiled import CompiledSystem
    from kidym.simulation.events import Event
    from kidym.simulation.inputs import InputTable
    from kidym.simulation.result import Result
    from kidym.study.design import Study
    from kidym.study.sweep import SweepResult, sweep


def __getattr__(name: str):
    """Import a public name of kidym on first use (module ``__getattr__``, PEP 562)."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'kidym' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})



__version__ = "0.1.0"

__all__ = [
    "FMU",
    "Body",
    "CLibrary",
    "CasadiModel",
    "CompileError",
    "CompiledSystem",
    "Continuation",
    "DerivationError",
    "Diagnostic",
    "Element",
    "Equations",
    "Equilibrium",
    "Event",
    "ImportedRobot",
    "Inertia",
    "InputTable",
    "Linearization",
    "Model",
    "ModelError",
    "Modes",
    "Parameter",
    "ParseError",
    "Result",
    "RunInterrupted",
    "SimulationError",
    "Span",
    "Study",
    "SweepResult",
    "Transform",
    "c_library",
    "continuation",
    "derive",
    "equilibrium",
    "first_integrals",
    "fmu_archive",
    "import_robot",
    "integral_drift",
    "linearize",
    "load",
    "modes",
    "parse",
    "simulate",
    "simulate_batch",
    "sweep",
    "to_casadi",
    "write_c_library",
    "write_casadi",
    "write_fmu",
]
