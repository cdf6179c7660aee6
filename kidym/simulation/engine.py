"""The engines that integrate a prepared run, behind one interface and one registry.

An engine is an object with the :class:`Engine` interface, registered by name in
:data:`ENGINES` (the module that defines it, imported on first use: a NumPy run
loads no compiler support, a compiled run no SciPy). :func:`kidym.simulate` looks
the engine up by name (:func:`engine_named`, whose error lists the valid names),
has it build its system, prepares the run once (:func:`kidym.simulation.spec.prepare_run`)
and has the engine integrate it; the result is assembled and finished the same way
for every engine (:mod:`kidym.simulation.finish`).

Adding an engine: a module with an object ``ENGINE`` that has this interface, and
its name and module in :data:`ENGINES`.
"""

from __future__ import annotations

import importlib
from typing import Protocol

from kidym.eom.equations import Equations
from kidym.errors import SimulationError
from kidym.model.model import Model
from kidym.simulation.result import Result
from kidym.simulation.spec import RunOptions, RunSpec

#: Engine name → the module whose ``ENGINE`` it is.
ENGINES = {
    "numpy": "kidym.simulation.simulate",
    "compiled": "kidym.simulation.compiled_runs",
}
#: What ``engine=`` accepts: the engines, and ``auto`` (the dispatcher chooses).
ENGINE_CHOICES = (*ENGINES, "auto")


class Engine(Protocol):
    """What :func:`kidym.simulate` needs of an engine."""

    #: Its name in :data:`ENGINES`.
    name: str

    def owns(self, system: object) -> bool:
        """Whether ``system`` is this engine's own (built by :meth:`system`)."""

    def check(self, options: RunOptions, system: object) -> None:
        """Raise ``ValueError`` for an option this engine cannot honour."""

    def system(self, eq: Equations, options: RunOptions) -> object:
        """The engine's system for ``eq`` (generated, compiled, cached); it evaluates
        ``dynamics(t, y, p) -> (q̇, M, F)`` at a state (the energy monitor's bound,
        :mod:`kidym.simulation.energy_monitor`)."""

    def run(self, system: object, spec: RunSpec, options: RunOptions
            ) -> tuple[Result, SimulationError | None]:
        """Integrate the prepared run: the result (partial, for a failed run) and the
        error that stopped it, or ``None``."""


def engine_error(engine: object) -> str:
    """The message for an ``engine`` that is not a name: says what was passed by its type
    (a compiled system's repr holds its whole C source) and how to pass a system."""
    got = repr(engine) if isinstance(engine, str) else f"a {type(engine).__name__}"
    if len(got) > 80:
        got = got[:77] + "..."
    hint = ""
    if not isinstance(engine, str) and hasattr(engine, "equations"):
        hint = (f" (a {type(engine).__name__} is the system itself: pass it as the first "
                "argument, `simulate(system, ...)`)")
    return f"engine must be one of {', '.join(ENGINE_CHOICES)}, got {got}{hint}"


def engine_named(name: object) -> Engine:
    """The registered engine ``name``; ``ValueError`` listing the valid names."""
    if not isinstance(name, str) or name not in ENGINES:
        raise ValueError(engine_error(name))
    return importlib.import_module(ENGINES[name]).ENGINE


def engine_of(system: object) -> Engine | None:
    """The engine whose own system ``system`` is (None for a model or equations)."""
    if isinstance(system, Equations | Model):
        return None
    for name in ENGINES:
        engine = engine_named(name)
        if engine.owns(system):
            return engine
    return None
