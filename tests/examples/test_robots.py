"""examples/robots: the hanging arm imported from URDF, linearised, against Pinocchio.

About the hanging rest (all joints 0) the linearisation is ``δq̈ = −M⁻¹ K δq`` with
``K = ∂g/∂q`` the derivative of the generalized gravity: Pinocchio's
``computeGeneralizedGravityDerivatives`` and ``crba`` give both independently.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("yourdfpy", reason="the robots extra: pip install 'kidym[robots]'")

import kidym

ARM = Path(__file__).resolve().parents[2] / "examples" / "robots" / "arm.urdf"


def test_hanging_arm_linearisation_equals_pinocchio():
    pin = pytest.importorskip("pinocchio", reason="the robots-test extra (Pinocchio)")
    robot = kidym.import_robot(ARM)
    eq = kidym.derive(kidym.parse(robot.text))
    lin = kidym.linearize(eq)
    n = eq.n_w
    assert lin.states[:n] == ("waist", "shoulder", "elbow")
    model = pin.buildModelFromUrdf(str(ARM))
    data = model.createData()
    q = pin.neutral(model)
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    K = pin.computeGeneralizedGravityDerivatives(model, data, q)
    order = [model.joints[model.getJointId(j)].idx_v for j in robot.coordinates]
    ref = -np.linalg.solve(M, K)[np.ix_(order, order)]
    np.testing.assert_allclose(lin.A[n:, :n], ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_allclose(lin.A[:n, n:], np.eye(n), atol=1e-15)
    # the two pendulum frequencies of the README, and the free waist (0)
    freq = np.sort(np.sqrt(np.abs(np.linalg.eigvals(ref))))
    assert freq[0] < 1e-6 and freq[1:] == pytest.approx([4.3326, 8.6228], abs=1e-4)
