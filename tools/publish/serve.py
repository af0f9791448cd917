"""``lecture serve``: the embed kit on 127.0.0.1, with byte ranges so a player can seek.

Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tools.publish.site import KitError


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

    def end_headers(self):
        self.send_header("Accept-Ranges", "bytes")
        super().end_headers()

    def _inside(self) -> str | None:
        """The requested file's real path when it is a regular file inside the kit, else None."""
        path = self.translate_path(self.path)
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
        path = self._inside()
        if path is None:
            self.send_error(404, "File not found")
            return None
        wanted = re.fullmatch(r"bytes=(\d{0,18})-(\d{0,18})", self.headers.get("Range", "").strip())
        size = os.path.getsize(path)
        if "Range" in self.headers and not wanted:
            self._refuse_range(size)  # malformed, or a number no file could reach
            return None
        if not wanted or wanted.group(1, 2) == ("", ""):
            return self._whole(path, size)
        first, last = wanted.groups()
        start = int(first) if first else max(0, size - int(last))
        end = min(size - 1, int(last)) if first and last else size - 1
        if start > end or start >= size:
            self._refuse_range(size)
            return None
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


def make_server(kit: Path, port: int = 8000) -> ThreadingHTTPServer:
    """An HTTP server for the kit on 127.0.0.1 (port 0: any free port)."""
    if not (kit / "index.html").exists():
        raise KitError(f"no embed kit at {kit}: run lecture site or lecture build first")
    try:
        return ThreadingHTTPServer(("127.0.0.1", port), partial(_Handler, directory=str(kit)))
    except OSError as err:
        raise KitError(f"cannot serve on 127.0.0.1:{port}: {err.strerror}") from None


def serve(kit: Path, port: int = 8000, say: Callable[[str], None] = print) -> None:
    """Serve the kit until interrupted."""
    with make_server(kit, port) as server:
        say(f"serving {kit} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
