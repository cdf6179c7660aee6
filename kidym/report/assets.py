"""The vendored JavaScript and CSS, ready to inline into self-contained HTML files.

``vendor/`` holds three.js and KaTeX as fetched from the npm registry (see
``vendor/README.md``). KaTeX's fonts are embedded into its CSS as ``data:`` URLs,
so the pages load nothing from anywhere: they work offline and from ``file://``.
"""

from __future__ import annotations

import base64
import re
from functools import cache
from importlib import resources

_VENDOR = resources.files("kidym.report") / "vendor"


def _read(*parts: str) -> str:
    node = _VENDOR
    for p in parts:
        node = node / p
    return node.read_text(encoding="utf-8")


def _safe(script: str) -> str:
    """Keep ``</script`` inside JavaScript from closing the inline tag."""
    return script.replace("</script", "<\\/script")


@cache
def three_js() -> str:
    """three.js (UMD build, global ``THREE``)."""
    return _safe(_read("three", "three.min.js"))


@cache
def katex_js() -> str:
    """KaTeX (global ``katex``)."""
    return _safe(_read("katex", "katex.min.js"))


@cache
def katex_css() -> str:
    """KaTeX's CSS with its WOFF2 fonts embedded as ``data:`` URLs (others dropped)."""
    css = _read("katex", "katex.min.css")
    fonts = _VENDOR / "katex" / "fonts"

    def embed(match: re.Match) -> str:
        name = match.group(1)
        data = base64.b64encode((fonts / f"{name}.woff2").read_bytes()).decode("ascii")
        return f'src:url(data:font/woff2;base64,{data}) format("woff2")'

    return re.sub(r'src:url\(fonts/([\w-]+)\.woff2\) format\("woff2"\)[^;}]*', embed, css)


#: First script of every page: records errors (script, resource, console.error) in
#: ``<html data-errors="[…]">`` so that a headless browser's DOM dump shows them.
ERROR_HOOK = """
(function () {
  var errors = [];
  function keep(msg) {
    errors.push(String(msg));
    document.documentElement.setAttribute('data-errors', JSON.stringify(errors));
  }
  document.documentElement.setAttribute('data-errors', '[]');
  window.addEventListener('error', function (e) {
    keep(e.message || ('failed to load ' + ((e.target && (e.target.src || e.target.href)) || '?')));
  }, true);
  window.addEventListener('unhandledrejection', function (e) { keep(e.reason); });
  var original = console.error;
  console.error = function () {
    keep(Array.prototype.slice.call(arguments).join(' '));
    return original.apply(console, arguments);
  };
})();
"""
