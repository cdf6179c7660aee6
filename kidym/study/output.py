"""The results of a study as one labelled array file, and its summary plots.

The file is NetCDF in the classic 64-bit format, written with SciPy's writer (no
NetCDF C library needed; any NetCDF reader opens it), laid out as xarray writes
:meth:`kidym.study.sweep.SweepResult.to_dataset` (:func:`write_study`, which does so
without importing xarray: its first ``Dataset`` imports dask.array and pint where they
are installed, seconds of a command's start; a test checks that ``xarray.open_dataset``
of the file equals ``to_dataset()``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

#: Statistics of a quantity over time that the summary plots show.
STATISTICS = ("final", "max", "min", "mean")
_XARRAY_HINT = ("the results of a study are written with xarray: pip install 'kidym[sweep]' "
                "(or pip install xarray)")


def xarray_module():
    """The ``xarray`` module, or an ``ImportError`` saying how to install it."""
    try:
        import xarray
    except ImportError as exc:
        raise ImportError(_XARRAY_HINT) from exc
    return xarray


def dataset(result):
    """The :class:`xarray.Dataset` of a :class:`~kidym.study.sweep.SweepResult`."""
    xr = xarray_module()
    from kidym import __version__

    study = result.study
    n_t, n_q = len(result.t), len(result.quantities)
    names = file_names(study.names)
    if study.kind == "grid":
        run_dims = tuple(names)
        coords = {f: (f, a, {"kidym_name": n}) for f, n, a in zip(names, study.names,
                                                                  study.axes)}
    else:
        run_dims = ("run",)
        coords = {"run": ("run", np.arange(study.n_runs))}
        coords.update({f: ("run", study.table[:, i], {"kidym_name": n})
                       for i, (f, n) in enumerate(zip(names, study.names))})
    shape = study.shape
    coords["time"] = ("time", result.t)
    coords["quantity"] = ("quantity", np.array(result.quantities, dtype=object))
    data = {
        "value": ((*run_dims, "time", "quantity"), result.values.reshape(*shape, n_t, n_q),
                  {"long_name": "states and outputs of every run; NaN after a run stopped "
                                "or failed"}),
        "status": (run_dims, result.status.reshape(shape),
                   {"long_name": "0 reached the end, 1 stopped by a terminal event, "
                                 "-1 failed"}),
        "reason": (run_dims, np.array(result.reasons, dtype=object).reshape(shape),
                   {"long_name": "why the run stopped or failed (empty: it reached the end)"}),
        "nfev": (run_dims, result.nfev.reshape(shape),
                 {"long_name": "right-hand side evaluations"}),
        "energy_ratio": (run_dims, _energy_ratio(result).reshape(shape),
                         {"long_name": ENERGY_RATIO}),
    }
    return xr.Dataset(data, coords=coords, attrs=_global_attributes(result, __version__))


#: What the variable ``energy_ratio`` of a study's file holds.
ENERGY_RATIO = ("the energy monitor's largest |E - E(0)| / bound (above 1: the run failed "
                "by it; NaN: not monitored, see the attribute energy_monitor)")


def _energy_ratio(result) -> np.ndarray:
    """Per run, the monitor's ratio (NaN where a result has none)."""
    ratio = result.energy_ratio
    return (np.full(result.study.n_runs, np.nan) if ratio is None
            else np.asarray(ratio, dtype=float))


def file_names(names) -> list[str]:
    """The names of the varied quantities as dimensions of the file: as they are where
    NetCDF's classic format can hold them (Latin-1), else their ASCII identifier
    (:func:`kidym.symbolic.identifiers.identifier`: ``мас`` → ``mas``), made unique."""
    from kidym.study.design import RESERVED
    from kidym.symbolic.identifiers import identifier

    out: list[str] = []
    for n in names:
        try:
            n.encode("latin-1")
            f = n
        except UnicodeEncodeError:
            f = identifier(n)
        base, k = f, 2
        while f in out or f in RESERVED or (f != n and f in names):
            f, k = f"{base}_{k}", k + 1
        out.append(f)
    return out


