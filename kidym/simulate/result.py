"""Results of a simulation: arrays by name, solver statistics, atomic CSV output."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


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


@dataclass(frozen=True, eq=False)
class Result:
    """A simulated trajectory.

    Attributes
    ----------
    t : ndarray, shape (n_t,)
        Output times.
    values : dict of str to ndarray
        Every recorded quantity by its model name (coordinates, speeds ``q't``,
        outputs, ``energy``), each shape (n_t,).
    state_names : tuple of str
        Names of the state ``y = [q, w]``, in order.
    success : bool
        Whether the integrator reached the end.
    status : int
        Integrator status (0: reached the end; -1: failed; 1: stopped by an event).
    message : str
        Integrator message.
    nfev : int
        Right-hand-side evaluations.
    parameters : dict of str to float
        Parameter values used.
    stats : dict
        Further statistics (steps, wall time, engine, method, tolerances).
    """

    t: np.ndarray
    values: dict[str, np.ndarray]
    state_names: tuple[str, ...]
    success: bool
    status: int
    message: str
    nfev: int
    parameters: dict[str, float] = field(default_factory=dict)
    stats: dict = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        if name == "t":
            return self.t
        try:
            return self.values[name]
        except KeyError:
            raise KeyError(f"no quantity `{name}` in the result; have: "
                           + ", ".join(self.values)) from None

    @property
    def names(self) -> list[str]:
        """Recorded names in column order (without ``t``)."""
        return list(self.values)

    @property
    def y(self) -> np.ndarray:
        """The state trajectory, shape (n_q + n_w, n_t)."""
        return np.array([self.values[n] for n in self.state_names])

    def to_csv(self) -> str:
        """The table as CSV text: header ``t,`` then the names exactly as in the model."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["t", *self.values])
        cols = [self.t, *self.values.values()]
        for row in zip(*cols):
            writer.writerow([repr(float(x)) for x in row])
        return buf.getvalue()

    def write_csv(self, path: str | Path) -> Path:
        """Write :meth:`to_csv` to ``path`` atomically."""
        return write_atomically(path, self.to_csv())
