"""Run every example model in both engines and save, or compare, the trajectories.

Used to show that a refactoring of the simulation layer changes no number: run it on
the code before (``save DIR``), then after (``compare DIR``), which runs again and
compares each trajectory to the saved one with a relative tolerance.

    python3 scripts/engine_trajectories.py save /tmp/before
    python3 scripts/engine_trajectories.py compare /tmp/before [--rtol 1e-12]

Each dynamics model of ``examples/`` (every task of a multi-task file) is simulated
over at most ``--span`` seconds of its own time span, 101 output times, in the NumPy
engine (DOP853) and the compiled one (ERK8); a model whose run fails records the
failure message instead of arrays.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _smooth(t: float, state: dict) -> float:
    """The value of an external input of a driven example."""
    return float(np.sin(2.0 * t))


def runs(span: float):
    """``(key, engine, arrays or error text)`` for every example and engine."""
    import kidym
    from kidym.lang import load_tasks

    for path in sorted((ROOT / "examples").glob("*/*.kdm")):
        try:
            tasks = load_tasks(path)
        except (ValueError, OSError) as exc:
            yield path.stem, "load", str(exc)
            continue
        for k, model in enumerate(tasks):
            if model.calculation not in (None, "DYNAMICS"):
                continue
            key = f"{path.parent.name}/{path.stem}#{k}"
            try:
                eq = kidym.derive(model)
                t0, t1 = model.time_span()
            except (ValueError, RuntimeError) as exc:
                yield key, "derive", str(exc)
                continue
            for engine in ("numpy", "compiled"):
                try:
                    # a model driven from outside (ВХОДЫ): a smooth input of time
                    r = kidym.simulate(eq, engine=engine, t_start=t0,
                                       t_end=min(t1, t0 + span), n_points=101,
                                       raise_on_failure=False,
                                       inputs={u: _smooth for u in model.inputs})
                except (ValueError, RuntimeError) as exc:
                    yield key, engine, f"{type(exc).__name__}: {exc}"
                    continue
                arrays = {"t": np.asarray(r.t)}
                arrays.update({n: np.asarray(v) for n, v in r.values.items()})
                yield key, engine, arrays


def _file(directory: Path, key: str, engine: str) -> Path:
    return directory / (key.replace("/", "__").replace("#", "_") + f"__{engine}.npz")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("save", "compare"))
    ap.add_argument("directory", type=Path)
    ap.add_argument("--rtol", type=float, default=1e-12)
    ap.add_argument("--span", type=float, default=2.0)
    args = ap.parse_args(argv)
    args.directory.mkdir(parents=True, exist_ok=True)
    worst, bad = 0.0, 0
    for key, engine, data in runs(args.span):
        f = _file(args.directory, key, engine)
        if args.action == "save":
            if isinstance(data, str):
                f.with_suffix(".txt").write_text(data)
                print(f"{key:45s} {engine:8s} error: {data[:70]}")
            else:
                np.savez(f, **data)
                print(f"{key:45s} {engine:8s} {len(data['t'])} times, {len(data) - 1} arrays")
            continue
        if isinstance(data, str):
            before = f.with_suffix(".txt")
            same = before.exists() and before.read_text() == data
            bad += not same
            print(f"{key:45s} {engine:8s} error {'same' if same else 'DIFFERS'}: {data[:60]}")
            continue
        if not f.exists():
            bad += 1
            print(f"{key:45s} {engine:8s} MISSING before")
            continue
        old = np.load(f)
        diff = 0.0
        for name in old.files:
            a, b = old[name], data.get(name)
            if b is None or a.shape != b.shape:
                diff = np.inf
                break
            scale = np.maximum(np.abs(a), 1.0)
            both_nan = np.isnan(a) & np.isnan(b)
            d = np.where(both_nan, 0.0, np.abs(a - b) / scale)
            diff = max(diff, float(np.nanmax(d)) if d.size else 0.0)
        worst = max(worst, diff)
        ok = diff <= args.rtol
        bad += not ok
        print(f"{key:45s} {engine:8s} max rel. diff {diff:.2e} {'ok' if ok else 'DIFFERS'}")
    if args.action == "compare":
        print(f"worst relative difference {worst:.2e}; {bad} differing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
