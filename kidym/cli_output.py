"""What ``kidym check`` and ``kidym run`` print about a model and a run, and the files
``kidym run`` writes (results, report, plots, animation)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kidym.cli_common import reporter


def model_summary(model, eq) -> str:
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
    if model.inputs:
        lines.append(f"  inputs ({len(model.inputs)}): {', '.join(model.inputs)} (given at run "
                     "time: kidym run --input NAME=FILE.csv, kidym sweep --input "
                     "NAME=FILE.csv)")
    if model.elements:
        lines.append(f"  elements ({len(model.elements)}): "
                     + ", ".join(f"{e.name}.{e.coordinate}" for e in model.elements))
    lines.extend(_velocity_summary(model, eq))
    lines.extend(_controls_summary(eq))
    lines.append(f"  named quantities: {len(eq.intermediates())}")
    return "\n".join(lines)


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
    if cd and "continued_from" in cd:
        print(f"singular position reached at t = {cd['continued_from']:.6g}: the run went "
              "on with formulation ali3")
    if cd and "bridges" in cd:
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


def write_outputs(args: argparse.Namespace, model, eq, result, out: Path, *, rep=None,
                   requests=None, plot_formats: tuple[str, ...] = ("png",),
                   plotter=None) -> None:
    from kidym.outdir import staged
    from kidym.progress import seconds
    from kidym.simulation.energy import energy_balance

    rep = rep if rep is not None else reporter(args)
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
        # prescribed motions), so this is conserved by every model (kidym.simulation.energy)
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
