"""The run report: one self-contained HTML file (and the same in Markdown).

``kidym run MODEL --report`` writes ``report.html`` and ``report.md`` beside the
results. The HTML file holds everything inline — the equations as LaTeX rendered by
the bundled KaTeX, the plots as embedded PNG images, the model source — so it
opens offline, from ``file://``, and can be mailed as one file. Sections: summary
(bodies, coordinates, speeds, degrees of freedom, constraints and their
integrability), equations of motion (structural form, named quantities), parameters
and initial conditions, run statistics (solver, steps, evaluations, wall time,
energy drift), plots, model source.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kidym.eom.equations import Equations
from kidym.files import model_hash, write_atomically
from kidym.model.model import Model
from kidym.report import assets
from kidym.report.equations import EquationSet, equation_set, size_summary
from kidym.report.latex import COMPACT_LEGEND_TITLE, LEGEND_TITLE, markdown_of, sections
from kidym.report.markdown import markdown_block, markdown_cell, markdown_code, markdown_text
from kidym.simulation.energy import energy_balance
from kidym.terminal import escape

if TYPE_CHECKING:
    from kidym.simulation.result import Result

CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 0 auto;
       max-width: 1100px; padding: 1.5em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0; }
td, th { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left; }
th { background: #f4f4f4; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.9em; }
.math { overflow-x: auto; overflow-y: hidden; padding: 0.15em 0; }
img.plot { max-width: 100%; display: block; margin: 0.8em 0; border: 1px solid #eee; }
.warning { color: #8a4b00; }
details summary { cursor: pointer; font-weight: 600; margin: 0.5em 0; }
"""

_RENDER = """
(function () {
  var nodes = document.querySelectorAll('.math');
  var ok = 0, bad = 0;
  for (var i = 0; i < nodes.length; i++) {
    var el = nodes[i];
    try {
      katex.render(el.getAttribute('data-tex'), el,
                   {displayMode: el.tagName !== 'SPAN', throwOnError: true, strict: 'ignore'});
      ok++;
    } catch (e) {
      bad++;
      el.textContent = el.getAttribute('data-tex');
      console.error('KaTeX: ' + e.message);
    }
  }
  var root = document.documentElement;
  root.setAttribute('data-math', String(ok));
  root.setAttribute('data-math-failed', String(bad));
  function plotsLoaded() {
    var imgs = document.querySelectorAll('img.plot'), n = 0;
    for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) n++;
    root.setAttribute('data-plots', String(imgs.length));
    root.setAttribute('data-plots-loaded', String(n));
  }
  plotsLoaded();
  window.addEventListener('load', plotsLoaded);
})();
"""


def escape_html(text) -> str:
    """``text`` as HTML text or attribute value: markup escaped, control characters
    (an ESC of a file name) written ``\\x1b``."""
    return html.escape(escape(str(text)), quote=True)


_e = escape_html


