"""The folder tree is the architecture: imports in tools/ run one way, and scenes stay on top."""

import ast
from pathlib import Path

import pytest
from helpers import ROOT

# What each layer of tools/ may import from tools (its own layer always). The catalogue
# loading chapter modules by name (importlib) is the one registry lookup, not an import.
ALLOWED = {
    "settings": set(),
    "files": {"settings"},
    "models": set(),
    "course": {"settings"},
    "chapters": {"models", "course"},
    "voice": {"settings", "files", "course"},
    "publish": {"settings", "files", "course", "voice"},
    "author": {"settings", "course"},
    "cli": {"settings", "files", "course", "voice", "publish", "author"},
}


# tools/publish's subpackages, from the bottom up, and what each may import of the others (its own always).
PUBLISH_ALLOWED = {
    "rendering": set(),
    "publishing": {"rendering"},
    "site": {"rendering", "publishing"},
    "keys": {"rendering", "publishing"},
    "checks": {"rendering", "publishing", "keys"},
    "build": {"rendering", "publishing", "site", "keys", "checks"},
    "preview": {"rendering", "publishing", "site", "keys", "checks", "build"},
}
PUBLISH = ROOT / "tools" / "publish"


def _layer(path: Path) -> str:
    parts = path.relative_to(ROOT / "tools").with_suffix("").parts
    return parts[0]


def _tools_imports(path: Path) -> set[str]:
    """The layers of tools/ a module imports (``tools.x...`` or ``from tools import x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    layers = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = node.module.split(".")
            if names[0] == "tools":
                layers |= {names[1]} if len(names) > 1 else {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            layers |= {a.name.split(".")[1] for a in node.names if a.name.startswith("tools.")}
    return layers


MODULES = [p for p in sorted((ROOT / "tools").rglob("*.py")) if p.name != "__init__.py" or p.parent != ROOT / "tools"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_in_tools_imports_a_layer_above_it(path):
    layer = _layer(path)
    assert layer in ALLOWED, f"{path}: tools/{layer} is not a known layer; add it to ALLOWED and the README"
    above = _tools_imports(path) - ALLOWED[layer] - {layer}
    assert not above, f"{path} (layer {layer}) imports {sorted(above)}, which is not below it"


def test_models_know_nothing_of_facts():
    for path in (ROOT / "tools" / "models").glob("*.py"):
        assert "Fact" not in path.read_text(encoding="utf-8"), f"{path} mentions Fact: it belongs in chapters"


@pytest.mark.parametrize("path", sorted((ROOT / "scenes").glob("*.py")), ids=lambda p: p.name)
def test_scenes_use_only_course_voice_and_settings(path):
    used = _tools_imports(path)
    assert used <= {"course", "voice", "settings"}, f"{path} imports tools.{sorted(used)}"


def _module_name(path: Path, top: Path) -> str:
    parts = path.relative_to(top).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, known: set[str]) -> set[str]:
    """The modules of tools/ that a module imports anywhere in it, in a function too: ``from tools.a import b``
    names the module tools.a.b when there is one, else tools.a."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tools"):
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                found.add(whole if whole in known else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("tools.")}
    return found & known


def import_cycles(root: Path) -> list[list[str]]:
    """Every import cycle among the modules under `root` (a package), each as the modules it passes through,
    found by depth-first search of the graph of who imports whom."""
    paths = {_module_name(p, root.parent): p for p in sorted(root.rglob("*.py"))}
    graph = {name: sorted(_imported_modules(path, set(paths)) - {name}) for name, path in paths.items()}
    cycles, state, stack = [], {}, []

    def visit(name: str) -> None:
        state[name], _ = "open", stack.append(name)
        for other in graph[name]:
            if state.get(other) == "open":
                cycles.append([*stack[stack.index(other) :], other])
            elif other not in state:
                visit(other)
        state[name], _ = "done", stack.pop()

    for name in graph:
        if name not in state:
            visit(name)
    return cycles


def test_no_import_cycle_in_tools():
    assert import_cycles(ROOT / "tools") == []


def test_the_cycle_finder_finds_a_loop_through_an_import_inside_a_function(tmp_path):
    package = tmp_path / "tools"
    (package / "voice").mkdir(parents=True)
    (package / "voice" / "speech.py").write_text("from tools.voice import neural\n")
    (package / "voice" / "neural.py").write_text("def make():\n    from tools.voice.speech import Engine\n")
    assert import_cycles(package) == [["tools.voice.neural", "tools.voice.speech", "tools.voice.neural"]]


def _publish_imports(path: Path) -> set[str]:
    """The subpackages of tools/publish that a module imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
        found |= {name.split(".")[2] for name in names if name.startswith("tools.publish.")}
    return found


@pytest.mark.parametrize("path", sorted(PUBLISH.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_subpackage_of_publish_imports_only_those_below_it(path):
    parts = path.relative_to(PUBLISH).parts
    if parts == ("__init__.py",):
        return
    assert len(parts) == 2, f"{path}: tools/publish holds subpackages by role only"
    assert parts[0] in PUBLISH_ALLOWED, f"{path}: tools/publish/{parts[0]} has no rule in PUBLISH_ALLOWED"
    role = parts[0]
    above = _publish_imports(path) - PUBLISH_ALLOWED[role] - {role}
    assert not above, f"{path} (tools/publish/{role}) imports tools/publish/{sorted(above)}, which is not below it"


def test_every_subpackage_of_publish_has_its_rule():
    roles = {p.name for p in PUBLISH.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert roles == set(PUBLISH_ALLOWED)
