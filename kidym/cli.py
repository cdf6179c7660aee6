"""The ``kidym`` command (SPEC §4): check, equations, run."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from numpy.linalg import LinAlgError

from kidym import terminal
from kidym.cli_calc import (
    check_inverse_kinematics,
    check_kinematics,
    cmd_run_inverse_kinematics,
    cmd_run_kinematics,
    equations_kinematics,
)
from kidym.cli_common import input_tables as _input_tables
from kidym.cli_common import load as _load
from kidym.cli_common import load_tasks as _load_tasks
from kidym.cli_common import pairs as _pairs
from kidym.cli_common import read as _read
from kidym.cli_common import reporter as _reporter
from kidym.cli_output import model_summary as _summary
from kidym.cli_output import write_outputs as _write_outputs
from kidym.cli_types import output_points
from kidym.errors import CompileError, DerivationError, ParseError, RunInterrupted, SimulationError


def cmd_check(args: argparse.Namespace) -> int:
    from kidym.eom.equations import derive

    model = _load(args.model)
    if model.calculation == "KINEMATICS" and not model.bodies:
        return check_kinematics(args.model)
    if model.calculation == "INVERSE_KINEMATICS":
        return check_inverse_kinematics(model)
    for model in _load_tasks(args.model, quiet=True):   # every task (warnings printed)
        eq = derive(model)
        start = _constrained_start(model, eq) if eq.constraints is not None else None
        print(_summary(model, eq))
        if start is not None:
            print(start)
        if eq.n_w:
            from kidym.analysis.integrals import first_integrals

            try:
                print("\n".join(first_integrals(model).lines()))
            except (ValueError, DerivationError) as exc:
                print(f"  first integrals: not searched ({exc})")
    return 0


def _constrained_start(model, eq) -> str:
    """``kidym check`` of a model with constraints: their rank and the consistent start
    at the model's initial values (an error if they are dependent or cannot close)."""
    import numpy as np

    from kidym.eom.constraints import Stabilization, rank
    from kidym.simulation.layout import initial_state
    from kidym.simulation.simulate import NumpySystem
    from kidym.simulation.spec import prepare_run

    system = NumpySystem.build(eq)
    p = system.parameter_vector()
    t0 = model.time_span()[0]
    y0 = initial_state(system.state_names, model, None)
    try:
        with np.errstate(all="ignore"):
            r = rank(system.constraint_block(t0, y0, p)[2].G)
            changed = prepare_run(system, constraints=Stabilization()).adjusted
    except (ZeroDivisionError, OverflowError, TypeError, ValueError) as exc:
        # the generated Python at a state where a formula has no real value (1/0, e^1e300,
        # sqrt(-1), a complex power); other errors are the start's own messages
        if (isinstance(exc, TypeError) and "complex" not in str(exc)) or (
                type(exc) is ValueError and str(exc) != "math domain error"):
            raise
        why = {ZeroDivisionError: "a division by zero", OverflowError: "a number beyond "
               "±1.8e308", TypeError: "a complex number",
               ValueError: "a function outside its domain"}[type(exc)]
        names = [str(s) for s in (*eq.coordinates, *eq.speeds)]
        state = ", ".join(f"{n} = {v:.6g}" for n, v in zip(names, y0))
        raise ValueError(f"the equations of the constraints cannot be evaluated at the start "
                         f"(t = {t0:g}, {state}): {why} ({exc}); check the initial values, "
                         "the parameters and the formulas of the constraints") from exc
    line = (f"  constraint Jacobian at the start: rank {r} of {eq.m} (independent); "
            "the start ")
    if not changed:
        return line + "satisfies them"
    return line + "is solved from them: " + ", ".join(
        f"{n} {old:.6g} → {new:.6g}" for n, (old, new) in changed.items())