def html_table(rows: Sequence[Sequence], header: Sequence[str] | None = None) -> str:
    out = ["<table>"]
    if header:
        out.append("<tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def integrability(eq: Equations) -> str:
    """The constraints on the velocities and their integrability verdict, as a sentence
    (the same verdict ``kidym check`` prints)."""
    from kidym.eom.integrability import check_integrability

    if eq.n_q == eq.n_w and not eq.model.velocity_definitions:
        return "none on the velocities: holonomic system"
    return (f"{eq.n_q - eq.n_w} on the velocities (q̇ = B w + β); "
            f"{check_integrability(eq).describe()}")


def gravity_text(model: Model) -> str:
    """The ``GRAVITY`` vector, or where a weight is given instead: a model without the
    instruction may still have its weight as a force element (the ball's
    ``Pg.zC = -m*g``), so "none" would mislead."""
    if model.gravity:
        return ", ".join(map(str, model.gravity))
    forces = [e for e in model.elements if e.kind == "P"]
    if not forces:
        return "none (no GRAVITY instruction and no force elements)"
    return ("no GRAVITY instruction; weight as an element, if any, among the force "
            "elements: " + ", ".join(f"{e.name}.{e.coordinate} = {e.characteristic}"
                                     for e in forces))


def summary_rows(eq: Equations) -> list[tuple[str, str]]:
    """Model summary as (item, value) rows."""
    m = eq.model
    return [
        ("bodies", f"{len(m.bodies)}: " + ", ".join(
            b.name + (f"~{b.base}" if b.base else "") for b in m.bodies)),
        ("coordinates q", f"{eq.n_q}: " + ", ".join(map(str, eq.coordinates))),
        ("speeds w", f"{eq.n_w}: " + ", ".join(map(str, eq.speeds))),
        ("degrees of freedom", str(eq.n_dof) + (
            f" ({eq.n_w} speeds, holonomic constraints " + ", ".join(
                f"{n} = 0" for n in eq.constraints.names) + ")"
            if eq.constraints is not None else "")),
        ("constraints", integrability(eq)),
        ("force elements", ", ".join(f"{e.name}.{e.coordinate}" for e in m.elements) or "none"),
        ("gravity", gravity_text(m)),
        ("named quantities", str(len(eq.intermediates()))),
        ("model SHA-256", model_hash(m)),
    ]


def _outcome_detail(message: str) -> str:
    """``": MESSAGE"`` unless the message only repeats the outcome."""
    # kidym's compiled loop says "reached the end", SciPy "The solver successfully
    # reached the end of the integration interval."
    return "" if not message.strip() or "reached the end" in message.lower() else f": {message}"


def run_rows(result: Result) -> list[tuple[str, str]]:
    """Run statistics as (item, value) rows."""
    st = result.stats
    rows = [("span", f"t = {result.t[0]:g} … {result.t[-1]:g}" if result.t.size else "empty"),
            ("solver", f"{st.get('method', '?')}, rtol = {st.get('rtol', '?')}, "
                       f"atol = {st.get('atol', '?')}"),
            ("engine", str(st.get("engine", "?"))),
            ("outcome", ("reached the end" if result.success else
                         "FAILED (partial results, up to the failure)" if result.partial
                         else "FAILED") + _outcome_detail(result.message)),
            ("right-hand-side evaluations", str(result.nfev))]
    for key, name in (("nsteps", "steps"), ("njev", "Jacobian evaluations"),
                      ("nlu", "LU decompositions")):
        if key in st:
            rows.append((name, str(st[key])))
    if "wall_time_s" in st:
        rows.append(("wall time", f"{float(st['wall_time_s']):.3f} s"))
    rows.append(("output points", str(result.t.size)))
    balance = energy_balance(result)
    if balance is not None and not balance.available:
        rows.append(("energy balance", f"not available: {balance.unavailable}"))
    elif balance is not None:
        rows.append(("energy balance max |E − E(0) − W| (W: work of dampers, driving "
                     "forces, prescribed motions)", f"{balance.max_abs:.3g}"))
        if balance.relative is not None:
            rows.append(("energy balance relative to max(|E|, |W|)",
                         f"{balance.relative:.3g}"))
    return rows


def _math_blocks(es: EquationSet) -> str:
    out = []
    for title, displays in sections(es):
        body = "\n".join(f'<div class="math" data-tex="{_e(d)}"></div>' for d in displays)
        head = _inline_math(title)
        if title.startswith(("Named quantities", "Expanded", LEGEND_TITLE,
                             COMPACT_LEGEND_TITLE)):
            out.append(f"<details><summary>{head}</summary>\n{body}\n</details>")
        else:
            out.append(f"<h3>{head}</h3>\n{body}")
    return "\n".join(out)


def _inline_math(text: str) -> str:
    """Escape ``text``, turning ``$…$`` into inline KaTeX spans."""
    parts = text.split("$")
    out = []
    for k, p in enumerate(parts):
        out.append(f'<span class="math" data-tex="{_e(p)}"></span>' if k % 2 else _e(p))
    return "".join(out)


MIME = {".png": "image/png", ".svg": "image/svg+xml"}


def shown_plots(plots: Sequence[Path]) -> list[Path]:
    """One file per plot for a report, in order: its PNG, else its SVG, else its PDF
    (``--plot-format`` chooses which are written)."""
    best: dict[str, Path] = {}
    rank = {".png": 0, ".svg": 1, ".pdf": 2}
    for p in plots:
        if p.suffix in rank and (p.stem not in best
                                 or rank[p.suffix] < rank[best[p.stem].suffix]):
            best[p.stem] = p
    return list(best.values())


def img_tag(path: Path) -> str:
    if path.suffix not in MIME:   # a PDF: linked, browsers show it in a tab of its own
        return f'<p><a href="{_e(path.name)}">{_e(path.name)}</a></p>'
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img class="plot" alt="{_e(path.stem)}" '
            f'src="data:{MIME[path.suffix]};base64,{data}"></figure>')


