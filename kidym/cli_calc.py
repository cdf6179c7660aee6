"""``kidym check``, ``equations`` and ``run`` of the calculations without equations of
motion: the direct kinematics (``РАСЧЕТ := КИНЕМАТИКА``) and the inverse kinematics
(``РАСЧЕТ := ОБРАТНАЯ ЗАДАЧА КИНЕМАТИКИ``), :mod:`kidym.calc`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kidym.cli_common import load, pairs


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
    given = [("--engine", args.engine != "auto"), ("--method", args.method != "DOP853"),
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
    from kidym.simulation.result import write_atomically

    for option in ("initial", "free"):
        if getattr(args, option, None):
            raise SystemExit(f"kidym: error: --{option} does not apply to a kinematics "
                             "calculation: its quantities are formulas of t, with no initial "
                             "values (change a parameter with --set)")
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
                                    parameters=pairs(args.set, "--set"))
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
                    out, model, result, plots=plots, parameters=pairs(args.set, "--set"))]
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
    from kidym.simulation.result import write_atomically

    for option in ("initial", "free"):
        if getattr(args, option, None):
            raise SystemExit(f"kidym: error: --{option} does not apply to the inverse "
                             "kinematics calculation: its start is `НАЧАЛЬНОЕ ПОЛОЖЕНИЕ` in "
                             "the model")
    unused = _kinematics_unused(args, report=False)
    if unused:
        raise SystemExit("kidym: error: " + ", ".join(unused) + (" does" if len(unused) == 1
                         else " do") + " not apply to the inverse kinematics calculation (it "
                         "solves the coordinates point by point, integrating nothing; it "
                         "writes results.csv and PNG plots): leave "
                         + ("it" if len(unused) == 1 else "them") + " out")
    model = load(args.model)
    out = Path(args.out) if args.out else Path("kidym-out") / model.name
    result = inverse_kinematics(model, n_points=args.points, t_end=args.t_end,
                                parameters=pairs(args.set, "--set"))
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
