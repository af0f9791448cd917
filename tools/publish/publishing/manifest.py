"""``renders/<quality>/manifest.json``: what a build published there, typed, locked and recoverable.

Kept the way doit keeps its dependency state: one small JSON file, read
and written whole. A build holds it (:func:`held`): it takes a file lock
beside the manifest, reads it once, and keeps the lock until it ends,
saving the manifest atomically at each point where it publishes, so two
builds into one folder run one after the other and both end up listed.
A manifest that is not JSON, or not a manifest, is refused, never taken
as empty: the way back is :func:`rescan`, which
rebuilds it from the sidecar record (``<figure>.json``) each published
figure and chapter video keeps beside its files.
"""

from __future__ import annotations

import fcntl
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

# What a PublishedFile records of its file (tests check published files with it too).
from tools.files import file_sha256, write_atomically

NAME = "manifest.json"
LOCK = ".lock"


class ManifestError(Exception):
    """A manifest or sidecar that cannot be read; the message names the file and the way out."""


@dataclass(frozen=True)
class PublishedFile:
    path: str  # relative to renders/<quality>/
    sha256: str


Files = dict[str, PublishedFile]  # keyed by what follows the stem: 'mp4', 'srt', 'chapters.vtt'


def present(files: Files, out_dir: Path) -> bool:
    return all((out_dir / f.path).exists() for f in files.values())


@dataclass
class PublishedFigure:
    chapter: str
    figure: str
    title: str
    duration: float
    width: int
    height: int
    facts: dict
    files: Files
    key: str = ""  # the render key it was made from
    key_parts: dict = field(default_factory=dict)  # the key's parts, to say why a figure re-renders
    attachments: dict = field(default_factory=dict)  # files published beside the clip: {kind: {label, how_to}}
    render_seconds: float = 0.0  # wall time of its last manim render (0: not recorded), to queue the longest first
    # What the site shows beside the clip (tools/publish/publishing/figure_notes.py and the build plan): its source
    # line (出处); one line per cue {cue, start, duration, text, cites}, where it starts in the clip; every check its
    # builder passed.
    source: str = ""
    cues: list[dict] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)
    voices: list[str] = field(default_factory=list)  # who speaks its cues: engine names, or "recording"

    def present(self, out_dir: Path) -> bool:
        return present(self.files, out_dir)

    @property
    def sidecar(self) -> str:
        return f"{self.chapter}/{self.figure}.json"


@dataclass
class ChapterVideo:
    chapter: str
    title: str
    duration: float
    width: int
    height: int
    copied: bool  # video packets copied (True) or re-encoded
    marks: list[dict]  # {title, start, end}, one per figure
    files: Files
    figures: list[str]
    key: str = ""

    def present(self, out_dir: Path) -> bool:
        return present(self.files, out_dir)

    @property
    def sidecar(self) -> str:
        return f"{self.chapter}.json"


@dataclass(frozen=True)
class ChapterList:
    id: str
    title: str
    figures: list[str]
    topic: str = ""  # the topic (专题) it belongs to, as the gallery heads it


@dataclass
class Manifest:
    quality: str
    chapters: list[ChapterList] = field(default_factory=list)
    figures: dict[str, PublishedFigure] = field(default_factory=dict)
    chapter_videos: dict[str, ChapterVideo] = field(default_factory=dict)


def _files(raw: dict) -> Files:
    files = {kind: PublishedFile(f["path"], f["sha256"]) for kind, f in raw.items()}
    for kind, f in files.items():
        if not isinstance(kind, str) or not isinstance(f.path, str) or not isinstance(f.sha256, str):
            raise TypeError(f"files: {kind!r} must name a path and a sha256 as text")
    return files


# What a field's annotation (its text: annotations are not evaluated here) asks its JSON value to be.
_JSON_TYPES = {"str": (str,), "float": (int, float), "int": (int,), "bool": (bool,), "dict": (dict,)}
_JSON_TYPES |= {"Files": (dict,), "list": (list,)}


