"""Mesh files that ``ФОРМЫ := Body(mesh("part.stl"[, scale]))`` draws: STL and Wavefront OBJ.

Read with NumPy (the formats are a few dozen lines each): STL binary (80-byte header,
triangle count, 50 bytes a triangle) and ASCII (``vertex x y z`` lines, three a facet);
OBJ vertices (``v x y z``) and faces (``f a b c …``, each of ``a``, ``a/t``, ``a/t/n``,
``a//n``; negative indices count back from the last vertex; a polygon of more than
three corners is cut into the fan of triangles about its first corner). Everything
else of an OBJ file (normals, texture coordinates, groups, materials) is skipped.

The vertices are kept as float32 (what an STL file holds, and what the viewer draws)
and the triangles as uint32 indices into them (none for an STL: every three vertices
are a triangle), as bytes, so that a :class:`Mesh` is plain immutable data that
compares and pickles as such. Display only: nothing of a mesh reaches generated code,
and its numbers reach the viewer as data (:mod:`kidym.report.animation`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Largest mesh file read, in bytes.
MAX_FILE_BYTES = 100_000_000
#: Most triangles a model's meshes may hold together (each is embedded in the viewer's
#: page: about 50 bytes a triangle).
MAX_TRIANGLES = 200_000
#: The file types read, by suffix (lower case).
SUFFIXES = {".stl": "STL", ".obj": "Wavefront OBJ"}


class MeshError(ValueError):
    """A mesh file that cannot be drawn (the message says why)."""


@dataclass(frozen=True)
class Mesh:
    """The triangles of a mesh file.

    Attributes
    ----------
    path : str
        The file read (absolute).
    digest : str
        SHA-256 of its bytes (a model read from the cache checks it still holds).
    vertices : bytes
        float32 little-endian, shape (n_vertices, 3).
    faces : bytes
        uint32 little-endian, shape (n_triangles, 3) indices into ``vertices``; empty
        for a file without shared vertices (STL), whose vertices go three a triangle.
    n_triangles : int
    """

    path: str
    digest: str
    vertices: bytes
    faces: bytes
    n_triangles: int

    def vertex_array(self) -> np.ndarray:
        """The vertices, shape (n_vertices, 3), float32."""
        return np.frombuffer(self.vertices, dtype="<f4").reshape(-1, 3)

    def face_array(self) -> np.ndarray:
        """The triangles as vertex indices, shape (n_triangles, 3)."""
        if not self.faces:
            return np.arange(3 * self.n_triangles, dtype="<u4").reshape(-1, 3)
        return np.frombuffer(self.faces, dtype="<u4").reshape(-1, 3)

    def extent(self) -> tuple[float, float, float]:
        """The edges of the vertices' bounding box."""
        v = self.vertex_array()
        return tuple(float(x) for x in np.ptp(v, axis=0))


