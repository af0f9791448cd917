"""Property-based tests (Hypothesis) of every parser that takes outside input: cue texts with inline readings and
fact placeholders, manifest.json and the sidecars, `lecture new` ids and titles, and serve's request line, path
and headers. The property each time: valid input is accepted, anything else gets the project's own error (never
another exception, a hang or a write outside the folders the code was given).

How many examples each property runs comes from the Hypothesis profile (tests/conftest.py): `suite` in `make
test`, `long` with LECTURE_HYPOTHESIS=long (or pytest --hypothesis-profile=long)."""

from __future__ import annotations

import hashlib
import json
import socket
import string
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tools.author import scaffold
from tools.course import catalogue
from tools.publish.publishing import manifest
from tools.publish.publishing.manifest import ManifestError
from tools.publish.site import serve
from tools.voice import cues
from tools.voice.cues import NarrationError

FIXTURES_KEPT = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _outcome(call, refusal: type[Exception]) -> tuple[object, Exception | None]:
    """(what `call()` returned, None), or (None, the `refusal` it raised); any other exception fails the test."""
    try:
        return call(), None
    except refusal as err:
        return None, err


def _tree(root: Path) -> dict[str, str]:
    """Every file under `root` and its sha256: what a property must leave as it was."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# -- cue texts, inline readings, placeholders ---------------------------------------------------------------

DECIDED = "我们先看这张图它的梯度从右往左传回去每层都乘上本地导数"  # characters with one reading (or settled); no 一,
# whose runs of three are a Hanzi number the cue reader rightly refuses (found by this test: 「一一一」)
FACTS = sorted(catalogue.facts("gates_circuit"))
SHOWN_FACTS = [name for name in FACTS if catalogue.facts("gates_circuit")[name].text]
PIECES = [
    "[重|chong2]",
    "[行|hang2]",
    "[重|]",
    "[|chong2]",
    "[重|zhong]",
    "[重重|chong2]",
    "[重|chong2 suan4]",
    "[[重|chong2]]",
    "[重|chong2",
    "重|chong2]",
    "{",
    "}",
    "{}",
    "{ }",
    "{nope}",
    "{backprop_nope.x}",
    "{gates_circuit.}",
    "{.x}",
    "{{x}}",
    "1.5",
    "-3",
    "2e-5",
    "≈",
    "%",
    "GPU",
    "Adam",
    "\\",
    '"',
    "\x00",
    "\u200b",
    "\ud7ff",
    "🙂",
    "\t",
    "。",
    "，",
    *(f"{{{name}}}" for name in FACTS),
    *(f"{{gates_circuit.{name}}}" for name in FACTS),
]
CUE_TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(min_size=1, max_size=6)), max_size=12).map("".join)
VALID_TEXT = st.lists(
    st.one_of(
        st.text(alphabet=DECIDED, min_size=1, max_size=8),
        st.sampled_from(["[重|chong2]", "[行|hang2]", "，", "。", "GPU"]),
        st.sampled_from([f"{{{name}}}" for name in SHOWN_FACTS]),
    ),
    min_size=1,
    max_size=8,
).map("".join)


def _cue_file(folder: Path, text: object) -> Path:
    """narration/backprop.toml with one cue of gates_circuit whose text is `text` (TOML-escaped)."""
    path = folder / "backprop.toml"
    path.write_text(f'[[gates_circuit]]\nid = "fuzz_cue"\ntext = {json.dumps(text)}\n', encoding="utf-8")
    return path


def _read_cues() -> tuple[cues.Cue, ...]:
    cues.chapter_cues.cache_clear()
    return cues.chapter_cues("backprop")["gates_circuit"]


@FIXTURES_KEPT
@given(text=CUE_TEXT)
def test_any_cue_text_is_read_or_refused_with_a_narration_error(narration_dir, isolated, text):
    before = _tree(narration_dir)
    _cue_file(narration_dir, text)
    read, err = _outcome(_read_cues, NarrationError)
    if err is not None:
        assert "backprop.toml" in str(err)
    else:
        (cue,) = read
        assert isinstance(cue.caption, str)
        assert isinstance(cue.pinyin, str)
        assert "[" not in cue.caption or "[" in text.replace("[重|chong2]", "")
    assert set(_tree(narration_dir)) == set(before) | {"backprop.toml"}
    assert {p.name for p in isolated.iterdir()} <= {"cache", "narration"}


@FIXTURES_KEPT
@given(text=VALID_TEXT)
def test_a_valid_cue_text_is_accepted_with_its_facts_filled_in(narration_dir, isolated, text):
    _cue_file(narration_dir, text)
    (cue,) = _read_cues()
    facts = catalogue.facts("gates_circuit")
    expected = text.replace("[重|chong2]", "重").replace("[行|hang2]", "行")
    for name in SHOWN_FACTS:
        expected = expected.replace(f"{{{name}}}", facts[name].text)
    assert cue.caption == expected.strip()
    assert "chong2" in cue.pinyin or "[重|chong2]" not in text


@FIXTURES_KEPT
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_narration_file_is_read_or_refused_with_a_narration_error(narration_dir, isolated, raw):
    (narration_dir / "backprop.toml").write_bytes(raw)
    _, err = _outcome(_read_cues, NarrationError)
    assert err is None or "backprop.toml" in str(err)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@FIXTURES_KEPT
@given(entries=st.lists(JSON, min_size=1, max_size=3))
def test_any_toml_shape_of_cues_is_refused_with_a_narration_error(narration_dir, isolated, entries):
    """`gates_circuit = [...]` of anything: strings, numbers, tables without id or text."""
    body = json.dumps(entries).replace("null", '""')
    (narration_dir / "backprop.toml").write_text(f"gates_circuit = {body}\n", encoding="utf-8")
    _outcome(_read_cues, NarrationError)


# -- manifest.json and sidecars -----------------------------------------------------------------------------


def _valid_manifest() -> dict:
    files = {"mp4": {"path": "backprop/gates_circuit.mp4", "sha256": "0" * 64}}
    figure = {
        "chapter": "backprop",
        "figure": "gates_circuit",
        "title": "题",
        "duration": 42.5,
        "width": 854,
        "height": 480,
        "facts": {},
        "files": files,
    }
    return {
        "quality": "480p15",
        "chapters": [{"id": "backprop", "title": "反向传播", "figures": ["gates_circuit"]}],
        "figures": {"gates_circuit": figure},
        "chapter_videos": {},
    }


def _mutations(value: object) -> st.SearchStrategy:
    """`value` with one part replaced by arbitrary JSON, at any depth."""
    if isinstance(value, dict) and value:
        key = st.sampled_from(sorted(value))
        return st.one_of(
            JSON,
            key.flatmap(lambda k: _mutations(value[k]).map(lambda new: {**value, k: new})),
            key.map(lambda k: {name: v for name, v in value.items() if name != k}),
        )
    if isinstance(value, list) and value:
        return st.one_of(JSON, _mutations(value[0]).map(lambda new: [new, *value[1:]]))
    return JSON


@FIXTURES_KEPT
@given(text=st.one_of(JSON.map(json.dumps), _mutations(_valid_manifest()).map(json.dumps), st.binary().map(repr)))
def test_any_manifest_is_loaded_or_refused_with_a_manifest_error(tmp_path, text):
    (tmp_path / manifest.NAME).write_text(text, encoding="utf-8")
    loaded, err = _outcome(lambda: manifest.load(tmp_path), ManifestError)
    if err is not None:
        assert "lecture build --rescan" in str(err)
    else:  # what loads is what the build reads without failing
        assert isinstance(loaded.quality, str)
        for entry in loaded.figures.values():
            assert isinstance(entry.duration, int | float)
            assert all(isinstance(f.path, str) for f in entry.files.values())
            entry.present(tmp_path)


@FIXTURES_KEPT
@given(cut=st.integers(min_value=0, max_value=len(json.dumps(_valid_manifest())) - 1))
def test_a_truncated_manifest_is_refused(tmp_path, cut):
    (tmp_path / manifest.NAME).write_text(json.dumps(_valid_manifest())[:cut], encoding="utf-8")
    with pytest.raises(ManifestError):
        manifest.load(tmp_path)


def test_the_valid_manifest_loads():
    assert manifest.from_json(_valid_manifest()).figures["gates_circuit"].duration == 42.5


@FIXTURES_KEPT
@given(
    figure=st.one_of(
        JSON.map(json.dumps), _mutations({"figure": _valid_manifest()["figures"]["gates_circuit"]}).map(json.dumps)
    ),
    cut=st.none() | st.integers(min_value=0, max_value=400),
    chapter=st.one_of(JSON.map(json.dumps), st.binary(max_size=40).map(repr)),
)
def test_any_sidecar_is_restored_or_named_by_rescan(tmp_path, figure, cut, chapter):
    out = tmp_path / "480p15"
    (out / "backprop").mkdir(parents=True, exist_ok=True)
    (out / "backprop" / "gates_circuit.json").write_text(figure if cut is None else figure[:cut], encoding="utf-8")
    (out / "backprop.json").write_text(chapter, encoding="utf-8")
    result = manifest.rescan(out, [manifest.ChapterList("backprop", "反向传播", ["gates_circuit"])])
    assert result.restored == [] or result.restored == ["gates_circuit"]
    named = " ".join(result.unreadable)
    assert "gates_circuit" in result.to_render or "gates_circuit" in result.manifest.figures
    for line in result.unreadable:
        assert "cannot read it" in line
    assert named.count("backprop/gates_circuit.json") <= 1


# -- lecture new: ids and titles ----------------------------------------------------------------------------

ID = st.one_of(
    st.from_regex(r"[a-z][a-z0-9]{0,6}(_[a-z0-9]{1,4}){0,2}", fullmatch=True),
    st.text(alphabet=string.ascii_letters + string.digits + "_-./ \\é一\x00\n", max_size=12),
    st.sampled_from(["", "class", "import", "None", "_x", "x_", "a__b", "1a", "../x", "x/y", "demo figure", "Ab"]),
)
TITLE = st.one_of(st.text(max_size=12), st.sampled_from(["示例", " ", "两行\n标题", "tab\there", "\x00", "\u2028"]))


@FIXTURES_KEPT
@given(figure_id=ID, title=TITLE)
def test_lecture_new_accepts_a_snake_case_id_and_one_printable_line_and_refuses_the_rest(monkeypatch, figure_id, title):
    written: list[dict] = []
    monkeypatch.setattr(scaffold, "_write", lambda files: written.append(files) or list(files))
    valid_id = bool(scaffold.SNAKE_CASE.fullmatch(figure_id)) and not __import__("keyword").iskeyword(figure_id)
    valid_title = bool(title.strip()) and title.isprintable()
    assume(figure_id not in {f.id for f in catalogue.figures()})
    _, err = _outcome(lambda: scaffold.new_figure("optimizer", figure_id, title), scaffold.ScaffoldError)
    if err is not None:
        assert not (valid_id and valid_title) or "taken" in str(err) or "exists" in str(err), err
    else:
        assert valid_id, figure_id
        assert valid_title, repr(title)
        assert written, "nothing would be written"


@FIXTURES_KEPT
@given(chapter_id=ID, title=TITLE)
def test_lecture_new_refuses_a_chapter_id_or_title_that_is_not_valid(monkeypatch, chapter_id, title):
    monkeypatch.setattr(scaffold, "_write", lambda files: list(files))
    valid = bool(scaffold.SNAKE_CASE.fullmatch(chapter_id)) and not __import__("keyword").iskeyword(chapter_id)
    valid = valid and bool(title.strip()) and title.isprintable()
    _, err = _outcome(lambda: scaffold.new_chapter(chapter_id, title), scaffold.ScaffoldError)
    assert err is not None or valid, (chapter_id, title)


# -- serve: request line, path, headers ---------------------------------------------------------------------

CLIP = bytes(range(256)) * 40


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A small kit with a secret beside it, served on a free port; the exceptions its handlers let out."""
    root = tmp_path_factory.mktemp("serve")
    kit = root / "site"
    (kit / "embed").mkdir(parents=True)
    (kit / "index.html").write_text("<h1>训练一步的账</h1>", encoding="utf-8")
    (kit / "clip.mp4").write_bytes(CLIP)
    (kit / "embed" / "page.html").write_text("page")
    (root / "secret.txt").write_text("outside the kit")
    (kit / "leak.txt").symlink_to(root / "secret.txt")
    server = serve.make_server(kit, 0)
    errors: list[str] = []
    server.handle_error = lambda request, address: errors.append(repr(sys.exc_info()[1]))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield server, kit, errors
    server.shutdown()
    server.server_close()


