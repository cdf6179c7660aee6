"""The validated, immutable mechanical model (SPEC §2) and its parts.

:class:`Model` is what :func:`kidym.lang.parse` / :func:`kidym.lang.load` (or the
Python API) produce and every later stage consumes. The builder that turns parsed
statements into a model lives in :mod:`kidym.model.build`.
"""

from kidym.model.model import (
    ELEMENT_KINDS,
    TIME,
    Body,
    Coincidence,
    Constraint,
    Definition,
    Element,
    Inertia,
    Model,
    ModelEvent,
    Parameter,
    Plot,
    ProgrammedConstraint,
    QuaternionInstruction,
    Rolling,
    Transform,
    VelocityDefinition,
    VirtualConstraint,
)

__all__ = [
    "ELEMENT_KINDS",
    "TIME",
    "Body",
    "Coincidence",
    "Constraint",
    "Definition",
    "Element",
    "Inertia",
    "Model",
    "ModelEvent",
    "Parameter",
    "Plot",
    "ProgrammedConstraint",
    "QuaternionInstruction",
    "Rolling",
    "Transform",
    "VelocityDefinition",
    "VirtualConstraint",
]
