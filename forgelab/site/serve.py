"""``forgelab site serve``: serve a built site on 127.0.0.1 (never on a public interface)."""

from __future__ import annotations

import functools
import http.server
from pathlib import Path

HOST = "127.0.0.1"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files from one folder; logs one short line per request."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".css": "text/css", ".json": "application/json",
                      ".zip": "application/zip"}

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()


def make_server(directory: Path, port: int) -> http.server.ThreadingHTTPServer:
    """A server bound to 127.0.0.1:port (port 0 picks a free one); call ``serve_forever``."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    return http.server.ThreadingHTTPServer((HOST, port), handler)


def url_of(server: http.server.ThreadingHTTPServer) -> str:
    return f"http://{HOST}:{server.server_address[1]}/index.html"
