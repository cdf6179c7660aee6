"""Files that appear whole or not at all, and the hash that names a model's text.

Standard library only: every layer that writes a file (results, reports, plots,
generated libraries, exports) uses :func:`write_atomically`, and a report names the
model it came from by :func:`model_hash`, without importing the layer of the other.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def write_atomically(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` so that the file appears whole or not at all.

    The data goes to a temporary file in the same directory, is flushed to disk and
    then renamed over ``path`` (``os.replace`` is atomic on POSIX and Windows).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are ordinary files
        with os.fdopen(fd, mode, **({} if mode == "wb" else {"encoding": "utf-8",
                                                           "newline": ""})) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def model_hash(model) -> str:
    """SHA-256 of the model's source text (hex), or of its name when it has none."""
    text = model.source if model.source is not None else f"<no source: {model.name}>"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
