"""Constraints held by a virtual potential (seed 001, Andrieiev 2016).

Instead of a geometric constraint ``f(q, t) = 0`` and its multiplier, seed 001 puts a
*virtual potential* into the Lagrangian (its eq. (10)): a function of ``f`` that is
smallest on ``f = 0`` and grows steeply away from it, built from an approximation
``δ_α`` of the delta function, ``α`` setting how close the approximation is. kidym
uses, with ``α > 0``,

* polynomial (eq. (12)):   ``δ_α(f) = α / (π (1 + α² f²))``,
  so ``h(f) = 1/δ_α(f) − 1/δ_α(0) = π α f²``;
* exponential (eq. (13)):  ``δ_α(f) = α/√π · exp(−α² f²)``,
  so ``h(f) = √π/α · (exp(α² f²) − 1)``.

(The text of seed 001 available to kidym lost the formulas (12), (13); these are the
standard nascent delta functions of those two families, normalised to ``∫δ_α = 1``,
whose width ``1/α`` shrinks as ``α`` grows — the paper's third, trigonometric family
``sin(α f)/(π f)`` it rejects for its spurious extrema.)

A holonomic constraint ``f = 0`` has ``V = h(f)`` (eq. (5)); a bounding surface whose
allowed side is ``f > 0`` has ``V = ½ (1 − sign f) h(f)`` (eq. (7): zero on the
allowed side), evaluated as ``h(f⁻)`` with ``f⁻ = ½ (1 − sign f) f`` — the same
function, as ``h(0) = 0``, that never evaluates ``h`` far on the allowed side, where
``exp(α² f²)`` would overflow. The paper writes ``1/δ(f)``; ``h`` differs from it by the constant
``1/δ_α(0)`` only, which changes no force, makes ``V = 0`` on the constraint, and makes
the bounded ``V`` continuous at ``f = 0`` (``h(0) = h'(0) = 0``), so the derivative of
``sign`` — which the paper drops ("sign needs no approximation") — indeed multiplies
zero. The energy ``T + Π + V`` is then conserved by a conservative model.

Each virtual constraint acts like a force element on the structure ``f``: with
``ḟ = W̃_f w + β_f``, its generalized force is ``−W̃_fᵀ ∂V/∂f`` (the chain rule through
the named quantities, as for the elastic elements), and ``V`` joins ``Π``. Both
engines get it through ``F``.
"""

from __future__ import annotations

from dataclasses import dataclass

import symengine as se

from kidym.errors import Diagnostic, ModelError
from kidym.model.model import VirtualConstraint
from kidym.symbolic.functions import sign

Expr = se.Basic

#: Delta approximations (seed 001 eqs. (12), (13)).
APPROXIMATIONS = ("polynomial", "exponential")


def delta(approximation: str, alpha: Expr, f: Expr) -> Expr:
    """``δ_α(f)``, the approximation of the delta function (module docstring).

    Examples
    --------
    >>> import symengine as se
    >>> a, f = se.symbols("a f")
    >>> delta("polynomial", a, f)
    a/(pi*(1 + a**2*f**2))
    """
    if approximation == "polynomial":
        return alpha / (se.pi * (1 + alpha**2 * f**2))
    if approximation == "exponential":
        return alpha / se.sqrt(se.pi) * se.exp(-alpha**2 * f**2)
    raise ValueError(f"approximation must be one of {APPROXIMATIONS}, got {approximation!r}")


def well(approximation: str, alpha: Expr, f: Expr) -> Expr:
    """``h(f) = 1/δ_α(f) − 1/δ_α(0)``: the potential of ``f = 0`` (zero on it).

    Examples
    --------
    >>> import symengine as se
    >>> a, f = se.symbols("a f")
    >>> well("polynomial", a, f)
    pi*a*f**2
    """
    if approximation == "polynomial":
        return se.pi * alpha * f**2
    if approximation == "exponential":
        return se.sqrt(se.pi) / alpha * (se.exp(alpha**2 * f**2) - 1)
    raise ValueError(f"approximation must be one of {APPROXIMATIONS}, got {approximation!r}")


def well_slope(approximation: str, alpha: Expr, f: Expr) -> Expr:
    """``h'(f)``: ``2 π α f`` or ``2 √π α f exp(α² f²)``."""
    if approximation == "polynomial":
        return 2 * se.pi * alpha * f
    if approximation == "exponential":
        return 2 * se.sqrt(se.pi) * alpha * f * se.exp(alpha**2 * f**2)
    raise ValueError(f"approximation must be one of {APPROXIMATIONS}, got {approximation!r}")


@dataclass(frozen=True)
class VirtualTerm:
    """What one virtual constraint adds to the equations.

    Attributes
    ----------
    structure : Expr
        ``f(q, t)`` in the graph.
    potential : Expr
        ``V`` (named), added to ``Π``.
    force : Expr
        ``−∂V/∂f`` (named): the force along the structure ``f``.
    """

    structure: Expr
    potential: Expr
    force: Expr


def _located(system, vc: VirtualConstraint, message: str) -> ModelError:
    return ModelError([Diagnostic(message, vc.span)], filename=system.model.filename,
                      source=system.model.source)


def virtual_term(system, vc: VirtualConstraint) -> VirtualTerm:
    """``V`` and the force ``−∂V/∂f`` of ``vc`` over ``system``'s graph.

    Parameters
    ----------
    system : kidym.eom.system.SystemGraph
        The kinematics the equations are formed over.
    vc : VirtualConstraint
        The constraint (``kind`` ``"equality"``: eq. (5); ``"bound"``: eq. (7)).

    Raises
    ------
    ModelError
        Located at the item: ``f`` depends on a speed (a virtual potential is a
        function of the position) or on no coordinate (it constrains nothing).
    """
    g = system.graph
    f = system.lookup(vc.name)
    deps = g.dependencies(f)
    what = "constraint" if vc.kind == "equality" else "bounding surface"
    if any(w in deps for w in system.speeds) or system.uses_accelerations([f]):
        raise _located(system, vc, f"virtual {what} `{vc.name}` depends on a speed; a virtual "
                       "potential is a function of the coordinates and time only")
    if not any(q in deps for q in system.coordinates):
        raise _located(system, vc, f"virtual {what} `{vc.name}` depends on no coordinate, so "
                       "it constrains nothing (it is a constant or a function of time only)")
    alpha = system.resolve(vc.alpha)
    if vc.kind == "bound":
        # ½ (1 − sign f) h(f) = h(f⁻) with f⁻ = ½ (1 − sign f) f, as h(0) = 0; the second
        # form never evaluates h far on the allowed side (exp(α² f²) would overflow)
        gate = (1 - sign(f)) / 2
        below = g.define(f"{vc.name}⁻", gate * f)
        h = well(vc.approximation, alpha, below)
        slope = gate * well_slope(vc.approximation, alpha, below)
    else:
        h = well(vc.approximation, alpha, f)
        slope = well_slope(vc.approximation, alpha, f)
    return VirtualTerm(structure=f, potential=g.define(f"V{vc.name}", h),
                       force=g.define(f"P{vc.name}", -slope))