def digest_of(path: Path) -> str | None:
    """SHA-256 of the file's bytes, ``None`` where it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def meshes_unchanged(model) -> bool:
    """Whether every mesh file of ``model``'s ``ФОРМЫ`` still holds the bytes it was
    read from (a model from the cache is read again otherwise)."""
    return all(s.mesh is None or digest_of(Path(s.mesh.path)) == s.mesh.digest
               for s in model.shapes)


def read_mesh(path: Path) -> Mesh:
    """The triangles of the STL or OBJ file ``path``.

    Raises
    ------
    MeshError
        The file is missing, unreadable, larger than ``MAX_FILE_BYTES``, of another type,
        not a mesh of its type, empty, with more than ``MAX_TRIANGLES`` triangles or with
        a vertex that is not a finite number.
    """
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise MeshError(f"a mesh file is an STL (`.stl`) or Wavefront OBJ (`.obj`) file; "
                        f"got `{path.suffix or path.name}`")
    if not path.exists():
        raise MeshError(f"no such file (looked for {path})")
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise MeshError(f"{path} is not a file")
        if size > MAX_FILE_BYTES:
            raise MeshError(f"the file has {size} bytes; a mesh file has at most "
                            f"{MAX_FILE_BYTES} (simplify the mesh)")
        data = path.read_bytes()
    except OSError as e:
        raise MeshError(f"cannot read {path}: {e.strerror or e}") from e
    vertices, faces = _read_stl(data) if kind == "STL" else _read_obj(data)
    n = len(faces) if faces is not None else len(vertices) // 3
    if n == 0:
        raise MeshError(f"the {kind} file has no triangles")
    if n > MAX_TRIANGLES:
        raise MeshError(f"the {kind} file has {n} triangles; the meshes of a model hold "
                        f"at most {MAX_TRIANGLES} (simplify the mesh)")
    with np.errstate(over="ignore", invalid="ignore"):   # beyond float32: inf, refused
        v32 = np.asarray(vertices, dtype="<f4").reshape(-1, 3)
    if not np.isfinite(v32).all():
        bad = int(np.argwhere(~np.isfinite(v32).all(axis=1))[0, 0]) + 1
        raise MeshError(f"vertex {bad} of the {kind} file is not a finite number (in "
                        "float32)")
    return Mesh(path=str(path), digest=hashlib.sha256(data).hexdigest(),
                vertices=v32.tobytes(),
                faces=b"" if faces is None else np.asarray(faces, "<u4").tobytes(),
                n_triangles=n)


_STL_TRIANGLE = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)),
                          ("attribute", "<u2")])


def _read_stl(data: bytes) -> tuple[np.ndarray, None]:
    """Binary when the size is that of the count in its header (an ASCII file that
    starts with ``solid`` can be binary too), ASCII otherwise."""
    if len(data) >= 84:
        count = int.from_bytes(data[80:84], "little")
        if len(data) == 84 + 50 * count:
            tri = np.frombuffer(data, dtype=_STL_TRIANGLE, count=count, offset=84)
            return tri["corners"].reshape(-1, 3), None
    head = data[:512].lstrip()
    if not head[:5].lower() == b"solid":
        raise MeshError("not an STL file: neither a binary STL (its size is not that of "
                        "the triangle count in its header) nor an ASCII one (`solid …`)")
    text = data.decode("ascii", errors="replace")
    numbers = []
    for k, m in enumerate(re.finditer(r"\bvertex\b([^\n\r]*)", text)):
        parts = m.group(1).split()
        try:
            if len(parts) != 3:
                raise ValueError
            numbers.append([float(x) for x in parts])
        except ValueError:
            line = text.count("\n", 0, m.start()) + 1
            raise MeshError(f"not an ASCII STL file: line {line}, vertex {k + 1} is not "
                            "three numbers") from None
    if len(numbers) % 3:
        raise MeshError(f"not an ASCII STL file: {len(numbers)} vertices, not three a "
                        "facet")
    return np.array(numbers, dtype=float).reshape(-1, 3), None


def _read_obj(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    text = data.decode("utf-8", errors="replace")
    vertices: list[list[float]] = []
    faces: list[tuple[int, int, int]] = []
    for line_no, line in enumerate(text.splitlines(), 1):
        parts = line.split("#", 1)[0].split()
        if not parts:
            continue
        if parts[0] == "v":
            try:
                xyz = [float(x) for x in parts[1:4]]
                if len(xyz) != 3:
                    raise ValueError
            except ValueError:
                raise MeshError(f"not a Wavefront OBJ file: line {line_no}, a vertex `v` "
                                "is not three numbers") from None
            vertices.append(xyz)
        elif parts[0] == "f":
            try:
                corners = [int(c.split("/", 1)[0]) for c in parts[1:]]
            except ValueError:
                raise MeshError(f"not a Wavefront OBJ file: line {line_no}, a face `f` is "
                                "not vertex numbers") from None
            if len(corners) < 3:
                raise MeshError(f"not a Wavefront OBJ file: line {line_no}, a face has "
                                f"{len(corners)} corners")
            index = []
            for c in corners:
                k = c - 1 if c > 0 else len(vertices) + c
                if c == 0 or not 0 <= k < len(vertices):
                    raise MeshError(f"not a Wavefront OBJ file: line {line_no}, a face "
                                    f"refers to vertex {c} of {len(vertices)} defined "
                                    "before it")
                index.append(k)
            faces.extend((index[0], index[j], index[j + 1]) for j in range(1, len(index) - 1))
            if len(faces) > MAX_TRIANGLES:
                break
    arr = np.array(vertices, dtype=float).reshape(-1, 3)
    return arr, np.array(faces, dtype=np.int64).reshape(-1, 3)
