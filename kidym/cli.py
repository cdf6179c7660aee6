"""The ``kidym`` command (SPEC §4): check, equations, run."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

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


def _load(path: str, *, quiet: bool = False):
    from kidym.lang import load

    warnings: list = []
    model = load(path, warnings=warnings)
    if warnings and not quiet:
        src = model.source
        for w in warnings:
            print(w.format(path, src), file=sys.stderr)
    return model


def _summary(model, eq) -> str:
    lines = [f"model {model.name}: OK"]
    lines.append(f"  bodies ({len(model.bodies)}): "
                 + ", ".join(b.name + (f"~{b.base}" if b.base else "") for b in model.bodies))
    lines.append(f"  coordinates ({eq.n_q}): " + ", ".join(map(str, eq.coordinates)))
    lines.append(f"  speeds ({eq.n_w}): " + ", ".join(map(str, eq.speeds)))
    lines.append(f"  degrees of freedom: {eq.n_w}")
    lines.append(f"  parameters ({len(model.parameters)}): "
                 + ", ".join(f"{p.name}={p.value:g}" for p in model.parameters))
    if model.elements:
        lines.append(f"  elements ({len(model.elements)}): "
                     + ", ".join(f"{e.name}.{e.coordinate}" for e in model.elements))
    if model.velocity_definitions:
        lines.append(f"  velocity constraints: {len(model.velocity_definitions)}")
    else:
        lines.append("  constraints: none on velocities (holonomic system)")
    lines.append(f"  named quantities: {len(eq.intermediates())}")
    return "\n".join(lines)


def cmd_check(args: argparse.Namespace) -> int:
    from kidym.eom.equations import derive

    model = _load(args.model)
    eq = derive(model)
    print(_summary(model, eq))
    return 0


def cmd_equations(args: argparse.Namespace) -> int:
    from kidym.eom.equations import derive
    from kidym.report.equations import to_json, to_text

    eq = derive(_load(args.model, quiet=args.format == "json"))
    if args.format == "json":
        sys.stdout.write(to_json(eq, expanded=args.expanded or None))
    else:
        sys.stdout.write(to_text(eq, expanded=args.expanded))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from kidym.eom.equations import derive
    from kidym.report.plots import plot_run
    from kidym.simulate.simulate import defaulted_states, simulate

    model = _load(args.model)
    out = Path(args.out) if args.out else Path("kidym-out") / model.name
    eq = derive(model)
    initial = _pairs(args.initial, "--initial")
    unset = defaulted_states([str(s) for s in (*eq.coordinates, *eq.speeds)], model, initial)
    if unset:
        print("note: no initial value given for " + ", ".join(unset) + "; taken as 0",
              file=sys.stderr)
    result = simulate(eq, t_end=args.t_end, initial=initial,
                      parameters=_pairs(args.set, "--set"), engine=args.engine,
                      method=args.method, rtol=args.rtol, atol=args.atol,
                      n_points=args.points)
    csv_path = result.write_csv(out / "results.csv")
    plots = plot_run(result, model, out)
    st = result.stats
    if "engine_choice" in st:
        print(f"engine: {st['engine_choice']}")
    print(f"simulated {model.name} from t = {result.t[0]:g} to {result.t[-1]:g} "
          f"({st['method']}, rtol={st['rtol']:g}, atol={st['atol']:g}, engine={st['engine']}): "
          f"{result.nfev} right-hand-side evaluations in {st['wall_time_s']:.2f} s")
    energy = result.values.get("energy")
    if energy is not None and energy.size:
        scale = max(abs(energy[0]), 1e-300)
        drift = abs(energy - energy[0]).max() / scale
        print(f"energy drift: max |E - E(0)| / |E(0)| = {drift:.3g}")
    print(f"results: {csv_path}")
    for p in plots:
        print(f"plot:    {p}")
    return 0


def cmd_codegen(args: argparse.Namespace) -> int:
    from kidym.codegen import build, generate_c
    from kidym.eom.equations import derive
    from kidym.simulate.result import write_atomically

    model = _load(args.model)
    eq = derive(model)
    code = generate_c(eq, fold=args.fold, cse=not args.no_cse, hoist=not args.no_hoist)
    out = Path(args.out) if args.out else Path("kidym-out") / model.name
    path = write_atomically(out / f"{model.name}.c", code.source)
    print(f"operation counts of {model.name} ({eq.n_q} coordinates, {eq.n_w} speeds; "
          f"options: " + ", ".join(f"{k}={v}" for k, v in code.options.items()) + ")")
    print(code.counts_table())
    mf = code.mf_counts
    print(f"mass matrix and forcing alone: {mf}")
    print(f"C source: {path} ({len(code.source.encode('utf-8')) / 1024:.1f} kB)")
    if args.build:
        print(f"library: {build(code)}")
    return 0


def add_codegen_parser(sub) -> None:
    """The ``codegen`` subcommand."""
    p = sub.add_parser("codegen", help="write the generated C and print operation counts")
    p.add_argument("model", help="model file (.kdm)")
    p.add_argument("--out", default=None,
                   help="output directory (default: kidym-out/MODEL_NAME)")
    p.add_argument("--fold", action="store_true",
                   help="write parameter values into the code (no runtime parameter vector)")
    p.add_argument("--no-cse", action="store_true", help="no common-subexpression elimination")
    p.add_argument("--no-hoist", action="store_true",
                   help="compute parameter-only quantities in every call, not once")
    p.add_argument("--build", action="store_true",
                   help="also compile the library into the cache and print its path")
    p.set_defaults(func=cmd_codegen)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``kidym``."""
    parser = argparse.ArgumentParser(
        prog="kidym",
        description="Equations of motion of multibody systems from KiDyM models "
                    "(.kdm), shown and solved.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("check", help="parse and validate a model; print its summary")
    p.add_argument("model", help="model file (.kdm)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("equations", help="print the equations of motion")
    p.add_argument("model", help="model file (.kdm)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (Unicode, structural form) or json (sympify-able strings)")
    p.add_argument("--expanded", action="store_true",
                   help="also give M and F with every named quantity substituted")
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
    p.add_argument("--rtol", type=float, default=1e-9, help="relative tolerance (1e-9)")
    p.add_argument("--atol", type=float, default=1e-12, help="absolute tolerance (1e-12)")
    p.add_argument("--points", type=int, default=501, help="number of output times (501)")
    p.add_argument("--out", default=None,
                   help="output directory (default: kidym-out/MODEL_NAME)")
    p.set_defaults(func=cmd_run)
    add_codegen_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kidym`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ParseError as exc:
        print(exc.render(), file=sys.stderr)
        n = len(exc.errors)
        print(f"{n} error{'s' if n != 1 else ''}", file=sys.stderr)
        return 1
    except (DerivationError, SimulationError, CompileError) as exc:
        print(f"kidym: error: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, DerivationError) else 2
    except (OSError, KeyError, ValueError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"kidym: error: {msg}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
