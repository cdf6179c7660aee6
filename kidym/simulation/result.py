"""Results of a simulation: arrays by name, solver statistics, atomic file output.

Files (all written atomically, :func:`write_atomically`): ``results.csv`` always;
``results.npz`` (NumPy) and ``results.parquet`` (Apache Parquet, needs the optional
``pyarrow``) on request; ``events.csv`` when the run had events (each event's time,
name, and the state before and after it); ``results.json`` beside them, the sidecar
that records what produced the numbers — the model source and its SHA-256, the parameter values, the
initial conditions, the solver and its statistics — so that a results directory is
enough to reproduce, plot or animate the run (:func:`load_results`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kidym.files import model_hash, write_atomically

#: Result file formats ``write`` knows.
FORMATS = ("csv", "npz", "parquet")
#: The table of a run's events (:meth:`Result.events_csv`).
EVENTS_FILE = "events.csv"


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
    failure : dict or None
        For a run that failed, the fault (``SimulationError.to_dict()``: ``kind``,
        ``time``, ``state``, ``message``, ``hint``); the arrays then hold the partial
        result up to the last output time before it (:attr:`partial`).
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
    failure: dict | None = None

    @property
    def partial(self) -> bool:
        """Whether the run failed and these are the results up to the failure."""
        return self.failure is not None

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

    def events_csv(self) -> str | None:
        """The recorded events as CSV text, ``None`` when the run had no events.

        One row per event, in the order handled: ``t``, ``event`` (its name), then the
        state before it (``before:z``, ``before:z't`` …) and the state it left
        (``after:z`` …; the events of one instant share both: their resets were
        applied one after the other).
        """
        ev = self.stats.get("events")
        if not isinstance(ev, dict) or np.atleast_1d(ev.get("t", [])).size == 0:
            return None  # the compiled engine reports an empty record
        n = len(self.state_names)
        before = np.asarray(ev.get("state", []), dtype=float).reshape(-1, n)
        after = np.asarray(ev.get("state_after", before), dtype=float).reshape(-1, n)
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["t", "event", *(f"before:{x}" for x in self.state_names),
                         *(f"after:{x}" for x in self.state_names)])
        for t, name, b, a in zip(np.atleast_1d(ev["t"]), ev["name"], before, after):
            writer.writerow([repr(float(t)), name, *(repr(float(x)) for x in (*b, *a))])
        return buf.getvalue()

    def write_csv(self, path: str | Path) -> Path:
        """Write :meth:`to_csv` to ``path`` atomically."""
        return write_atomically(path, self.to_csv())

    # ------------------------------------------------------------ more formats
    def to_npz(self) -> bytes:
        """The table as a NumPy ``.npz`` archive: ``t`` and one array per name."""
        buf = io.BytesIO()
        np.savez(buf, t=self.t, **{n: v for n, v in self.values.items()})
        return buf.getvalue()

    def to_parquet(self) -> bytes:
        """The table as Apache Parquet (column ``t``, then the names); needs ``pyarrow``.

        Raises
        ------
        ImportError
            When ``pyarrow`` is not installed (``pip install 'kidym[parquet]'``).
        """
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise ImportError("Parquet output needs pyarrow: pip install 'kidym[parquet]' "
                              "(or choose --format csv,npz)") from exc
        table = pa.table({"t": self.t, **self.values})
        buf = io.BytesIO()
        pq.write_table(table, buf)
        return buf.getvalue()

    @property
    def initial(self) -> dict[str, float]:
        """The state at the first output time (the initial conditions used)."""
        if not self.t.size:
            return {}
        return {n: float(self.values[n][0]) for n in self.state_names}

    def metadata(self, model=None) -> dict:
        """The JSON sidecar: model (source, SHA-256, its file's absolute path: ``kidym
        animate DIR`` reads the model again, its mesh files beside it, from any folder),
        parameters, initial state, solver."""
        doc: dict = {"kidym_version": _version()}
        if model is not None:
            doc.update({"model": model.name, "model_file": _absolute(model.filename),
                        "model_sha256": model_hash(model), "model_source": model.source})
        doc.update({
            "parameters": dict(self.parameters),
            "initial_conditions": self.initial,
            "t_start": float(self.t[0]) if self.t.size else None,
            "t_end": float(self.t[-1]) if self.t.size else None,
            "n_points": int(self.t.size),
            "state_names": list(self.state_names),
            "columns": ["t", *self.values],
            "success": self.success, "status": self.status, "message": self.message,
            "nfev": self.nfev,
            "partial": self.partial, "failure": _jsonable(self.failure),
            "stats": {k: _jsonable(v) for k, v in self.stats.items()},
        })
        return doc

    def write(self, directory: str | Path, *, formats: tuple[str, ...] = ("csv",),
              model=None, run_id: str | None = None) -> list[Path]:
        """Write ``results.<format>`` for each format and the ``results.json`` sidecar.

        The sidecar, written last, records a run id and the SHA-256 of every file
        beside it, so that :func:`load_results` refuses a directory whose files come
        from different runs (a run stopped between two files). A ``results.<format>``
        of a format not written this time is removed first. ``kidym run`` writes the
        whole directory at once instead (:mod:`kidym.outdir`).

        Parameters
        ----------
        directory : path
            Where the files go (created if needed).
        formats : tuple of {"csv", "npz", "parquet"}
            Formats besides the sidecar; ``csv`` is always written.
        model : Model, optional
            Recorded in the sidecar (source, hash) so the run can be reproduced.
        run_id : str, optional
            The run id recorded in the sidecar (default: a new one).

        Returns
        -------
        list of Path
            The files written, the sidecar last.
        """
        directory = Path(directory)
        unknown = [f for f in formats if f not in FORMATS]
        if unknown:
            raise ValueError(f"unknown result format {', '.join(unknown)}; choose from "
                             + ", ".join(FORMATS))
        payload = {"csv": lambda: self.to_csv().encode("utf-8"), "npz": self.to_npz,
                   "parquet": self.to_parquet}
        data = {f: payload[f]() for f in ("csv", *formats) if f in payload}  # fail first
        for f in FORMATS:
            if f not in data:
                (directory / f"results.{f}").unlink(missing_ok=True)
        blobs = {f"results.{f}": blob for f, blob in data.items()}
        events = self.events_csv()
        if events is not None:
            blobs[EVENTS_FILE] = events.encode("utf-8")
        else:
            (directory / EVENTS_FILE).unlink(missing_ok=True)
        written = [write_atomically(directory / name, blob) for name, blob in blobs.items()]
        side = self.metadata(model)
        side["run_id"] = run_id or uuid.uuid4().hex
        side["files"] = [p.name for p in written]
        side["sha256"] = {name: hashlib.sha256(blob).hexdigest()
                          for name, blob in blobs.items()}
        written.append(write_atomically(directory / "results.json",
                                        json.dumps(side, ensure_ascii=False, indent=2) + "\n"))
        return written

    # ------------------------------------------------------------ Python and Jupyter
    def __repr__(self) -> str:
        from kidym.display import short_list

        outputs = [n for n in self.values if n not in self.state_names]
        span = (f"t={self.t[0]:g}…{self.t[-1]:g} ({self.t.size} points)" if self.t.size
                else "t=(no points)")
        return (f"Result(engine={self.stats.get('engine', '?')!r}, status={self.status} "
                f"{self.message!r}{', partial' if self.partial else ''}, {span}, "
                f"states={short_list(self.state_names)}, outputs={short_list(outputs)})")

    def _repr_html_(self) -> str:
        from kidym.report.html import result_html

        return result_html(self)

    def to_pandas(self):
        """The table as a :class:`pandas.DataFrame`: index ``t``, one column per name
        (in the order of :attr:`names`, exactly as in the model).

        Returns
        -------
        pandas.DataFrame
            Shape ``(n_t, len(names))``; ``attrs`` holds ``engine``, ``status``,
            ``partial`` and the parameters.

        Raises
        ------
        ImportError
            When pandas is not installed (``pip install 'kidym[pandas]'``).
        """
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("Result.to_pandas needs pandas: pip install pandas (or "
                              "'kidym[pandas]'; or use result.values, a dict of NumPy "
                              "arrays)") from exc
        frame = pd.DataFrame({n: np.asarray(v) for n, v in self.values.items()},
                             index=pd.Index(np.asarray(self.t), name="t"))
        frame.attrs.update(self._attrs())
        return frame

    def to_xarray(self):
        """The table as an :class:`xarray.Dataset`: coordinate ``t``, one variable per
        name.

        Returns
        -------
        xarray.Dataset
            Variables of shape ``(n_t,)`` over the dimension ``t``; ``attrs`` holds
            ``engine``, ``status``, ``partial`` and the parameters (as
            ``parameter:NAME``).

        Raises
        ------
        ImportError
            When xarray is not installed (``pip install 'kidym[sweep]'``).
        """
        try:
            import xarray as xr
        except ImportError as exc:
            raise ImportError("Result.to_xarray needs xarray: pip install "
                              "'kidym[sweep]' (or pip install xarray)") from exc
        data = xr.Dataset({n: ("t", np.asarray(v)) for n, v in self.values.items()},
                          coords={"t": np.asarray(self.t)})
        attrs = self._attrs()
        params = attrs.pop("parameters")
        data.attrs.update(attrs)   # (NetCDF attributes: flat numbers and strings)
        data.attrs.update({f"parameter:{k}": v for k, v in params.items()})
        return data

    def _attrs(self) -> dict:
        return {"engine": str(self.stats.get("engine", "")), "status": int(self.status),
                "message": self.message, "partial": int(self.partial),
                "parameters": {k: float(v) for k, v in self.parameters.items()}}

    def plot(self, names=None, ax=None, *, model=None, degrees: bool = False):
        """Time histories of ``names``, one panel per physical kind of quantity.

        Parameters
        ----------
        names : sequence of str, optional
            What to draw (default: the coordinates and speeds; quaternion components
            too).
        ax : matplotlib.axes.Axes, optional
            Draw into this axes; the names must then be of one kind (a
            ``ValueError`` names the kinds otherwise). Default: a new pyplot figure
            with one panel per kind.
        model : Model, optional
            The model of the run: with it the quantities are told apart as angles,
            lengths, their rates and the outputs the model gives a unit, and every
            axis carries its unit (radians, the ``РАЗМЕРНОСТИ`` units, ``x = …, m;``).
            Without it the states named ``q't`` share one panel, the other states
            another (a pseudo-velocity is told from a coordinate by the model only),
            and each output has its own.
        degrees : bool
            Angles and their rates in degrees (with ``model``).

        Returns
        -------
        list of matplotlib.axes.Axes
            One per panel, top to bottom.
        """
        from kidym.report.plots import plot_result

        return plot_result(self, names, ax, model=model, degrees=degrees)


def _version() -> str:
    from kidym import __version__

    return __version__


def _absolute(filename: str) -> str:
    """The model file's absolute path (a path relative to the folder of the run breaks
    ``kidym animate`` run from another); a model given as text keeps ``<string>``."""
    return filename if filename.startswith("<") else os.path.abspath(filename)


def _jsonable(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


class MixedResultsError(ValueError):
    """A results directory whose files do not all come from the run in its sidecar."""


def check_results(files: dict[str, bytes], side: dict, directory: str | Path = ".") -> None:
    """Check that the ``results.*`` files are those the sidecar ``side`` records.

    Parameters
    ----------
    files : dict of str to bytes
        The contents of the ``results.<format>`` files present, by file name.
    side : dict
        ``results.json``; one of kidym before run ids (no ``sha256`` table) is not
        checked.
    directory : path
        Named in the message.

    Raises
    ------
    MixedResultsError
        A file is missing, not recorded, or not the one recorded (different bytes).
    """
    table = side.get("sha256")
    if not isinstance(table, dict):
        return
    problems = []
    for name in sorted({*files, *table}):
        if name not in table:
            problems.append(f"{name} is not a file of that run")
        elif name not in files:
            problems.append(f"{name} of that run is missing")
        elif hashlib.sha256(files[name]).hexdigest() != table[name]:
            problems.append(f"{name} is not the file of that run (its contents differ)")
    if problems:
        run = (f"run {str(side.get('run_id', '?'))[:8]} (t = {side.get('t_start')} … "
               f"{side.get('t_end')})")
        raise MixedResultsError(
            f"{directory}: the result files do not belong together: results.json records "
            f"{run}, but " + "; ".join(problems) + ". The directory mixes files of different "
            "runs (a run stopped while writing them?); run the model into it again "
            "(`kidym run MODEL --out DIR`)")


def _read_results(directory: Path) -> tuple[bytes | None, dict[str, bytes]]:
    """``results.json`` and the ``results.<format>`` files of ``directory``, read through
    one handle on the directory: a run published meanwhile (:mod:`kidym.outdir`) renames
    a whole directory, so all of them come from the same one."""
    dfd = os.open(directory, os.O_RDONLY)
    try:
        def read(name: str) -> bytes | None:
            try:
                fd = os.open(name, os.O_RDONLY, dir_fd=dfd)
            except FileNotFoundError:
                return None
            with os.fdopen(fd, "rb") as fh:
                return fh.read()

        side = read("results.json")
        files = {f"results.{f}": read(f"results.{f}") for f in FORMATS}
        files[EVENTS_FILE] = read(EVENTS_FILE)
    finally:
        os.close(dfd)
    return side, {k: v for k, v in files.items() if v is not None}


def load_results(directory: str | Path) -> tuple[Result, dict]:
    """Read a results directory written by :meth:`Result.write` (``kidym run --out``).

    Returns
    -------
    result : Result
        The table from ``results.npz`` if present, else ``results.csv``.
    sidecar : dict
        ``results.json`` (empty when absent).

    Raises
    ------
    FileNotFoundError
        When the directory holds no ``results.csv``/``results.npz``.
    MixedResultsError
        When the files are not those of the run ``results.json`` records
        (:func:`check_results`).
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory}: no such directory (a results directory is "
                                "written by `kidym run MODEL --out DIR`)")
    raw, files = _read_results(directory)
    side = json.loads(raw.decode("utf-8")) if raw is not None else {}
    check_results(files, side, directory)
    if "results.npz" in files:
        with np.load(io.BytesIO(files["results.npz"])) as data:
            cols = {k: np.asarray(data[k]) for k in data.files}
    elif "results.csv" in files:
        rows = list(csv.reader(io.StringIO(files["results.csv"].decode("utf-8"), newline="")))
        header, body = rows[0], np.array(rows[1:], dtype=float).reshape(-1, len(rows[0]))
        cols = {h: body[:, k] for k, h in enumerate(header)}
    else:
        raise FileNotFoundError(f"{directory}: no results.csv or results.npz here (write "
                                "them with `kidym run MODEL --out DIR`)")
    t = cols.pop("t")
    states = tuple(side.get("state_names") or ())
    result = Result(t=t, values=cols, state_names=states, success=bool(side.get("success", True)),
                    status=int(side.get("status", 0)), message=str(side.get("message", "")),
                    nfev=int(side.get("nfev", 0)), parameters=dict(side.get("parameters", {})),
                    stats=dict(side.get("stats", {})), failure=side.get("failure"))
    return result, side
