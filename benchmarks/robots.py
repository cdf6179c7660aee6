"""Real robots imported from URDF: accuracy against Pinocchio and MuJoCo, build time, speed.

For each robot of ``example-robot-data`` (issue 30), in a fresh code cache:

* ``import``: the URDF read and written as a model (:func:`kidym.import_robot`),
  parsed, and its equations derived;
* ``first traj``: from the file to the first trajectory: the above, then the C
  generated, compiled (no cache) and 0.1 s simulated from rest by the compiled engine;
* ``M``, ``b``, ``q̈``: the largest errors against Pinocchio over 100 random states
  (``crba``; ``rnea(q, v, 0)``; ``aba``), M and b relative to their largest entry,
  q̈ relative to its largest entry divided by cond(M) — the bounds of
  ``tests/robots/test_urdf_pinocchio.py`` are 1e-12 on each;
* ``MuJoCo``: the largest of the three errors against MuJoCo compiling the same file
  (``mj_fullM``, ``qfrc_bias``, ``qacc``; ``refused`` where MuJoCo's compiler refuses
  the file's inertias);
* ``kidym µs``: one right-hand side ``[q̇, ẇ]`` of the compiled model called through
  ``ctypes`` from a Python loop; ``pin.aba µs``: Pinocchio's ``aba`` from the same
  kind of loop; ``mj_forward µs``: MuJoCo's whole forward step (constraints off), the
  same way (all over the same 200 states, best of 5).

Run: ``python benchmarks/robots.py [--robots ur5 panda …] [--markdown docs/robots.md]``;
``--survey`` imports every URDF file of the wheel instead and counts the outcomes;
``--sdf`` holds the SDF robots (Cassie, four loops) to Drake instead: M, b, the loops'
Jacobian G and γ (a planar loop's two rows against Drake's three measured in the loop's
common ancestor link, times a 2×3 E fitted by least squares), the constrained q̈
against ``[M Jᵀ; J 0]`` of Drake's pieces (relative to cond of that matrix), build
time, a 0.1 s run and its drift, and the RHS (constrained, compiled) against
Drake's ``CalcMassMatrix`` + ``CalcBiasTerm`` of the tree.
(``--markdown`` replaces the table between the markers of that file).
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import best_time, machine

import kidym
from kidym.errors import SimulationError
from kidym.simulation.compiled import CompiledSystem
from tests.oracles.pinocchio_robots import (
    ROBOTS,
    MujocoRobot,
    PinocchioRobot,
    compare,
    compare_mujoco,
    robots_dir,
)

BEGIN, END = "<!-- robots-table:begin -->", "<!-- robots-table:end -->"
SDF_BEGIN, SDF_END = "<!-- robots-sdf-table:begin -->", "<!-- robots-sdf-table:end -->"
#: the SDF robots held to Drake: name → path in example-robot-data's robots/ folder
SDF_ROBOTS = {"cassie_v2": "cassie_description/robots/cassie_v2.sdf"}


def kidym_rhs_over(cs, Y: np.ndarray, p: np.ndarray):
    """A call of the library's ``kidym_rhs`` at every state of ``Y`` (rows, contiguous),
    pointers made beforehand: what the RHS column times."""
    c = cs.constants(p)
    out = np.empty(cs.n_y)
    ptrs = [Y[k].ctypes.data for k in range(len(Y))]

    def run_kidym(rhs=cs.lib.kidym_rhs, ptrs=ptrs, pp=p.ctypes.data, cp=c.ctypes.data,
                  op=out.ctypes.data, keep=(Y, p, c, out)):
        for yp in ptrs:
            rhs(0.0, yp, pp, cp, op)

    return run_kidym


def measure(name: str, n_states: int = 100, n_rhs: int = 200) -> dict:
    path = robots_dir() / ROBOTS[name]
    start = time.perf_counter()
    robot = kidym.import_robot(path)
    eq = kidym.derive(kidym.parse(robot.text, name=name))
    t_import = time.perf_counter() - start
    cs = CompiledSystem.build(eq)
    result = kidym.simulate(cs, t_end=0.1)
    t_first = time.perf_counter() - start
    assert result.success
    ref = PinocchioRobot(path, robot.coordinates, eq.coordinates, eq.speeds)
    err = compare(cs, ref, n_states=n_states, seed=1)
    # one RHS, kidym (compiled, ctypes) and Pinocchio (aba), over the same states
    rng = np.random.default_rng(0)
    Y = np.ascontiguousarray([ref.random_state(rng) for _ in range(n_rhs)])
    p = cs.parameter_vector()
    run_kidym = kidym_rhs_over(cs, Y, p)

    pin = ref.pin
    qs = [ref.configuration(y[:ref.n_q]) for y in Y]
    vs = [ref.P @ y[ref.n_q:] for y in Y]
    tau = np.zeros(ref.model.nv)

    def run_pin(aba=pin.aba, model=ref.model, data=ref.data):
        for q, v in zip(qs, vs):
            aba(model, data, q, v, tau)

    mj_err = mj_us = float("nan")
    try:
        mj = MujocoRobot(path, robot.coordinates, eq.coordinates, eq.speeds)
    except ValueError:       # MuJoCo refuses the file's inertias
        mj = None
    if mj is not None:
        e = compare_mujoco(cs, mj, n_states=n_states, seed=1)
        mj_err = max(e.M, e.b, e.qdd)
        states = [(mj.Pq @ y[:ref.n_q], mj.P @ y[ref.n_q:]) for y in Y]

        def run_mj(fwd=mj.mujoco.mj_forward, m=mj.model, d=mj.data):
            for q, v in states:
                d.qpos[:] = q
                d.qvel[:] = v
                fwd(m, d)

        mj_us = best_time(run_mj) / n_rhs * 1e6
    return {"robot": name, "dof": eq.n_w, "bodies": len(robot.bodies), "M": err.M,
            "b": err.b, "qdd": err.qdd, "cond": err.cond, "import": t_import,
            "first": t_first, "kidym_us": best_time(run_kidym) / n_rhs * 1e6,
            "pin_us": best_time(run_pin) / n_rhs * 1e6, "mj": mj_err, "mj_us": mj_us}


def measure_sdf(name: str, n_states: int = 100, n_rhs: int = 200) -> dict:
    """An SDF robot against Drake (``tests/oracles/drake_robots.py``): M and b of the
    tree (loops cut, root welded), the loops' constraint Jacobian and γ, the
    constrained q̈ against ``[M Jᵀ; J 0]`` of Drake's pieces; build and RHS times."""
    from lxml import etree

    from tests.oracles.drake_robots import DrakeRobot

    path = robots_dir() / SDF_ROBOTS[name]
    start = time.perf_counter()
    robot = kidym.import_robot(path)
    eq = kidym.derive(kidym.parse(robot.text, name=name))
    t_import = time.perf_counter() - start
    cs = CompiledSystem.build(eq)
    t_first = time.perf_counter() - start
    try:
        res = kidym.simulate(cs, t_end=0.1)
        drift = res.stats["constraint_drift"]
        run = f"0.1 s, drift {max(drift['position'], drift['velocity']):.0e}"
    except SimulationError as exc:     # a loop that loses rank (`COINCIDE` on a planar one)
        rank = re.search(r"rank of their Jacobian is (\d+), not (\d+)", str(exc))
        run = f"stops: rank {rank.group(1)} of {rank.group(2)}" if rank else "stops"
    root = etree.parse(str(path)).getroot()
    links = [el.get("name") for el in root.iter("link")]
    ref = DrakeRobot(path, robot.coordinates, eq.coordinates, eq.speeds,
                     cut=set(robot.loops), root_link=links[0])
    joints = {j.get("name"): j for j in root.iter("joint")}
    n, m = eq.n_w, eq.m
    zero = np.zeros(n)
    ref.set_state(zero, zero)
    # the tree's parent links (the loops cut), for a planar loop's common ancestor
    up = {el.findtext("child").strip(): el.findtext("parent").strip()
          for el in root.iter("joint") if el.get("name") not in robot.loops}

    def line(link):
        out = [link]
        while out[-1] in up:
            out.append(up[out[-1]])
        return out

    points = []
    for loop in robot.loops:
        el = joints[loop]
        parent, child = el.findtext("parent").strip(), el.findtext("child").strip()
        in_child = np.array([float(v) for v in el.findtext("pose").split()[:3]])
        x = ref.point(child, in_child)[0]
        X = ref.plant.EvalBodyPoseInWorld(ref.context, ref.plant.GetBodyByName(parent))
        # a planar loop (two rows): measured in its common ancestor, whose axes hold the
        # plane; its rows are then E·(Drake's 3 rows) for a constant 2×3 E
        planar = len(robot.loop_constraints[loop]) == 2
        top = next(k for k in line(child) if k in line(parent)) if planar else None
        rows = [eq.constraints.names.index(r) for r in robot.loop_constraints[loop]]
        points.append((child, in_child, parent, X.inverse().multiply(x), top, rows))
    rng = np.random.default_rng(1)
    p = cs.parameter_vector()
    P = ref.P
    worst = dict.fromkeys(("M", "b", "G", "gamma", "qdd"), 0.0)
    Y = []
    for _ in range(n_states):
        qk, wk = rng.uniform(-0.5, 0.5, n), rng.normal(0.0, 2.0, n)
        y = np.concatenate([qk, wk])
        Y.append(y)
        ref.set_state(qk, wk)
        M, b = ref.dynamics()
        Mk, F, block = cs.constraint_block(0.0, y, p)
        G = block.G @ P.T
        J, gamma = np.zeros((m, n)), np.zeros(m)
        for c, pc, pa, pp, top, rows in points:
            _, Ja, ba = ref.point(c, pc, top)
            _, Jb, bb = ref.point(pa, pp, top)
            J3, g3 = Ja - Jb, -(ba - bb)
            # the rows kidym has: Drake's 3 (spatial) or E times them (planar)
            E = np.eye(3) if top is None else np.linalg.lstsq(J3.T, G[rows].T,
                                                              rcond=None)[0].T
            J[rows], gamma[rows] = E @ J3, E @ g3
        kkt = np.block([[M, J.T], [J, np.zeros((m, m))]])
        expected = np.linalg.solve(kkt, np.concatenate([-b, gamma]))[:n]
        got = P @ cs.rhs(0.0, y, p)[n:2 * n]
        for key, err in (
                ("M", np.abs(P @ Mk @ P.T - M).max() / np.abs(M).max()),
                ("b", np.abs(-P @ F - b).max() / np.abs(b).max()),
                ("G", np.abs(G - J).max() / np.abs(J).max()),
                ("gamma", np.abs(block.gamma - gamma).max() / np.abs(gamma).max()),
                ("qdd", np.abs(got - expected).max() / np.abs(expected).max()
                 / np.linalg.cond(kkt))):
            worst[key] = max(worst[key], float(err))
    Y = np.ascontiguousarray(Y[:n_rhs])
    run_kidym = kidym_rhs_over(cs, Y, p)

    plant, ctx = ref.plant, ref.context
    states = [(ref.Pq @ y[:n], P @ y[n:]) for y in Y]

    def run_drake(plant=plant, ctx=ctx):
        for q, v in states:
            plant.SetPositions(ctx, q)
            plant.SetVelocities(ctx, v)
            plant.CalcMassMatrix(ctx)
            plant.CalcBiasTerm(ctx)

    return {"robot": name, "dof": n, "constraints": m, **worst, "import": t_import,
            "first": t_first, "run": run, "kidym_us": best_time(run_kidym) / len(Y) * 1e6,
            "drake_us": best_time(run_drake) / len(Y) * 1e6}


