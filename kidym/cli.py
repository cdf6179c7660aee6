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
from kidym.cli_types import output_points
from kidym.errors import CompileError, DerivationError, ParseError, SimulationError


def _pairs(items: Sequence[str] | None, what: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f"kidym: error: {what} expects NAME=VALUE, got `{item}`")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise SystemExit(f"kidym: error: {what} {name.strip()}: `{value}` is not a "
                             "number") from None
    return out


#: The model file read last, by its path and content: a command that asks for the
#: calculation type and then for the model parses its file once (a file changed since,
#: even within the same clock tick, is parsed again).
_READ: dict[tuple, tuple] = {}


def _read(path: str):
    """The first task of ``path`` and its warnings (see :data:`_READ`)."""
    tasks, warnings = _read_tasks(path)
    return tasks[0], warnings


def _read_tasks(path: str):
    """Every task of ``path`` (one model each) and the warnings (see :data:`_READ`)."""
    import hashlib

    from kidym.lang import load_tasks

    data = Path(path).read_bytes()
    key = (os.path.realpath(path), hashlib.sha256(data).hexdigest())
    if key not in _READ:
        warnings: list = []
        # (as kidym.lang.load, from the bytes hashed; stored in the cache by the bytes)
        tasks = load_tasks(path, warnings=warnings, data=data)
        _READ.clear()
        _READ[key] = (tasks, warnings)
    return _READ[key]


def _load(path: str, *, quiet: bool = False):
    return _load_tasks(path, quiet=quiet)[0]


def _load_tasks(path: str, *, quiet: bool = False) -> list:
    """Every task of a dynamics file (``КОНЕЦ;`` ends a task), its warnings printed.

    The tasks must share one calculation (a file mixing, say, ДИНАМИКА and СТАТИКА
    tasks is an error naming them): each command runs every task, as in a
    kinematics file, and one kind of output serves them all."""
    tasks, warnings = _read_tasks(path)
    if warnings and not quiet:
        src = tasks[0].source
        for w in warnings:
            print(w.format(path, src), file=sys.stderr)
    kinds = [m.calculation or "DYNAMICS" for m in tasks]
    if len(set(kinds)) > 1:
        raise ValueError(f"{path}: its {len(tasks)} tasks have different calculations ("
                         + ", ".join(f"{m.name}: {k}" for m, k in zip(tasks, kinds))
                         + "); kidym runs every task of a file with one calculation: put "
                         "the others in files of their own")
    return tasks


