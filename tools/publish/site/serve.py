"""``lecture serve``: the embed kit on 127.0.0.1, with byte ranges so a player can seek.

Standard library only. A request whose path cannot name a file (a NUL byte, an escape that decodes to no
file name) gets 400, a path outside the kit or to no regular file 404; ``Range`` is read as RFC 9110 says:
one range is served (206), or 416 when it lies past the end; a range that is not bytes is ignored (200);
of several ranges the first is served, or the whole file when the first lies past the end (416 only when
none can be satisfied); a range that is not syntax at all gets 416. No request makes a handler fail.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tools.publish.site.site import KitError


class _Handler(SimpleHTTPRequestHandler):
    """The kit's regular files, with the media types a player needs and byte ranges.

    Only files that resolve inside the kit are served: a symlink that leads
    out of it is a 404, and so is a folder (no listings; ``/`` is index.html).
    """

    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".mp4": "video/mp4",
        ".vtt": "text/vtt",
        ".srt": "text/plain",
        ".webp": "image/webp",
        ".json": "application/json",
        ".js": "text/javascript",
        ".css": "text/css",
    }
    _remaining: int | None = None
    # Answers to a request line without a version (HTTP/0.9) or with one it refuses (HTTP/2.0: 505) carry a
    # status line too: the standard library's default, 0.9, sends an error page with none.
    default_request_version = "HTTP/1.0"

    def end_headers(self):
        self.send_header("Accept-Ranges", "bytes")
        super().end_headers()

    def _inside(self) -> str | None:
        """The requested file's real path when it is a regular file inside the kit, else None; raises
        ValueError for a path that can name no file (a NUL byte, a lone surrogate from its %-escapes)."""
        path = self.translate_path(self.path)
        if "\0" in path:
            raise ValueError("a NUL byte in the path")
        os.fsencode(path)  # a lone surrogate (from %-escapes that are not UTF-8 text) names no file
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        root = os.path.realpath(self.directory)
        real = os.path.realpath(path)
        if os.path.commonpath([root, real]) != root or not os.path.isfile(real):
            return None
        return real

    def list_directory(self, path):
        self.send_error(404, "File not found")
        return None

    def _refuse_range(self, size: int):
        self.send_response(416)
        self.send_header("Content-Range", f"bytes */{size}")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_head(self):
        try:
            path = self._inside()
        except ValueError:
            self.send_error(400, "Bad request: the path names no file")
            return None
        if path is None:
            self.send_error(404, "File not found")
            return None
        try:
            size = os.path.getsize(path)
        except OSError:
            self.send_error(404, "File not found")
            return None
        ranges = byte_ranges(self.headers.get_all("Range"), size)
        if ranges is None:
            return self._whole(path, size)
        if not ranges:
            self._refuse_range(size)  # malformed, or past the end
            return None
        start, end = ranges[0]
        if start >= size:  # the first of several lies past the end: the whole file, as if there were no Range
            return self._whole(path, size)
        source = open(path, "rb")  # noqa: SIM115 -- send_head hands the open file to copyfile, which closes it
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        source.seek(start)
        self._remaining = end - start + 1
        return source

    def _whole(self, path: str, size: int):
        source = open(path, "rb")  # noqa: SIM115 -- as above
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Length", str(size))
        self.end_headers()
        return source

    def copyfile(self, source, outputfile):
        remaining = self._remaining
        try:
            if remaining is None:
                return super().copyfile(source, outputfile)
            while remaining > 0:
                chunk = source.read(min(1 << 16, remaining))
                if not chunk:
                    break
                outputfile.write(chunk)
                remaining -= len(chunk)
        except (BrokenPipeError, ConnectionResetError):  # the player moved on to another range
            pass

    def log_message(self, format, *args):
        pass


# One range of a Range header: first-last, first-, or -suffix (digits only, any number of them).
_RANGE = re.compile(r"\s*(\d*)\s*-\s*(\d*)\s*")
_HUGE = 18  # digits: a number this long is past any file (and never parsed: Python refuses 4,300-digit ints)


def byte_ranges(headers: list[str] | None, size: int) -> list[tuple[int, int]] | None:
    """The (start, end) byte ranges a request's Range headers ask of a file of `size` bytes: None to send the
    whole file (no Range, or a unit other than bytes); [] for 416 (not a range set, or none that can be
    satisfied); else the ranges, the first satisfiable, ends clamped to the file, in the order asked
    (a range of several whose first lies past the end keeps it first: the caller sends the whole file)."""
    if not headers:
        return None
    if len(headers) > 1:
        return []
    unit, equals, spec = headers[0].strip().partition("=")
    if not equals:
        return []
    if unit.strip().lower() != "bytes":
        return None
    asked = []
    for item in spec.split(","):
        if not item.strip() and len(spec.split(",")) > 1:
            continue  # RFC 9110 allows empty elements in a list
        match = _RANGE.fullmatch(item)
        if match is None or match.groups() == ("", ""):
            return []
        first, last = (int(g) if g and len(g) <= _HUGE else (10**_HUGE if g else None) for g in match.groups())
        if first is None:  # the last `last` bytes
            asked.append((max(0, size - last), size - 1) if last > 0 else (size, size))
        elif last is not None and last < first:
            return []
        else:
            asked.append((first, size - 1 if last is None else min(last, size - 1)))
    if not asked or all(start >= size for start, _ in asked):
        return []
    return asked


class LocalServer(ThreadingHTTPServer):
    """A thread per connection, with room for a page's burst of them: socketserver's backlog of 5 left the
    seventh connection opened at once waiting a second for its handshake to be tried again (40 opened one
    after the other took 6 s)."""

    request_queue_size = 128
    daemon_threads = True


def make_server(kit: Path, port: int = 8000) -> LocalServer:
    """An HTTP server for the kit on 127.0.0.1 (port 0: any free port)."""
    if not (kit / "index.html").exists():
        raise KitError(f"no embed kit at {kit}: run lecture site or lecture build first")
    try:
        return LocalServer(("127.0.0.1", port), partial(_Handler, directory=str(kit)))
    except OSError as err:
        raise KitError(f"cannot serve on 127.0.0.1:{port}: {err.strerror}") from None


def serve(kit: Path, port: int = 8000, say: Callable[[str], None] = print) -> None:
    """Serve the kit until interrupted."""
    with make_server(kit, port) as server:
        say(f"serving {kit} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