def cmd_equations(args: argparse.Namespace) -> int:
    from kidym.eom.equations import derive
    from kidym.report.equations import to_json

    if _calculation(args.model) == "KINEMATICS":
        return equations_kinematics(args)
    tasks = _load_tasks(args.model, quiet=args.format == "json")
    if len(tasks) > 1 and args.format != "text":
        raise ValueError(f"{args.model} holds {len(tasks)} tasks (" + ", ".join(
            m.name for m in tasks) + f"): --format {args.format} writes the equations of "
            "one model; `kidym equations` prints every task as text, or put each task in "
            "a file of its own")
    for k, model in enumerate(tasks):
        eq = derive(model, formation=args.formation)
        if args.format == "json":
            sys.stdout.write(to_json(eq, expanded=args.expanded or None,
                                     stage=getattr(args, "stage", None) or "final"))
        else:
            if len(tasks) > 1:
                sys.stdout.write(("\n" if k else "") + f"=== task {k + 1} of {len(tasks)}: "
                                 f"{model.name} ===\n")
            sys.stdout.write(_print_equations(eq, args))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    formats = _plot_formats(args)   # options are checked before anything is computed
    rep = _reporter(args)
    with rep.stage("model"):   # (the file is parsed once: _read)
        calculation = _calculation(args.model)
        if calculation not in ("KINEMATICS", "INVERSE_KINEMATICS"):
            model = _load(args.model)
    if calculation == "KINEMATICS":
        return cmd_run_kinematics(args)
    if calculation == "INVERSE_KINEMATICS":
        return cmd_run_inverse_kinematics(args)
    tasks = _load_tasks(args.model, quiet=True)
    if len(tasks) > 1:
        return _run_tasks(args, tasks, rep, formats)
    return _run_task(args, model, rep, formats,
                     Path(args.out) if args.out else Path("kidym-out") / model.name)


def _run_tasks(args: argparse.Namespace, tasks: list, rep, formats) -> int:
    """``kidym run`` of a file of several tasks: each in a folder of its own under
    ``--out`` (default ``kidym-out/FILE``), named after the task, as for a kinematics
    file; a task that fails is reported and the others still run (exit status 2)."""
    root = Path(args.out) if args.out else Path("kidym-out") / Path(args.model).stem
    status = 0
    for k, model in enumerate(tasks):
        print(f"task {k + 1} of {len(tasks)}: {model.name} → {root / model.name}")
        try:
            status = max(status, _run_task(args, model, rep, formats, root / model.name))
        except SimulationError as exc:
            print(f"kidym: error: {exc}", file=sys.stderr)
            status = 2
        if status == INTERRUPTED_STATUS:   # Ctrl-C stops the file, not only its task
            break
    return status


def _run_task(args: argparse.Namespace, model, rep, formats, out: Path) -> int:
    """``kidym run`` of one model (one task of its file) into ``out``."""
    if model.variations:   # ВАРЬИРОВАТЬ of parameters: a study, not one run
        varied = ", ".join(v.name for v in model.variations)
        raise ValueError(f"model `{model.name}` is a parameter study (ВАРЬИРОВАТЬ varies "
                         f"{varied}): run it with `kidym sweep {args.model}`")
    if model.calculation in ("STATICS", "FREE_VIBRATIONS") or args.no_plots:
        return _run(args, model, out, rep, formats, None)
    from kidym.report.plot_worker import PlotWorker

    # matplotlib is imported by a process of its own while this one runs (where a core
    # is idle; kidym.report.plot_worker)
    plotter = PlotWorker.start(model)
    try:
        return _run(args, model, out, rep, formats, plotter)
    finally:
        if plotter is not None:
            plotter.close()