def _summary(model, eq) -> str:
    lines = [f"model {model.name}: OK"]
    lines.append(f"  bodies ({len(model.bodies)}): "
                 + ", ".join(b.name + (f"~{b.base}" if b.base else "") for b in model.bodies))
    lines.append(f"  coordinates ({eq.n_q}): " + ", ".join(map(str, eq.coordinates)))
    lines.append(f"  speeds ({eq.n_w}): " + ", ".join(map(str, eq.speeds)))
    cons = eq.constraints
    kinds = ("holonomic" if all(cons.holonomic) else "velocity" if not any(cons.holonomic)
             else "") if cons is not None else ""
    lines.append(f"  degrees of freedom: {eq.n_dof}"
                 + (f" ({eq.n_w} speeds, {eq.m} {kinds + ' ' if kinds else ''}constraint"
                    f"{'s' if eq.m != 1 else ''})" if eq.m else ""))
    if cons is not None:
        lines.append(f"  constraints ({eq.m}): " + ", ".join(
            f"{n} = 0 ({'holonomic' if h else 'velocity'})"
            for n, h in zip(cons.names, cons.holonomic))
            + "; multipliers " + ", ".join(cons.multiplier_names))
    if model.calculation == "KINETOSTATICS":
        lines.append("  calculation: kinetostatics (the constraints prescribe the motion; "
                     + ", ".join(eq.constraints.multiplier_names)
                     + " are the forces and torques it needs)")
    if model.calculation in ("STATICS", "FREE_VIBRATIONS"):
        lines.append("  calculation: " + ("statics (the equilibrium nearest the initial "
                     "values, its stiffness and reactions)" if model.calculation == "STATICS"
                     else "free vibrations (the equilibrium, then the eigenvalues and modes "
                     "of the linearised equations)"))
    if model.virtual_constraints:
        lines.append(f"  virtual potentials ({len(model.virtual_constraints)}): " + ", ".join(
            f"{v.name} {'= 0' if v.kind == 'equality' else '> 0'} ({v.approximation}, "
            f"α = {v.alpha})" for v in model.virtual_constraints))
    if model.events:
        lines.append(f"  events ({len(model.events)}): " + "; ".join(
            _event_summary(ev) for ev in model.events))
    if model.variations:   # ВАРЬИРОВАТЬ of parameters (docs/language.md §5.11)
        from kidym.study.design import from_model

        lines.append(f"  study: {from_model(model).describe()} (kidym sweep)")
    lines.append(f"  parameters ({len(model.parameters)}): "
                 + ", ".join(f"{p.name}={p.value:g}" for p in model.parameters))
    if model.elements:
        lines.append(f"  elements ({len(model.elements)}): "
                     + ", ".join(f"{e.name}.{e.coordinate}" for e in model.elements))
    lines.extend(_velocity_summary(model, eq))
    lines.extend(_controls_summary(eq))
    lines.append(f"  named quantities: {len(eq.intermediates())}")
    return "\n".join(lines)


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
    from kidym.simulate.layout import initial_state
    from kidym.simulate.simulate import NumpySystem
    from kidym.simulate.spec import prepare_run

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

        return run_analysis(args, model, eq, _pairs)
    from kidym.simulate.api import simulate
    from kidym.simulate.layout import defaulted_states

    initial = _pairs(args.initial, "--initial")
    unset = defaulted_states([str(s) for s in (*eq.coordinates, *eq.speeds)], model, initial)
    if eq.constraints is not None:
        unset = []   # the dependent ones are solved from the constraints (reported below)
    if unset and not getattr(args, "quiet", False):
        print("note: no initial value given for " + ", ".join(unset) + "; taken as 0",
              file=sys.stderr)
    system = _tracked(eq, args, model, rep)
    try:
        with rep.stage("simulation"):
            result = simulate(system, t_end=args.t_end, initial=initial,
                              parameters=_pairs(args.set, "--set"), engine=args.engine,
                              method=args.method, rtol=args.rtol, atol=args.atol,
                              n_points=args.points, max_step=args.max_step,
                              jacobian=args.jacobian, formulation=_formulation(args))
    except SimulationError as exc:
        # the results up to the failure are written (marked partial in results.json),
        # then the error is reported and the exit status is 2
        if exc.result is not None and exc.result.t.size:
            _write_outputs(args, model, eq, exc.result, out, rep=rep, requests=requests,
                           plot_formats=formats, plotter=plotter)
        raise
    if not args.no_integrals:
        _monitor_integrals(model, result, _pairs(args.set, "--set"))
    _write_outputs(args, model, eq, result, out, rep=rep, requests=requests,
                   plot_formats=formats, plotter=plotter)
    return 0


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
    from kidym.simulate.minimal import Partitioning

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
    from kidym.simulate.energy import POWER

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


def equations_kinematics(args: argparse.Namespace) -> int:
    """``kidym equations`` on a kinematics file: its formulas and derivatives, every task
    (text; other formats are for equations of motion)."""
    from kidym.calc.kinematics import kinematics_text
    from kidym.lang import load_tasks

    if args.format != "text":
        raise SystemExit(f"kidym: error: {args.model} is a kinematics calculation (РАСЧЕТ := "
                         "КИНЕМАТИКА): it has no equations of motion to give as "
                         f"{args.format}; `kidym equations` prints its formulas as text, "
                         "`kidym run` computes them")
    texts = [kinematics_text(m) if m.calculation == "KINEMATICS" and not m.bodies else
             f"Model {m.name}: calculation {m.calculation} (see `kidym equations` on a file "
             "holding this task alone)\n" for m in load_tasks(args.model)]
    sys.stdout.write("\n".join(texts))
    return 0


def check_kinematics(path: str) -> int:
    """``kidym check`` on a kinematics file: a summary of every task."""
    from kidym.calc.kinematics import requested
    from kidym.lang import load_tasks

    for model in load_tasks(path):
        print(f"model {model.name}: OK" + (f" — {model.title}" if model.title else ""))
        print(f"  calculation: kinematics, t from {model.t_start:g} to {model.t_end:g}")
        print(f"  parameters ({len(model.parameters)}): "
              + ", ".join(f"{p.name}={p.value:g}" for p in model.parameters))
        print(f"  formulas ({len(model.definitions)}): "
              + ", ".join(d.name for d in model.definitions))
        print("  computed: " + ", ".join(requested(model)))
        print(f"  plots: {len(model.plots)}")
    return 0


