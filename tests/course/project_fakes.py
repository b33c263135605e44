"""A fake OpenAI-compatible chat-completions server on 127.0.0.1, for the chapter project's tests.

It never talks to the internet. By default it answers like ``MockModel`` would for the prompt it
receives, so a run against it can be compared with a run on the mock. ``mode`` switches it to an
HTTP error, a body that is not JSON, a JSON body of the wrong shape, or a slow answer (held until the server stops,
so a client's timeout always strikes first, however busy the machine).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeOpenAI:
    port: int = 0
    mode: str = "mock"  # mock | status:<code> | not-json | wrong-shape | slow
    requests: list[dict[str, Any]] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)  # a slow answer is held until this is set

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    from forge.project.models import MockModel

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:  # keep test output clean
            pass

        def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (the timeout test)

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
            if self.path != "/v1/chat/completions":
                self._send(404, b'{"error": {"message": "no such route"}}')
                return
            if fake.mode.startswith("status:"):
                self._send(int(fake.mode.split(":")[1]), b'{"error": {"message": "the fake server says no"}}')
                return
            if fake.mode == "not-json":
                self._send(200, b"<html>proxy login</html>", "text/html")
                return
            if fake.mode == "wrong-shape":
                self._send(200, b'{"result": "ok"}')
                return
            if fake.mode == "slow":
                fake.stopping.wait(timeout=60)  # answered only as the server stops: after the client gave up
            prompt = body["messages"][-1]["content"]
            answer = {"id": "fake-1", "object": "chat.completion", "model": body.get("model"),
                      "choices": [{"index": 0, "message": {"role": "assistant", "content": MockModel().complete(prompt)},
                                   "finish_reason": "stop"}]}
            self._send(200, json.dumps(answer, ensure_ascii=False).encode("utf-8"))

    return Handler


@contextmanager
def fake_openai_server(mode: str = "mock") -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(mode=mode)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    server.block_on_close = False
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
