"""A real OpenAI-compatible HTTP server on loopback whose replies a test scripts (no mocks: real sockets, real JSON)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# given the request body, return (HTTP status, reply content)
Responder = Callable[[dict[str, Any]], tuple[int, str]]


class JudgeServer:
    """Serves POST /v1/chat/completions with whatever `responder` returns; counts and keeps every request."""

    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server.lock:
                    server.requests.append(body)
                    status, content = server.responder(body)
                if status != 200:
                    payload = json.dumps({"error": {"message": content}}).encode()
                else:
                    payload = json.dumps({"model": body.get("model"), "choices": [{"message": {"role": "assistant",
                                          "content": content}}]}).encode()  # fmt: skip
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def spec(self, model: str = "judge-test") -> str:
        """Return the `--judge` SPEC of this server."""
        return f"openai:{model}@{self.url}"


@contextmanager
def judge_server(responder: Responder) -> Iterator[JudgeServer]:
    """Run a JudgeServer in a thread for the duration of the block."""
    server = JudgeServer(responder)
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(timeout=5)


def shown_first(body: dict[str, Any], marker: str) -> bool:
    """Return whether `marker` appears in the paper shown as paper_1 of a side-by-side request."""
    user = body["messages"][-1]["content"]
    first = user.split("paper_2:", 1)[0]
    return marker in first


def prefer(marker: str, style: Callable[[str], str] | None = None) -> Responder:
    """Return a responder whose judge always prefers the paper holding `marker`, replying in `style`."""

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        winner = "paper_1" if shown_first(body, marker) else "paper_2"
        reply = json.dumps({"paper_1_analysis": "a", "paper_2_analysis": "b", "justification": "c",
                            "winner": winner})  # fmt: skip
        return 200, style(reply) if style else reply

    return respond