def _kinematics_unused(args: argparse.Namespace, *, report: bool = True) -> list[str]:
    """The options of ``kidym run`` given that a kinematics calculation has no use for
    (it integrates nothing and has no bodies to animate)."""
    given = [("--engine", args.engine != "numpy"), ("--method", args.method != "DOP853"),
             ("--jacobian", args.jacobian != "auto"), ("--rtol", args.rtol != 1e-9),
             ("--atol", args.atol != 1e-12), ("--max-step", args.max_step != float("inf")),
             ("--formulation", args.formulation != "augmented"),
             ("--independent", bool(args.independent)),
             ("--no-integrals", args.no_integrals), ("--animate", args.animate),
             ("--plot", bool(args.plot)), ("--degrees", args.degrees),
             ("--format", args.format != "csv"), ("--plot-format", args.plot_format != "png"),
             ("--report", args.report and not report)]
    return [option for option, yes in given if yes]


def cmd_run_kinematics(args: argparse.Namespace) -> int:
    """``kidym run`` on a kinematics file: every task, one subfolder per task."""
    from kidym.calc.kinematics import KinematicsError, kinematics
    from kidym.calc.plots import plot_kinematics
    from kidym.lang import load_tasks
    from kidym.outdir import staged
    from kidym.simulate.result import write_atomically

    if getattr(args, "initial", None):
        raise SystemExit("kidym: error: --initial does not apply to a kinematics calculation: "
                         "its quantities are formulas of t, with no initial values (change "
                         "a parameter with --set)")
    unused = _kinematics_unused(args)
    if unused:
        raise SystemExit("kidym: error: " + ", ".join(unused) + (" does" if len(unused) == 1
                         else " do") + " not apply to a kinematics calculation (its "
                         "quantities are formulas of t, evaluated, not integrated; it writes "
                         "results.csv, PNG plots and with --report report.html, report.md): "
                         "leave " + ("it" if len(unused) == 1 else "them") + " out")
    warnings: list = []
    tasks = load_tasks(args.model, warnings=warnings)
    for w in warnings:
        print(w.format(args.model, tasks[0].source), file=sys.stderr)
    root = Path(args.out) if args.out else Path("kidym-out") / Path(args.model).stem
    status = 0
    printed: list[str] = []
    with staged(root, force=args.force, command="kidym run", keep=[args.model]) as stage:
        for k, model in enumerate(tasks, start=1):
            out = stage.path / f"task{k}" if len(tasks) > 1 else stage.path
            label = f"task {k} ({model.title or model.name})" if len(tasks) > 1 else model.name
            if model.calculation != "KINEMATICS":
                printed.append(f"{label}: calculation {model.calculation} skipped (kidym run "
                               "computes the kinematics tasks of a multi-task file)")
                continue
            try:
                result = kinematics(model, n_points=args.points, t_end=args.t_end,
                                    parameters=_pairs(args.set, "--set"))
            except KinematicsError as exc:
                print(f"kidym: error: {label}: {exc}", file=sys.stderr)
                status = 1
                continue
            csv_path = write_atomically(out / "results.csv", result.csv_text())
            plots = [] if args.no_plots else plot_kinematics(result, model, out)
            printed.append(f"{label}: kinematics from t = {result.t[0]:g} to "
                           f"{result.t[-1]:g}, {len(result.t)} points, "
                           f"{len(result.names)} quantities")
            printed.append(f"results: {stage.final(csv_path)}")
            printed += [f"plot:    {stage.final(p)}" for p in plots]
            if args.report:
                from kidym.report.kinematics import write_kinematics_report

                printed += [f"report:  {stage.final(p)}" for p in write_kinematics_report(
                    out, model, result, plots=plots, parameters=_pairs(args.set, "--set"))]
        if not any(stage.path.iterdir()):
            stage.cancel()  # nothing computed: the previous output stays
    for line in printed:
        print(line)
    return status


