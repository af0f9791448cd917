"""`lecture serve` (and `lecture preview`'s server) against hostile requests: only their own files, no listings, sane
ranges, refused traversals and planted symlinks, clean refusals of broken requests, and no stall under idle sockets."""

import http.client
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.course import catalogue
from tools.publish.preview import preview
from tools.publish.site import serve


@pytest.fixture
def kit(tmp_path):
    """A small kit: a page, a clip, a folder, and two symlinks, one of them leading out."""
    root = tmp_path / "site"
    (root / "embed").mkdir(parents=True)
    (root / "index.html").write_text("<h1>训练一步的账</h1>", encoding="utf-8")
    (root / "clip.mp4").write_bytes(bytes(range(256)) * 40)
    (root / "embed" / "page.html").write_text("page")
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the kit")
    (root / "leak.txt").symlink_to(secret)
    (root / "alias.mp4").symlink_to(root / "clip.mp4")
    return root


@pytest.fixture
def server(kit):
    running = serve.make_server(kit, 0)
    # A short poll, so shutdown() returns at once rather than after serve_forever's default half second.
    thread = threading.Thread(target=running.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield running
    running.shutdown()
    running.server_close()


def _get(server, path: str, headers: dict | None = None) -> tuple[int, bytes, http.client.HTTPMessage]:
    """A raw request (no client-side path clean-up), answered on a connection that must survive."""
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    connection.putrequest("GET", path, skip_host=False, skip_accept_encoding=True)
    for name, value in (headers or {}).items():
        connection.putheader(name, value)
    connection.endheaders()
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body, response.headers


def test_it_binds_to_localhost_only(server):
    assert server.server_address[0] == "127.0.0.1"


def test_the_kit_is_served_and_a_folder_means_its_index(server):
    status, body, _ = _get(server, "/")
    assert status == 200
    assert "训练一步的账" in body.decode("utf-8")
    assert _get(server, "/embed/page.html")[:2] == (200, b"page")


def test_a_symlink_out_of_the_kit_is_not_followed(server):
    status, body, _ = _get(server, "/leak.txt")
    assert status == 404
    assert b"outside the kit" not in body
    assert _get(server, "/alias.mp4")[0] == 200  # a link that stays inside is fine


@pytest.mark.parametrize("path", ["/../secret.txt", "/embed/../../secret.txt", "/%2e%2e/secret.txt"])
def test_traversal_stays_refused(server, path):
    status, body, _ = _get(server, path)
    assert status == 404
    assert b"outside the kit" not in body


def test_folders_are_not_listed(server):
    status, body, _ = _get(server, "/embed/")
    assert status == 404
    assert b"page.html" not in body


def test_ranges_seek_and_absurd_ranges_get_416(server, kit):
    data = (kit / "clip.mp4").read_bytes()
    status, body, headers = _get(server, "/clip.mp4", {"Range": "bytes=100-199"})
    assert status == 206
    assert body == data[100:200]
    assert headers["Content-Range"] == f"bytes 100-199/{len(data)}"
    for absurd in ("bytes=" + "9" * 5000 + "-", f"bytes={len(data)}-", "bytes=5-2", "bytes=abc"):
        status, body, headers = _get(server, "/clip.mp4", {"Range": absurd})
        assert status == 416, absurd
        assert body == b"", absurd
        assert headers["Content-Range"] == f"bytes */{len(data)}", absurd


@pytest.fixture
def errors(server, monkeypatch):
    """What the server would print as a traceback in its log: every exception a handler let out."""
    seen: list[str] = []
    monkeypatch.setattr(server, "handle_error", lambda request, address: seen.append(repr(sys.exc_info()[1])))
    return seen


def _raw(server, request: bytes) -> bytes:
    """`request` sent as it is (http.client refuses control characters); the response's status line."""
    with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as connection:
        connection.sendall(request)
        return connection.makefile("rb").readline()


@pytest.mark.parametrize("path", ["/%00", "/index.html%00", "/clip.mp4%00.html", "/embed/%00/page.html"])
def test_a_nul_byte_gets_400_and_the_next_request_is_served(server, errors, path):
    """Seen: each raised inside the handler (a traceback in the log); the client got a dropped connection."""
    status, body, _ = _get(server, path)
    assert status == 400, (path, body)
    assert errors == []
    assert _get(server, "/")[0] == 200
    assert _raw(server, b"GET /index.html\0 HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.0 400 ")
    assert errors == []


def test_a_multi_range_request_gets_its_first_range(server, errors, kit):
    """Seen: `Range: bytes=0-1,5-9`, valid HTTP, got 416."""
    data = (kit / "clip.mp4").read_bytes()
    status, body, headers = _get(server, "/clip.mp4", {"Range": "bytes=0-1,5-9"})
    assert (status, body, headers["Content-Range"]) == (206, data[0:2], f"bytes 0-1/{len(data)}")
    status, body, headers = _get(server, "/clip.mp4", {"Range": f"bytes={len(data) + 5}-,-100"})
    assert (status, body) == (200, data)  # its first range lies past the end: the whole file
    status, _, headers = _get(server, "/clip.mp4", {"Range": f"bytes={len(data) + 5}-,{len(data)}-"})
    assert status == 416  # none of them can be satisfied
    assert errors == []


# -- both local servers, lecture serve and lecture preview, against the same hostile clients ---------------------

STILL = "a" * 32  # a still's digest, as the preview names its PNGs


@dataclass(frozen=True)
class Served:
    server: object
    page: str  # a path it serves
    planted: Path  # a symlink inside the folder it serves, to a file outside it
    planted_path: str  # the request for it


@pytest.fixture(params=["lecture serve", "lecture preview"])
def served(request, kit, tmp_path, monkeypatch):
    """Each server on a free port of 127.0.0.1, with a symlink planted in what it serves that leads out of it."""
    if request.param == "lecture serve":
        running, page = serve.make_server(kit, 0), "/index.html"
        planted, planted_path = kit / "embed" / "planted.html", "/embed/planted.html"
    else:
        monkeypatch.setenv("LECTURE_CACHE", str(tmp_path / "cache"))
        folder = preview.stills_dir()
        folder.mkdir(parents=True)
        (folder / f"{STILL}.png").write_bytes(b"\x89PNG a still")
        board = preview.Board(catalogue.figure("gates_circuit"))
        running, page = preview.make_server(board, tmp_path / "draft.mp4", threading.Event(), 0), f"/stills/{STILL}.png"
        planted, planted_path = folder / f"{'b' * 32}.png", f"/stills/{'b' * 32}.png"
    planted.symlink_to(tmp_path / "secret.txt")
    thread = threading.Thread(target=running.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield Served(running, page, planted, planted_path)
    running.shutdown()
    running.server_close()


def test_each_server_binds_to_localhost_only(served):
    assert served.server.server_address[0] == "127.0.0.1"
    assert _get(served.server, served.page)[0] == 200


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E%2Fsecret.txt",
        "/..%2fsecret.txt",
        "/stills%2f..%2f..%2fsecret.txt",
        "/embed/..%2F..%2Fsecret.txt",
        "//%2e%2e//%2e%2e//secret.txt",
    ],
)
def test_traversal_and_encoded_slashes_never_reach_a_file_outside(served, path):
    status, body, _ = _get(served.server, path)
    assert status in (403, 404), (path, status)
    assert b"outside the kit" not in body