def report_html(model: Model, eq: Equations, result: Result, *,
                plots: Sequence[Path] = (), animation: str | None = None,
                es: EquationSet | None = None) -> str:
    """The report as one self-contained HTML page (see the module docstring).

    Parameters
    ----------
    model, eq, result
        The model, its equations and the run.
    plots : sequence of Path
        PNG files to embed.
    animation : str, optional
        Relative path of the animation page, linked from the report.
    es : EquationSet, optional
        The equations to show (default: the final stage, structural).
    """
    es = es or equation_set(eq, stage="final")
    params = [(p.name, f"{result.parameters.get(p.name, p.value):g}", p.unit or "")
              for p in model.parameters]
    initial = [(n, f"{v:g}") for n, v in result.initial.items()]
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f"<title>kidym report: {_e(model.name)}</title>",
        f"<script>{assets.ERROR_HOOK}</script>",
        f"<style>{assets.katex_css()}</style>", f"<style>{CSS}</style>", "</head>", "<body>",
        f"<h1>{_e(model.name)}</h1>",
        f"<p>Report by kidym from <code>{_e(model.filename)}</code>.</p>",
        "<h2>Summary</h2>", html_table(summary_rows(eq)),
        "<h2>Equations of motion</h2>",
        f"<p>Structural form: {_e(size_summary(es))}.</p>",
        _math_blocks(es),
        "<h2>Parameters</h2>", html_table(params, ("name", "value", "unit")) if params
        else "<p>none</p>",
        "<h2>Initial conditions</h2>", html_table(initial, ("state", "value")),
        "<h2>Run</h2>", html_table(run_rows(result)),
    ]
    if animation:
        parts.append(f'<p>3-D animation: <a href="{_e(animation)}">{_e(animation)}</a></p>')
    parts.append("<h2>Plots</h2>")
    parts += [img_tag(p) for p in shown_plots(plots)]
    parts += ["<h2>Model source</h2>", f"<pre>{_e(model.source or '')}</pre>",
              f"<script>{assets.katex_js()}</script>", f"<script>{_RENDER}</script>",
              "</body>", "</html>"]
    return "\n".join(parts) + "\n"


def report_markdown(model: Model, eq: Equations, result: Result, *,
                    plots: Sequence[Path] = (), animation: str | None = None,
                    es: EquationSet | None = None) -> str:
    """The report as Markdown (math in ``$$``; plots linked by relative path)."""
    es = es or equation_set(eq, stage="final")

    def table(rows, header) -> list[str]:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(markdown_cell(c) for c in r) + " |" for r in rows]
        return [*out, ""]

    lines = [f"# {markdown_text(model.name)}", "",
             f"Report by kidym from {markdown_code(str(model.filename))}.", "",
             "## Summary", "", *table(summary_rows(eq), ("item", "value")),
             markdown_of(es, level=2), "## Parameters", ""]
    lines += table([(p.name, f"{result.parameters.get(p.name, p.value):g}", p.unit or "")
                    for p in model.parameters], ("name", "value", "unit"))
    lines += ["## Initial conditions", ""]
    lines += table([(n, f"{v:g}") for n, v in result.initial.items()], ("state", "value"))
    lines += ["## Run", "", *table(run_rows(result), ("item", "value"))]
    if animation:
        lines += [f"3-D animation: [{animation}]({animation})", ""]
    lines += ["## Plots", ""]
    lines += [f"![{markdown_text(p.stem)}](<{p.name}>)" if p.suffix in MIME
              else f"[{markdown_text(p.name)}](<{p.name}>)" for p in shown_plots(plots)]
    lines += ["", "## Model source", "", *markdown_block(model.source or ""), ""]
    return "\n".join(lines)


def write_report(out: str | Path, model: Model, eq: Equations, result: Result, *,
                 plots: Sequence[Path] = (), animation: str | None = None) -> list[Path]:
    """Write ``report.html`` and ``report.md`` into ``out`` (atomically)."""
    out = Path(out)
    es = equation_set(eq, stage="final")
    return [
        write_atomically(out / "report.html", report_html(
            model, eq, result, plots=plots, animation=animation, es=es)),
        write_atomically(out / "report.md", report_markdown(
            model, eq, result, plots=plots, animation=animation, es=es)),
    ]


def result_html(result: Result, *, rows: int = 5) -> str:
    """Jupyter's view of a result: outcome, the first and last rows, a plot of the state."""
    import matplotlib.pyplot as plt

    names = ["t", *result.values]
    n = result.t.size
    idx = list(range(min(rows, n))) + (list(range(max(n - rows, rows), n)) if n > rows else [])
    body = []
    for k, i in enumerate(idx):
        if k and i != idx[k - 1] + 1:
            body.append(["…"] * len(names))
        body.append([f"{result[c][i]:.6g}" for c in names])
    from kidym.report.plots import plot_result

    fig = plot_result(result)[0].figure   # the coordinates, the speeds: a panel each
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    img = base64.b64encode(buf.getvalue()).decode("ascii")
    status = "reached the end" if result.success else f"FAILED: {_e(result.message)}"
    return (f"<div><p><b>kidym Result</b>: {n} points, {len(result.values)} quantities, "
            f"{result.nfev} evaluations, {status}</p>"
            + html_table(body, names)
            + f'<img src="data:image/png;base64,{img}"></div>')
