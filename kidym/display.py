"""What Python and Jupyter show of kidym's objects: short ``repr`` lines and small HTML
summaries (``_repr_html_``).

Standard library only, so that every layer can use it without importing upwards. Model
text (names, titles, messages) reaches the HTML only escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

#: names listed before the rest are counted (``a, b, c, … (+9)``)
LIMIT = 8


def names(items: Iterable[object], limit: int = LIMIT) -> str:
    """``a, b, c`` — at most ``limit`` items, then how many more (``… (+9)``)."""
    items = [str(x) for x in items]
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", … (+{len(items) - limit})"


def short_list(items: Sequence[object], limit: int = LIMIT) -> str:
    """A list for a ``repr``: ``['a', 'b', …]`` with at most ``limit`` names shown."""
    shown = ", ".join(repr(str(x)) for x in items[:limit])
    more = f", … (+{len(items) - limit})" if len(items) > limit else ""
    return f"[{shown}{more}]"


def escape(text: object) -> str:
    """HTML text, quotes included."""
    return html.escape(str(text), quote=True)


def table(rows: Sequence[Sequence[object]], header: Sequence[object] | None = None) -> str:
    """An HTML table of escaped cells."""
    out = ['<table style="border-collapse:collapse">']
    cell = 'style="border:1px solid #ccc;padding:0.15em 0.5em;text-align:left"'
    if header:
        out.append("<tr>" + "".join(f"<th {cell}>{escape(h)}</th>" for h in header)
                   + "</tr>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td {cell}>{escape(c)}</td>" for c in row) + "</tr>")
    out.append("</table>")
    return "".join(out)


def summary(title: str, rows: Sequence[tuple[object, object]], *,
            text: str | None = None, extra: str = "") -> str:
    """A titled key–value table, optionally followed by preformatted ``text`` and
    ``extra`` HTML (already escaped by the caller)."""
    body = f"<div><p><b>{escape(title)}</b></p>" + table(rows)
    if text:
        body += f"<pre>{escape(text)}</pre>"
    return body + extra + "</div>"
