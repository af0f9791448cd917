"""``lecture serve``: the embed kit on 127.0.0.1, with byte ranges so a player can seek.

Standard library only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tools.publish.site import KitError


class _Handler(SimpleHTTPRequestHandler):
    """Static files with the media types a player needs and byte ranges."""

    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".mp4": "video/mp4", ".vtt": "text/vtt",
                      ".srt": "text/plain", ".webp": "image/webp", ".json": "application/json",
                      ".js": "text/javascript", ".css": "text/css"}
    _remaining: int | None = None

    def end_headers(self):
        self.send_header("Accept-Ranges", "bytes")
        super().end_headers()

    def send_head(self):
        wanted = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "").strip())
        path = self.translate_path(self.path)
        if not wanted or wanted.group(1, 2) == ("", "") or not os.path.isfile(path):
            return super().send_head()
        source = open(path, "rb")
        size = os.fstat(source.fileno()).st_size
        first, last = wanted.groups()
        start = int(first) if first else max(0, size - int(last))
        end = min(size - 1, int(last)) if first and last else size - 1
        if start > end:
            source.close()
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        source.seek(start)
        self._remaining = end - start + 1
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
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
