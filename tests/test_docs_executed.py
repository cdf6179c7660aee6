"""Docs are executed: the commands and code blocks of README.md, docs/ and examples/ run.

How blocks are classified, run and compared, and the ``<!-- doc-test: … -->`` markers,
are described in ``tests/docblocks.py``. The ``kdm`` blocks are parsed by
``tests/lang/test_docs_examples.py``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess

import pytest

from tests import docblocks
from tests.docblocks import ROOT, Block

BLOCKS = docblocks.all_blocks()
README = ROOT / "README.md"
QUICK_START = [b for b in BLOCKS if b.page.name == "README.md" and b.section == "Quick start"]
#: skipped blocks allowed at most: each names its reason on the page (the seventh: the
#: singular-passage benchmark of docs/benchmarks.md, minutes of ali3 runs; its figures
#: are asserted by tests/simulation/test_singular_passages.py)
MAX_SKIPS = 7


def _page_group(block: Block) -> pytest.MarkDecorator:
    """The blocks of one page run in one process, in order (``--dist loadgroup`` of
    pytest-xdist): a page's commands may use the files its earlier ones wrote."""
    return pytest.mark.xdist_group(str(block.page.relative_to(ROOT)))


def _builds_c(block: Block) -> bool:
    """Whether a block compiles generated C: it says so, or a script of the checkout that
    it runs (``python3 examples/omni_vehicle/motions.py``) uses the compiled engine."""
    if any(w in block.text for w in ("compiled", "--engine auto", "rhs.py", "table2.py")):
        return True
    scripts = (ROOT / m for m in re.findall(r"(?<!\S)((?:examples|benchmarks)/\S+\.py)\b",
                                            block.text))
    return any(p.is_file() and "compiled" in p.read_text(encoding="utf-8") for p in scripts)


def _params(kind: str) -> list:
    out = []
    for b in BLOCKS:
        if b.kind != kind:
            continue
        marks = [_page_group(b)]
        if "slow" in b.markers:
            marks.append(pytest.mark.slow)
        for tool in ("pdflatex", "gcc"):
            needed = tool in b.text if tool != "gcc" else _builds_c(b)
            if needed and shutil.which(tool) is None:
                marks.append(pytest.mark.skip(reason=f"{tool} is not installed"))
        # compared figure by figure, so the second build of .ci/run checks it (a block
        # compared by shape only, a benchmark's, cannot depend on the rounding)
        if kind != "synopsis" and _builds_c(b) and not {"shorten", "timings"} & set(b.markers):
            marks.append(pytest.mark.compiled)
        out.append(pytest.param(b, id=b.name, marks=marks))
    return out


@pytest.fixture(scope="session")
def pages(tmp_path_factory):
    """A scratch directory per page (commands of one page may use earlier ones' files)
    and one library cache for the run (shared by the pytest-xdist workers, as it is by
    the pages of a run in one process)."""
    base = tmp_path_factory.mktemp("docs")
    run = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run = run.parent
    cache = run / "docs-kidym-cache"
    made: dict = {}

    def get(block: Block):
        if block.page not in made:
            work = docblocks.workspace(base / block.name.split(":")[0].replace("/", "_"))
            made[block.page] = (work, docblocks.environment(work, cache))
        return made[block.page]

    return get


def test_every_block_runs_or_says_why_not() -> None:
    unknown = [b.name for b in BLOCKS if b.kind == "unknown" and b not in QUICK_START]
    assert not unknown, (f"blocks that are neither a session, python, kdm nor a synopsis: "
                         f"{unknown}; mark them (tests/docblocks.py)")
    skipped = [b for b in BLOCKS if b.kind == "skip"]
    assert all(b.markers["skip"] for b in skipped), "a skip marker must give its reason"
    assert len(skipped) <= MAX_SKIPS, [f"{b.name}: {b.markers['skip']}" for b in skipped]
    assert sum(b.kind == "session" for b in BLOCKS) >= 20


def test_quick_start_is_the_ci_and_the_example() -> None:
    """The Quick start holds exactly two commands: they install system packages, so they
    are not run; the first is what `.ci/run` does before the tests plus the guide's
    example run, the second is `.ci/run` itself, whose test command the README names."""
    assert [b.text.strip().count("\n") for b in QUICK_START] == [0, 0], \
        "the Quick start must hold exactly two one-line commands"
    install, ci = (b.text.strip() for b in QUICK_START)
    deps, pip, run = (part.strip() for part in install.split("&&"))
    ci_script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert deps == "bash .ci/system-deps" and f"{deps} --test" in ci_script
    assert shlex.split(pip) == ["python3", "-m", "pip", "install",
                                "--break-system-packages", "."]
    assert "python3 -m pip install" in ci_script and "--break-system-packages" in ci_script
    assert ci == "bash .ci/run"
    tests = next(line for line in ci_script.splitlines() if " pytest" in line)
    assert f"`{tests}`" in README.read_text(encoding="utf-8"), \
        "the README names the test command of .ci/run"
    for script in ("run", "system-deps"):
        subprocess.run(["bash", "-n", str(ROOT / ".ci" / script)], check=True)
    words = shlex.split(run)
    assert words[:4] == ["python3", "-m", "kidym", "run"] and (ROOT / words[4]).is_file()


