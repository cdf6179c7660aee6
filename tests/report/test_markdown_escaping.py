"""``report.md`` renders the model's text as text (issue 27, the audit: a comment
holding a code fence closed the source block and the next line became live HTML; a
unit went raw into the parameters table; the file name raw into a heading of the
equations; ESC bytes of a file name reached report.md, report.html, animation.html).

The oracle is a CommonMark renderer (markdown-it-py, raw HTML enabled as in GitHub's
and most editors' previews), its output split into elements by ``html.parser``."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

import kidym
from kidym.report.animation import animation_html
from kidym.report.html import report_html, report_markdown
from kidym.report.markdown import markdown_block, markdown_cell
from kidym.report.poses import body_poses

markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py renders the Markdown")

NAME = "pend\x1b]0;owned\x07<img src=x onerror=alert(1)>"
FILENAME = "file\x1b[2J<img src=x onerror=alert(2)>.kdm"
UNIT = "<img src=x onerror=alert(3)>"
SOURCE = f"""# a comment with a fence
```
<img src=x onerror=alert(4)>
```` and <script>alert(5)</script> #
m = 1; g = 9.81;
l = 1, {UNIT};
Rod | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
GRAVITY := 0, -g, 0;
INITIAL := t(0), phi(0.3);
"""


class Elements(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.data: list[tuple[str, str]] = []
        self._open: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._open.append(tag)

    def handle_endtag(self, tag):
        if tag in self._open:
            while self._open.pop() != tag:
                pass

    def handle_data(self, data):
        self.data.append((self._open[-1] if self._open else "", data))


def _render(md: str) -> Elements:
    return Elements(markdown_it.MarkdownIt("commonmark").enable("table").render(md))


def _no_live_html(page: Elements) -> None:
    assert not [t for t, _ in page.tags if t in ("img", "script", "iframe", "object")]
    assert not [(t, a) for t, a in page.tags if any(k.startswith("on") for k in a)]


@pytest.fixture(scope="module")
def run():
    model = kidym.parse(SOURCE, name=NAME, filename=FILENAME)
    assert model.parameters[2].unit == UNIT
    return model, kidym.derive(model), kidym.simulate(model, t_end=0.1, n_points=3)


def test_report_md_renders_no_html_of_the_model(run):
    model, eq, result = run
    md = report_markdown(model, eq, result)
    assert "\x1b" not in md and "\x07" not in md
    page = _render(md)
    _no_live_html(page)
    # the whole source in one code block, as written (control characters aside)
    code = [d for tag, d in page.data if tag == "code"]
    assert SOURCE in code
    # the unit, in its table cell, as written
    assert ("td", UNIT) in page.data
    # the name in the headings: the report's and the equations'
    headings = "".join(d for tag, d in page.data if tag == "h1")
    assert NAME.replace("\x1b", "\\x1b").replace("\x07", "\\x07") in headings


def test_html_pages_hold_no_control_characters_of_the_file_name(run):
    model, eq, result = run
    for page in (report_html(model, eq, result), animation_html(body_poses(model, result),
                                                                model)):
        assert "\x1b" not in page and "\x07" not in page
        assert "\\u001b" not in page   # nor in the viewer's JSON
        assert "\\x1b]0;owned" in page


@pytest.mark.parametrize("text", ["", "`", "```", "a\n```\n<b>x</b>\n````\n", "~~~\n<i>",
                                  "x\x1by", "    indented\n\n```python\nz"])
def test_a_block_renders_back_to_its_text(text):
    page = _render("\n".join(markdown_block(text)) + "\n")
    _no_live_html(page)
    got = "".join(d for tag, d in page.data if tag == "code")
    assert got.rstrip("\n") == text.replace("\x1b", "\\x1b").rstrip("\n")


@pytest.mark.parametrize("text", ["1.5", "kg m^2", "<b>x</b>", "a | b", "[x](javascript:1)",
                                  "`code`", "*em* _em_", "&amp;", "a\\|b"])
def test_a_cell_renders_back_to_its_text(text):
    page = _render(f"| h |\n|---|\n| {markdown_cell(text)} |\n")
    _no_live_html(page)
    assert not [t for t, _ in page.tags if t in ("a", "code", "em", "strong")]
    assert "".join(d for tag, d in page.data if tag == "td") == text
