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