def check_inverse_kinematics(model) -> int:
    """``kidym check`` on an inverse kinematics model: what is solved for what."""
    from kidym.calc.inverse_kinematics import formulate, start_values

    problem = formulate(model)   # resolves every name: errors surface here
    n, m = len(model.coordinates), len(model.constraints)
    print(f"model {model.name}: OK" + (f" — {model.title}" if model.title else ""))
    print(f"  calculation: inverse kinematics, t from {model.t_start:g} to {model.t_end:g}")
    print(f"  coordinates ({n}): " + ", ".join(model.coordinates))
    print(f"  equations ({m}): " + ", ".join(c.name for c in model.constraints)
          + (" (as many as coordinates: damped Newton)" if m == n else
             f" (fewer than coordinates: {n - m} redundant, damped least-norm steps)"))
    print("  start: " + ", ".join(f"{c}={v:g}" for c, v in
                                  zip(model.coordinates, start_values(model))))
    if model.limits:
        print("  limits: " + ", ".join(f"{lo:g} <= {c} <= {hi:g}"
                                        for c, (lo, hi) in model.limits.items()))
    print(f"  parameters ({len(model.parameters)}): "
          + ", ".join(f"{p.name}={p.value:g}" for p in model.parameters))
    if problem.outputs:
        print("  computed: " + ", ".join(problem.outputs))
    return 0


def cmd_run_inverse_kinematics(args: argparse.Namespace) -> int:
    """``kidym run`` on an inverse kinematics model: ``results.csv`` and plots."""
    import numpy as np

    from kidym.calc.inverse_kinematics import inverse_kinematics
    from kidym.calc.plots import plot_kinematics
    from kidym.outdir import staged
    from kidym.simulate.result import write_atomically

    if getattr(args, "initial", None):
        raise SystemExit("kidym: error: --initial does not apply to the inverse kinematics "
                         "calculation: its start is `НАЧАЛЬНОЕ ПОЛОЖЕНИЕ` in the model")
    unused = _kinematics_unused(args, report=False)
    if unused:
        raise SystemExit("kidym: error: " + ", ".join(unused) + (" does" if len(unused) == 1
                         else " do") + " not apply to the inverse kinematics calculation (it "
                         "solves the coordinates point by point, integrating nothing; it "
                         "writes results.csv and PNG plots): leave "
                         + ("it" if len(unused) == 1 else "them") + " out")
    model = _load(args.model)
    out = Path(args.out) if args.out else Path("kidym-out") / model.name
    result = inverse_kinematics(model, n_points=args.points, t_end=args.t_end,
                                parameters=_pairs(args.set, "--set"))
    with staged(out, force=args.force, command="kidym run", keep=[args.model]) as stage:
        csv_path = write_atomically(stage.path / "results.csv", result.csv_text())
        plots = [] if args.no_plots else plot_kinematics(result, model, stage.path)
    print(f"{model.name}: inverse kinematics from t = {result.t[0]:g} to {result.t[-1]:g}, "
          f"{len(result.t)} points, converged at every point (max |f| <= "
          f"{result.tolerance:.2g}); "
          f"damped Newton iterations per point: at most {int(np.max(result.iterations))}, "
          f"{int(np.sum(result.iterations))} in all")
    print(f"results: {stage.final(csv_path)}")
    for p in plots:
        print(f"plot:    {stage.final(p)}")
    return 0


def cmd_fmt(args: argparse.Namespace) -> int:
    """``kidym fmt MODEL``: print (or write, or check) the canonical form."""
    from kidym.lang.fmt import format_source
    from kidym.lang.source import decode
    from kidym.simulate.result import write_atomically

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


def _print_quaternion_drift(result) -> None:
    """The quaternion norm drift of a run (the rotation uses Λ/|Λ|; a large drift
    means the integration is inaccurate), and with constraints the initial values
    solved from them and the constraint drift."""
    for body, d in result.stats.get("quaternion_norm_drift", {}).items():
        print(f"quaternion norm drift ({body}): max ||Λ| - 1| = {d:.3g}"
              + ("  (large: tighten rtol/atol)" if d > 1e-3 else ""))
    changed = result.stats.get("initial_adjusted", {})
    if changed:
        print("constraints: initial values solved from them: " + ", ".join(
            f"{n} {old:.6g} → {new:.6g}" for n, (old, new) in changed.items()))
    stiff = result.stats.get("stiffness")
    if stiff:
        print(f"warning: {stiff['hint']}", file=sys.stderr)
    cd = result.stats.get("constraint_drift")
    if cd and cd.get("formulation") == "ali3":
        spans = ", ".join(f"t = {a:.6g}…{b:.6g}" for a, b in cd["bridges"])
        print(f"singular positions passed: {len(cd['bridges'])}"
              + (f" ({spans})" if spans else ""))
    if cd and cd.get("formulation") == "minimal":
        parts = cd["partitions"]
        print(f"minimal form: independent {', '.join(parts[0]['independent'])}"
              + "".join(f", from t = {p['t']:.6g} {', '.join(p['independent'])}"
                        for p in parts[1:])
              + f" ({cd['repartitions']} re-partition{'s' if cd['repartitions'] != 1 else ''}"
              f", condition limit {cd['condition_limit']:g})")
        print(f"constraint drift (minimal form): max |Φ| = {cd['position']:.3g}, "
              f"max |Φ't| = {cd['velocity']:.3g}")
    elif cd:
        print(f"constraint drift ({cd['stabilization']}"
              + (f", {cd['projections']} projections" if cd["stabilization"] == "projection"
                 else "") + f"): max |Φ| = {cd['position']:.3g}, "
              f"max |Φ't| = {cd['velocity']:.3g}")