def _known(cls, raw: dict) -> dict:
    """The fields of `cls` in `raw`, each of its type: a field a newer build added is passed over, not
    refused; a field of another type (a number as text, a list for a record) raises TypeError naming it."""
    kinds_text = {f.name: str(f.type) for f in fields(cls)}
    kinds = {name: _JSON_TYPES.get(text.split("[")[0].split(" ")[0]) for name, text in kinds_text.items()}
    known = {name: value for name, value in raw.items() if name in kinds}
    for name, value in known.items():
        wanted = kinds[name]
        wrong = wanted and (not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted))
        if wrong or (str(kinds_text[name]) == "list[str]" and not all(isinstance(v, str) for v in value)):
            raise TypeError(f"{cls.__name__}.{name} is {type(value).__name__} {str(value)[:40]!r}")
    return known


# The fields each record of a figure's list must have, and their JSON types.
_RECORDS = {
    "cues": {"cue": (str,), "start": (int, float), "duration": (int, float), "text": (str,), "cites": (list,)},
    "checks": dict.fromkeys(("name", "kind", "computed", "expected", "tolerance"), (str,)),
}


def _figure(raw: dict) -> PublishedFigure:
    known = _known(PublishedFigure, raw)
    for name, wanted in _RECORDS.items():
        for record in known.get(name, []):
            if not isinstance(record, dict) or any(
                not isinstance(record.get(key), kinds) or isinstance(record.get(key), bool)
                for key, kinds in wanted.items()
            ):
                raise TypeError(f"PublishedFigure.{name} holds {str(record)[:60]!r}, not {{{', '.join(wanted)}}}")
    for name, fact in known.get("facts", {}).items():
        if not isinstance(fact, dict) or not all(isinstance(fact.get(key), str) for key in ("text", "spoken")):
            raise TypeError(f"PublishedFigure.facts[{name!r}] is {str(fact)[:60]!r}, not {{value, text, spoken}}")
    return PublishedFigure(**{**known, "files": _files(raw["files"])})


def _chapter_video(chapter: str, raw: dict) -> ChapterVideo:
    return ChapterVideo(**{"chapter": chapter, **_known(ChapterVideo, raw), "files": _files(raw["files"])})


def from_json(raw: dict) -> Manifest:
    """A manifest from its JSON; KeyError, TypeError or AttributeError for JSON of another shape."""
    if not isinstance(raw.get("quality"), str):
        raise TypeError("quality must be text, e.g. 480p15")
    return Manifest(
        raw["quality"],
        [ChapterList(**_known(ChapterList, ch)) for ch in raw.get("chapters", [])],
        {fig_id: _figure(entry) for fig_id, entry in raw.get("figures", {}).items()},
        {ch: _chapter_video(ch, entry) for ch, entry in raw.get("chapter_videos", {}).items()},
    )


def to_json(manifest: Manifest) -> dict:
    return asdict(manifest)


def _refuse(path: Path, problem: str) -> ManifestError:
    quality = path.parent.name
    return ManifestError(
        f"{path} is not a readable manifest ({problem}). Nothing was changed. "
        f"Rebuild it from the records beside the published files, without rendering: "
        f"lecture build --rescan -q {_QUALITY_FLAGS.get(quality, quality)}"
    )


# renders/<folder> -> the -q letter that writes it (kept here so a refusal can name the command).
_QUALITY_FLAGS = {"480p15": "l", "720p30": "m", "1080p60": "h", "2160p60": "k"}


def load(out_dir: Path) -> Manifest:
    """The manifest of renders/<quality>/ (empty when there is none yet); refuses a corrupt one."""
    path = out_dir / NAME
    if not path.exists():
        return Manifest(out_dir.name)
    try:
        return from_json(json.loads(path.read_text(encoding="utf-8")))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise _refuse(path, f"not JSON: {err}") from None
    except (KeyError, TypeError, AttributeError) as err:
        raise _refuse(path, f"missing or malformed field {err}") from None


def save(out_dir: Path, manifest: Manifest) -> None:
    write_atomically(out_dir / NAME, json.dumps(to_json(manifest), ensure_ascii=False, indent=2))