def _run(args: argparse.Namespace, model, out: Path, rep, formats, plotter) -> int:
    """``kidym run`` of a model read: derive, simulate, write (``plotter``: the process
    drawing the plots, or ``None``)."""
    from kidym.outdir import check_replaceable

    with rep.stage("equations"):
        from kidym.eom.stored import derived

        eq = derived(model)
    requests = _plot_requests(args, eq)   # `--plot nosuch` fails before the run
    check_replaceable(out, force=args.force, keep=[args.model])  # before the run, not after
    if model.calculation in ("STATICS", "FREE_VIBRATIONS"):
        from kidym.cli_analysis import run_analysis

        if getattr(args, "free", None):
            raise SystemExit("kidym: error: --free applies to a motion: the initial values "
                             "of a statics or free-vibrations calculation are the start of "
                             "a search, which may change them all")

        return run_analysis(args, model, eq, _pairs)
    from kidym.simulation.api import simulate
    from kidym.simulation.layout import defaulted_states

    initial = _pairs(args.initial, "--initial")
    unset = defaulted_states([str(s) for s in (*eq.coordinates, *eq.speeds)], model, initial)
    if eq.constraints is not None:
        unset = []   # the dependent ones are solved from the constraints (reported below)
    if unset and not getattr(args, "quiet", False):
        print("note: no initial value given for " + ", ".join(unset) + "; taken as 0",
              file=sys.stderr)
    system = _tracked(eq, args, model, rep)
    from kidym.simulation.watch import watching

    try:
        with rep.stage("simulation"), watching(rep):   # a bar on a terminal; Ctrl-C stops
            result = simulate(system, t_end=args.t_end, initial=initial,
                              parameters=_pairs(args.set, "--set"), engine=args.engine,
                              method=args.method, rtol=args.rtol, atol=args.atol,
                              n_points=args.points, max_step=args.max_step,
                              jacobian=args.jacobian, formulation=_formulation(args),
                              inputs=_input_tables(getattr(args, "input", None)),
                              free=_names(getattr(args, "free", None)),
                              monitor_energy=not getattr(args, "no_energy_monitor", False))
    except SimulationError as exc:
        # the results up to the failure are written (marked partial in results.json),
        # then the error is reported and the exit status is 2
        if exc.result is not None and exc.result.t.size:
            _write_outputs(args, model, eq, exc.result, out, rep=rep, requests=requests,
                           plot_formats=formats, plotter=plotter)
        raise
    except RunInterrupted as exc:
        return _interrupted(args, model, exc, out)
    if not args.no_integrals and not model.inputs:   # (driven from outside: none kept)
        _monitor_integrals(model, result, _pairs(args.set, "--set"))
    _write_outputs(args, model, eq, result, out, rep=rep, requests=requests,
                   plot_formats=formats, plotter=plotter)
    return 0


def _names(values: list[str] | None) -> tuple[str, ...] | None:
    """The names of a repeatable comma-separated option (``--free q2,q3``)."""
    if not values:
        return None
    names = tuple(n.strip() for v in values for n in v.split(","))
    if not all(names):
        raise SystemExit(f"kidym: error: --free takes names separated by commas; got "
                         f"`{','.join(values)}`")
    return names


def _monitor_integrals(model, result, parameters) -> None:
    """``result.stats["first_integrals"]``: the drift of each first integral of ``model``
    (found by :func:`kidym.analysis.integrals.first_integrals`) over the run."""
    from kidym.analysis.integrals import first_integrals, integral_drift

    try:   # the drift needs the integrals, not their symbolic proofs (SymPy, ~1 s)
        found = first_integrals(model, parameters=parameters, budget_s=0)
    except (ValueError, DerivationError) as exc:   # the run stands; its check is missing
        print(f"note: first integrals not searched: {exc}", file=sys.stderr)
        return
    if found.skipped:
        return
    integral_drift(found, result, parameters=parameters)   # → result.stats


def _formulation(args: argparse.Namespace):
    """``formulation=`` of ``kidym.simulate`` from ``--formulation`` and ``--independent``."""
    from kidym.simulation.minimal import Partitioning

    independent = tuple(x for arg in (args.independent or []) for x in arg.split(",") if x)
    if args.formulation != "minimal":
        if independent:
            raise ValueError("--independent chooses the minimal form's independent "
                             "coordinates: add --formulation minimal")
        return args.formulation
    return Partitioning(independent=independent)


