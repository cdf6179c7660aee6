"""The kinematics calculation against closed forms (the point of examples/kinematics)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kidym.calc.kinematics import KinematicsError, kinematics, run_kinematics
from kidym.lang import load_tasks, parse
from kidym.lang.source import decode

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "kinematics" / "point.kdm"
CP866 = Path(__file__).with_name("point_cp866.kdm")
TIMES = np.linspace(0.0, 6.0, 13)


def closed_form(t: np.ndarray, *, vz: float) -> dict[str, np.ndarray]:
    """x = 3 sin(πt/3), y = −2 cos(πt/3), z = vz·t, derivatives by hand."""
    w = np.pi / 3
    x1, y1 = 3 * w * np.cos(w * t), 2 * w * np.sin(w * t)
    x2, y2 = -3 * w**2 * np.sin(w * t), 2 * w**2 * np.cos(w * t)
    v = np.sqrt(x1**2 + y1**2 + vz**2)
    a = np.sqrt(x2**2 + y2**2)
    # |r' × r''| with r' = (x1, y1, vz), r'' = (x2, y2, 0)
    cross = np.sqrt((vz * y2) ** 2 + (vz * x2) ** 2 + (x1 * y2 - y1 * x2) ** 2)
    return {"x": 3 * np.sin(w * t), "y": -2 * np.cos(w * t), "vx": x1, "vy": y1, "v": v,
            "a": a, "atau": (x1 * x2 + y1 * y2) / v, "an": cross / v, "rho": v**3 / cross}


@pytest.mark.parametrize("path", [EXAMPLE, CP866], ids=["utf8", "cp866"])
def test_point_example_agrees_with_the_closed_form(path: Path) -> None:
    first, second = load_tasks(path)
    for model, vz in ((first, 0.0), (second, 1.0)):
        assert model.calculation == "KINEMATICS"
        r = kinematics(model, n_points=13)
        np.testing.assert_allclose(r.t, TIMES, rtol=0, atol=1e-15)
        for name, want in closed_form(TIMES, vz=vz).items():
            np.testing.assert_allclose(r[name], want, rtol=1e-9, atol=1e-9, err_msg=name)
    assert "z" in second.outputs and "z" not in first.outputs


def test_cp866_copy_is_the_example() -> None:
    text, encoding = decode(CP866.read_bytes())
    assert encoding == "cp866"
    assert text.replace("\r\n", "\n") == EXAMPLE.read_text(encoding="utf-8")


def test_second_derivatives_and_partials_by_name() -> None:
    model = parse("k = 2; s = k*t^3; u = s^2; d = u's; SHOW := s't't, u't, d; "
                  "VARY := t, 0, 1; CALCULATION := KINEMATICS;")
    t = np.linspace(0, 1, 5)
    r = kinematics(model, n_points=5)
    np.testing.assert_allclose(r["s't't"], 12 * t, rtol=1e-12)
    np.testing.assert_allclose(r["u't"], 6 * 4 * t**5, rtol=1e-12)   # d/dt (4 t^6)
    np.testing.assert_allclose(r["d"], 2 * 2 * t**3, rtol=1e-12)     # ∂(s²)/∂s = 2s


def test_conditional_formula() -> None:
    model = parse("f = t < 1 ? t ! 2 - t; SHOW := f, f't; CALCULATION := KINEMATICS; "
                  "VARY := t, 0, 2;")
    r = kinematics(model, n_points=5)  # t = 0, .5, 1, 1.5, 2
    np.testing.assert_allclose(r["f"], [0, 0.5, 1, 0.5, 0])
    np.testing.assert_allclose(r["f't"], [1, 1, -1, -1, -1])


def test_models_with_coordinates_are_refused() -> None:
    model = parse("m = 1; Jm.x = m; SHOW := x; CALCULATION := KINEMATICS;")
    with pytest.raises(KinematicsError, match="generalized coordinates"):
        kinematics(model)


def test_files_are_written(tmp_path: Path) -> None:
    [model] = load_tasks(EXAMPLE)[:1]
    written = run_kinematics(model, tmp_path, n_points=50)
    assert written[0].name == "results.csv"
    header = written[0].read_text().splitlines()[0].split(",")
    assert header[0] == "t" and {"v", "rho", "x", "y"} <= set(header)
    assert len(written) == 1 + len(model.plots) == 9
    assert all(p.stat().st_size > 1000 for p in written[1:])


def test_changed_parameters_are_followed_by_every_formula(tmp_path: Path) -> None:
    from kidym.cli import main

    text = ("k = 2; T = 1; s = k*t^3; SHOW := s, s't't; VARY := t, 0, T; "
            "CALCULATION := KINEMATICS;")
    r = kinematics(parse(text), n_points=5, parameters={"k": 5, "T": 2})
    t = np.linspace(0, 2, 5)                       # the span follows T
    np.testing.assert_allclose(r.t, t)
    np.testing.assert_allclose(r["s"], 5 * t**3, rtol=1e-12)
    np.testing.assert_allclose(r["s't't"], 30 * t, rtol=1e-12)
    with pytest.raises(KinematicsError, match="`K` is not a parameter"):
        kinematics(parse(text), parameters={"K": 5})
    path = tmp_path / "k.kdm"
    path.write_text(text, encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--set", "k=5",
                 "--points", "5"]) == 0
    rows = (tmp_path / "o" / "results.csv").read_text(encoding="utf-8").splitlines()
    assert float(rows[-1].split(",")[1]) == pytest.approx(5.0)   # s(1) = k
    with pytest.raises(SystemExit, match="--initial does not apply"):
        main(["run", str(path), "--out", str(tmp_path / "o"), "--initial", "s=1"])


def test_report_of_every_task(tmp_path: Path) -> None:
    """``kidym run --report`` on a kinematics file: per task a self-contained HTML page
    and a Markdown page whose values are the closed form's, with every plot."""
    import re

    from kidym.cli import main

    out = tmp_path / "o"
    assert main(["run", str(EXAMPLE), "--out", str(out), "--report", "--points", "13"]) == 0
    for task, vz in (("task1", 0.0), ("task2", 1.0)):
        folder = out / task
        pngs = sorted(p.name for p in folder.glob("*.png"))
        html = (folder / "report.html").read_text(encoding="utf-8")
        md = (folder / "report.md").read_text(encoding="utf-8")
        assert html.count('<img class="plot"') == len(pngs) == 8
        linked = re.findall(r"!\[[^\]]*\]\(<([^>]+)>\)", md)
        assert sorted(linked) == pngs
        want = {n: (v[0], v[-1]) for n, v in closed_form(TIMES, vz=vz).items()}
        rows = {m[0]: (float(m[1].replace("\\", "")), float(m[2].replace("\\", "")))
                for m in re.findall(r"^\| (\w+) \| (\S+) \| (\S+) \|$", md, re.M)
                if m[0] in want}
        assert set(rows) == set(want)
        for name, (first, last) in want.items():
            assert rows[name] == pytest.approx((first, last), rel=1e-9, abs=1e-9), name
        # the derivatives kidym formed, in both pages
        assert "* x't = " in md and "* x&#x27;t = " in html


def test_no_plots_and_options_that_do_not_apply(tmp_path: Path) -> None:
    from kidym.cli import main

    out = tmp_path / "o"
    assert main(["run", str(EXAMPLE), "--out", str(out), "--no-plots", "--report",
                 "--points", "5"]) == 0
    assert not list(out.rglob("*.png"))
    assert "<img" not in (out / "task1" / "report.html").read_text(encoding="utf-8")
    for extra in (["--engine", "compiled"], ["--animate"], ["--rtol", "1e-6"],
                  ["--plot", "x,y"], ["--format", "npz"], ["--degrees"]):
        with pytest.raises(SystemExit, match=f"{extra[0]} does not apply to a kinematics "
                                             "calculation"):
            main(["run", str(EXAMPLE), "--out", str(tmp_path / "x"), *extra])
    assert not (tmp_path / "x").exists()        # refused before anything was written