@_page_group(QUICK_START[0])
def test_quick_start_example_runs(pages) -> None:
    install = QUICK_START[0]
    work, env = pages(install)
    command = install.text.strip().split("&&")[-1].strip()
    status, printed = docblocks.run_command(command, work, env)
    assert status == 0, "\n".join(printed[-30:])
    for name in ("results.csv", "report.html", "animation.html", "trajectories.png"):
        assert (work / "out" / "ball" / name).is_file(), name


@pytest.mark.parametrize("block", _params("session"))
def test_session(block: Block, pages) -> None:
    work, env = pages(block)
    docblocks.check_session(block, work, env)


@pytest.mark.parametrize("block", _params("python"))
def test_python_block(block: Block, pages, monkeypatch) -> None:
    work, env = pages(block)
    monkeypatch.setenv("KIDYM_CACHE_DIR", env["KIDYM_CACHE_DIR"])
    docblocks.run_python(block, work)


@pytest.mark.parametrize("block", _params("synopsis"))
def test_synopsis_options_exist(block: Block) -> None:
    assert docblocks.check_synopsis(block) == []


def test_readme_synopsis_lists_every_command() -> None:
    from kidym.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.choices and "run" in a.choices)
    readme = next(b for b in BLOCKS if b.page.name == "README.md" and b.kind == "synopsis")
    listed = {name for name, _ in docblocks.synopsis_commands(readme.text)}
    assert listed == set(sub.choices)


def test_comparison_rules() -> None:
    same = docblocks.same_line
    assert same("4514 evaluations in 0.24 s", "4514 evaluations in 1.5 s")
    assert not same("4514 evaluations", "4515 evaluations")
    assert same("drift = 6.08e-11", "drift = 2.5e-11") and not same("= 6e-11", "= 1e-11")
    assert same("relative 6.55", "relative 6.6") and not same("relative 6.55", "relative 7")
    # figures that depend on the processor's rounding, given as about (~)
    assert same("~6500 evaluations", "6542 evaluations")
    assert not same("~6500 evaluations", "7200 evaluations")
    assert not same("~6500 evaluations", "6500 steps")
    assert same("drift ~9.5e-10", "drift 2.5e-9") and not same("drift ~9.5e-10", "drift 3e-9")
    assert not same("drift ~9.5e-10", "drift -9.5e-10") and not same("~30 x", "34 x")
    assert docblocks.skeleton("~6500 evaluations, ~1e-9") == "# evaluations, #"
    assert same("drift < ~1e-12", "drift < 1e-11") and not same("drift < ~1e-12", "drift < 1e-10")
    assert same("drift < ~1e-12", "drift < 0") and same("drift < ~1e-12", "drift < 1e-14")
    assert same("error ≤1e-9", "error 5.9e-10") and same("error ≤1e-9", "error -2e-10")
    assert not same("error ≤1e-9", "error 1.1e-9") and not same("~0 x", "1e-16 x")
    assert not same("drift < 1e-12", "drift < 1e-11")
    assert not same("phi1 = 1", "phi2 = 1") and same("a  b", "a b")
    assert docblocks.matches(["a", "…", "d"], ["a", "b", "c", "d"])
    assert not docblocks.matches(["a", "d"], ["a", "b", "d"])
    assert docblocks.same_shape([" n  t [s]", "  2  0.5"], ["  3  1.25"])
    assert docblocks.lengthen("python x.py --ns 2 3  # long", "--ns 2") \
        == "python x.py --ns 2 3 --ns 2  # long"
    assert docblocks.lengthen("kidym run m.kdm | head -2", "--t-end 1") \
        == "kidym run m.kdm --t-end 1 | head -2"


def test_inline_commands_have_their_options() -> None:
    """A command quoted in the prose (`kidym run --set m=3`) names options that exist."""
    problems = []
    for page in docblocks.PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"`(?:python3 -m )?(kidym [a-z][^`]*)`", text):
            block = Block(page, text.count("\n", 0, m.start()) + 1, "", m.group(1) + "\n")
            problems += [f"{block.name}: {p}" for p in docblocks.check_synopsis(block)]
    assert problems == []


def test_every_marker_is_on_a_block() -> None:
    """A marker sits on the line right above a block's fence (or above another marker)."""
    loose = []
    for page in docblocks.PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if "doc-test:" in line:
                below = lines[i + 1] if i + 1 < len(lines) else ""
                if not (below.lstrip().startswith("```") or "doc-test:" in below):
                    loose.append(f"{page.relative_to(ROOT)}:{i + 1}")
    assert loose == []
