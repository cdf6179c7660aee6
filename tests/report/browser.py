"""Headless Debian Chromium for the report and animation tests (`.ci/system-deps --test`).

Pages record what they show in attributes of ``<html>`` (``data-errors`` with every
script error, failed resource and ``console.error``; ``data-math``; ``data-bodies`` …);
the tests read them from ``--dump-dom`` and look at ``--screenshot`` pixels.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

requires_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (`.ci/system-deps --test`)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars"]


def _run(args: list[str], page: Path, fragment: str = "") -> str:
    url = page.resolve().as_uri() + (f"#{quote(fragment, safe='=&,+')}" if fragment else "")
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, url],
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def dump_dom(page: Path, budget_ms: int = 5000, *, fragment: str = "",
             size: tuple[int, int] | None = None) -> str:
    """The DOM after the page's scripts ran (``--dump-dom``); ``fragment`` is appended
    to the address after ``#`` (the viewer's options), ``size`` the window's."""
    window = [f"--window-size={size[0]},{size[1]}"] if size else []
    return _run([f"--virtual-time-budget={budget_ms}", *window, "--dump-dom"], page, fragment)


def root_attributes(dom: str) -> dict[str, str]:
    """Attributes of the ``<html>`` element of a DOM dump."""
    tag = re.search(r"<html\b([^>]*)>", dom)
    assert tag, dom[:300]
    return {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', tag.group(1))}


def errors(attrs: dict[str, str]) -> list[str]:
    """The page's recorded errors."""
    return json.loads(attrs.get("data-errors", '["no error hook ran"]'))


def screenshot(page: Path, out: Path, size: tuple[int, int] = (1000, 700),
               budget_ms: int = 5000, *, fragment: str = "") -> np.ndarray:
    """A screenshot as an RGB float array, shape (h, w, 3); a copy goes to the folder
    ``$KIDYM_SCREENSHOTS`` where that is set (to look at them)."""
    import matplotlib.image

    _run([f"--virtual-time-budget={budget_ms}", f"--window-size={size[0]},{size[1]}",
          f"--screenshot={out}"], page, fragment)
    if os.environ.get("KIDYM_SCREENSHOTS"):
        keep = Path(os.environ["KIDYM_SCREENSHOTS"])
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out, keep / out.name)
    img = matplotlib.image.imread(out)
    return np.asarray(img[..., :3], dtype=float)


def not_blank(img: np.ndarray) -> bool:
    """More than one colour over a real share of the image."""
    flat = (img.reshape(-1, 3) * 255).round().astype(int)
    _, counts = np.unique(flat, axis=0, return_counts=True)
    return counts.max() < 0.97 * len(flat) and len(counts) > 20


BACKGROUND = np.array([0xf4, 0xf6, 0xf8]) / 255   # the viewer's clear colour


def silhouette(img: np.ndarray, canvas: str, threshold: float = 0.08) -> np.ndarray:
    """Where the viewer's canvas (``data-canvas`` ``"WxH"``, at the top left) differs from
    its background: a boolean mask, shape (H, W)."""
    w, h = (int(x) for x in canvas.split("x"))
    return np.abs(img[:h, :w] - BACKGROUND).max(axis=2) > threshold


def extent(mask: np.ndarray) -> tuple[int, int]:
    """Width and height in pixels of the box around the mask's pixels."""
    cols = np.flatnonzero(mask.any(axis=0))
    rows = np.flatnonzero(mask.any(axis=1))
    assert cols.size and rows.size, "nothing drawn"
    return int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)
