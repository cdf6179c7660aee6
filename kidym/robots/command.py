"""``kidym import ROBOT.urdf|.xml|.sdf [-o MODEL.kdm]``: a robot file as a readable model file."""

from __future__ import annotations

import argparse
import sys


def cmd_import(args: argparse.Namespace) -> int:
    """Write the model of ``args.robot`` to ``args.output`` (or standard output)."""
    from kidym.robots import import_robot

    robot = import_robot(args.robot, strict=args.strict, floating=args.floating,
                         mimic=args.mimic, gravity=args.gravity)
    for w in robot.format_warnings():
        print(w, file=sys.stderr)
    if args.output is None:
        sys.stdout.write(robot.text)
        return 0
    robot.write(args.output)
    print(f"wrote {args.output}: {len(robot.bodies)} bodies, {len(robot.coordinates)} joint "
          f"coordinates{', floating base' if robot.floating else ''}"
          f"{f', {len(robot.warnings)} warnings' if robot.warnings else ''}")
    return 0


def add_parser(sub) -> None:
    """Register ``kidym import``."""
    p = sub.add_parser("import", help="write a robot file (URDF, MJCF, SDF) as a model file (.kdm)",
                       description="Write a robot description (URDF, MJCF, SDF) as a readable "
                                   "kidym model: links as bodies (fixed joints merged), "
                                   "joints as coordinates of the same name, gravity along -z "
                                   "(docs/robots.md). Needs kidym[robots] (URDF, SDF) or "
                                   "kidym[mjcf] (MJCF).")
    p.add_argument("robot", help="robot file (.urdf, MJCF .xml, or .sdf)")
    p.add_argument("-o", "--output", default=None, metavar="MODEL.kdm",
                   help="write the model here, whole or not at all (default: standard "
                        "output)")
    p.add_argument("--floating", action="store_true",
                   help="a floating base: the root link moves freely (position, quaternion, "
                        "body-frame velocities), as Pinocchio's free-flyer")
    p.add_argument("--mimic", choices=("free", "follow"), default="free",
                   help="a mimic joint gets its own coordinate (free, as Pinocchio loads "
                        "it) or follows the joint it mimics (follow)")
    p.add_argument("--strict", action="store_true",
                   help="an impossible inertia (not positive semidefinite, triangle "
                        "inequality) is an error, not a warning")
    p.add_argument("--gravity", type=float, default=9.81,
                   help="gravity acceleration along -z in m/s^2 (9.81)")
    p.set_defaults(func=cmd_import)
