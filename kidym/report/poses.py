"""Where every body is at every output time — from the model's own kinematics.

Nothing here re-implements kinematics: the model is derived once more with every
body's generated quantities as outputs (centre of mass ``XC, YC, ZC``, frame origin
``XO, YO, ZO``, rotation matrix ``S11 … S33``, see :mod:`kidym.kinematics.names`),
and the reference NumPy evaluation computes them at the recorded states. The
plots (trajectories of the centres of mass) and the 3-D animation use these.

A body is drawn as the uniform solid with its mass and central moments of
inertia: a sphere when the three moments are equal (``J = 2/5 m r²``), a cylinder
when two are (``J_axis = m r²/2``, ``J_⊥ = m (3r² + h²)/12``), otherwise a box
(``J_x = m (b² + c²)/12`` …); thin where a moment is zero (a rod).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import symengine as se

from kidym.eom.equations import derive
from kidym.kinematics import names
from kidym.model.model import Body, Model
from kidym.simulate.result import Result

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")

_PALETTE20 = ("#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728",
              "#ff9896", "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2",
              "#7f7f7f", "#c7c7c7", "#bcbd22", "#dbdb8d", "#17becf", "#9edae5")


@dataclass(frozen=True)
class Shape:
    """The solid a body is drawn as (central frame).

    Attributes
    ----------
    kind : {"box", "sphere", "cylinder"}
        The solid.
    size : tuple of float
        Box: edges along the central x, y, z axes. Sphere: ``(d, d, d)``.
        Cylinder: ``(d, h, axis)`` with ``axis`` 0, 1 or 2.
    """

    kind: str
    size: tuple[float, float, float]


@dataclass(frozen=True)
class Poses:
    """Body positions and orientations over time.

    Attributes
    ----------
    t : ndarray, shape (n_t,)
        Times.
    bodies : tuple of str
        Body names in model order.
    centre : ndarray, shape (n_b, n_t, 3)
        Centres of mass in the fixed frame.
    origin : ndarray, shape (n_b, n_t, 3)
        Body-frame origins in the fixed frame.
    rotation : ndarray, shape (n_b, n_t, 3, 3)
        ``S`` (fixed ← body frame).
    central : ndarray, shape (n_b, 3, 3)
        Constant turn from the body frame to the central frame (identity unless the
        record's third section turns by a constant angle).
    shapes : tuple of Shape
        What each body is drawn as.
    up : int
        The vertical axis (0, 1, 2): opposite to gravity, ``z`` without gravity.
    """

    t: np.ndarray
    bodies: tuple[str, ...]
    centre: np.ndarray
    origin: np.ndarray
    rotation: np.ndarray
    central: np.ndarray
    shapes: tuple[Shape, ...]
    up: int

    def colors(self) -> list[str]:
        """One colour per body (matplotlib's tab10, tab20 beyond ten bodies)."""
        palette = _PALETTE if len(self.bodies) <= len(_PALETTE) else _PALETTE20
        return [palette[k % len(palette)] for k in range(len(self.bodies))]


def pose_names(body: str) -> list[str]:
    """The generated names recorded for ``body``: centre, origin, rotation matrix."""
    return ([p + body for p in names.CENTRE] + [p + body for p in names.ORIGIN]
            + [p + body for p in names.ROTATION])


def _numeric(expr, model: Model, values: dict[str, float]) -> float | None:
    e = se.sympify(expr)
    for _ in range(8):
        free = e.free_symbols
        if not free:
            break
        subs = {}
        for s in free:
            name = str(s)
            if name in values:
                subs[s] = values[name]
            elif (d := model.definition(name)) is not None:
                subs[s] = d.expr
            else:
                return None
        e = e.xreplace(subs)
    try:
        return float(e)
    except (TypeError, ValueError, RuntimeError):
        return None


def _central_turn(body: Body, model: Model, values: dict[str, float]) -> np.ndarray:
    C = np.eye(3)
    for tr in body.central:
        if tr.kind != "R":
            continue
        a = _numeric(tr.args[0], model, values)
        if a is None:
            continue
        c, s = math.cos(a), math.sin(a)
        R = {"x": [[1, 0, 0], [0, c, -s], [0, s, c]], "y": [[c, 0, s], [0, 1, 0], [-s, 0, c]],
             "z": [[c, -s, 0], [s, c, 0], [0, 0, 1]]}[tr.axis]
        C = C @ np.array(R)
    return C


def shape_of(body: Body, model: Model, values: dict[str, float], default: float) -> Shape:
    """The uniform solid with ``body``'s mass and central moments (see module doc)."""
    inertia = body.inertia
    m = _numeric(inertia.mass, model, values)
    J = [_numeric(x, model, values) for x in (inertia.jx, inertia.jy, inertia.jz)]
    if m is None or m <= 0 or any(j is None or j < 0 for j in J):
        return Shape("sphere", (default, default, default))
    jx = J[0]
    thin = 0.08
    scale = max(J)
    if scale <= 0:
        return Shape("sphere", (default / 2,) * 3)
    if all(abs(j - jx) <= 1e-9 * scale for j in J):
        d = 2 * math.sqrt(2.5 * jx / m)
        return Shape("sphere", (d, d, d))
    for axis in range(3):
        others = [J[k] for k in range(3) if k != axis]
        if abs(others[0] - others[1]) <= 1e-9 * scale and J[axis] > 0:
            r2 = 2 * J[axis] / m
            h2 = 12 * others[0] / m - 3 * r2
            if h2 > 0:
                return Shape("cylinder", (2 * math.sqrt(r2), math.sqrt(h2), float(axis)))
    edges = [6 * (J[(k + 1) % 3] + J[(k + 2) % 3] - J[k]) / m for k in range(3)]
    edges = [math.sqrt(e) if e > 0 else 0.0 for e in edges]
    longest = max(edges) or default
    return Shape("box", tuple(max(e, thin * longest) for e in edges))


def body_poses(model: Model, result: Result) -> Poses:
    """Evaluate every body's centre, origin and rotation at the times of ``result``.

    Parameters
    ----------
    model : Model
        The model that produced ``result``.
    result : Result
        A simulated trajectory (its ``parameters`` are used).

    Returns
    -------
    Poses
    """
    from kidym.simulate.simulate import NumpySystem

    bodies = tuple(b.name for b in model.bodies)
    wanted = [n for b in bodies for n in pose_names(b)]
    extended = dataclasses.replace(model, outputs=tuple(wanted))
    system = NumpySystem.build(derive(extended))
    p = system.parameter_vector({k: v for k, v in result.parameters.items()
                                 if k in model.parameter_values})
    index = {n: k for k, n in enumerate(system.output_names)}
    missing = [n for n in system.state_names if n not in result.values]
    if missing:
        raise KeyError("the results lack the state " + ", ".join(missing)
                       + f" of model `{model.name}`")
    Y = np.array([result.values[n] for n in system.state_names])
    n_t = result.t.size
    out = np.empty((n_t, len(system.output_names)))
    for k in range(n_t):
        out[k] = system.outputs(result.t[k], Y[:, k], p)
    nb = len(bodies)
    centre = np.empty((nb, n_t, 3))
    origin = np.empty((nb, n_t, 3))
    rotation = np.empty((nb, n_t, 3, 3))
    for b, name in enumerate(bodies):
        cols = [index[n] for n in pose_names(name)]
        centre[b] = out[:, cols[0:3]]
        origin[b] = out[:, cols[3:6]]
        rotation[b] = out[:, cols[6:15]].reshape(n_t, 3, 3)
    values = dict(model.parameter_values)
    values.update({k: float(v) for k, v in result.parameters.items()})
    pts = np.concatenate([centre.reshape(-1, 3), origin.reshape(-1, 3)]) if nb else np.zeros((1, 3))
    extent = float(np.ptp(pts, axis=0).max()) if pts.size else 0.0
    default = 0.1 * extent if extent > 0 else 0.1
    shapes = tuple(shape_of(b, model, values, default) for b in model.bodies)
    central = np.array([_central_turn(b, model, values) for b in model.bodies]).reshape(nb, 3, 3)
    return Poses(t=result.t, bodies=bodies, centre=centre, origin=origin, rotation=rotation,
                 central=central, shapes=shapes, up=up_axis(model, values))


def up_axis(model: Model, values: dict[str, float] | None = None) -> int:
    """The vertical axis: the one gravity mostly points against; ``z`` (2) without gravity."""
    if model.gravity is None:
        return 2
    vals = values if values is not None else model.parameter_values
    g = [_numeric(x, model, vals) or 0.0 for x in model.gravity]
    if not any(g):
        return 2
    return int(np.argmax(np.abs(g)))
