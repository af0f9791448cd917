"""The locks and pyproject.toml agree, and this environment is what the locks name.

`make lock` writes requirements.lock (the project with its extras) and requirements-build.lock (the
`build` dependency group) with uv; `make videos` and `make test` install from them with pip, every
file checked against its hash. A range edited in pyproject.toml without `make lock` fails here.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import tomllib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

import pytest
from helpers import ROOT
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]["name"]
LOCKS = {"requirements.lock": "pyproject.toml", "requirements-build.lock": "pyproject.toml:build"}


@dataclass(frozen=True)
class Pin:
    name: str
    version: Version
    marker: Marker | None
    hashes: int
    via: tuple[str, ...]  # uv's annotation: who asked for it

    @property
    def applies_here(self) -> bool:
        return self.marker is None or self.marker.evaluate()


def _pins(lock: str) -> list[Pin]:
    """The entries of a lock as uv writes them: `name==version ; marker \\`, hash lines, then `# via` lines."""
    pins, lines = [], (ROOT / lock).read_text(encoding="utf-8").splitlines()
    body = "\n".join(itertools.dropwhile(lambda line: line.startswith("#"), lines))  # past the header
    for entry in re.split(r"\n(?=[A-Za-z0-9])", body):
        head = re.match(r"([A-Za-z0-9._-]+)==([^\s;]+)(?:\s*;\s*([^\\]+?))?\s*\\", entry)
        assert head, f"{lock}: cannot read the entry {entry[:200]!r}"
        comments = [line.strip("# ") for line in entry.splitlines() if line.strip().startswith("#")]
        via = [comment.removeprefix("via").strip() for comment in comments]
        pins.append(
            Pin(
                canonicalize_name(head[1]),
                Version(head[2]),
                Marker(head[3]) if head[3] else None,
                entry.count("--hash=sha256:"),
                tuple(v for v in via if v),
            )
        )
    return pins


def _asked(lock: str) -> list[Requirement]:
    """What pyproject.toml asks of a lock: the project's dependencies and extras, or the build group."""
    if lock == "requirements-build.lock":
        return [Requirement(r) for r in PYPROJECT["dependency-groups"]["build"]]
    extras = PYPROJECT["project"]["optional-dependencies"].values()
    return [Requirement(r) for r in [*PYPROJECT["project"]["dependencies"], *(r for extra in extras for r in extra)]]


@pytest.mark.parametrize("lock", LOCKS)
def test_every_requirement_is_locked_within_its_range_with_hashes(lock):
    pins = _pins(lock)
    by_name: dict[str, list[Pin]] = {}
    for pin in pins:
        by_name.setdefault(pin.name, []).append(pin)
    problems = []
    for requirement in _asked(lock):
        locked = by_name.get(canonicalize_name(requirement.name), [])
        if not locked:
            problems.append(f"{requirement} is not in {lock}")
        problems += [
            f"{requirement}: {lock} has {pin.version}"
            for pin in locked
            if not requirement.specifier.contains(pin.version, prereleases=True)
        ]
    problems += [f"{pin.name}=={pin.version} has no hash" for pin in pins if not pin.hashes]
    assert not problems, "\n".join(problems) + "\nrefresh the locks: make lock"


@pytest.mark.parametrize("lock", LOCKS)
def test_nothing_is_locked_for_a_requirement_pyproject_no_longer_has(lock):
    asked = {canonicalize_name(r.name) for r in _asked(lock)}
    source = f"{PROJECT} ({LOCKS[lock]})"
    stale = [pin.name for pin in _pins(lock) if source in pin.via and pin.name not in asked]
    assert not stale, f"{lock} still locks {stale} for pyproject.toml, which no longer asks: make lock"


def test_one_version_of_each_package_for_every_python_and_both_locks():
    versions: dict[str, set[Version]] = {}
    for lock in LOCKS:
        for pin in _pins(lock):
            versions.setdefault(pin.name, set()).add(pin.version)
    forked = {name: sorted(map(str, found)) for name, found in versions.items() if len(found) > 1}
    assert not forked, f"locked at more than one version: {forked}"


def test_this_environment_has_every_locked_version():
    wrong = []
    for lock in LOCKS:
        for pin in _pins(lock):
            if not pin.applies_here:
                continue
            try:
                installed = Version(version(pin.name))
            except PackageNotFoundError:
                installed = None
            if installed != pin.version:
                wrong.append(f"{pin.name}: {lock} has {pin.version}, installed {installed}")
    assert not wrong, "\n".join(wrong) + "\nset up again: make test (it reinstalls when a lock changes)"


def test_the_build_lock_was_refreshed_from_this_pyproject():
    """make lock stamps requirements-build.lock with the pyproject.toml it read; an edit since needs make lock."""
    stamp = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:12]
    assert f"#    from pyproject.toml {stamp}" in (ROOT / "requirements-build.lock").read_text(encoding="utf-8"), (
        "pyproject.toml changed since requirements-build.lock was refreshed: make lock"
    )
