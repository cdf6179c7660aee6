"""Where every body is at every output time — from the model's own kinematics.

Nothing here re-implements kinematics: the model is derived once more with every
body's generated quantities as outputs (centre of mass ``XC, YC, ZC``, frame origin
``XO, YO, ZO``, rotation matrix ``S11 … S33``, see :mod:`kidym.kinematics.names`),
and the reference NumPy evaluation computes them at the recorded states. The
plots (trajectories of the centres of mass) and the 3-D animation use these.

A body is drawn as the uniform solid with its mass and central moments of
inertia (:func:`shape_of`): a sphere when the three moments are equal
(``J = 2/5 m r²``), a cylinder or disc when two are (``J_axis = m r²/2``,
``J_⊥ = m (3r² + L²)/12``), a rod when the third is 0, otherwise a box
(``J_x = m (b² + c²)/12`` …); a point mass as a small sphere.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import symengine as se

from kidym.eom.equations import derive
from kidym.kinematics import names
from kidym.model.mesh import Mesh
from kidym.model.model import Body, Model
from kidym.simulation.result import Result

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
    kind : {"box", "sphere", "cylinder", "capsule", "mesh"}
        The solid.
    size : tuple of float
        Box: edges along the central x, y, z axes. Sphere: ``(d, d, d)``.
        Cylinder, capsule: ``(d, h, axis)`` with ``axis`` 0, 1 or 2 (a capsule's ``h``
        is its overall length).
    rule : str
        Which rule of :func:`shape_of` chose it: ``"sphere"``, ``"point mass"``,
        ``"cylinder"``, ``"thin disc"``, ``"rod"``, ``"planar rod"``, ``"box"``,
        ``"unknown inertia"``; ``"declared"`` (``ФОРМЫ``), ``"rolling"`` (the ball or
        disc of ``КАЧЕНИЕ``).
    mesh : Mesh or None
        A mesh (kind ``"mesh"``, ``ФОРМЫ``): its triangles in the *body* frame, not the
        central one; ``size`` is then its bounding box's edges, scaled.
    scale : float
        A mesh's coordinates are multiplied by this.
    file : str
        A mesh's file as the model names it.
    """

    kind: str
    size: tuple[float, float, float]
    rule: str = ""
    mesh: Mesh | None = None
    scale: float = 1.0
    file: str = ""


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
    surfaces : tuple of Surface
        The surfaces to draw (rolled on, or declared by ``СЦЕНА``).
    """

    t: np.ndarray
    bodies: tuple[str, ...]
    centre: np.ndarray
    origin: np.ndarray
    rotation: np.ndarray
    central: np.ndarray
    shapes: tuple[Shape, ...]
    up: int
    surfaces: tuple[Surface, ...] = ()

    def colors(self) -> list[str]:
        """One colour per body (matplotlib's tab10, tab20 beyond ten bodies)."""
        palette = _PALETTE if len(self.bodies) <= len(_PALETTE) else _PALETTE20
        return [palette[k % len(palette)] for k in range(len(self.bodies))]


def pose_names(body: str) -> list[str]:
    """The generated names recorded for ``body``: centre, origin, rotation matrix."""
    return ([p + body for p in names.CENTRE] + [p + body for p in names.ORIGIN]
            + [p + body for p in names.ROTATION])


def numeric_value(expr, model: Model, values: dict[str, float]) -> float | None:
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
        a = numeric_value(tr.args[0], model, values)
        if a is None:
            continue
        c, s = math.cos(a), math.sin(a)
        R = {"x": [[1, 0, 0], [0, c, -s], [0, s, c]], "y": [[c, 0, s], [0, 1, 0], [-s, 0, c]],
             "z": [[c, -s, 0], [s, c, 0], [0, 0, 1]]}[tr.axis]
        C = C @ np.array(R)
    return C


#: Drawn thickness of a body that has none (a disc whose moments give a zero length, a
#: rod, a plate), as a share of its largest size.
THIN = 0.04
#: Diameter of a point mass (every moment 0) or of a body whose inertia has no value, as
#: a share of the model's size (the largest extent of the centres' and origins' paths).
POINT = 0.05


def shape_of(body: Body, model: Model, values: dict[str, float], size: float) -> Shape:
    """The uniform solid with ``body``'s mass and central moments.

    Parameters
    ----------
    body : Body
    model : Model
    values : dict of str to float
        Parameter values.
    size : float
        The model's size (for point masses and bodies of unknown inertia).

    Returns
    -------
    Shape
        By these rules (``J`` the central moments, ``m`` the mass):

        * three equal moments: the solid sphere, ``J = 2/5 m r²``;
        * every moment 0: a point mass, a sphere of diameter ``POINT·size``;
        * two equal moments ``J_t`` and the third ``J_a`` about the axis: the solid
          cylinder, ``J_a = m r²/2``, ``J_t = m (3r² + L²)/12``, so ``r = √(2 J_a/m)``,
          ``L = √(12 J_t/m − 3 r²)``; ``J_a = 0`` is a rod of length ``√(12 J_t/m)``
          and ``L = 0`` (``J_t = J_a/2``) a thin disc, each drawn ``THIN`` of its length
          or diameter thick;
        * otherwise the box of equal inertia, edges ``a_x = √(6 (J_y + J_z − J_x)/m)`` …,
          a zero edge drawn ``THIN`` of the longest (a plate, a bar);
        * a mass or moment that is not a number ≥ 0: a sphere of diameter ``POINT·size``.
    """
    inertia = body.inertia
    m = numeric_value(inertia.mass, model, values)
    J = [numeric_value(x, model, values) for x in (inertia.jx, inertia.jy, inertia.jz)]
    dot = POINT * size
    if m is None or m <= 0 or any(j is None or j < 0 for j in J):
        return Shape("sphere", (dot, dot, dot), "unknown inertia")
    scale = max(J)
    tol = 1e-9 * scale
    if scale <= 1e-12 * m * size ** 2:
        return Shape("sphere", (dot, dot, dot), "point mass")
    planar = [k for k in range(3) if J[k] > tol]
    if len(planar) == 1:   # `m, Jz`: a body of the plane, drawn as the rod of that moment
        axis = _rod_axis(body, model, values, planar[0])
        length = math.sqrt(12 * J[planar[0]] / m)
        return Shape("cylinder", (THIN * length, length, float(axis)), "planar rod")
    if all(abs(j - J[0]) <= tol for j in J):
        d = 2 * math.sqrt(2.5 * J[0] / m)
        return Shape("sphere", (d, d, d), "sphere")
    for axis in range(3):
        jt = [J[k] for k in range(3) if k != axis]
        if abs(jt[0] - jt[1]) > tol:
            continue
        ja, jt = J[axis], (jt[0] + jt[1]) / 2
        if ja <= tol:
            length = math.sqrt(12 * jt / m)
            return Shape("cylinder", (THIN * length, length, float(axis)), "rod")
        r2 = 2 * ja / m
        l2 = 12 * jt / m - 3 * r2
        if l2 >= -1e-9 * r2:
            d, length = 2 * math.sqrt(r2), math.sqrt(max(l2, 0.0))
            if length < THIN * d:
                return Shape("cylinder", (d, THIN * d, float(axis)), "thin disc")
            return Shape("cylinder", (d, length, float(axis)), "cylinder")
    edges = [6 * (J[(k + 1) % 3] + J[(k + 2) % 3] - J[k]) / m for k in range(3)]
    edges = [math.sqrt(e) if e > 0 else 0.0 for e in edges]
    longest = max(edges)
    return Shape("box", tuple(max(e, THIN * longest) for e in edges), "box")


def _offset(transforms, model: Model, values: dict[str, float]) -> np.ndarray:
    """The constant shifts of a chain of transforms, summed (turns ignored)."""
    out = np.zeros(3)
    for tr in transforms:
        if tr.kind == "S" and tr.axis in ("x", "y", "z") and len(tr.args) == 1:
            v = numeric_value(tr.args[0], model, values)
            if v is not None:
                out["xyz".index(tr.axis)] += v
    return out


def _rod_axis(body: Body, model: Model, values: dict[str, float], normal: int) -> int:
    """The axis of the plane normal to ``normal`` along which a planar body is drawn:
    toward its joint (the shift of its centre from the body frame, ``Sy(-l/2)``), else
    toward the joint of its first child (``Rod~Crank | Sx(r), …``), else the plane's
    first axis."""
    plane = [k for k in range(3) if k != normal]
    for vec in (_offset(body.central, model, values),
                *(_offset(c.transforms[:1], model, values)
                  for c in model.bodies if c.base == body.name)):
        if any(abs(vec[k]) > 0 for k in plane):
            return max(plane, key=lambda k: abs(vec[k]))
    return plane[0]


def declared_shape(body: Body, model: Model, values: dict[str, float]) -> Shape | None:
    """The solid ``ФОРМЫ`` declares for ``body`` (sizes evaluated; a mesh with its scale,
    sized by its bounding box), else the ball or disc
    it rolls as (``КАЧЕНИЕ``: diameter ``2r``, a disc ``THIN`` of it thick about its
    axis), else ``None``.

    Raises
    ------
    ValueError
        A declared size that is not a positive number.
    """
    for s in model.shapes:
        if s.body != body.name:
            continue
        sizes = [numeric_value(x, model, values) for x in s.sizes]
        if any(v is None or not v > 0 for v in sizes):
            raise ValueError(f"the display shape of body `{body.name}` needs positive sizes; "
                             f"got {', '.join(map(str, s.sizes))} = {sizes}")
        if s.kind == "mesh":
            scale = sizes[0]
            return Shape("mesh", tuple(scale * e for e in s.mesh.extent()), "declared",
                         mesh=s.mesh, scale=scale, file=s.file)
        if s.kind == "box":
            return Shape("box", tuple(sizes), "declared")
        if s.kind == "sphere":
            return Shape("sphere", (sizes[0],) * 3, "declared")
        return Shape(s.kind, (sizes[0], sizes[1], float(s.axis)), "declared")
    for r in model.rolling:
        if r.body != body.name:
            continue
        radius = numeric_value(r.radius, model, values)
        if radius is None or radius <= 0:
            return None
        d = 2 * radius
        if r.shape == "disc":
            axis = "xyz".index(r.axis) if r.axis in ("x", "y", "z") else 1
            return Shape("cylinder", (d, THIN * d, float(axis)), "rolling")
        return Shape("sphere", (d, d, d), "rolling")
    return None


def _series(expr, model: Model, values: dict[str, float], t: np.ndarray) -> np.ndarray:
    """``expr``, a formula of parameters and ``t``, at the times ``t``."""
    e = se.sympify(expr)
    time = se.Symbol("t")
    for _ in range(8):
        free = e.free_symbols - {time}
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
                raise ValueError(f"`{expr}` of the scene has no value for `{name}`")
        e = e.xreplace(subs)
    if time not in e.free_symbols:
        return np.full(t.shape, float(e))
    f = se.Lambdify([time], [e])
    return np.array([float(np.asarray(f([tk])).ravel()[0]) for tk in t])


@dataclass(frozen=True)
class Surface:
    """A surface the viewer draws (:mod:`kidym.model.scene`), evaluated at the times.

    Attributes
    ----------
    kind : {"plane", "sphere_inside", "sphere_outside"}
    height : ndarray, shape (n_t,)
        Plane ``z = height`` (zeros for a sphere).
    radius : float
        Sphere radius (0 for a plane).
    centre : ndarray, shape (n_t, 3)
        Sphere centre (zeros for a plane).
    source : str
        ``"SCENE"`` or the body rolling on it.
    """

    kind: str
    height: np.ndarray
    radius: float
    centre: np.ndarray
    source: str


def surfaces(model: Model, values: dict[str, float], t: np.ndarray) -> tuple[Surface, ...]:
    """The surfaces ``model`` implies or declares (:func:`kidym.model.scene.implied_surfaces`)
    at the times ``t``."""
    from kidym.model.scene import implied_surfaces

    out = []
    for s in implied_surfaces(model):
        if s.kind == "plane":
            out.append(Surface(s.kind, _series(s.height, model, values, t), 0.0,
                               np.zeros((t.size, 3)), s.source))
        else:
            centre = np.stack([_series(c, model, values, t) for c in s.centre], axis=1)
            radius = float(_series(s.radius, model, values, t[:1])[0])
            out.append(Surface(s.kind, np.zeros(t.size), radius, centre, s.source))
    return tuple(out)


def body_poses(model: Model, result: Result, *, times: np.ndarray | None = None) -> Poses:
    """Evaluate every body's centre, origin and rotation at the times of ``result``.

    Parameters
    ----------
    model : Model
        The model that produced ``result``.
    result : Result
        A simulated trajectory (its ``parameters`` are used).
    times : ndarray, shape (n_t,), optional
        The times at which the model's time-dependent terms are evaluated (default:
        ``result.t``; a mode shape's animation holds them at the operating point's).

    Returns
    -------
    Poses
    """
    from kidym.simulation.layout import parameter_vector
    from kidym.simulation.numpy_engine import generate_python

    bodies = tuple(b.name for b in model.bodies)
    wanted = [n for b in bodies for n in pose_names(b)]
    extended = dataclasses.replace(model, outputs=tuple(wanted))
    eq = derive(extended)
    named = dict(eq.outputs_named)
    # the positions alone (not the mass matrix and forces, most of a big model's code)
    positions = generate_python(eq, {n: named[n] for n in wanted}, dynamics=False).function
    state_names = tuple(str(s) for s in (*eq.coordinates, *eq.speeds))
    # positions never depend on an external input (kidym.model.inputs refuses one in a
    # position): the inputs, which the function's parameter vector ends with, are zero
    p = parameter_vector(model, {k: v for k, v in result.parameters.items()
                                 if k in model.parameter_values}).tolist()
    p += [0.0] * len(eq.inputs)
    index = {n: k for k, n in enumerate(wanted)}
    missing = [n for n in state_names if n not in result.values]
    if missing:
        raise KeyError("the results lack the state " + ", ".join(missing)
                       + f" of model `{model.name}`")
    Y = np.array([result.values[n] for n in state_names])
    n_t = result.t.size
    out = np.empty((n_t, len(wanted)))
    for k in range(n_t):
        out[k] = positions(float(result.t[k] if times is None else times[k]),
                           Y[:, k].tolist(), p)
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
    size = extent if extent > 0 else 1.0
    shapes = tuple(declared_shape(b, model, values) or shape_of(b, model, values, size)
                   for b in model.bodies)
    central = np.array([_central_turn(b, model, values) for b in model.bodies]).reshape(nb, 3, 3)
    at = result.t if times is None else np.asarray(times, float)
    return Poses(t=result.t, bodies=bodies, centre=centre, origin=origin, rotation=rotation,
                 central=central, shapes=shapes, up=up_axis(model, values),
                 surfaces=surfaces(model, values, at))


def up_axis(model: Model, values: dict[str, float] | None = None) -> int:
    """The vertical axis: the one gravity mostly points against; ``z`` (2) without gravity."""
    if model.gravity is None:
        return 2
    vals = values if values is not None else model.parameter_values
    g = [numeric_value(x, model, vals) or 0.0 for x in model.gravity]
    if not any(g):
        return 2
    return int(np.argmax(np.abs(g)))
