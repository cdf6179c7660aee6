"""Model files: read, parse (:mod:`kidym.lang.parser`), and keep the models in the cache.

A file parsed before by this kidym (the same bytes under the same path) is read back
from the cache (:func:`kidym.cache.read_stored`: a pickle authenticated by an HMAC
under the cache's secret) without importing the parser (Lark and the grammar's
tables): a tenth of a second or more of a cached start. A model whose mesh files
(``ФОРМЫ``, :mod:`kidym.model.mesh`) no longer hold the bytes it read is read again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from kidym.cache import code_fingerprint, read_stored, remember_source, stored_as_read
from kidym.errors import Diagnostic
from kidym.lang.source import decode
from kidym.model.mesh import meshes_unchanged
from kidym.model.model import Model


def load(path: str | Path, *, warnings: list[Diagnostic] | None = None) -> Model:
    """Read a model file (UTF-8 with or without BOM, CP1251 or CP866; detected).

    Parameters
    ----------
    path : str or Path
        The ``.kdm`` file; the model is named after its stem.
    warnings : list, optional
        Receives the warning diagnostics, as in :func:`parse`.

    Returns
    -------
    Model
        The first task's model (see :func:`parse`).

    Raises
    ------
    ParseError, ModelError
        As :func:`parse`.
    OSError
        The file cannot be read.
    """
    return load_tasks(path, warnings=warnings)[0]


def load_tasks(path: str | Path, *, warnings: list[Diagnostic] | None = None,
               data: bytes | None = None) -> list[Model]:
    """Every task of a model file, as :func:`parse_tasks`; see :func:`load`.

    ``data``: the file's bytes where the caller has read them already. The models of
    a file parsed before by this kidym (the same bytes, the same path as given) come
    from the cache (:func:`kidym.cache.read_stored`, authenticated), and each is
    remembered as made from that text (:func:`kidym.cache.source_key`), so that its
    equations can be stored too (:func:`kidym.eom.stored.derived`).
    """
    path = Path(path)
    if data is None:
        data = path.read_bytes()
    key = hashlib.sha256(b"\0".join([code_fingerprint().encode(), str(path).encode(),
                                      path.stem.encode(), data])).hexdigest()
    stored = read_stored("tasks", key)
    if (isinstance(stored, tuple) and len(stored) == 2 and isinstance(stored[0], list)
            and all(isinstance(m, Model) for m in stored[0])
            and all(meshes_unchanged(m) for m in stored[0])):
        models, found = stored
    else:
        from kidym.lang.parser import parse_tasks  # (Lark: only when parsing)

        text, _encoding = decode(data)
        found = []
        models = parse_tasks(text, filename=str(path), name=path.stem, warnings=found)
        # (the first run goes on with the copy the later ones read: the same formulas)
        models, found = stored_as_read("tasks", key, (models, found))
    if warnings is not None:
        warnings.extend(found)
    for k, model in enumerate(models):
        # (the equations stored under it hold the model, its meshes' triangles among it)
        meshes = ",".join(s.mesh.digest for s in model.shapes if s.mesh is not None)
        remember_source(model, f"{key}:{k}:{meshes}" if meshes else f"{key}:{k}")
    return models