@contextmanager
def locked(out_dir: Path, waiting: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold renders/<quality>/.lock: one build at a time changes the manifest, the chapter videos
    and the site (another waits here, saying so through `waiting` when given)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / LOCK, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting(f"waiting for another build into {out_dir} to finish")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass
class Held:
    """The manifest as one build holds it: read once, under the lock the build keeps until it ends, and
    saved at each point where the build has published something, so a build that is killed loses nothing
    it finished."""

    out_dir: Path
    manifest: Manifest
    _threads: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def save(self) -> None:
        save(self.out_dir, self.manifest)

    @contextmanager
    def changing(self) -> Iterator[Manifest]:
        """The manifest to change, one of the build's threads at a time; saved when the block ends without
        error."""
        with self._threads:
            yield self.manifest
            self.save()


@contextmanager
def held(out_dir: Path, waiting: Callable[[str], None] | None = None) -> Iterator[Held]:
    """The manifest of renders/<quality>/, loaded (a corrupt one refused) and locked until the block ends."""
    with locked(out_dir, waiting):
        yield Held(out_dir, load(out_dir))


def write_sidecar(out_dir: Path, item: PublishedFigure | ChapterVideo) -> None:
    """The record beside an item's files that :func:`rescan` restores it from."""
    kind = "figure" if isinstance(item, PublishedFigure) else "chapter_video"
    write_atomically(out_dir / item.sidecar, json.dumps({kind: asdict(item)}, ensure_ascii=False, indent=2))


class _Unreadable(Exception):
    """A sidecar that is there but cannot be read as a record; the message says why."""


def _read_record(path: Path, kind: str, parse):
    """The record of `kind` in the sidecar at `path`, parsed by `parse`; None when there is no sidecar;
    raises _Unreadable for one that is not JSON, not a record of `kind` or lacks its fields."""
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise _Unreadable(err.strerror or str(err)) from None
    try:
        raw = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise _Unreadable(f"not JSON: {err}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get(kind), dict):
        raise _Unreadable(f"not a {kind} record")
    try:
        return parse(raw[kind])
    except (KeyError, TypeError, AttributeError, ValueError) as err:
        raise _Unreadable(f"a {kind} record with a missing or malformed field {err}") from None


def _intact(files: Files, out_dir: Path) -> bool:
    return all((out_dir / f.path).is_file() and file_sha256(out_dir / f.path) == f.sha256 for f in files.values())


@dataclass(frozen=True)
class Rescan:
    manifest: Manifest
    restored: list[str]  # figure ids and chapter videos found whole
    to_render: list[str]  # figure ids with no sidecar or with files missing or changed
    unreadable: list[str] = field(default_factory=list)  # per sidecar that could not be read: it, why, what was done


def rescan(out_dir: Path, chapters: list[ChapterList]) -> Rescan:
    """A manifest rebuilt from the sidecars of the catalogue's figures and chapters, without rendering.

    A figure counts only when its sidecar is there and every file it lists
    has the recorded sha256; the others (including figures published before
    sidecars existed) are reported as needing a render. A sidecar that cannot
    be read is named, with why, and left as it is (the next build of its
    figure or chapter writes it again).
    """
    manifest = Manifest(out_dir.name, chapters)
    restored, to_render, unreadable = [], [], []
    for chapter in chapters:
        for fig_id in chapter.figures:
            path = out_dir / chapter.id / f"{fig_id}.json"
            try:
                entry = _read_record(path, "figure", _figure)
            except _Unreadable as err:
                unreadable.append(
                    f"{path.relative_to(out_dir)}: cannot read it ({err}); left as it is, and {fig_id} needs a render"
                )
                entry = None
            if entry and entry.figure == fig_id and _intact(entry.files, out_dir):
                manifest.figures[fig_id] = entry
                restored.append(fig_id)
            else:
                to_render.append(fig_id)
        path = out_dir / f"{chapter.id}.json"
        try:
            video = _read_record(path, "chapter_video", lambda raw, ch=chapter.id: _chapter_video(ch, raw))
        except _Unreadable as err:
            unreadable.append(
                f"{path.relative_to(out_dir)}: cannot read it ({err}); left as it is, and the chapter video "
                f"is joined again at the next build"
            )
            video = None
        if video is not None and video.figures == chapter.figures and _intact(video.files, out_dir):
            manifest.chapter_videos[chapter.id] = video
            restored.append(f"{chapter.id}.mp4")
    return Rescan(manifest, restored, to_render, unreadable)
