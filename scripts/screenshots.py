"""Screenshots of the report and the 3-D viewer of some example models (headless Chromium).

Usage::

    python scripts/screenshots.py OUT_DIR [MODEL …]

For each model (default: the ball of seed 000, the cart-pole, the slider-crank, the
biped) it runs ``kidym run MODEL --report --animate`` into a scratch directory and writes
``OUT_DIR/NAME-report.png`` (the report page, equations included) and
``OUT_DIR/NAME-viewer.png`` (the viewer at the start of the motion) with Debian's
``chromium`` (software GL). Nothing is kept but the PNGs; the folder is not part of the
repository.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name → (model, end time of the run)
MODELS = {
    "ball": ("examples/ball/ball.kdm", 5.0),
    "cart_pole": ("examples/optimal_control/cart_pole.kdm", 2.0),
    "slider_crank": ("examples/slider_crank/slider_crank.kdm", None),
    "biped": ("examples/biped/biped.kdm", 0.5),
}

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars"]


def chromium() -> str:
    """The Chromium executable (an error naming what to install when there is none)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        sys.exit("screenshots need Debian's chromium (apt-get install chromium)")
    return exe


def shoot(page: Path, png: Path, size: tuple[int, int], budget_ms: int) -> None:
    """One screenshot of ``page`` into ``png``."""
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}",
             f"--virtual-time-budget={budget_ms}", f"--window-size={size[0]},{size[1]}",
             f"--screenshot={png}", page.resolve().as_uri()],
            capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 or not png.exists():
        raise RuntimeError(f"chromium failed on {page}: {proc.stderr[-1000:]}")


def run(name: str, model: str, t_end: float | None, scratch: Path) -> Path:
    """``kidym run`` of one model with its report and animation; the output directory."""
    out = scratch / name
    cmd = [sys.executable, "-m", "kidym", "run", str(ROOT / model), "--out", str(out),
           "--report", "--animate", "-q"]
    if t_end is not None:
        cmd += ["--t-end", str(t_end)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"kidym run {model} failed:\n{proc.stdout}{proc.stderr}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the PNG files")
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help=f"which models: {', '.join(MODELS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:   # (not choices=: Python 3.11 checks a nargs="*" default against them whole)
        parser.error(f"unknown model {unknown[0]}: choose from {', '.join(MODELS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.models or list(MODELS):
            model, t_end = MODELS[name]
            out = run(name, model, t_end, Path(scratch))
            for page, suffix, size in (("report.html", "report", (1280, 4000)),
                                       ("animation.html", "viewer", (1200, 800))):
                if (out / page).exists():
                    png = args.out / f"{name}-{suffix}.png"
                    shoot(out / page, png, size, 8000)
                    written.append(png)
                else:
                    print(f"{name}: no {page} written", file=sys.stderr)
    for png in written:
        print(png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
