"""The report of a kinematics calculation (``РАСЧЕТ := КИНЕМАТИКА``): ``report.html`` and
``report.md`` for ``kidym run --report``.

A kinematics task has no equations of motion; its report shows what ``kidym equations``
prints for it (the formulas of time and the derivatives kidym formed), the parameters,
the values at the first and the last output time, the plots and the model source. The
HTML page is self-contained (plots embedded), the Markdown one links the plot files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kidym.calc.kinematics import KinematicsResult, kinematics_text
from kidym.model.model import Model
from kidym.report.html import (
    CSS,
    MIME,
    html_table,
    img_tag,
    shown_plots,
)
from kidym.report.html import (
    escape_html as _e,
)
from kidym.report.markdown import markdown_block, markdown_cell, markdown_code, markdown_text
from kidym.simulation.result import write_atomically


def _values(result: KinematicsResult) -> list[tuple[str, str, str]]:
    """``(name, value at the first time, value at the last time)`` of each quantity."""
    return [(n, f"{result.values[n][0]:.10g}", f"{result.values[n][-1]:.10g}")
            for n in result.names]


def _parameters(model: Model, parameters: dict[str, float]) -> list[tuple[str, str, str]]:
    return [(p.name, f"{parameters.get(p.name, p.value):g}", p.unit or "")
            for p in model.parameters]


def kinematics_report_html(model: Model, result: KinematicsResult, *,
                           plots: Sequence[Path] = (),
                           parameters: dict[str, float] | None = None) -> str:
    """The report as one self-contained HTML page.

    Parameters
    ----------
    model : Model
        The kinematics task (as run: ``parameters`` are the values ``--set`` changed).
    result : KinematicsResult
        Its values over the time grid.
    plots : sequence of Path
        The plot files (embedded).
    parameters : dict of str to float, optional
        Parameter values that replaced the model's.
    """
    parameters = parameters or {}
    params = _parameters(model, parameters)
    title = f" — {model.title}" if model.title else ""
    t0, t1 = float(result.t[0]), float(result.t[-1])
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f"<title>kidym report: {_e(model.name)}</title>", f"<style>{CSS}</style>",
        "</head>", "<body>", f"<h1>{_e(model.name + title)}</h1>",
        f"<p>Report by kidym from <code>{_e(model.filename)}</code>: a kinematics "
        f"calculation, {len(result.t)} points from t = {t0:g} to {t1:g}.</p>",
        "<h2>Formulas</h2>", f"<pre>{_e(kinematics_text(model))}</pre>",
        "<h2>Parameters</h2>",
        html_table(params, ("name", "value", "unit")) if params else "<p>none</p>",
        "<h2>Values</h2>",
        html_table(_values(result), ("quantity", f"t = {t0:g}", f"t = {t1:g}")),
        "<h2>Plots</h2>", *[img_tag(p) for p in shown_plots(plots)],
        "<h2>Model source</h2>", f"<pre>{_e(model.source or '')}</pre>",
        "</body>", "</html>"]
    return "\n".join(parts) + "\n"


def kinematics_report_markdown(model: Model, result: KinematicsResult, *,
                               plots: Sequence[Path] = (),
                               parameters: dict[str, float] | None = None) -> str:
    """The report as Markdown (plots linked by relative path); arguments as
    :func:`kinematics_report_html`."""
    parameters = parameters or {}

    def table(rows, header) -> list[str]:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(markdown_cell(c) for c in r) + " |" for r in rows]
        return [*out, ""]

    t0, t1 = float(result.t[0]), float(result.t[-1])
    title = f" — {model.title}" if model.title else ""
    lines = [f"# {markdown_text(model.name + title)}", "",
             f"Report by kidym from {markdown_code(str(model.filename))}: a kinematics "
             f"calculation, {len(result.t)} points from t = {t0:g} to {t1:g}.", "",
             "## Formulas", "", *markdown_block(kinematics_text(model).rstrip("\n")), "",
             "## Parameters", ""]
    params = _parameters(model, parameters)
    lines += table(params, ("name", "value", "unit")) if params else ["none", ""]
    lines += ["## Values", "", *table(_values(result),
                                      ("quantity", f"t = {t0:g}", f"t = {t1:g}"))]
    lines += ["## Plots", ""]
    lines += [f"![{markdown_text(p.stem)}](<{p.name}>)" if p.suffix in MIME
              else f"[{markdown_text(p.name)}](<{p.name}>)" for p in shown_plots(plots)]
    lines += ["", "## Model source", "", *markdown_block(model.source or ""), ""]
    return "\n".join(lines)


def write_kinematics_report(out: str | Path, model: Model, result: KinematicsResult, *,
                            plots: Sequence[Path] = (),
                            parameters: dict[str, float] | None = None) -> list[Path]:
    """Write ``report.html`` and ``report.md`` into ``out`` (each atomically)."""
    out = Path(out)
    return [write_atomically(out / "report.html", kinematics_report_html(
                model, result, plots=plots, parameters=parameters)),
            write_atomically(out / "report.md", kinematics_report_markdown(
                model, result, plots=plots, parameters=parameters))]
