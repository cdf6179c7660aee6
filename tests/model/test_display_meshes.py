"""`ФОРМЫ := Body(mesh("part.stl"[, scale]))`: STL and OBJ files read when the model is
(kidym.model.mesh), every bad file a located error at its name; the viewer embeds the
file's own numbers (checked against a reader of a few lines written here with `struct`).
"""

from __future__ import annotations

import base64
import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kidym
from kidym.errors import ModelError, ParseError
from kidym.model import mesh as mesh_module
from kidym.report.animation import animation_html
from kidym.report.poses import body_poses

# a cart pushed by a force of time (a time-dependent model), a pole on it
MODEL = """l = 0.8; g = 9.81;
Cart | Sx(x) | m(1), Jx(0), Jy(0), Jz(0);
Pole~Cart | Rz(th) | Sy(-l/2), m(0.3), Jz(0.3*l^2/12);
P1.x = 0.5*sin(3*t);
GRAVITY := 0, -g, 0;
INITIAL := th(0.3);
"""

TETRAHEDRON = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]])
FACETS = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]


def write_binary_stl(path: Path, points: np.ndarray, facets) -> None:
    with path.open("wb") as f:
        f.write(b"binary stl".ljust(80, b" ") + struct.pack("<I", len(facets)))
        for a, b, c in facets:
            f.write(struct.pack("<12fH", 0, 0, 1, *points[a], *points[b], *points[c], 0))


def write_ascii_stl(path: Path, points: np.ndarray, facets) -> None:
    lines = ["solid part"]
    for tri in facets:
        lines += ["  facet normal 0 0 1", "    outer loop"]
        lines += [f"      vertex {float(x)!r} {float(y)!r} {float(z)!r}"
                  for x, y, z in points[list(tri)]]
        lines += ["    endloop", "  endfacet"]
    path.write_text("\n".join([*lines, "endsolid part", ""]))


OBJ = """# a unit square and a triangle, with normals and texture coordinates
o part
v 0 0 0
v 0.3 0 0
v 0.3 0.2 0
v 0 0.2 0.05
vt 0 0
vn 0 0 1
f 1/1/1 2/1/1 3/1/1 4/1/1
f -4//1 -2//1 -1//1
"""


def own_stl_corners(path: Path) -> np.ndarray:
    """The corners of a binary STL, three a triangle, read here with struct."""
    data = path.read_bytes()
    (n,) = struct.unpack_from("<I", data, 80)
    out = [struct.unpack_from("<12fH", data, 84 + 50 * k)[3:12] for k in range(n)]
    return np.array(out, dtype=np.float32).reshape(-1, 3)


def own_obj(text: str) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """Vertices and the triangles of each polygon's fan about its first corner."""
    v, tris = [], []
    for line in text.splitlines():
        w = line.split()
        if w[:1] == ["v"]:
            v.append([float(x) for x in w[1:4]])
        elif w[:1] == ["f"]:
            idx = [int(c.split("/")[0]) for c in w[1:]]
            idx = [i - 1 if i > 0 else len(v) + i for i in idx]
            tris += [(idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1)]
    return np.array(v, dtype=np.float32), tris


def embedded(page: str) -> dict:
    data = re.search(r'<script id="kidym-data" type="application/json">(.*?)</script>',
                     page, re.S).group(1)
    return json.loads(data)


def decoded(text: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype)


@pytest.fixture
def parts(tmp_path):
    write_binary_stl(tmp_path / "cart.stl", TETRAHEDRON, FACETS)
    (tmp_path / "pole.obj").write_text(OBJ)
    model = tmp_path / "model.kdm"
    model.write_text(MODEL + 'SHAPES := Cart(mesh("cart.stl", 2)), Pole(сетка("pole.obj"));')
    return model


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_the_animation_embeds_the_files_triangles(parts, engine):
    model = kidym.load(parts)
    result = kidym.simulate(model, t_end=0.5, n_points=11, engine=engine)
    poses = body_poses(model, result)
    assert [s.kind for s in poses.shapes] == ["mesh", "mesh"]
    data = embedded(animation_html(poses, model))
    cart, pole = data["bodies"]
    assert (cart["scale"], pole["scale"]) == (2.0, 1.0)
    stl, obj = data["meshes"][cart["mesh"]], data["meshes"][pole["mesh"]]
    assert stl["file"] == "cart.stl" and obj["file"] == "pole.obj"
    # STL: every corner of every facet, in file order, no index
    np.testing.assert_array_equal(decoded(stl["vertices"], "<f4").reshape(-1, 3),
                                  own_stl_corners(parts.parent / "cart.stl"))
    assert stl["faces"] == "" and stl["triangles"] == 4
    # OBJ: the vertices as float32 and the quadrilateral cut into two triangles
    points, tris = own_obj(OBJ)
    np.testing.assert_array_equal(decoded(obj["vertices"], "<f4").reshape(-1, 3), points)
    assert decoded(obj["faces"], "<u4").reshape(-1, 3).tolist() == [list(t) for t in tris]
    assert obj["triangles"] == 3
    # drawn in the body frame: the frame's rotation and origin, as the frame axes are
    assert cart["size"] == pytest.approx([0.2, 0.2, 0.2], rel=1e-6)
    assert pole["size"] == pytest.approx([0.3, 0.2, 0.05], rel=1e-6)