def sdf_table(rows: list[dict]) -> str:
    head = ("| robot | DOF | loop constraints | Drake: M | b | G | γ | q̈ / cond | "
            "import + derive [s] | file → compiled [s] | run from the file's pose | "
            "kidym RHS [µs] | Drake M + bias [µs] |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    return "\n".join([head] + [
        f"| {r['robot']} | {r['dof']} | {r['constraints']} | {r['M']:.1e} | {r['b']:.1e} | "
        f"{r['G']:.1e} | {r['gamma']:.1e} | {r['qdd']:.1e} | {r['import']:.1f} | "
        f"{r['first']:.0f} | {r['run']} | {r['kidym_us']:.1f} | {r['drake_us']:.1f} |"
        for r in rows])


def _replace_block(path: Path, begin: str, end: str, block: str) -> None:
    doc = path.read_text()
    new, n = re.subn(re.escape(begin) + r".*?" + re.escape(end),
                     lambda _: f"{begin}\n{block}\n{end}", doc, flags=re.S)
    if n != 1:
        raise SystemExit(f"{path}: no {begin} … {end} block to replace")
    from kidym.simulation.result import write_atomically

    write_atomically(path, new)
    print(f"wrote the table into {path}")


def table(rows: list[dict]) -> str:
    head = ("| robot | DOF | Pinocchio: M | b | q̈ / cond(M) | cond(M) | MuJoCo: max | "
            "import + derive [s] | file → first trajectory [s] | kidym RHS [µs] | "
            "`pin.aba` [µs] | `mj_forward` [µs] |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = [head]
    for r in rows:
        mj = "refused" if np.isnan(r["mj"]) else f"{r['mj']:.1e}"
        mj_us = "–" if np.isnan(r["mj_us"]) else f"{r['mj_us']:.1f}"
        lines.append(f"| {r['robot']} | {r['dof']} | {r['M']:.1e} | {r['b']:.1e} | "
                     f"{r['qdd']:.1e} | {r['cond']:.1e} | {mj} | {r['import']:.1f} | "
                     f"{r['first']:.0f} | {r['kidym_us']:.1f} | {r['pin_us']:.1f} | "
                     f"{mj_us} |")
    return "\n".join(lines)


def survey() -> None:
    """Import every URDF file of example-robot-data and read the model back."""
    from kidym.errors import ParseError

    folder = robots_dir()
    files = sorted(folder.glob("*/*/*.urdf"))
    ok = warned = 0
    errors = []
    for path in files:
        try:
            robot = kidym.import_robot(path)
            kidym.parse(robot.text)
        except ParseError as exc:
            errors.append(f"  {path.relative_to(folder)}: {exc.diagnostics[0].message}")
            continue
        ok += 1
        warned += any("inertia" in w.message for w in robot.warnings)
    print(f"{len(files)} URDF files: {ok} imported and read back ({warned} with inertia "
          f"warnings), {len(errors)} errors:")
    print("\n".join(errors))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--survey", action="store_true",
                    help="import every URDF file of example-robot-data; count the outcomes")
    ap.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS))
    ap.add_argument("--markdown", type=Path, default=None,
                    help="replace the table between the robots-table markers of this file")
    ap.add_argument("--sdf", action="store_true",
                    help="the SDF robots (Cassie) against Drake instead")
    args = ap.parse_args(argv)
    where = machine()
    print(where)
    if args.survey:
        survey()
        return
    if args.sdf:
        with tempfile.TemporaryDirectory() as cache:
            os.environ["KIDYM_CACHE_DIR"] = cache
            text = sdf_table([measure_sdf(name) for name in SDF_ROBOTS])
        print(text)
        if args.markdown is not None:
            _replace_block(args.markdown, SDF_BEGIN, SDF_END,
                           f"Measured {time.strftime('%Y-%m-%d')} on {where}.\n\n{text}")
        return
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["KIDYM_CACHE_DIR"] = cache      # every build compiles: no cache hit
        for name in args.robots:
            rows.append(measure(name))
            r = rows[-1]
            print(f"{name}: {r['dof']} DOF, M {r['M']:.1e}, b {r['b']:.1e}, q̈ {r['qdd']:.1e}, "
                  f"MuJoCo {r['mj']:.1e}, first trajectory {r['first']:.1f} s, RHS "
                  f"{r['kidym_us']:.1f} µs vs pin.aba {r['pin_us']:.1f} µs, mj_forward "
                  f"{r['mj_us']:.1f} µs", flush=True)
    text = table(rows)
    print(text)
    if args.markdown is not None:
        _replace_block(args.markdown, BEGIN, END,
                       f"Measured {time.strftime('%Y-%m-%d')} on {where}.\n\n{text}")


if __name__ == "__main__":
    main()
