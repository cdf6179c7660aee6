"""What Python and Jupyter show of kidym's objects: short ``repr`` lines and small HTML
summaries (``_repr_html_``).

Standard library only, so that every layer can use it without importing upwards. Model
text (names, titles, messages) reaches the HTML only escaped.
"""

from __future__ import annotations

import html
import re
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


#: characters that mean something in matplotlib's mathtext
_MATH_SPECIAL = re.compile(r"([\\$_^{}%#&~])")


def math_name(name: str) -> str:
    """A name as a plot shows it: a rate ``x't`` as ``ẋ`` and ``x't't`` as ``ẍ``
    (matplotlib mathtext, the dots over the whole name), other names as written."""
    m = re.fullmatch(r"([^']+)((?:'t){1,2})", name)
    if m is None:
        return name
    base = _MATH_SPECIAL.sub(r"\\\1", m.group(1))
    dots = len(m.group(2)) // 2
    if len(m.group(1)) == 1:
        accent = r"\dot" if dots == 1 else r"\ddot"
        return "$" + accent + r"{\mathregular{" + base + "}}$"
    # (\dot would sit on the last letter; a bullet of the scripted size shows clearly)
    dot = r"\bullet" if dots == 1 else r"\bullet\!\bullet"
    return r"$\overset{" + dot + r"}{\mathregular{" + base + "}}$"