#: file formats of ``--plot-format`` (matplotlib's Agg backend draws all three)
PLOT_FORMATS = ("png", "svg", "pdf")


def _plot_formats(args: argparse.Namespace) -> tuple[str, ...]:
    """The ``--plot-format`` list, checked (PNG alone by default: SVG doubles the time of
    the plots)."""
    text = getattr(args, "plot_format", None) or "png"
    formats = tuple(dict.fromkeys(f.strip().lower() for f in text.split(",") if f.strip()))
    bad = [f for f in formats if f not in PLOT_FORMATS]
    if bad or not formats:
        raise SystemExit(f"kidym: error: --plot-format: `{text}` is not a list of "
                         f"{', '.join(PLOT_FORMATS)} (e.g. --plot-format png,svg)")
    return formats


def _plot_requests(args: argparse.Namespace, eq) -> list:
    """The ``--plot`` requests, each name checked against what the run will record
    (coordinates, speeds, outputs, energy, multipliers, ``t``) before the run."""
    if not args.plot or args.no_plots:
        return []
    from kidym.report.plot_worker import parse_plot_option
    from kidym.simulation.energy import POWER

    known = ["t", *map(str, eq.coordinates), *map(str, eq.speeds), *eq.outputs_named,
             "energy", POWER,
             *(eq.constraints.multiplier_names if eq.constraints is not None else ())]
    requests = [parse_plot_option(x) for x in args.plot]
    for text, request in zip(args.plot, requests):
        for name in (*request.curves, *request.against):
            if name not in known:
                import difflib

                close = difflib.get_close_matches(name, known, n=1)
                raise SystemExit(
                    f"kidym: error: --plot {text}: no quantity `{name}` in this model"
                    + (f" (did you mean `{close[0]}`?)" if close else "")
                    + "; it records: " + ", ".join(known))
        if not request.curves:
            raise SystemExit(f"kidym: error: --plot {text}: no quantity to plot")
    return requests


def _calculation(path: str) -> str | None:
    """The calculation type of the first task of ``path`` (errors surface later)."""
    try:
        return _read(path)[0].calculation
    except (ParseError, OSError):
        return None


def cmd_fmt(args: argparse.Namespace) -> int:
    """``kidym fmt MODEL``: print (or write, or check) the canonical form."""
    from kidym.lang.fmt import format_source
    from kidym.lang.source import decode
    from kidym.simulation.result import write_atomically

    path = Path(args.model)
    text, _encoding = decode(path.read_bytes())
    try:
        out = format_source(text, language=args.keywords)
    except ParseError as exc:
        raise ParseError(exc.diagnostics, filename=str(path), source=text) from None
    if args.check:
        if out != text:
            print(f"{path}: not in canonical form", file=sys.stderr)
            return 1
        return 0
    if args.in_place:
        write_atomically(path, out)  # UTF-8
        return 0
    sys.stdout.write(out)
    return 0


def add_fmt_command(sub) -> None:
    """Register ``kidym fmt``."""
    p = sub.add_parser("fmt", help="print a model in canonical form")
    p.add_argument("model", help="model file (.kdm)")
    p.add_argument("--keywords", choices=("ru", "uk", "en"), default=None,
                   help="spell instruction names in this language (default: as written)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true",
                   help="exit 1 if the file is not in canonical form; write nothing")
    g.add_argument("--in-place", action="store_true",
                   help="rewrite the file (as UTF-8) instead of printing")
    p.set_defaults(func=cmd_fmt)