def test_a_symlink_planted_inside_that_leads_out_is_not_followed(served):
    """Seen: lecture preview served a still's name that was a symlink to any file the user could read."""
    assert served.planted.resolve().read_text() == "outside the kit"
    status, body, _ = _get(served.server, served.planted_path)
    assert status in (403, 404)
    assert b"outside the kit" not in body


def test_a_100_kb_header_line_and_a_nul_in_the_request_line_are_refused_and_the_next_request_served(served):
    """A header line past 64 KB gets 431 (Request Header Fields Too Large, the 4xx HTTP has for it), a NUL in the
    request line 400; no handler fails and the server goes on answering."""
    seen: list[str] = []
    served.server.handle_error = lambda request, address: seen.append(repr(sys.exc_info()[1]))
    huge = b"GET " + served.page.encode() + b" HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 100_000 + b"\r\n\r\n"
    assert _raw(served.server, huge).startswith(b"HTTP/1.0 431 ")
    assert _raw(served.server, b"GET /ind\0ex.html HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.0 400 ")
    assert _get(served.server, served.page)[0] == 200
    assert seen == []


def test_a_request_is_answered_within_5_s_while_200_connections_come_and_go_and_40_sit_idle(served):
    """Seen: with socketserver's backlog of 5, opening the 40 idle sockets one after the other took 6 s."""
    address = ("127.0.0.1", served.server.server_address[1])
    began = time.monotonic()
    idle = [socket.create_connection(address, timeout=10) for _ in range(40)]
    assert time.monotonic() - began < 5

    def come_and_go(n: int) -> None:
        with socket.create_connection(address, timeout=10) as connection:
            if n % 2:  # half of them ask for something, half leave at once
                connection.sendall(f"GET {served.page} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
                connection.recv(64)

    try:
        with ThreadPoolExecutor(max_workers=20) as clients:
            list(clients.map(come_and_go, range(200)))
        began = time.monotonic()
        status, _, _ = _get(served.server, served.page)
        assert status == 200
        assert time.monotonic() - began < 5
    finally:
        for connection in idle:
            connection.close()