def _exchange(server, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `request` raw on a new connection; (status, headers, body) of the answer."""
    with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as connection:
        connection.sendall(request)
        answer = connection.makefile("rb")
        status_line = answer.readline()
        parts = status_line.split(b" ", 2)
        assert len(parts) >= 2, f"no HTTP answer: {status_line!r}"
        assert parts[0].startswith(b"HTTP/"), f"no HTTP answer: {status_line!r}"
        headers = {}
        while (line := answer.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = answer.read(int(headers.get("content-length", 0)))
        return int(parts[1]), headers, body


DOTS = ["..", "%2e%2e", "%2E%2E", ".%2e", "%2e.", "%252e%252e", "..%2f", "..%5c", "%c0%ae%c0%ae", "..\\", "..;"]
SEGMENTS = [*DOTS, "%00", "\x00", "index.html", "clip.mp4", "embed", "page.html", "secret.txt", "leak.txt", ""]
SEGMENTS += ["%", "%zz", "%ff", "%ed%a0%80", "%e4%b8%80", "?x=1", "#frag", "a" * 300, "%2f", "~", "一"]
PATH = st.one_of(
    st.lists(st.sampled_from(SEGMENTS) | st.text(max_size=5), max_size=8).map(lambda parts: "/" + "/".join(parts)),
    st.integers(min_value=1, max_value=70_000).map(lambda n: "/" + "a" * n),
    st.text(max_size=20),
)
NUMBER = st.one_of(
    st.integers(0, 20_000).map(str), st.just(""), st.just("9" * 30), st.just("9" * 5000), st.text("x-1 ", max_size=3)
)
ONE_RANGE = st.tuples(NUMBER, st.sampled_from(["-", "", "--", " - "]), NUMBER).map("".join)
RANGE = st.one_of(
    st.lists(ONE_RANGE, min_size=1, max_size=4).map(lambda items: "bytes=" + ",".join(items)),
    st.tuples(st.sampled_from(["bytes", "BYTES", "items", "", "bytes "]), st.sampled_from(["=", ""]), ONE_RANGE).map(
        "".join
    ),
    st.text(max_size=20).filter(lambda t: "\r" not in t and "\n" not in t),
)
METHOD = st.sampled_from(["GET", "HEAD", "GET", "GET", "POST", "BREW", "get", "GET /"])
VERSION = st.sampled_from(["HTTP/1.1", "HTTP/1.0", "HTTP/1.1", "HTTP/2.0", "HTTP/x", ""])


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(method=METHOD, path=PATH, version=VERSION, range_header=st.none() | RANGE)
def test_any_request_gets_an_http_answer_and_the_next_one_is_served(served, method, path, version, range_header):
    server, kit, errors = served
    target = path.encode("utf-8", "surrogateescape").replace(b"\r", b"%0d").replace(b"\n", b"%0a")
    request = f"{method} ".encode() + target + f" {version}\r\nHost: x\r\nConnection: close\r\n".encode()
    if range_header is not None:
        request += b"Range: " + range_header.encode("utf-8", "surrogateescape") + b"\r\n"
    status, headers, body = _exchange(server, request + b"\r\n")
    assert status in (200, 206, 400, 404, 405, 414, 416, 501, 505), (status, request[:200])
    assert b"outside the kit" not in body
    if status == 206:  # a range of whichever file the path named: the one the Range asked for
        shown, size = headers["content-range"].removeprefix("bytes ").split("/")
        start, end = (int(n) for n in shown.split("-"))
        assert (start, end) == serve.byte_ranges([range_header], int(size))[0]
        assert len(body) == (0 if method == "HEAD" else end - start + 1)
    if status == 416:
        assert headers["content-range"].startswith("bytes */"), headers
    assert errors == [], errors
    assert _exchange(server, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")[0] == 200
    assert _tree(kit) == KIT_TREE.setdefault("kit", _tree(kit))


KIT_TREE: dict[str, dict] = {}


@given(range_header=RANGE)
def test_a_range_is_served_as_http_says(served, range_header):
    server, _, errors = served
    request = b"GET /clip.mp4 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nRange: "
    status, _, body = _exchange(server, request + range_header.encode("utf-8", "surrogateescape") + b"\r\n\r\n")
    ranges = serve.byte_ranges([range_header], len(CLIP))
    if ranges is None:
        assert (status, body) == (200, CLIP)
    elif not ranges:
        assert status == 416
    elif ranges[0][0] >= len(CLIP):  # several, the first past the end: the whole file
        assert (status, body) == (200, CLIP)
    else:
        start, end = ranges[0]
        assert (status, body) == (206, CLIP[start : end + 1])
        assert 0 <= start <= end < len(CLIP)
    assert errors == []