def cmd_codegen(args: argparse.Namespace) -> int:
    from kidym.codegen import build, generate_c
    from kidym.eom.equations import derive
    from kidym.outdir import check_replaceable, staged
    from kidym.simulation.result import write_atomically

    model = _load(args.model)
    out = Path(args.out) if args.out else Path("kidym-out") / f"{model.name}-c"
    check_replaceable(out, force=args.force, keep=[args.model])  # before the work
    eq = derive(model)
    code = generate_c(eq, fold=args.fold, cse=not args.no_cse, hoist=not args.no_hoist)
    with staged(out, force=args.force, command="kidym codegen", keep=[args.model]) as stage:
        path = stage.final(write_atomically(stage.path / f"{model.name}.c", code.source))
        parts = [stage.final(write_atomically(stage.path / f"{model.name}.part{k}.c", part))
                 for k, part in enumerate(code.parts)]
    print(f"operation counts of {model.name} ({eq.n_q} coordinates, {eq.n_w} speeds; "
          f"options: " + ", ".join(f"{k}={v}" for k, v in code.options.items()) + ")")
    print(code.counts_table())
    if code.options.get("solve") == "recursive":
        print("mass matrix and forcing: not written out (an open tree solved by the "
              "articulated-body recursion, docs/compiled.md)")
    else:
        print(f"mass matrix and forcing alone: {code.mf_counts}")
    size = sum(len(x.encode("utf-8")) for x in code.sources) / 1024
    print(f"C source: {path} ({size:.1f} kB" + (f", with {len(parts)} parts beside it: "
                                                f"{parts[0].name} …)" if parts else ")"))
    if args.build:
        print(f"library: {build(code)}")
    return 0


def add_codegen_parser(sub) -> None:
    """The ``codegen`` subcommand."""
    p = sub.add_parser("codegen", help="write the generated C and print operation counts")
    p.add_argument("model", help="model file (.kdm)")
    p.add_argument("--out", default=None,
                   help="output directory, replaced whole (default: kidym-out/MODEL_NAME-c)")
    _add_force(p)
    p.add_argument("--fold", action="store_true",
                   help="write parameter values into the code (no runtime parameter vector)")
    p.add_argument("--no-cse", action="store_true", help="no common-subexpression elimination")
    p.add_argument("--no-hoist", action="store_true",
                   help="compute parameter-only quantities in every call, not once")
    p.add_argument("--build", action="store_true",
                   help="also compile the library into the cache and print its path")
    p.set_defaults(func=cmd_codegen)


