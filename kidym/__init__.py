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
    SimulationError,
    Span,
)
from kidym.lang import load, parse
from kidym.model.model import Body, Element, Inertia, Model, Parameter, Transform
from kidym.simulate.batch import simulate_batch
from kidym.simulate.compiled import CompiledSystem
from kidym.simulate.events import Event
from kidym.simulate.result import Result
from kidym.simulate.simulate import simulate

__version__ = "0.1.0"

__all__ = [
    "Body",
    "CompileError",
    "CompiledSystem",
    "Continuation",
    "DerivationError",
    "Diagnostic",
    "Element",
    "Equations",
    "Equilibrium",
    "Event",
    "Inertia",
    "Linearization",
    "Model",
    "ModelError",
    "Modes",
    "Parameter",
    "ParseError",
    "Result",
    "SimulationError",
    "Span",
    "Transform",
    "continuation",
    "derive",
    "equilibrium",
    "first_integrals",
    "integral_drift",
    "linearize",
    "load",
    "modes",
    "parse",
    "simulate",
    "simulate_batch",
]
