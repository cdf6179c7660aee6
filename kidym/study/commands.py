"""``kidym sweep MODEL --vary NAME=START:STOP:COUNT … [--samples N] [--scheduler ADDRESS]
[--input NAME=FILE.csv …]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kidym.errors import RunInterrupted


def cmd_sweep(args: argparse.Namespace, pairs, load) -> int:
    """Run the study, then write ``sweep.nc``, ``runs.csv`` and the summary plots into
    one output directory, published whole (:func:`kidym.outdir.staged`)."""
    from kidym.outdir import check_replaceable
    from kidym.study.design import from_options
    from kidym.study.output import STATISTICS
    from kidym.study.sweep import require_dask

    # every option is checked before anything is computed
    if args.scheduler:
        require_dask()
    if args.statistic not in STATISTICS:
        raise ValueError(f"--statistic {args.statistic}: choose one of {', '.join(STATISTICS)}")
    formats = tuple(f.strip() for f in args.plot_format.split(",") if f.strip())
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if bad:
        raise ValueError(f"--plot-format {bad[0]}: choose png, svg or pdf")
    if args.samples is not None and not args.vary:
        raise ValueError("--samples draws from the ranges of --vary NAME=LOW:HIGH; give them")
    study = from_options(args.vary, samples=args.samples, seed=args.seed) if args.vary else None
    from kidym.cli_common import input_tables

    inputs = input_tables(args.input)   # (a bad file: one line, before anything runs)
    model = load(args.model)
    out = Path(args.out) if args.out else Path("kidym-out") / f"{model.name}-sweep"
    check_replaceable(out, force=args.force, keep=[args.model])
    from kidym.report.plot_worker import PlotWorker

    # the summary plots' process, forked now (where a core is idle): it imports
    # matplotlib while this one derives and runs, and draws while the file is written
    plotter = None if args.no_plots else PlotWorker.start(model)
    try:
        return _sweep(args, pairs, model, study, out, formats, plotter, inputs)
    finally:
        if plotter is not None:
            plotter.close()


def _sweep(args: argparse.Namespace, pairs, model, study, out: Path, formats: tuple,
           plotter, inputs) -> int:
    """The study of :func:`cmd_sweep` once its options are checked (``plotter``: the
    process that draws the summary plots, or ``None``; ``inputs``: the tables of
    ``--input``)."""
    import scipy.io  # noqa: F401 (the file's writer, loaded before the runs: Ctrl-C writes at once)

    from kidym.eom.stored import derived
    from kidym.outdir import staged
    from kidym.progress import seconds
    from kidym.simulation.compiled import CompiledSystem
    from kidym.simulation.compiled_methods import analytic_jacobian
    from kidym.study.design import from_model
    from kidym.study.output import statistic, summary_plots
    from kidym.study.sweep import recorded_quantities, sweep

    eq = derived(model)
    system = CompiledSystem.build(eq, jacobian=analytic_jacobian(eq, args.method))
    if args.quantity is not None and args.quantity not in recorded_quantities(system):
        raise ValueError(f"--quantity {args.quantity}: not recorded; quantities: "
                         + ", ".join(recorded_quantities(system)))
    # the study is said before it runs (a long one shows a bar on a terminal)
    planned = study or from_model(model)
    if planned is not None:
        print(planned.describe(), flush=True)
    try:
        result = sweep(model, vary=study, system=system, parameters=pairs(args.set, "--set"),
                       initial=pairs(args.initial, "--initial"), t_end=args.t_end,
                       n_points=args.points, method=args.method, rtol=args.rtol,
                       atol=args.atol, workers=args.workers, scheduler=args.scheduler,
                       executor="dask" if args.scheduler else "threads", inputs=inputs,
                       monitor_energy=not args.no_energy_monitor)
    except RunInterrupted as exc:
        # Ctrl-C: the study so far is written whole (sweep.nc marked partial, runs.csv
        # with each run's status and reason), no plots; one line; exit status 130
        quantity = args.quantity or exc.result.quantities[0]
        stat = statistic(exc.result, quantity, args.statistic)
        with staged(out, force=args.force, command="kidym sweep", keep=[args.model]) as stage:
            exc.result.write(stage.path / "sweep.nc")
            _runs_csv(exc.result, stage.path / "runs.csv", quantity, args.statistic, stat)
        done = int((exc.result.status >= 0).sum())
        print(f"kidym: interrupted (Ctrl-C): {done} of {exc.result.study.n_runs} runs reached "
              f"their end; the study so far is in {out} (marked partial)", file=sys.stderr)
        return 130   # 128 + SIGINT, as a shell reports it (kidym.cli.INTERRUPTED_STATUS)
    quantity = args.quantity or result.quantities[0]
    stat = statistic(result, quantity, args.statistic)   # (an unknown name fails here)
    where = (f"Dask at {args.scheduler}, {result.workers} threads" if args.scheduler
             else f"{result.workers} threads")
    print(f"runs: {result.study.n_runs} in {seconds(result.wall_time_s)} on {where}; "
          f"{len(result.failed)} failed")
    for k in result.failed[:5]:
        given = ", ".join(f"{n}={v:g}" for n, v in zip(result.study.names,
                                                      result.study.table[k]))
        print(f"  run {k} ({given}): {result.reasons[k]}")
    if len(result.failed) > 5:
        print(f"  … and {len(result.failed) - 5} more (see runs.csv)")
    with staged(out, force=args.force, command="kidym sweep", keep=[args.model]) as stage:
        drawn = None
        if plotter is not None:   # the worker draws while the file is written here
            drawn = plotter.start_call(summary_plots, result, quantity, args.statistic,
                                       stage.path, formats)
        files = [result.write(stage.path / "sweep.nc"),
                 _runs_csv(result, stage.path / "runs.csv", quantity, args.statistic, stat)]
        if not args.no_plots:
            plots = drawn() if drawn is not None else None
            files += (plots if plots is not None else
                      summary_plots(result, quantity, args.statistic, stage.path, formats))
    for f in files:
        print(f"results: {stage.final(f)}")
    return 0


def _runs_csv(result, path: Path, quantity: str, how: str, stat) -> Path:
    """One row per run: its index, the varied values, status, the statistic, reason."""
    import csv

    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["run", *result.study.names, "status", f"{how} {quantity}", "nfev",
                    "reason"])
        for k, row in enumerate(result.study.table):
            w.writerow([k, *(repr(float(v)) for v in row), int(result.status[k]),
                        repr(float(stat[k])), int(result.nfev[k]), result.reasons[k]])
    return path


def add_parser(sub, pairs, load, add_force) -> None:
    """The ``sweep`` subcommand."""
    from kidym.cli_types import output_points

    p = sub.add_parser("sweep", help="a parameter study: many runs over a grid or a random "
                                     "sample of parameters and initial values, on threads "
                                     "or a Dask cluster; one NetCDF file and summary plots")
    p.add_argument("model", help="model file (.kdm)")
    p.add_argument("--vary", action="append", metavar="NAME=START:STOP:COUNT",
                   help="a grid axis (START:STOP:COUNT, or a list V1,V2,…), or with --samples "
                        "a range LOW:HIGH; a parameter or a state's initial value "
                        "(repeatable; default: the model's ВАРЬИРОВАТЬ)")
    p.add_argument("--samples", type=int, default=None, metavar="N",
                   help="draw N random runs, uniform in the --vary ranges")
    p.add_argument("--seed", type=int, default=0, help="seed of --samples (0)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on the Dask cluster of this scheduler (tcp://host:8786); "
                        "default: a local thread pool")
    p.add_argument("--workers", type=int, default=None, metavar="K",
                   help="threads of the local pool (default: all cores)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="fix a parameter for every run (repeatable)")
    p.add_argument("--initial", action="append", metavar="NAME=VALUE",
                   help="fix an initial value for every run (repeatable)")
    p.add_argument("--input", action="append", metavar="NAME=FILE.csv",
                   help="an external input (ВХОДЫ) of every run from a table of time and "
                        "value, interpolated linearly (repeatable)")
    p.add_argument("--t-end", type=float, default=None, help="end time (default: the model's)")
    p.add_argument("--points", type=output_points, default=201,
                   help="output times per run (201)")
    p.add_argument("--method", default="ERK8",
                   help="compiled integrator: ERK8 (default), ERK5, Fehlberg78, BDF, Adams")
    p.add_argument("--rtol", type=float, default=1e-9, help="relative tolerance (1e-9)")
    p.add_argument("--atol", type=float, default=1e-12, help="absolute tolerance (1e-12)")
    p.add_argument("--quantity", default=None, metavar="NAME",
                   help="the quantity of the summary plots (default: the first coordinate)")
    p.add_argument("--statistic", default="final", metavar="final|max|min|mean",
                   help="its statistic over time in the summary plots (final)")
    p.add_argument("--no-energy-monitor", action="store_true", dest="no_energy_monitor",
                   help="do not fail a run of a conservative model whose energy moves more "
                        "than its tolerances allow (docs/output.md, \"The energy monitor\")")
    p.add_argument("--no-plots", action="store_true", help="write no summary plots")
    p.add_argument("--plot-format", default="png", metavar="FORMATS",
                   help="png (default), svg, pdf, or a comma-separated list")
    p.add_argument("--out", default=None,
                   help="output directory, replaced whole (default: kidym-out/MODEL_NAME-sweep)")
    add_force(p)
    p.set_defaults(func=lambda a: cmd_sweep(a, pairs, load))
