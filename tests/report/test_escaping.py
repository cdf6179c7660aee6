"""Every string of a model is shown as text in the report and the 3-D viewer, never
obeyed as HTML or JavaScript. The pages are read back with ``html.parser``, the way
a browser splits them into elements and script text."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

import kidym
from kidym.report.animation import animation_html
from kidym.report.html import report_html
from kidym.report.poses import body_poses

# Names cannot hold `<`, quotes or `/` (docs/language.md §1: letters, digits, `_ ' @ $`),
# so the routes in are the model name (a file's stem, or results.json for `kidym
# animate`), the file name, and the raw text of TASK (the title).
NAME = "</script><!--<script>alert(1)</script>"
FILENAME = '<img src=x onerror="alert(2)">.kdm'
TITLE = '<script>alert(3)</script> & "x"'
SOURCE = f"""TASK := {TITLE};
m = 1; l = 1; g = 9.81;
Rod@1$a | Rz(phi) | Sx(l/2), m, 0, m*l^2/12, m*l^2/12;
GRAVITY := 0, -g, 0;
INITIAL := t(0), phi(0.3);
"""


class Page(HTMLParser):
    """The elements of a page: start tags with attributes, script texts, all text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self.text: dict[str, list[str]] = {}
        self._open: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._open.append(tag)
        if tag == "script":
            self.scripts.append((dict(attrs), ""))

    def handle_endtag(self, tag):
        if tag in self._open:
            while self._open.pop() != tag:
                pass

    def handle_data(self, data):
        where = self._open[-1] if self._open else ""
        if where == "script":
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)
        self.text.setdefault(where, []).append(data)


@pytest.fixture(scope="module")
def run():
    model = kidym.parse(SOURCE, name=NAME, filename=FILENAME)
    assert model.title == TITLE
    result = kidym.simulate(model, t_end=0.2, n_points=5)
    return model, result


def _no_handlers(page: Page) -> None:
    assert not [(t, a) for t, a in page.tags if any(k.startswith("on") for k in a)]
    assert not [t for t, _ in page.tags if t in ("img", "iframe", "object", "embed")]


def test_the_report_shows_the_model_strings_as_text(run):
    model, result = run
    page = Page(report_html(model, kidym.derive(model), result))
    # our three scripts (error hook, KaTeX, renderer), none of them the model's
    assert len(page.scripts) == 3
    assert not [s for _, s in page.scripts if "alert(" in s]
    _no_handlers(page)
    assert page.text["title"] == [f"kidym report: {NAME}"]
    assert page.text["h1"] == [NAME]
    assert page.text["code"][0] == FILENAME
    assert "".join(page.text["pre"]) == SOURCE        # the title, inside the source


def test_the_viewer_json_cannot_leave_its_script_element(run):
    model, result = run
    page = Page(animation_html(body_poses(model, result), model))
    assert len(page.scripts) == 4                      # hook, data, three.js, viewer
    _no_handlers(page)
    assert page.text["title"] == [f"kidym animation: {NAME}"]
    (data,) = [s for a, s in page.scripts if a.get("id") == "kidym-data"]
    # a browser would end the element at `</script` and treat `<!--` + `<script` as the
    # start of a "double escaped" run that swallows the next `</script>`
    low = data.lower()
    assert "</script" not in low and "<!--" not in low and "<script" not in low
    doc = json.loads(data)                             # what JSON.parse reads
    assert doc["model"] == NAME
    assert [b["name"] for b in doc["bodies"]] == ["Rod@1$a"]
    others = [s for a, s in page.scripts if a.get("id") != "kidym-data"]
    assert not [s for s in others if "alert(" in s]
