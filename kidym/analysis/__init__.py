"""Analysis beyond time histories (issue 17): equilibrium, linearisation, free vibrations,
first integrals.

* :mod:`~kidym.analysis.derivatives` — the partial derivatives of ``q̇``, ``M``, ``F``
  (and the constraint block) by the states and by parameters named as inputs, formed
  over the named quantities by the chain rule and evaluated by one generated function;
* :mod:`~kidym.analysis.statics` — ``РАСЧЕТ := СТАТИКА``: ``F(q, 0, t₀) + Gᵀλ = 0``,
  ``Φ(q) = 0`` by Newton's method on that Jacobian, the stiffness and its definiteness;
* :mod:`~kidym.analysis.linearize` — ``δẋ = A δx + B δu`` about an equilibrium or a
  steady motion, on the constraint manifold, or of the closed loop of controls held by
  programmed constraints;
* :mod:`~kidym.analysis.linear_form` — the linearised equations printed with the
  parameters as symbols (with constraints, the descriptor form with the multipliers);
* :mod:`~kidym.analysis.integrals` — first integrals found from a dictionary of
  candidates, proved where possible, monitored along runs;
* :mod:`~kidym.analysis.modes` — ``РАСЧЕТ := СВОБОДНЫЕ КОЛЕБАНИЯ``: eigenvalues,
  frequencies, damping ratios, mode shapes, and their continuation along a parameter.

None of this integrates in time, so none of it uses the compiled engine: the work is
forming derivatives (SymEngine) and small dense linear algebra (NumPy/SciPy).
"""

from kidym.analysis.linear_form import SymbolicLinearization
from kidym.analysis.linearize import Linearization, linearize
from kidym.analysis.modes import Continuation, Mode, Modes, continuation, modes
from kidym.analysis.statics import Equilibrium, equilibrium

__all__ = ["Continuation", "Equilibrium", "Linearization", "Mode", "Modes",
           "SymbolicLinearization", "continuation", "equilibrium", "linearize", "modes"]