def write_study(result, path: Path) -> Path:
    """Write a :class:`~kidym.study.sweep.SweepResult` as NetCDF (the layout of
    :func:`dataset`, as xarray's ``to_netcdf(engine="scipy", format="NETCDF3_64BIT")``
    writes it: text as UTF-8 character arrays, integers as 32-bit, non-dimension
    coordinates named in ``coordinates``), atomically."""
    from scipy.io import netcdf_file  # (kidym sweep has it imported before its runs)

    from kidym import __version__

    study = result.study
    n_t, n_q = len(result.t), len(result.quantities)
    names = file_names(study.names)
    shape = study.shape
    grid = study.kind == "grid"
    run_dims = tuple(names) if grid else ("run",)
    extra = {} if grid else {"coordinates": " ".join(sorted(names))}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        with netcdf_file(tmp, "w", version=2) as nc:
            sizes = dict(zip(run_dims, shape)) if grid else {"run": study.n_runs}
            sizes.update(time=n_t, quantity=n_q)
            for dim, size in sizes.items():
                nc.createDimension(dim, size)

            def put(name: str, dims: tuple, data: np.ndarray, attrs: dict) -> None:
                if data.dtype == object:   # text: UTF-8 bytes along a string dimension
                    raw = [str(x).encode("utf-8") for x in data.ravel()]
                    width = max([1, *map(len, raw)])
                    if f"string{width}" not in nc.dimensions:
                        nc.createDimension(f"string{width}", width)
                    data = np.array(raw, dtype=f"S{width}").reshape(data.shape)
                    data = data[..., None].view("S1").reshape(*data.shape, width)
                    dims = (*dims, f"string{width}")
                    attrs = {**attrs, "_Encoding": "utf-8"}
                elif data.dtype.kind in "iu" and data.dtype.itemsize > 4:
                    data = data.astype(np.int32)
                elif data.dtype.kind == "f":
                    attrs = {**attrs, "_FillValue": np.nan}
                var = nc.createVariable(name, data.dtype, dims)
                var[...] = data
                for key, value in attrs.items():
                    setattr(var, key, _nc_attribute(value))

            if grid:
                for f, n, a in zip(names, study.names, study.axes):
                    put(f, (f,), np.asarray(a, dtype=float), {"kidym_name": n})
            else:
                put("run", ("run",), np.arange(study.n_runs, dtype=np.int32), {})
                for i, (f, n) in enumerate(zip(names, study.names)):
                    put(f, ("run",), np.asarray(study.table[:, i], dtype=float),
                        {"kidym_name": n})
            put("time", ("time",), np.asarray(result.t, dtype=float), {})
            put("quantity", ("quantity",), np.array(result.quantities, dtype=object), {})
            put("value", (*run_dims, "time", "quantity"),
                result.values.reshape(*shape, n_t, n_q),
                {"long_name": "states and outputs of every run; NaN after a run stopped "
                              "or failed", **extra})
            put("status", run_dims, result.status.reshape(shape),
                {"long_name": "0 reached the end, 1 stopped by a terminal event, -1 failed",
                 **extra})
            put("reason", run_dims, np.array(result.reasons, dtype=object).reshape(shape),
                {"long_name": "why the run stopped or failed (empty: it reached the end)",
                 **extra})
            put("nfev", run_dims, result.nfev.reshape(shape),
                {"long_name": "right-hand side evaluations", **extra})
            put("energy_ratio", run_dims, _energy_ratio(result).reshape(shape),
                {"long_name": ENERGY_RATIO, **extra})
            for key, value in _global_attributes(result, __version__).items():
                setattr(nc, key, _nc_attribute(value))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _nc_attribute(value):
    """An attribute as xarray's SciPy backend stores it: text as UTF-8 bytes, whole
    numbers as 32-bit integers."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bool | int | np.integer):
        return np.int32(value)
    return np.float64(value)


def _global_attributes(result, version: str) -> dict:
    study = result.study
    attrs = {"model": result.model_name, "study": study.kind, "varied": " ".join(study.names),
             "description": study.describe(), "engine": "compiled",
             "executor": result.executor, "kidym": version,
             "partial": int(result.interrupted),   # 1: stopped by Ctrl-C (runs' status)
             **{k: (str(v) if not isinstance(v, int | float) else v)
                for k, v in result.options.items()}}
    if study.seed is not None:
        attrs["seed"] = study.seed
    return attrs


def statistic(result, quantity: str, how: str = "final") -> np.ndarray:
    """``how`` of ``quantity`` over time in every run, shape (n_runs,); NaN for a run
    that failed (a partial history would mislead) or stopped early for ``final``.

    Raises
    ------
    ValueError
        An unknown quantity or statistic.
    """
    if quantity not in result.quantities:
        raise ValueError(f"`{quantity}` is not recorded; quantities: "
                         + ", ".join(result.quantities))
    if how not in STATISTICS:
        raise ValueError(f"statistic {how!r}: choose one of {', '.join(STATISTICS)}")
    v = result[quantity]
    ok = result.status >= 0
    out = np.full(len(v), np.nan)
    if how == "final":
        out[ok] = v[ok, -1]
    elif ok.any():
        with np.errstate(all="ignore"):
            f = {"max": np.nanmax, "min": np.nanmin, "mean": np.nanmean}[how]
            out[ok] = f(v[ok], axis=1)
    return out


def summary_plots(result, quantity: str, how: str, directory: Path,
                  formats: tuple[str, ...] = ("png",)) -> list[Path]:
    """Plots of ``how`` of ``quantity`` against each varied name (a curve per value of
    the second name of a 2-D grid, up to 8; a scatter for a random sample), and for a
    grid of two or more names a map over the first two. Failed runs are counted in the
    title and shown as red crosses on the axis."""
    from matplotlib.figure import Figure  # (no pyplot: the session's backend is kept)

    from kidym.symbolic.identifiers import identifier

    study = result.study
    s = statistic(result, quantity, how)
    failed = result.status < 0
    label = f"{how} {quantity}"
    title_tail = f" ({int(failed.sum())} of {study.n_runs} runs failed)" if failed.any() else ""
    files: list[Path] = []

    def save(fig, stem: str) -> None:
        for fmt in formats:
            p = directory / f"{stem}.{fmt}"
            fig.savefig(p, dpi=110)
            files.append(p)

    for i, name in enumerate(study.names):
        fig = Figure(figsize=(6.4, 4.2), layout="constrained")
        ax = fig.subplots()
        x = study.table[:, i]
        if study.kind == "grid" and len(study.names) >= 2:
            other = 1 if i == 0 else 0
            grid_s = s.reshape(study.shape)
            moved = np.moveaxis(grid_s, (i, other), (0, 1)).reshape(
                len(study.axes[i]), len(study.axes[other]), -1)[:, :, 0]
            picks = np.unique(np.linspace(0, len(study.axes[other]) - 1,
                                          min(8, len(study.axes[other]))).round().astype(int))
            for j in picks:
                ax.plot(study.axes[i], moved[:, j], marker="o", ms=3,
                        label=f"{study.names[other]} = {study.axes[other][j]:.4g}")
            ax.legend(fontsize=8)
        elif study.kind == "grid":
            ax.plot(study.axes[i], s, marker="o", ms=3)
        else:
            ax.scatter(x, s, s=8)
        if failed.any():
            ax.plot(x[failed], np.full(failed.sum(), np.nanmin(s) if np.isfinite(s).any()
                                       else 0.0), "rx", label="failed")
        ax.set_xlabel(name)
        ax.set_ylabel(label)
        ax.set_title(f"{result.model_name}: {label} vs {name}{title_tail}", fontsize=10)
        ax.grid(alpha=0.3)
        stem = f"summary-{identifier(name)}"
        save(fig, stem if not any(f.stem == stem for f in files) else f"{stem}-{i + 1}")
    if study.kind == "grid" and len(study.names) >= 2:
        m = np.moveaxis(s.reshape(study.shape), (0, 1), (0, 1)).reshape(
            len(study.axes[0]), len(study.axes[1]), -1)[:, :, 0]
        fig = Figure(figsize=(6.4, 4.8), layout="constrained")
        ax = fig.subplots()
        mesh = ax.pcolormesh(study.axes[1], study.axes[0], m, shading="nearest")
        fig.colorbar(mesh, ax=ax, label=label)
        ax.set_xlabel(study.names[1])
        ax.set_ylabel(study.names[0])
        ax.set_title(f"{result.model_name}: {label}{title_tail}", fontsize=10)
        save(fig, "summary-map")
    return files