def _print_controls(eq, result) -> None:
    """Controls of programmed constraints (seed 004): the range of each control and the
    deviations of the constraints, largest and at the end."""
    import numpy as np

    ctl = eq.controls
    print("controls (solved from the programmed constraints):")
    for name in ctl.control_names:
        v = result.values.get(name)
        if v is not None and np.size(v):
            print(f"  {name}: min {np.min(v):.6g}, max {np.max(v):.6g}")
    for name in ctl.names:
        v = result.values.get(name)
        if v is not None and np.size(v):
            print(f"  deviation {name}: max |{name}| {np.max(np.abs(v)):.3g}, at the end "
                  f"{abs(v[-1]):.3g}")


def _print_multipliers(eq, result) -> None:
    """Kinetostatics: the range of each multiplier, the force or torque the prescribed
    motion needs along its constraint."""
    import numpy as np

    print("kinetostatics: forces and torques the constraints exert (λ):")
    for name in eq.constraints.multiplier_names:
        v = result.values.get(name)
        if v is None or not np.size(v):
            continue
        print(f"  {name}: min {np.min(v):.6g}, max {np.max(v):.6g}, mean over the run "
              f"{_time_mean(result.t, v):.6g}")


def _time_mean(t, v) -> float:
    """The mean of ``v`` over ``t`` (trapezoidal rule); ``v[0]`` for a single time."""
    import numpy as np

    t, v = np.asarray(t, float), np.asarray(v, float)
    if t.size < 2 or t[-1] == t[0]:
        return float(v[0])
    return float(np.sum(np.diff(t) * (v[1:] + v[:-1]) / 2) / (t[-1] - t[0]))


def _controls_summary(eq) -> list[str]:
    """The controls and programmed constraints (seed 004) for ``kidym check``."""
    ctl = eq.controls
    if ctl is None:
        return []
    kinds = ", ".join(f"{n} ({'first order' if f else 'holonomic'})"
                      for n, f in zip(ctl.names, ctl.first_order))
    return [f"  controls ({ctl.s}): {', '.join(ctl.control_names)}, solved from "
            f"{ctl.r} programmed constraint{'s' if ctl.r != 1 else ''}: {kinds}"]


def _velocity_summary(model, eq) -> list[str]:
    """Kinematic equations and the integrability verdict for ``kidym check``."""
    if eq.n_q == eq.n_w and not model.velocity_definitions and not model.pseudo_velocities:
        if eq.constraints is None:
            return ["  constraints: none on velocities (holonomic system)"]
        kinds = eq.constraints.holonomic
        if all(kinds):
            return ["  constraints on velocities: none besides the holonomic ones above"]
        return [f"  velocity constraints of `УРАВНЕНИЯ`: {kinds.count(False)} (written "
                "implicitly, A(q, t)·q't + a = 0)"]
    from kidym.eom.integrability import check_integrability

    verdict = check_integrability(eq)
    lines = [f"  velocity equations q't = B w + β: {len(model.velocity_definitions)} given, "
             f"{eq.n_q - eq.n_w} constraint(s) on the velocities"]
    if eq.holonomic is not None:
        lines.append(f"  equations: two-stage (U = Bᵀ U_hol, U_hol in {eq.holonomic.n_w} "
                     "generalized velocities)" if eq.route == "two-stage" else
                     "  equations: direct (structural matrices in the speeds)")
    written = 0 if eq.constraints is None else eq.constraints.holonomic.count(False)
    if written:
        # the Frobenius test is of q't = B w + β; the velocity constraints (rolling's
        # no-slip) come on top of it and are not part of that test
        lines.append(f"  integrability of q't = B w + β: {verdict.describe()}")
        lines.append(f"  velocity constraints A(q, t)·w + a = 0: {written} (of `УРАВНЕНИЯ` "
                     "or generated by `КАЧЕНИЕ`), held as written; not tested above")
    else:
        lines.append(f"  integrability: {verdict.describe()}")
    from kidym.eom.system import quaternion_specs

    for body, spec in quaternion_specs(model).items():
        frame = ("fixed-frame projections, Λ̇ = ½ ω∘Λ" if spec.fixed_axes
                 else "body-frame projections, Λ̇ = ½ Λ∘ω")
        lines.append(f"  quaternion of {body}: {', '.join(map(str, spec.components))}; "
                     f"{', '.join(map(str, spec.omega))} are {frame}")
    return lines


