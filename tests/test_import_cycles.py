"""No import cycles in ``kidym/``, counting imports inside functions; no private names
imported from another module.

The graph is read from the source (the AST of every module), not from a run: an
import inside a function is an edge as much as one at the top. Imports under
``if TYPE_CHECKING:`` are left out (they never run). Arrows point down
(CONVENTIONS.md, "Arrows point down"); where a cycle is still known, it is listed
in :data:`KNOWN_CYCLES`, a list that may only shrink: a cycle not in it fails, and
so does an entry that no longer is a cycle (remove it).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kidym"

#: Strongly connected groups of modules still importing each other (each to be broken).
KNOWN_CYCLES: list[frozenset[str]] = []


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(path: Path, modules: set[str]) -> set[str]:
    """The kidym modules that ``path`` imports anywhere (not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            for a in node.names:
                if f"{base}.{a.name}" in modules:   # a submodule imported by name
                    found.add(f"{base}.{a.name}")
                elif base in modules:
                    found.add(base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(name)
    return found


def graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports(p, modules) for p in paths}


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[frozenset[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(frozenset(group))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return found


def test_the_cycle_finder_finds_a_cycle_and_only_that() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(edges) == [frozenset("abc")]


def test_function_level_imports_count(tmp_path) -> None:
    source = tmp_path / "kidym" / "x.py"
    source.parent.mkdir()
    source.write_text("def f():\n    from kidym import y\n    import kidym.z\n"
                      "if TYPE_CHECKING:\n    import kidym.w\n", encoding="utf-8")
    modules = {"kidym.x", "kidym.y", "kidym.z", "kidym.w"}
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert imports(source, modules) == {"kidym.y", "kidym.z"}
    finally:
        ROOT = saved


def test_no_import_cycles_beyond_the_known_ones() -> None:
    found = cycles(graph())
    new = [sorted(c) for c in found if not any(c <= k for k in KNOWN_CYCLES)]
    assert not new, f"import cycles (counting imports inside functions): {new}"
    gone = [sorted(k) for k in KNOWN_CYCLES if not any(c & k for c in found)]
    assert not gone, f"no longer cycles, remove them from KNOWN_CYCLES: {gone}"


#: ``(importing module, private name)`` still imported across modules (to be made public
#: or kept at home); a list that may only shrink.
KNOWN_PRIVATE: set[tuple[str, str]] = set()


def private_imports() -> set[tuple[str, str]]:
    """``(module, name)`` for every ``from kidym.… import _name`` in ``kidym/``."""
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kidym")
                    and not node.level):
                found.update((module_name(path), a.name) for a in node.names
                             if a.name.startswith("_") and not a.name.startswith("__"))
    return found


def test_no_private_names_across_modules() -> None:
    found = private_imports()
    assert not found - KNOWN_PRIVATE, sorted(found - KNOWN_PRIVATE)
    assert not KNOWN_PRIVATE - found, f"no longer imported, remove: {KNOWN_PRIVATE - found}"
