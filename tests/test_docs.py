"""The docs resolve inside the repository, and docs/figures.md says what the catalogue holds, the same on every
machine: every relative link in a Markdown file leads to a file here; every figure, fact and check is on the
page; a value's printed digits survive float noise; the page is the same with numpy's dispatch narrowed and
OpenBLAS on an older core (as tests/test_same_numbers.py runs `lecture facts`)."""

from __future__ import annotations

import re
import subprocess
from urllib.parse import unquote

import pytest
from helpers import ROOT

from tools.author import figures
from tools.course import catalogue, shown
from tools.course.facts import Check, FactError

MARKDOWN = sorted(
    p
    for p in ROOT.rglob("*.md")
    if not {".venv", ".voice", ".git", "renders", "media", ".cache", ".pytest_cache", "node_modules"} & set(p.parts)
)
LINK = re.compile(r"\]\(([^)\s]+)\)")  # [text](target)
ANCHOR = re.compile(r'<a id="([^"]+)"></a>|^#+ (.+)$', re.M)


def _anchors(text: str) -> set[str]:
    """The explicit anchors of a page, and its headings as GitHub makes them into anchors."""
    found = set()
    for explicit, heading in ANCHOR.findall(text):
        if explicit:
            found.add(explicit)
        else:
            found.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return found


def _in_code(text: str) -> str:
    """The text with fenced code blocks and inline code blanked, so a link inside code is not taken for one."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_of_the_repository(path):
    text = path.read_text(encoding="utf-8")
    broken = []
    for target in LINK.findall(_in_code(text)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, …
            continue
        file, _, anchor = unquote(target).partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists() or not dest.is_relative_to(ROOT):
            broken.append(f"{target} (no file {dest})")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text(encoding="utf-8")):
            broken.append(f"{target} (no anchor #{anchor} in {dest.name})")
    assert not broken, f"{path.relative_to(ROOT)}: links that lead nowhere: {broken}"


CODE_PATH = re.compile(r"\b(?:tools|scenes|bench)/[\w/]*\w(?:\.\w+)?/?")


def _is_there(name: str) -> bool:
    """A path of the repository, or a module's name with a name in it after a dot (scenes/layout_probe.END)."""
    module = name.rsplit(".", 1)[0]
    return any((ROOT / candidate).exists() for candidate in (name, f"{name}.py", f"{module}.py"))


@pytest.mark.parametrize(
    "path",
    [*MARKDOWN, *sorted(p for folder in ("tools", "scenes", "bench") for p in (ROOT / folder).rglob("*.py"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_code_path_a_doc_or_docstring_names_is_there(path):
    """A module moved or renamed leaves no doc pointing at where it was (tools/publish/x.py, say)."""
    named = set(CODE_PATH.findall(path.read_text(encoding="utf-8")))
    gone = [name for name in named if not _is_there(name)]
    assert not gone, f"{path.relative_to(ROOT)} names paths that are not there: {sorted(gone)}"


def test_the_markdown_files_are_found():
    names = {str(p.relative_to(ROOT)) for p in MARKDOWN}
    assert {"README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "bench/README.md", "docs/figures.md"} <= names


# -- docs/figures.md -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def page() -> str:
    return (ROOT / figures.PATH).read_text(encoding="utf-8")


def test_the_page_gives_every_figure_its_facts_checks_and_cues(page):
    for fig in catalogue.figures():
        assert f'<a id="{fig.id}"></a>' in page
        section = page.split(f'<a id="{fig.id}"></a>')[1].split("<a id=")[0]
        assert f"### `{fig.id}`: {fig.title}" in section
        for name, fact in catalogue.facts(fig.id).items():
            assert f"| `{name}` | {fact.text.replace('|', chr(92) + '|')} |" in section
        assert f"{len(catalogue.checks(fig.id))} checks, in the order the builder makes them" in section


def test_a_check_records_what_it_compared_and_within_what():
    check = Check("demo")
    check.close("x (closed form)", 0.30000000000000004, 0.3, rel=1e-6)
    check.equal("count", 8, 8)
    check.that("shrinks", True, "|x| shrinks", [3, 2, 1])
    bound = check.residual("gap", 3e-17, 1e-8)
    assert bound.text == "< 10⁻⁸"
    assert [(c.name, c.kind, c.expected, c.rel, c.abs) for c in check.checked] == [
        ("x (closed form)", "close", 0.3, 1e-6, 0.0),
        ("count", "equal", 8, 0.0, 0.0),
        ("shrinks", "that", "|x| shrinks", 0.0, 0.0),
        ("gap", "residual", 0.0, 0.0, 1e-8),
    ]
    with pytest.raises(FactError):
        check.equal("count", 7, 8)
    assert len(check.checked) == 4  # a failed check is not recorded


def test_the_checks_of_a_figure_are_those_its_builder_made():
    names = [c.name for c in catalogue.checks("finite_differences")]
    assert names == ["nearly ten thousand years", "years", "years (calendar count)"]


@pytest.mark.parametrize("value", [0.1 + 0.2, 9506.432, 2.44e-4, 1 / 3, 123456.5, 1.0000004999999, 46956.33])
def test_printed_digits_survive_float_noise(value):
    printed = shown.shown(value)
    for nudge in (1 + 1e-12, 1 - 1e-12, 1 + 5e-10, 1 - 5e-10):
        assert shown.shown(value * nudge) == printed


def test_zero_noise_and_collections_print_the_same_everywhere():
    assert shown.shown(-0.0) == shown.shown(0.0) == "0"
    assert shown.shown({"b", "a", "c"}) == "(a, b, c)"
    assert shown.shown(list(range(20))) == "20 values"
    assert shown.shown("x = 0.30000000000000004") == "x = 0.3"


def test_no_code_comment_cites_a_label_from_outside_the_repository():
    """Comments and check names cite figure ids and docs/figures.md, not a spec's labels or a page's lines."""
    found = subprocess.run(
        ["grep", "-rnE", r"figures\.md [A-D][0-9]+|\([A-D][0-9]{1,2}[a-z]?\)|page L[0-9]+|\bL[0-9]{2,4}\b", "tools"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout
    assert not found, found