def cmd_codegen(args: argparse.Namespace) -> int:
    from kidym.codegen import build, generate_c
    from kidym.eom.equations import derive
    from kidym.outdir import check_replaceable, staged
    from kidym.simulate.result import write_atomically

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
    p.add_argument("--engine", choices=("numpy", "compiled", "auto"), default="numpy",
                   help="numpy (solve_ivp over generated Python), compiled (generated C, "
                        "the whole loop in C on SUNDIALS, cached), or auto (compiled when "
                        "it pays off; says what it chose)")
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
                        "projected), minimal (an ODE in the independent coordinates, "
                        "chosen by pivoting and re-chosen where they degrade; NumPy engine) "
                        "or ali3 (augmented, with singular positions of a loop passed by "
                        "an index-3 augmented Lagrangian; NumPy engine)")
    p.add_argument("--independent", action="append", metavar="NAMES",
                   help="with --formulation minimal: the coordinates to start with as "
                        "independent (comma-separated or repeated; default: by pivoting)")
    p.add_argument("--out", default=None,
                   help="output directory, replaced whole by this run's files (default: "
                        "kidym-out/MODEL_NAME)")
    p.add_argument("--no-integrals", action="store_true", dest="no_integrals",
                   help="do not search the model's first integrals nor report their drift")
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


def _reporter(args: argparse.Namespace):
    from kidym.progress import NORMAL, QUIET, VERBOSE, Reporter

    level = (QUIET if getattr(args, "quiet", False)
             else VERBOSE if getattr(args, "verbose", False) else NORMAL)
    return Reporter(level)


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
    from kidym.simulate.compiled import CompiledSystem

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
    """``eq``; for the compiled engine its library (built with a progress bar), for the
    NumPy engine on a terminal a system that moves a progress bar."""
    rep = rep if rep is not None else _reporter(args)
    if getattr(args, "engine", "numpy") == "compiled":
        return _compiled(eq, rep, jacobian=getattr(args, "method", "") == "BDF"
                         and getattr(args, "jacobian", "auto") != "fd")
    if not rep.bars or getattr(args, "engine", "numpy") != "numpy":
        return eq
    from kidym.simulate.simulate import NumpySystem

    base = NumpySystem.build(eq)
    t0, t1 = model.time_span(_pairs(getattr(args, "set", None), "--set"))
    t1 = args.t_end if args.t_end is not None else t1
    bar = rep.bar("simulating", t0, t1)

    class _Tracked(NumpySystem):
        def rhs(self, t, y, p):
            bar.update(t)
            if t >= t1:
                bar.close()
            return super().rhs(t, y, p)

    import dataclasses

    return _Tracked(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})


