"""3-D animation of a run: one self-contained HTML page with three.js inlined.

Each body is drawn as the uniform solid with its mass and central moments of inertia
(:func:`kidym.report.poses.shape_of`: a sphere, a cylinder or disc, a rod, a box, a
point mass), or as the solid the model names (``ФОРМЫ``, a capsule among them) or the
ball or disc it rolls as, at its centre of mass, turned by its rotation matrix ``S`` (a
mesh file's triangles, ``ФОРМЫ``'s ``mesh``, at the body-frame origin, in the body frame:
they are embedded as base64 data in the page, :func:`mesh_data`); its frame is
shown as three axes at the body-frame origin; its centre leaves a trail. The surfaces
the model rolls on (``КАЧЕНИЕ``) or declares (``СЦЕНА``, :mod:`kidym.model.scene`) are
drawn: a plane, a bowl (the cap of a sphere about the bodies, see-through), a sphere.
Controls: play/pause, a slider to scrub through time, the playback speed, check boxes
for the frames, trails, surfaces and the grid, and the mouse (drag to orbit, wheel to
zoom). Positions and orientations are those of the model's own kinematics, evaluated at
the recorded states (:mod:`kidym.report.poses`).

Options in the address, for a fixed view (and the tests): ``#view=+x`` (the camera on
the ``+x`` side, looking along an axis: ``±x``, ``±y``, ``±z``), ``ortho=1`` (an
orthographic camera; ``data-scale`` gives its pixels per length unit), ``fit=Body``
(centre the body and fill the view with it), ``span=S`` (the height of the view in
length units), ``frame=K`` (the time step shown first),
``hide=frames,trails,surfaces,grid,labels,controls`` (``controls``: the bar too, the
view fills the window).

The page reports what it shows in attributes of ``<html>`` — ``data-bodies`` (solids
in the scene), ``data-shapes`` (the rule that drew each, :func:`shape_of`),
``data-surfaces``, ``data-layers`` (those shown), ``data-frames`` (time steps),
``data-frame`` (the one shown), ``data-visible`` (bodies whose centre is in view),
``data-canvas`` (its size in pixels), ``data-triangles`` (of the meshes drawn),
``data-renderer`` and ``data-errors`` — for tests
and scripts that drive it headless.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np

from kidym.model.mesh import Mesh
from kidym.model.model import Model
from kidym.report import assets
from kidym.report.poses import Poses, body_poses
from kidym.simulation.result import Result, write_atomically
from kidym.terminal import escape

#: Longest animation written, in frames (longer runs are sampled evenly).
MAX_FRAMES = 2000


def _round(a: np.ndarray, digits: int = 6) -> list[float]:
    return [float(f"{x:.{digits}g}") for x in np.asarray(a, float).ravel()]


def animation_data(poses: Poses, model: Model, *, max_frames: int = MAX_FRAMES,
                   title: str | None = None, loop: bool = False) -> dict:
    """The JSON the viewer reads: times, per body its shape, centre, frame and turn, and
    the surfaces to draw.

    Parameters
    ----------
    poses : Poses
    model : Model
    max_frames : int
        Longer histories are sampled evenly.
    title : str, optional
        Shown above the view (default: the model's name).
    loop : bool
        Playback starts over at the end (a mode shape) instead of stopping.
    """
    n = poses.t.size
    step = max(1, -(-n // max_frames))
    sel = np.arange(0, n, step)
    if sel[-1] != n - 1:
        sel = np.append(sel, n - 1)
    g = None
    if model.gravity is not None:
        vals = model.parameter_values
        from kidym.report.poses import numeric_value

        g = [(numeric_value(x, model, vals) or 0.0) for x in model.gravity]
    up = [0.0, 0.0, 1.0]
    if g and any(g):
        norm = float(np.linalg.norm(g))
        up = [-x / norm for x in g]
    bodies = []
    meshes: list[dict] = []
    mesh_index: dict[str, int] = {}
    for b, name in enumerate(poses.bodies):
        rot = poses.rotation[b, sel] @ poses.central[b]
        shape = poses.shapes[b]
        body = {
            "name": name, "color": poses.colors()[b], "shape": shape.kind,
            "rule": shape.rule, "size": list(shape.size),
            "centre": _round(poses.centre[b, sel]),
            "rotation": _round(rot),
            "origin": _round(poses.origin[b, sel]),
            "frame": _round(poses.rotation[b, sel]),
        }
        if shape.mesh is not None:
            if shape.mesh.digest not in mesh_index:
                mesh_index[shape.mesh.digest] = len(meshes)
                meshes.append(mesh_data(shape.mesh, shape.file))
            body.update(mesh=mesh_index[shape.mesh.digest], scale=shape.scale)
        bodies.append(body)
    surfaces = [{"kind": s.kind, "source": s.source, "radius": s.radius,
                 "height": _round(s.height[sel]), "centre": _round(s.centre[sel])}
                for s in poses.surfaces]
    # control characters of a file name (an ESC) shown, not passed on to the page
    return {"model": escape(model.name), "title": escape(title or model.name), "loop": loop,
            "t": _round(poses.t[sel], 8), "up": up, "bodies": bodies, "surfaces": surfaces,
            "meshes": meshes}


def mesh_data(mesh: Mesh, file: str) -> dict:
    """A mesh as the viewer reads it: its file's name (shown, never run), its vertices
    (float32) and triangles (uint32 vertex indices, ``""`` where every three vertices
    are one) as little-endian bytes in base64 — data that ``JSON.parse`` reads and a
    typed array views, exactly the numbers read from the file."""
    return {"file": escape(file), "triangles": mesh.n_triangles,
            "vertices": base64.b64encode(mesh.vertices).decode("ascii"),
            "faces": base64.b64encode(mesh.faces).decode("ascii")}


_VIEWER = r"""
(function () {
  var D = JSON.parse(document.getElementById('kidym-data').textContent);
  var root = document.documentElement;
  var nT = D.t.length;
  root.setAttribute('data-frames', String(nT));
  // options in the address (module docstring): #view=+x&ortho=1&fit=Body&frame=3&hide=…
  var opt = {};
  location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
    if (!kv) return;
    var i = kv.indexOf('=');
    var key = decodeURIComponent(i < 0 ? kv : kv.slice(0, i));
    opt[key] = i < 0 ? '1' : decodeURIComponent(kv.slice(i + 1));
  });
  var hidden = (opt.hide || '').split(',');
  var view = document.getElementById('view');
  if (hidden.indexOf('controls') >= 0) {
    document.getElementById('bar').style.display = 'none';
    view.style.bottom = '0';
  }
  var W = view.clientWidth || 800, H = view.clientHeight || 600;
  var renderer;
  try {
    renderer = new THREE.WebGLRenderer({antialias: true, preserveDrawingBuffer: true});
  } catch (e) {
    root.setAttribute('data-renderer', 'none');
    view.textContent = 'This browser cannot draw WebGL: ' + e.message;
    return;
  }
  root.setAttribute('data-renderer', 'webgl');
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setSize(W, H);
  renderer.setClearColor(0xf4f6f8);
  view.appendChild(renderer.domElement);
  root.setAttribute('data-canvas', W + 'x' + H);
  var scene = new THREE.Scene();
  var up = new THREE.Vector3(D.up[0], D.up[1], D.up[2]);
  scene.add(new THREE.AmbientLight(0xffffff, 0.55));
  var sun = new THREE.DirectionalLight(0xffffff, 0.75);
  scene.add(sun);
  function vec(a, k) { return new THREE.Vector3(a[3*k], a[3*k+1], a[3*k+2]); }

  var box = new THREE.Box3();
  var maxSize = 0;
  D.bodies.forEach(function (b) {
    for (var k = 0; k < nT; k++) {
      box.expandByPoint(vec(b.centre, k));
      box.expandByPoint(vec(b.origin, k));
    }
    var round = b.shape === 'cylinder' || b.shape === 'capsule';
    maxSize = Math.max(maxSize, b.size[0], b.size[1], round ? 0 : b.size[2]);
  });
  var centre = box.getCenter(new THREE.Vector3());
  var radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, maxSize, 1e-3);
  box.expandByScalar(maxSize);
  radius = Math.max(radius, box.getSize(new THREE.Vector3()).length() / 2);

  var meshes = [], frames = [], trails = [], triangles = 0;
  function bytes(text, Kind) {
    var raw = atob(text), u = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) u[i] = raw.charCodeAt(i);
    return new Kind(u.buffer);
  }
  D.bodies.forEach(function (b) {
    var geom;
    if (b.shape === 'sphere') {
      geom = new THREE.SphereGeometry(b.size[0] / 2, 48, 24);
    } else if (b.shape === 'cylinder' || b.shape === 'capsule') {
      geom = b.shape === 'cylinder'
        ? new THREE.CylinderGeometry(b.size[0] / 2, b.size[0] / 2, b.size[1], 48)
        : new THREE.CapsuleGeometry(b.size[0] / 2, Math.max(b.size[1] - b.size[0], 0), 12, 32);
      if (b.size[2] === 0) geom.rotateZ(Math.PI / 2);
      if (b.size[2] === 2) geom.rotateX(Math.PI / 2);
    } else if (b.shape === 'mesh') {
      // the triangles of a mesh file, in the body frame (the data's base64 bytes, viewed)
      var M = D.meshes[b.mesh];
      geom = new THREE.BufferGeometry();
      geom.setAttribute('position', new THREE.BufferAttribute(bytes(M.vertices, Float32Array), 3));
      if (M.faces) geom.setIndex(new THREE.BufferAttribute(bytes(M.faces, Uint32Array), 1));
      geom.scale(b.scale, b.scale, b.scale);
      geom.computeVertexNormals();
      triangles += M.triangles;
    } else {
      geom = new THREE.BoxGeometry(b.size[0], b.size[1], b.size[2]);
    }
    var mesh = new THREE.Mesh(geom, new THREE.MeshLambertMaterial(
      {color: b.color, side: b.shape === 'mesh' ? THREE.DoubleSide : THREE.FrontSide}));
    mesh.matrixAutoUpdate = false;
    mesh.name = b.name;
    scene.add(mesh);
    meshes.push(mesh);
    var axes = new THREE.AxesHelper(Math.max(maxSize * 0.8, radius * 0.08));
    axes.matrixAutoUpdate = false;
    scene.add(axes);
    frames.push(axes);
    var tg = new THREE.BufferGeometry();
    tg.setAttribute('position', new THREE.Float32BufferAttribute(b.centre, 3));
    tg.setDrawRange(0, 1);
    var trail = new THREE.Line(tg, new THREE.LineBasicMaterial({color: b.color}));
    scene.add(trail);
    trails.push(trail);
  });
  root.setAttribute('data-bodies', String(meshes.length));
  root.setAttribute('data-shapes', D.bodies.map(function (b) { return b.rule; }).join(','));
  root.setAttribute('data-triangles', String(triangles));

  // the surfaces the model rolls on or declares (СЦЕНА)
  var surfaces = [];
  var span = Math.max(radius * 3, 1e-3);
  D.surfaces.forEach(function (s) {
    var obj;
    if (s.kind === 'plane') {
      obj = new THREE.Group();
      var plane = new THREE.Mesh(new THREE.PlaneGeometry(span, span),
        new THREE.MeshLambertMaterial({color: 0xb3bfcb, side: THREE.DoubleSide,
                                       polygonOffset: true, polygonOffsetFactor: 1,
                                       polygonOffsetUnits: 1}));
      obj.add(plane);
      var lines = new THREE.GridHelper(span, 16, 0x8593a1, 0x9aa6b2);
      lines.rotateX(Math.PI / 2);
      obj.add(lines);
      obj.userData.place = function (k) { obj.position.set(centre.x, centre.y, s.height[k]); };
    } else {
      var c0 = vec(s.centre, 0), axis = new THREE.Vector3(), alpha = Math.PI;
      if (s.kind === 'sphere_inside') {
        // the bowl: the cap of the sphere about the bodies, a margin beyond where they go
        var mean = new THREE.Vector3(), n = 0;
        D.bodies.forEach(function (b) {
          for (var k = 0; k < nT; k++) { mean.add(vec(b.centre, k).sub(vec(s.centre, k))); n++; }
        });
        axis.copy(mean.divideScalar(Math.max(n, 1)));
        if (axis.length() < 1e-9 * s.radius) axis.copy(up).negate();
        axis.normalize();
        alpha = 0;
        D.bodies.forEach(function (b) {
          for (var k = 0; k < nT; k++) {
            var d = vec(b.centre, k).sub(vec(s.centre, k));
            if (d.length() > 0) alpha = Math.max(alpha, d.angleTo(axis));
          }
        });
        alpha = Math.min(Math.PI, alpha + 0.35 + maxSize / s.radius);
      }
      var geom = new THREE.SphereGeometry(s.radius, 96, 48, 0, 2 * Math.PI, 0, alpha);
      geom.rotateX(Math.PI);                       // the cap about local -y …
      var mat = s.kind === 'sphere_inside'
        ? new THREE.MeshLambertMaterial({color: 0x8fa7bf, side: THREE.DoubleSide,
                                         transparent: true, opacity: 0.45, depthWrite: false})
        : new THREE.MeshLambertMaterial({color: 0xb8c4d0});
      obj = new THREE.Mesh(geom, mat);
      obj.quaternion.setFromUnitVectors(new THREE.Vector3(0, -1, 0), axis);  // … turned to `axis`
      obj.userData.place = function (k) { obj.position.copy(vec(s.centre, k)); };
      void c0;
    }
    obj.userData.place(0);
    scene.add(obj);
    surfaces.push(obj);
  });
  root.setAttribute('data-surfaces', String(surfaces.length));

  var grid = new THREE.GridHelper(radius * 3, 12, 0xb0b0b0, 0xdddddd);
  grid.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), up);
  var low = Infinity;
  [box.min, box.max].forEach(function (p) { low = Math.min(low, p.dot(up)); });
  grid.position.copy(centre).addScaledVector(up, low - centre.dot(up));
  scene.add(grid);

  // layers: the check boxes of the bar, or `hide=` in the address
  var layers = {frames: frames, trails: trails, surfaces: surfaces, grid: [grid]};
  function showLayer(name, on) {
    layers[name].forEach(function (o) { o.visible = on; });
    var vis = Object.keys(layers).filter(function (k) {
      return layers[k].length && layers[k][0].visible; });
    root.setAttribute('data-layers', vis.join(','));
  }
  Object.keys(layers).forEach(function (name) {
    var on = hidden.indexOf(name) < 0 && !(name === 'grid' && surfaces.length);
    var box = document.getElementById('show-' + name);
    box.checked = on;
    box.disabled = !layers[name].length;
    box.onchange = function () { showLayer(name, box.checked); render(); };
    showLayer(name, on);
  });
  if (hidden.indexOf('labels') >= 0 || hidden.indexOf('controls') >= 0) {
    document.getElementById('name').style.display = 'none';
  }

  // the camera: orbiting (drag, wheel), or along an axis (#view=+x), perspective or
  // orthographic (#ortho=1); #fit=Body centres one body and fills the view with it
  var target = centre.clone(), reach = radius;
  var current = Math.max(0, Math.min(nT - 1, parseInt(opt.frame || '0', 10) || 0));
  if (opt.fit) {
    var i = D.bodies.findIndex(function (b) { return b.name === opt.fit; });
    if (i < 0) { console.error('#fit: no body `' + opt.fit + '`'); }
    else {
      target = vec(D.bodies[i].centre, current);
      var fb = D.bodies[i], fround = fb.shape === 'cylinder' || fb.shape === 'capsule';
      reach = 0.6 * Math.max(fb.size[0], fb.size[1], fround ? 0 : fb.size[2]);
    }
  }
  if (opt.span) reach = parseFloat(opt.span) / 2;
  var ortho = opt.ortho === '1';
  var camera = ortho
    ? new THREE.OrthographicCamera(-reach * W / H, reach * W / H, reach, -reach,
                                   reach / 100, reach * 1000)
    : new THREE.PerspectiveCamera(40, W / H, reach / 100, reach * 100);
  if (ortho) root.setAttribute('data-scale', String(H / (2 * reach)));
  var side = Math.abs(up.z) > 0.9 ? new THREE.Vector3(1, -1.6, 0) : new THREE.Vector3(0.8, 0, 1.6);
  side.addScaledVector(up, -side.dot(up)).normalize();
  var fixed = null;
  var m = /^([+-]?)([xyz])$/.exec(opt.view || '');
  if (m) {
    fixed = new THREE.Vector3();
    fixed.setComponent('xyz'.indexOf(m[2]), m[1] === '-' ? -1 : 1);
  } else if (opt.view) {
    console.error('#view: expected +x, -x, +y, -y, +z or -z, got `' + opt.view + '`');
  }
  var az = 0, el = 0.35, dist = reach * 3.2;
  function placeCamera() {
    var dir;
    if (fixed) {
      dir = fixed.clone();
      camera.up.copy(Math.abs(dir.dot(up)) > 0.99
        ? new THREE.Vector3(0, 1, 0).addScaledVector(dir, -dir.y).normalize() : up);
    } else {
      dir = side.clone().applyAxisAngle(up, az).multiplyScalar(Math.cos(el))
                .addScaledVector(up, Math.sin(el));
      camera.up.copy(up);
    }
    camera.position.copy(target).addScaledVector(dir, dist);
    camera.lookAt(target);
    sun.position.copy(camera.position).addScaledVector(up, reach * 2);
  }
  placeCamera();

  var slider = document.getElementById('scrub');
  slider.max = String(nT - 1);
  var label = document.getElementById('time');
  function setFrame(k) {
    current = k;
    D.bodies.forEach(function (b, i) {
      var F = b.frame, o = b.origin, r = 9 * k, p = 3 * k;
      // a mesh is given in the body frame, the other solids in the central frame
      var R = b.shape === 'mesh' ? F : b.rotation, c = b.shape === 'mesh' ? o : b.centre;
      meshes[i].matrix.set(R[r], R[r+1], R[r+2], c[p], R[r+3], R[r+4], R[r+5], c[p+1],
                           R[r+6], R[r+7], R[r+8], c[p+2], 0, 0, 0, 1);
      meshes[i].matrixWorldNeedsUpdate = true;
      frames[i].matrix.set(F[r], F[r+1], F[r+2], o[p], F[r+3], F[r+4], F[r+5], o[p+1],
                           F[r+6], F[r+7], F[r+8], o[p+2], 0, 0, 0, 1);
      frames[i].matrixWorldNeedsUpdate = true;
      trails[i].geometry.setDrawRange(0, k + 1);
    });
    surfaces.forEach(function (s) { s.userData.place(k); });
    slider.value = String(k);
    label.textContent = 't = ' + D.t[k].toPrecision(4);
    root.setAttribute('data-frame', String(k));
  }
  function render() {
    renderer.render(scene, camera);
    var inView = 0;
    meshes.forEach(function (mesh) {
      var v = new THREE.Vector3().setFromMatrixPosition(mesh.matrixWorld).project(camera);
      if (Math.abs(v.x) <= 1 && Math.abs(v.y) <= 1 && v.z < 1) inView++;
    });
    root.setAttribute('data-visible', String(inView));
  }

  var playing = false, speed = 1, simTime = D.t[current], last = null;
  var button = document.getElementById('play');
  button.onclick = function () {
    playing = !playing;
    button.textContent = playing ? 'pause' : 'play';
    if (playing && current >= nT - 1) { simTime = D.t[0]; }
    last = null;
  };
  document.getElementById('speed').onchange = function (e) { speed = parseFloat(e.target.value); };
  slider.oninput = function () {
    var k = parseInt(slider.value, 10);
    simTime = D.t[k];
    setFrame(k);
    render();
  };
  function frameAt(t) {
    var lo = 0, hi = nT - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (D.t[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  var drag = null;
  renderer.domElement.addEventListener('pointerdown', function (e) {
    drag = [e.clientX, e.clientY];
  });
  window.addEventListener('pointerup', function () { drag = null; });
  window.addEventListener('pointermove', function (e) {
    if (!drag) return;
    fixed = null;
    az -= (e.clientX - drag[0]) * 0.01;
    el = Math.max(-1.5, Math.min(1.5, el + (e.clientY - drag[1]) * 0.01));
    drag = [e.clientX, e.clientY];
    placeCamera(); render();
  });
  renderer.domElement.addEventListener('wheel', function (e) {
    e.preventDefault();
    var f = Math.exp(e.deltaY * 0.001);
    if (ortho) { camera.zoom /= f; camera.updateProjectionMatrix(); }
    else dist *= f;
    placeCamera(); render();
  }, {passive: false});
  function loop(now) {
    if (playing) {
      if (last !== null) simTime += (now - last) / 1000 * speed;
      last = now;
      if (simTime >= D.t[nT - 1]) {
        if (D.loop) simTime = D.t[0] + (simTime - D.t[nT - 1]);
        else { simTime = D.t[nT - 1]; playing = false; button.textContent = 'play'; }
      }
      setFrame(frameAt(simTime));
      render();
    }
    requestAnimationFrame(loop);
  }
  window.addEventListener('resize', function () {
    var w = view.clientWidth, h = view.clientHeight;
    if (!w || !h) return;
    renderer.setSize(w, h);
    if (ortho) {
      camera.left = -reach * w / h; camera.right = reach * w / h;
    } else camera.aspect = w / h;
    camera.updateProjectionMatrix();
    render();
  });
  setFrame(current);
  render();
  root.setAttribute('data-rendered', '1');
  requestAnimationFrame(loop);
  window.kidymViewer = {bodies: meshes.length, frames: nT, show: showLayer,
                        setFrame: function (k) { setFrame(k); render(); }};
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kidym animation: {title}</title>
<script>{hook}</script>
<style>
html, body {{ margin: 0; height: 100%; font-family: system-ui, sans-serif; }}
#view {{ position: absolute; top: 0; bottom: 3.2em; left: 0; right: 0; }}
#bar {{ position: absolute; bottom: 0; left: 0; right: 0; height: 3.2em; display: flex;
        gap: 0.8em; align-items: center; padding: 0 1em; background: #fff;
        border-top: 1px solid #ddd; }}
#scrub {{ flex: 1; }}
#name {{ position: absolute; top: 0.5em; left: 0.8em; color: #333; }}
</style>
</head>
<body>
<div id="view"></div>
<div id="name"><b>{title}</b> — {nbodies}; drag to turn, wheel to zoom</div>
<div id="bar">
<button id="play">play</button>
<input id="scrub" type="range" min="0" max="0" value="0" step="1">
<span id="time">t = 0</span>
<label>speed <select id="speed">
<option value="0.1">0.1×</option><option value="0.25">0.25×</option>
<option value="0.5">0.5×</option><option value="1" selected>1×</option>
<option value="2">2×</option><option value="5">5×</option></select></label>
<label><input type="checkbox" id="show-frames"> frames</label>
<label><input type="checkbox" id="show-trails"> trails</label>
<label><input type="checkbox" id="show-surfaces"> surfaces</label>
<label><input type="checkbox" id="show-grid"> grid</label>
</div>
<script id="kidym-data" type="application/json">{data}</script>
<script>{three}</script>
<script>{viewer}</script>
</body>
</html>
"""


def script_json(data) -> str:
    """``data`` as JSON that is safe inside ``<script>…</script>``: every ``<``, ``>``
    and ``&`` is written ``\\u003c``, ``\\u003e``, ``\\u0026``, so that no string of the
    model (its name comes from a file name, or from ``results.json``) can close the
    element (``</script>``) or switch the HTML parser into its comment-like "escaped"
    states (``<!--``, ``<script``); ``JSON.parse`` reads the same values."""
    text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def animation_html(poses: Poses, model: Model, *, title: str | None = None,
                   loop: bool = False) -> str:
    """The animation page for ``poses`` (see the module docstring); ``title`` and
    ``loop`` as in :func:`animation_data`."""
    from kidym.report.html import escape_html as _e

    n = len(poses.bodies)
    return _PAGE.format(title=_e(title or model.name), hook=assets.ERROR_HOOK,
                        nbodies=f"{n} body" if n == 1 else f"{n} bodies",
                        data=script_json(animation_data(poses, model, title=title,
                                                        loop=loop)),
                        three=assets.three_js(), viewer=_VIEWER)


def write_animation(out: str | Path, model: Model, result: Result, *,
                    poses: Poses | None = None) -> Path:
    """Write ``animation.html`` for a run into ``out`` (atomically)."""
    poses = poses if poses is not None else body_poses(model, result)
    return write_atomically(Path(out) / "animation.html", animation_html(poses, model))


#: The automatic amplitude of a mode: its largest body displacement this share of the
#: model's size, and no coordinate moving by more than ``MODE_MAX`` (radians or lengths).
MODE_SHARE = 0.15
MODE_MAX = 0.5


def mode_poses(model: Model, md, k: int, amplitude: float | None = None,
               n_points: int = 61) -> tuple[Poses, float]:
    """Body poses over one period of mode ``k`` of ``md`` (a :class:`kidym.analysis.modes.Modes`)
    and the amplitude ``ε`` used: ``amplitude``, or where not given the one that moves a
    body's centre or origin by ``MODE_SHARE`` of the model's size (measured on the
    linear motion of a tiny ``ε``), at most ``MODE_MAX``."""
    from kidym.analysis.modes import mode_motion

    lin = md.linearization

    def poses_at(eps: float) -> Poses:
        tau, states = mode_motion(md, k, eps, n_points=n_points)
        result = Result(t=tau, values=states, state_names=tuple(states), success=True,
                        status=0, message="", nfev=0, parameters=dict(lin.parameters))
        return body_poses(model, result, times=np.full(tau.shape, lin.t))

    if amplitude is None:
        tiny = 1e-6
        probe = poses_at(tiny)
        moved = max(float(np.abs(probe.centre - probe.centre[:, :1]).max(initial=0.0)),
                    float(np.abs(probe.origin - probe.origin[:, :1]).max(initial=0.0)))
        pts = np.concatenate([probe.centre[:, 0], probe.origin[:, 0]])
        size = float(np.ptp(pts, axis=0).max()) if pts.size else 0.0
        size = size or max((max(s.size[:2]) for s in probe.shapes), default=1.0)
        amplitude = MODE_MAX if moved <= 0 else min(MODE_MAX, MODE_SHARE * size * tiny / moved)
    return poses_at(amplitude), amplitude


def write_mode_animation(out: str | Path, model: Model, md, k: int, *,
                         amplitude: float | None = None) -> Path:
    """Write ``mode<k>.html``: mode ``k`` of ``md`` animated in the viewer, looping over
    one period, ``y(τ) = y₀ + ε Re(v_k e^{iωτ})`` (:func:`kidym.analysis.modes.mode_motion`)."""
    poses, eps = mode_poses(model, md, k, amplitude)
    mode = md.modes[k - 1]
    title = (f"{model.name}: mode {k}, ω = {mode.damped_frequency:.6g} rad/s "
             f"(f = {mode.damped_frequency / (2 * np.pi):.6g} Hz), ε = {eps:.3g}")
    return write_atomically(Path(out) / f"mode{k}.html",
                            animation_html(poses, model, title=title, loop=True))