def _version() -> str:
    """The installed distribution's version (package metadata: no kidym module is
    imported), else that of this source tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kidym")
    except PackageNotFoundError:
        from kidym import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``kidym``."""
    parser = argparse.ArgumentParser(
        prog="kidym",
        description="Equations of motion of multibody systems from KiDyM models "
                    "(.kdm), shown and solved.")
    parser.add_argument("--version", action="version", version=f"kidym {_version()}",
                        help="print the version of kidym and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("check", help="parse and validate a model; print its summary")
    p.add_argument("model", help="model file (.kdm)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("equations", help="print the equations of motion")
    p.add_argument("model", help="model file (.kdm)")
    p.add_argument("--format", choices=("text", "latex", "markdown", "json"), default="text",
                   help="text (Unicode, structural form), latex (a document pdflatex "
                        "compiles), markdown, or json (sympify-able strings)")
    p.add_argument("--expanded", action="store_true",
                   help="also give the equations with every named quantity substituted")
    _add_equations_options(p)
    p.set_defaults(func=cmd_equations)

    p = sub.add_parser("run", help="simulate; write results.csv and plots")
    p.add_argument("model", help="model file (.kdm)")
    p.add_argument("--t-end", type=float, default=None, help="end time (default: the model's)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="override a parameter value (repeatable)")
    p.add_argument("--initial", action="append", metavar="NAME=VALUE",
                   help="override an initial value, e.g. phi1=0.5 or phi1't=0 (repeatable)")
    p.add_argument("--free", action="append", metavar="NAMES",
                   help="coordinates and speeds whose given initial values the start on the "
                        "constraints may change, e.g. q2,q3 (as СВОБОДНЫЕ/FREE in the model; "
                        "repeatable)")
    p.add_argument("--input", action="append", metavar="NAME=FILE.csv",
                   help="bind an input of INPUTS/ВХОДЫ to a table: a CSV file of time and "
                        "value, linearly interpolated (repeatable)")
    p.add_argument("--engine", choices=("numpy", "compiled", "auto"), default="auto",
                   help="numpy (solve_ivp over generated Python), compiled (generated C, "
                        "the whole loop in C on SUNDIALS, cached), or auto (the default: "
                        "compiled when it pays off, by a short NumPy probe of the run; "
                        "says what it chose)")
    p.add_argument("--method", default="DOP853",
                   help="solve_ivp method: DOP853 (default), RK45, Radau, BDF, LSODA")
    p.add_argument("--jacobian", choices=("auto", "analytic", "fd"), default="auto",
                   help="Jacobian of the implicit methods (Radau, BDF, LSODA; compiled BDF): "
                        "analytic (from the named quantities), fd (the integrator's "
                        "difference quotients), auto (analytic where available)")
    p.add_argument("--rtol", type=float, default=1e-9, help="relative tolerance (1e-9)")
    p.add_argument("--atol", type=float, default=1e-12, help="absolute tolerance (1e-12)")
    p.add_argument("--max-step", type=float, default=float("inf"), dest="max_step",
                   help="largest integration step (default: no limit); stiff virtual "
                        "potentials need a fraction of their vibration period")
    p.add_argument("--points", type=output_points, default=501,
                   help="number of output times (501)")
    p.add_argument("--formulation", choices=("augmented", "minimal", "ali3"),
                   default="augmented",
                   help="models with constraints (УРАВНЕНИЯ): augmented (default; all "
                        "coordinates, multipliers solved with the accelerations, drift "
                        "projected; a loop reaching a singular position goes on with "
                        "ali3), minimal (an ODE in the independent coordinates, "
                        "chosen by pivoting and re-chosen where they degrade; NumPy engine) "
                        "or ali3 (augmented, with singular positions of a loop passed by "
                        "an index-3 augmented Lagrangian)")
    p.add_argument("--independent", action="append", metavar="NAMES",
                   help="with --formulation minimal: the coordinates to start with as "
                        "independent (comma-separated or repeated; default: by pivoting)")
    p.add_argument("--out", default=None,
                   help="output directory, replaced whole by this run's files (default: "
                        "kidym-out/MODEL_NAME)")
    p.add_argument("--no-integrals", action="store_true", dest="no_integrals",
                   help="do not search the model's first integrals nor report their drift")
    p.add_argument("--no-energy-monitor", action="store_true", dest="no_energy_monitor",
                   help="do not fail a run of a conservative model whose energy moves more "
                        "than its tolerances allow (docs/output.md, \"The energy "
                        "monitor\")")
    _add_force(p)
    _add_run_output_options(p)
    p.set_defaults(func=cmd_run)
    add_fmt_command(sub)
    _add_animate_command(sub)
    from kidym.cli_analysis import add_parsers

    add_parsers(sub, _pairs, _load, _add_force)
    add_codegen_parser(sub)
    from kidym.study.commands import add_parser as add_sweep_parser

    add_sweep_parser(sub, _pairs, _load, _add_force)
    from kidym.export.commands import add_parser as add_export_parser

    add_export_parser(sub, _load, _add_force)
    from kidym.robots.command import add_parser as add_import_parser

    add_import_parser(sub)
    return parser


# ----------------------------------------------------------------- output (issue 6)
def _add_force(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true",
                   help="replace the output directory even if it holds files kidym did not "
                        "write (they are deleted); without it such a directory is refused")


def _add_verbosity(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bars or notes (errors only)")
    g.add_argument("-v", "--verbose", action="store_true",
                   help="also print each stage with its wall time")


def _add_equations_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stage", choices=("final", "holonomic", "cauchy"), default=None,
                   help="final: one equation of motion per independent speed (default for "
                        "latex/markdown/json); holonomic: the first stage U_hol (models with "
                        "pseudo-velocities); cauchy: q' = B w + beta, M, F (default for text)")
    p.add_argument("--simplify-budget", type=float, default=10.0, metavar="SECONDS",
                   help="time allowed for simplifying the --expanded form (10)")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help="time allowed for expanding (--expanded); what is not expanded "
                        "in time is named in a warning (default: no limit)")
    p.add_argument("--formation", choices=("auto", "composite", "structural"), default="auto",
                   help="how M and F are summed: composite bodies (auto; not with principal "
                        "axes), or body by body over partial velocities "
                        "as in the papers' eq. (2) (structural)")
    _add_verbosity(p)


def _print_equations(eq, args: argparse.Namespace) -> str:
    from kidym.report.equations import equation_set, text_of
    from kidym.report.latex import latex_document, markdown_of

    stage = args.stage or ("cauchy" if args.format == "text" else "final")
    rep = _reporter(args)
    bars = []

    def progress(done: int, total: int) -> None:
        if not bars:
            bars.append(rep.bar("expanding", 0, total))
        bars[0].update(done)

    with rep.stage("equations"):
        es = equation_set(eq, stage=stage, expanded=args.expanded,
                          simplify_budget=args.simplify_budget,
                          expand_budget=args.budget, progress=progress)
    for bar in bars:
        bar.close()
    for w in es.warnings:
        rep.note(f"warning: {w}")
    if args.format == "latex":
        return latex_document(es)
    if args.format == "markdown":
        return markdown_of(es)
    return text_of(es)


def _add_run_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default="csv", metavar="LIST",
                   help="result files, comma-separated from csv,npz,parquet (csv is always "
                        "written; parquet needs pyarrow)")
    p.add_argument("--report", action="store_true",
                   help="write report.html (self-contained, works offline) and report.md")
    p.add_argument("--animate", action="store_true",
                   help="write animation.html, a 3-D view of the bodies (three.js, offline)")
    p.add_argument("--plot", action="append", metavar="SPEC",
                   help="an extra plot: `a,b` (time histories), `y(x)` or `z(x,y)` (repeatable)")
    p.add_argument("--no-plots", action="store_true", help="write no plot files")
    p.add_argument("--plot-format", default="png", metavar="FORMATS",
                   help="plot file formats, comma-separated from png, svg, pdf (png: "
                        "matplotlib's Agg backend; each further format adds its own drawing)")
    p.add_argument("--degrees", action="store_true",
                   help="plot angles (unwrapped) in degrees and their rates in degrees per "
                        "time unit (default: radians)")
    _add_verbosity(p)


def _compiled(eq, rep, *, jacobian: bool = False):
    """The compiled system of ``eq``; on a terminal a bar follows the compiler runs (a
    big model's parts compile in parallel, for minutes without it). ``jacobian``: with
    the analytic Jacobian (for ``BDF``)."""
    from kidym.simulation.compiled import CompiledSystem

    bars = []

    def progress(done: int, total: int) -> None:
        if not bars:
            bars.append(rep.bar("compiling", 0, total))
        bars[0].update(done)

    # each stage (cache key, generating C, compiling, loading) timed and shown
    system = CompiledSystem.build(eq, progress=progress, jacobian=jacobian, stage=rep.stage)
    for bar in bars:
        bar.close()
    return system


def _tracked(eq, args: argparse.Namespace, model, rep=None):
    """``eq``; for the compiled engine its library (built with a progress bar). (The
    run's own bar, both engines, is drawn through :mod:`kidym.simulation.watch`.)"""
    rep = rep if rep is not None else _reporter(args)
    if getattr(args, "engine", "numpy") == "compiled":
        return _compiled(eq, rep, jacobian=getattr(args, "method", "") == "BDF"
                         and getattr(args, "jacobian", "auto") != "fd")
    return eq


#: The exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
INTERRUPTED_STATUS = 130


def _interrupted(args: argparse.Namespace, model, exc: RunInterrupted, out: Path) -> int:
    """Ctrl-C stopped the run: its results up to then are written whole (the data files
    only, marked partial in ``results.json``), one line says so; exit status 130."""
    from kidym.outdir import staged

    result = exc.result
    if result is None or not result.t.size:
        print("kidym: interrupted", file=sys.stderr)
        return INTERRUPTED_STATUS
    formats = tuple(dict.fromkeys(["csv", *(f.strip() for f in args.format.split(",")
                                            if f.strip())]))
    with staged(out, force=args.force, command="kidym run", keep=[args.model]) as stage:
        try:
            result.write(stage.path, formats=formats, model=model, run_id=stage.run_id)
        except ImportError as exc:
            raise ValueError(str(exc)) from None
    print(f"kidym: interrupted at t = {exc.time:.6g}; the results up to then are in {out} "
          "(marked partial)", file=sys.stderr)
    return INTERRUPTED_STATUS


def cmd_animate(args: argparse.Namespace) -> int:
    from kidym.lang import parse
    from kidym.outdir import add_to_run, staged
    from kidym.report.animation import write_animation
    from kidym.simulation.result import load_results

    result, side = load_results(args.results)
    if args.model:
        model = _load(args.model)
    elif side.get("model_source") is not None:
        model = parse(side["model_source"], filename=side.get("model_file"),
                      name=side.get("model"))
    else:
        raise ValueError(f"{args.results}: results.json does not hold the model source; "
                         "give the model with --model FILE")
    results = Path(args.results)
    if args.out and Path(os.path.realpath(args.out)) != Path(os.path.realpath(results)):
        keep = [results, *([args.model] if args.model else [])]
        with staged(args.out, force=args.force, command="kidym animate", keep=keep) as stage:
            path = stage.final(write_animation(stage.path, model, result))
    else:  # beside the results: the animation joins their run
        add_to_run(results, "animation.html")
        now = json.loads((results / "results.json").read_text(encoding="utf-8")) \
            if (results / "results.json").exists() else {}
        if side.get("run_id") != now.get("run_id"):
            raise ValueError(f"{results}: another run replaced these results while the "
                             "animation was made; run `kidym animate` again")
        path = write_animation(results, model, result)
    print(f"animation: {path}")
    return 0


def _add_animate_command(sub) -> None:
    p = sub.add_parser("animate", help="write a 3-D animation (HTML) of a results directory")
    p.add_argument("results", help="directory written by `kidym run --out DIR`")
    p.add_argument("--model", default=None,
                   help="model file (default: the source recorded in results.json)")
    p.add_argument("--out", default=None,
                   help="a directory of its own for animation.html, replaced whole "
                        "(default: RESULTS, beside the results)")
    _add_force(p)
    _add_verbosity(p)
    p.set_defaults(func=cmd_animate)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kidym`` command; returns the exit status."""
    terminal.install()  # model text is shown, never obeyed: control characters escaped
    args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()   # a closed pipe shows here, not at interpreter exit
        return status
    except BrokenPipeError:
        # `kidym run … | head`: the reader has gone; no traceback, and nothing more is
        # written to the pipe (Python flushes stdout again at exit)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141   # as a command killed by SIGPIPE (128 + 13)
    except ParseError as exc:
        print(exc.render(), file=sys.stderr)
        n = len(exc.errors)
        print(f"{n} error{'s' if n != 1 else ''}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # Ctrl-C outside a run (reading, deriving, compiling): one line, no traceback
        print("kidym: interrupted", file=sys.stderr)
        return INTERRUPTED_STATUS
    except (DerivationError, SimulationError, CompileError) as exc:
        print(f"kidym: error: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, DerivationError) else 2
    # (KinematicsError is a ValueError; ImportError: an optional extra such as kidym[sweep])
    except (OSError, KeyError, ValueError, LinAlgError, ImportError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"kidym: error: {msg}", file=sys.stderr)
        return 1


def entry() -> None:
    """The ``kidym`` program (the script and ``python -m kidym``): :func:`main`, then an
    exit that skips the collector's last passes over every object the libraries made
    (``gc.freeze``: about 0.3 s of a command's end with SymPy, SciPy and SymEngine
    loaded, ``benchmarks/cli.py``; exit handlers still run, files are closed)."""
    import gc

    status = main()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    entry()
