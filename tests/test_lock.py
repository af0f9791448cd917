"""The locks and pyproject.toml agree, and this environment is what the locks name.

`make lock` writes requirements.lock (the project with its extras) and requirements-build.lock (the
`build` dependency group) with uv; `make videos` and `make test` install from them with pip, every
file checked against its hash. A range edited in pyproject.toml without `make lock` fails here.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import subprocess
import sys
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
    hashes: frozenset[str]  # the sha256 of every file pip may install for it
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
                frozenset(re.findall(r"--hash=sha256:([0-9a-f]{64})", entry)),
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


def test_a_package_both_locks_hold_has_the_same_sha256_in_each():
    """pip installs the build lock first and then finds those packages installed, so it never checks
    requirements.lock's sha256 for them: a tampered one there would pass unseen unless it is the build lock's."""
    build = {pin.name: pin.hashes for pin in _pins("requirements-build.lock")}
    differ = [pin.name for pin in _pins("requirements.lock") if pin.name in build and pin.hashes != build[pin.name]]
    assert not differ, f"requirements.lock and requirements-build.lock differ in the sha256 of {differ}: make lock"


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


def _wheel(folder, name: str, version_: str):
    """A pure-Python wheel of one empty module, written to `folder`; its path."""
    import base64
    import zipfile

    module, dist = name.replace("-", "_"), f"{name.replace('-', '_')}-{version_}.dist-info"
    files = {
        f"{module}/__init__.py": b"",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version_}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for path, data in files.items()
    ]
    files[f"{dist}/RECORD"] = ("\n".join([*record, f"{dist}/RECORD,,"]) + "\n").encode()
    wheel = folder / f"{module}-{version_}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


@pytest.mark.slow  # make builds a virtual environment
def test_a_tampered_sha256_in_the_lock_makes_make_test_refuse_the_install_in_one_line(tmp_path):
    """make test in a scratch project whose requirements.lock holds a wrong sha256 for its one package: pip's hash
    check refuses to install it, and make says so in one line, not pip's ten.
    Packages come from a local folder (PIP_NO_INDEX, PIP_FIND_LINKS): nothing is fetched."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    tool, right = (
        hashlib.sha256(_wheel(wheels, name, "1.0").read_bytes()).hexdigest()
        for name in ("lecture-tool", "lecture-probe")
    )
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        (project / name).write_bytes((ROOT / name).read_bytes())
    (project / "requirements-build.lock").write_text(f"lecture-tool==1.0 --hash=sha256:{tool}\n")
    tampered = right[:10] + ("0" if right[10] != "0" else "1") + right[11:]
    (project / "requirements.lock").write_text(f"lecture-probe==1.0 --hash=sha256:{tampered}\n")
    done = subprocess.run(
        ["make", "--no-print-directory", "test", f"PYTHON={sys.executable}"],
        cwd=project,
        env={**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0
    said = (done.stdout + done.stderr).splitlines()
    refusal = [line for line in said if "does not match its sha256" in line]
    assert refusal == [
        "requirements.lock: lecture-probe==1.0 does not match its sha256 in the lock: pip's hash check refused to "
        "install it (pip's report: .venv/pip.log)"
    ], said
    assert not any("THESE PACKAGES DO NOT MATCH" in line for line in said), said
    assert tampered in (project / ".venv" / "pip.log").read_text()
    assert not (project / ".venv" / ".installed").exists()