def _write_outputs(args: argparse.Namespace, model, eq, result, out: Path, *, rep=None,
                   requests=None, plot_formats: tuple[str, ...] = ("png",),
                   plotter=None) -> None:
    from kidym.outdir import staged
    from kidym.progress import seconds
    from kidym.simulate.energy import energy_balance

    rep = rep if rep is not None else _reporter(args)
    formats = tuple(dict.fromkeys(["csv", *(f.strip() for f in args.format.split(",")
                                            if f.strip())]))
    with staged(out, force=args.force, command="kidym run", keep=[args.model]) as stage:
        try:
            with rep.stage("results"):
                files = result.write(stage.path, formats=formats, model=model,
                                     run_id=stage.run_id)
        except ImportError as exc:
            raise ValueError(str(exc)) from None
        poses = None
        if args.animate or not args.no_plots:
            from kidym.report.poses import body_poses

            with rep.stage("body positions"):
                poses = body_poses(model, result) if model.bodies else None
        plots: list[Path] = []
        if not args.no_plots:
            from kidym.report.plot_worker import draw_plots

            if requests is None:
                from kidym.report.plot_worker import parse_plot_option

                requests = [parse_plot_option(x) for x in args.plot or ()]
            with rep.stage("plots"):
                plots = draw_plots(plotter, result, model, stage.path, requests=requests,
                                   poses=poses, formats=plot_formats,
                                   degrees=getattr(args, "degrees", False))
        animation = None
        if args.animate and poses is not None:
            from kidym.report.animation import write_animation

            with rep.stage("animation"):
                animation = write_animation(stage.path, model, result, poses=poses)
        reports: list[Path] = []
        if args.report:
            from kidym.report.html import write_report

            with rep.stage("report"):
                reports = write_report(stage.path, model, eq, result, plots=plots,
                                       animation=animation.name if animation else None)
    files, plots, reports = ([stage.final(p) for p in x] for x in (files, plots, reports))
    animation = stage.final(animation) if animation else None
    st = result.stats
    if "engine_choice" in st:
        print(f"engine: {st['engine_choice']}")
    print(f"simulated {model.name} from t = {result.t[0]:g} to {result.t[-1]:g} "
          f"({st['method']}, rtol={st['rtol']:g}, atol={st['atol']:g}, engine={st['engine']}): "
          f"{result.nfev} right-hand-side evaluations in {seconds(st['wall_time_s'])}")
    balance = energy_balance(result)
    if balance is not None:
        # E(t) - E(0) - W(t): W is the work of what E leaves out (dampers, driving forces,
        # prescribed motions), so this is conserved by every model (kidym.simulate.energy)
        print(f"energy balance: {balance.describe()}")
    if "first_integrals" in st:
        from kidym.analysis.integrals import describe_drift

        for line in describe_drift(st["first_integrals"]):
            print(line)
    _print_events(result)
    _print_quaternion_drift(result)
    if model.calculation == "KINETOSTATICS":
        _print_multipliers(eq, result)
    if eq.controls is not None:
        _print_controls(eq, result)
    if result.partial:
        print(f"partial results: the run failed at t = {result.failure['time']:.9g} "
              f"({result.failure['kind']}); the files end at the last output time before it")
    for f in files:
        print(f"results: {f}")
    others = "".join(f" + .{f}" for f in plot_formats[1:])
    for p in plots:
        if p.suffix == "." + plot_formats[0]:
            print(f"plot:    {p}" + (f"  ({others.strip()})" if others else ""))
    if animation:
        print(f"animation: {animation}")
    for r in reports:
        print(f"report:  {r}")


def _event_summary(ev) -> str:
    """``Удар: z = 0 falling → z't = -e*z't``: one event of ``СОБЫТИЯ`` in words."""
    way = {-1: "falling", 1: "rising", 0: "either way"}[ev.direction]
    then = ("stop" if ev.stop else ", ".join(f"{n} = {v}" for n, v in ev.resets)
            if ev.resets else "record")
    return f"{ev.name}: {ev.function} = 0 {way} → {then}"


def _print_events(result) -> None:
    """``events: 4 (Удар 4×) at t = 0.4515 … 2.214``: what the run's events did."""
    ev = result.stats.get("events")
    if not isinstance(ev, dict) or not len(ev.get("t", ())):
        return
    counts: dict[str, int] = {}
    for name in ev["name"]:
        counts[name] = counts.get(name, 0) + 1
    t = ev["t"]
    print(f"events: {len(t)} (" + ", ".join(f"{n} {c}×" for n, c in counts.items())
          + f") at t = {t[0]:.6g}" + (f" … {t[-1]:.6g}" if len(t) > 1 else "")
          + "; each with the state before and after it in events.csv")


def cmd_animate(args: argparse.Namespace) -> int:
    from kidym.lang import parse
    from kidym.outdir import add_to_run, staged
    from kidym.report.animation import write_animation
    from kidym.simulate.result import load_results

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
    except (DerivationError, SimulationError, CompileError) as exc:
        print(f"kidym: error: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, DerivationError) else 2
    # (KinematicsError is a ValueError; ImportError: an optional extra such as kidym[sweep])
    except (OSError, KeyError, ValueError, LinAlgError, ImportError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"kidym: error: {msg}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