def test_ascii_and_binary_stl_read_the_same(tmp_path):
    write_binary_stl(tmp_path / "b.stl", TETRAHEDRON, FACETS)
    write_ascii_stl(tmp_path / "a.stl", TETRAHEDRON, FACETS)
    a = mesh_module.read_mesh(tmp_path / "a.stl")
    b = mesh_module.read_mesh(tmp_path / "b.stl")
    np.testing.assert_array_equal(a.vertex_array(), b.vertex_array())
    np.testing.assert_array_equal(a.face_array(), np.arange(12).reshape(4, 3))


def test_a_changed_mesh_file_is_read_again(parts, tmp_path):
    """The model kept in the cache (the same model file) holds the mesh it read: a new
    mesh file is read again, a missing one is the error at `kidym check`."""
    first = kidym.load(parts)
    write_binary_stl(tmp_path / "cart.stl", 2 * TETRAHEDRON, FACETS)
    second = kidym.load(parts)
    np.testing.assert_array_equal(second.shapes[0].mesh.vertex_array(),
                                  2 * first.shapes[0].mesh.vertex_array())
    (tmp_path / "cart.stl").unlink()
    proc = subprocess.run([sys.executable, "-m", "kidym", "check", str(parts)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert re.search(r"model\.kdm:7:\d+: error: `SHAPES`: mesh file `cart\.stl` of `Cart`: "
                     r"no such file", proc.stderr + proc.stdout)


def _ascii(body: str) -> bytes:
    return f"solid x\n{body}\nendsolid x\n".encode()


BAD = [
    ("missing.stl", None, r"no such file \(looked for .*missing\.stl\)"),
    ("part.dae", b"<COLLADA/>", r"a mesh file is an STL \(`\.stl`\) or Wavefront OBJ "
                                r"\(`\.obj`\) file; got `\.dae`"),
    ("part.stl", b"PK\x03\x04 a zip file", r"not an STL file: neither a binary STL"),
    ("part.stl", _ascii("facet\nouter loop\nvertex 1 2\nendloop"),
     r"not an ASCII STL file: line 4, vertex 1 is not three numbers"),
    ("part.stl", _ascii(""), r"the STL file has no triangles"),
    ("part.obj", b"v 0 0 0\nv 1 0 0\nf 1 2 3\n",
     r"line 3, a face refers to vertex 3 of 2 defined before it"),
    ("part.obj", b"v 0 0 0\nv 1 0 0\n", r"the Wavefront OBJ file has no triangles"),
    ("part.obj", b"v 0 0 0\nv 1 nan 0\nv 0 1 0\nf 1 2 3\n",
     r"vertex 2 of the Wavefront OBJ file is not a finite number"),
    ("part.obj", b"v 0 0 0\nv 1e39 0 0\nv 0 1 0\nf 1 2 3\n",
     r"vertex 2 of the Wavefront OBJ file is not a finite number"),
    ("part.obj", b"v 0 0 0\nv x 0 0\n", r"line 2, a vertex `v` is not three numbers"),
]


@pytest.mark.parametrize("name, content, message", BAD)
def test_a_bad_mesh_file_is_a_located_error(tmp_path, name, content, message):
    if content is not None:
        (tmp_path / name).write_bytes(content)
    text = MODEL + f'SHAPES := Cart(mesh("{name}"));'
    with pytest.raises(ParseError, match=r"model\.kdm:7:21: error: `SHAPES`: mesh file "
                                         f"`{re.escape(name)}` of `Cart`: .*{message}"):
        kidym.parse(text, filename=str(tmp_path / "model.kdm"))


def test_too_many_triangles_names_the_limit(tmp_path, monkeypatch):
    write_binary_stl(tmp_path / "cart.stl", TETRAHEDRON, FACETS)
    (tmp_path / "pole.obj").write_text(OBJ)
    monkeypatch.setattr(mesh_module, "MAX_TRIANGLES", 3)
    with pytest.raises(ParseError, match=r"7:21: error: `SHAPES`: mesh file `cart\.stl` of "
                                         r"`Cart`: the STL file has 4 triangles; the meshes "
                                         r"of a model hold at most 3"):
        kidym.parse(MODEL + 'SHAPES := Cart(mesh("cart.stl"));',
                    filename=str(tmp_path / "model.kdm"))
    monkeypatch.setattr(mesh_module, "MAX_TRIANGLES", 5)
    import kidym.model.display as display
    monkeypatch.setattr(display, "MAX_TRIANGLES", 5)
    with pytest.raises(ParseError, match=r"`SHAPES`: the meshes hold 7 triangles with "
                                         r"`pole\.obj`; a model's meshes hold at most 5"):
        kidym.parse(MODEL + 'SHAPES := Cart(mesh("cart.stl")), Pole(mesh("pole.obj"));',
                    filename=str(tmp_path / "model.kdm"))


def test_a_file_over_the_byte_limit(tmp_path, monkeypatch):
    write_binary_stl(tmp_path / "cart.stl", TETRAHEDRON, FACETS)
    monkeypatch.setattr(mesh_module, "MAX_FILE_BYTES", 100)
    with pytest.raises(ParseError, match=r"the file has 284 bytes; a mesh file has at most "
                                         r"100"):
        kidym.parse(MODEL + 'SHAPES := Cart(mesh("cart.stl"));',
                    filename=str(tmp_path / "model.kdm"))


@pytest.mark.parametrize("item, message", [
    ("Cart(mesh(1))", r"7:16: error: `SHAPES`: a mesh takes its file name in quotes"),
    ('Cart(box("a.stl", 1, 1))', r"7:16: error: `SHAPES`: a quoted file name is read by "
                                 r"`mesh` only"),
    ('Cart(mesh("cart.stl", 0))', r"7:11: error: `SHAPES`: the scale of `Cart` must be "
                                  r"positive; got 0"),
    ('Cart(mesh("cart.stl", 1, 2))', r"7:16: error: `SHAPES`: a mesh takes a file and an "
                                     r"optional scale"),
])
def test_mesh_syntax_errors(tmp_path, item, message):
    write_binary_stl(tmp_path / "cart.stl", TETRAHEDRON, FACETS)
    with pytest.raises(ParseError, match=message):
        kidym.parse(MODEL + f"SHAPES := {item};", filename=str(tmp_path / "model.kdm"))


def test_a_scale_made_negative_by_the_parameters_of_a_run(parts):
    parts.write_text(MODEL + 's = 2; SHAPES := Cart(mesh("cart.stl", s));')
    model = kidym.load(parts)
    with pytest.raises(ModelError, match=r"model\.kdm:7:18: error: `SHAPES`: the scale of "
                                         r"`Cart` is -1 with the parameters of the run "
                                         r"\(s = -1\)"):
        kidym.simulate(model, t_end=0.1, parameters={"s": -1}, engine="numpy")


def test_a_string_is_read_nowhere_else():
    with pytest.raises(ParseError, match=r"1:5: error: unexpected `\"a\.stl\"`"):
        kidym.parse('k = "a.stl";\n' + MODEL)


def test_kidym_fmt_keeps_the_file_name():
    from kidym.lang.fmt import format_source

    text = MODEL + 'ФОРМЫ := Cart(mesh( "parts/cart one.stl" ,2));\n'
    assert 'ФОРМЫ := Cart(mesh("parts/cart one.stl", 2));' in format_source(text)


def test_a_file_name_is_data_in_the_page(tmp_path):
    """A name that would close the data's `<script>` is written escaped and read back."""
    name = "a</script><b>x.stl"   # (a folder `a<` and a file in it)
    (tmp_path / "a<").mkdir()
    write_binary_stl(tmp_path / name, TETRAHEDRON, FACETS)
    path = tmp_path / "model.kdm"
    path.write_text(MODEL + f'SHAPES := Cart(mesh("{name}"));')
    model = kidym.load(path)
    result = kidym.simulate(model, t_end=0.1, n_points=3, engine="numpy")
    page = animation_html(body_poses(model, result), model)
    assert "</script><b>" not in page
    assert embedded(page)["meshes"][0]["file"] == name


@pytest.mark.slow
def test_the_viewer_draws_the_meshes(parts, tmp_path):
    from tests.report.browser import CHROMIUM, dump_dom, errors, root_attributes

    if CHROMIUM is None:
        pytest.skip("needs Debian's chromium (`.ci/system-deps --test`)")
    model = kidym.load(parts)
    result = kidym.simulate(model, t_end=0.5, n_points=11, engine="numpy")
    page = tmp_path / "animation.html"
    page.write_text(animation_html(body_poses(model, result), model))
    attrs = root_attributes(dump_dom(page))
    assert errors(attrs) == []
    assert attrs["data-triangles"] == "7" and attrs["data-shapes"] == "declared,declared"
    assert attrs["data-visible"] == "2"


def test_kidym_animate_finds_the_meshes_from_any_folder(parts, tmp_path, monkeypatch, capsys):
    """``kidym animate DIR`` reads the model again from ``results.json``; a run given the
    model by a relative path, animated from another folder, still finds its meshes
    (issue 29): the page embeds the file's own triangles."""
    from kidym.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["run", parts.name, "--engine", "numpy", "--t-end", "0.2", "--points", "5",
                 "--no-plots", "--out", "out", "-q"]) == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["animate", str(tmp_path / "out"), "-q"]) == 0, capsys.readouterr().err
    data = embedded((tmp_path / "out" / "animation.html").read_text(encoding="utf-8"))
    cart = data["meshes"][data["bodies"][0]["mesh"]]
    np.testing.assert_array_equal(decoded(cart["vertices"], "<f4").reshape(-1, 3),
                                  own_stl_corners(parts.parent / "cart.stl"))
