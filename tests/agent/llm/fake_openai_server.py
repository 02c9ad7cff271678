"""A real HTTP server on loopback that speaks /v1/chat/completions with scripted replies."""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: a chat completion with ``content``, or an HTTP error ``status``."""

    content: str | None = None
    status: int = 200
    delay_s: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    headers: dict[str, str] = field(default_factory=dict)
    error_message: str = ""
    tool_arguments: str | None = None  # answer with a forced tool call carrying these arguments
    drip_interval_s: float = 0.0  # > 0: send the body one byte at a time, this long apart
    omit_length: bool = False  # no Content-Length: the body ends when the connection closes
    write_chunk: int = 65536  # bytes per write of an undripped body
    gzip: bool = False  # send the body gzip-compressed with Content-Encoding: gzip, asked or not


@dataclass
class Delivery:
    """How far the server got sending one answer: the bytes written before the client went away."""

    total: int
    sent: int = 0
    closed_early: bool = False  # the client closed the connection before the last byte
    done: threading.Event = field(default_factory=threading.Event)


def _message(reply: Reply) -> dict[str, Any]:
    if reply.tool_arguments is None:
        return {"role": "assistant", "content": reply.content}
    call = {"id": "call_1", "type": "function", "function": {"name": "TriageResult", "arguments": reply.tool_arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def bag_of_words_vector(text: str, synonyms: dict[str, str] | None = None, dims: int = 64) -> list[float]:
    """The /v1/embeddings answer: hashed bag of words, each word first mapped through ``synonyms``.

    Deterministic, and meaningful in one controlled way: words a test declares synonyms land in
    the same dimension, so a test can tell ranking by these vectors from ranking by TF-IDF.
    """
    vector = [0.0] * dims
    for word in re.findall(r"[a-z][a-z0-9]+", text.lower()):
        concept = (synonyms or {}).get(word, word)
        digest = hashlib.sha256(concept.encode()).digest()
        vector[digest[0] % dims] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def schema_name(body: dict[str, Any]) -> str:
    """The answer schema a chat request asks for (json_schema mode), e.g. ``TriageResult``."""
    return str(((body.get("response_format") or {}).get("json_schema") or {}).get("name", ""))


def refused_url() -> str:
    """A loopback base URL where nothing listens: connecting is refused at once."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# Scripted answers that are not a clean JSON object (the faults a real model produces).
MALFORMED = '{"is_silent_bug": tru'
PROSE = "Sure! Here is the triage you asked for."


def fenced(payload: str) -> str:
    return f"```json\n{payload}\n```"


def prose_then_fenced(payload: str) -> str:
    return f"{PROSE}\n\n```json\n{payload}\n```\nLet me know if you need more."


class ScriptedServer:
    """Answers chat requests from ``replies`` in order; when they run out, from ``responder``
    (a function of the request body, for concurrent clients) or with HTTP 500."""

    def __init__(self, replies: list[Reply], *, embedding_synonyms: dict[str, str] | None = None,
                 embedding_faults: list[Reply] | None = None,
                 responder: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        self.replies: deque[Reply] = deque(replies)
        self.responder = responder
        self._lock = threading.Lock()
        self.embedding_synonyms = embedding_synonyms or {}
        self.embedding_faults: deque[Reply] = deque(embedding_faults or [])  # answered before any vector
        self.embedding_requests: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.deliveries: list[Delivery] = []  # one per scripted answer (chat, embeddings fault), in order
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/").endswith("/embeddings"):
                    self._embeddings(body)
                    return
                with server._lock:
                    server.requests.append({"path": self.path, "body": body,
                                            "headers": {k.lower(): v for k, v in self.headers.items()}})
                    reply = server.replies.popleft() if server.replies else None
                if reply is None:
                    reply = server.responder(body) if server.responder else Reply(status=500)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    payload = json.dumps({"error": {"message": reply.error_message or f"scripted {reply.status}", "type": "scripted"}})
                    self._send(reply.status, payload, reply.headers, reply)
                    return
                payload = json.dumps(
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": 1700000000,
                        "model": body.get("model", "scripted"),
                        "choices": [
                            {
                                "index": 0,
                                "message": _message(reply),
                                "finish_reason": "tool_calls" if reply.tool_arguments is not None else "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": reply.prompt_tokens,
                            "completion_tokens": reply.completion_tokens,
                            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                        },
                    }
                )
                self._send(200, payload, reply.headers, reply)

            def _embeddings(self, body: dict[str, Any]) -> None:
                server.embedding_requests.append(body)
                fault = server.embedding_faults.popleft() if server.embedding_faults else None
                if fault is not None:
                    time.sleep(fault.delay_s)
                    payload = json.dumps({"error": {"message": f"scripted {fault.status}", "type": "scripted"}})
                    self._send(fault.status, payload, fault.headers, fault)
                    return
                texts = body.get("input") or []
                texts = [texts] if isinstance(texts, str) else texts
                data = [{"object": "embedding", "index": i,
                         "embedding": bag_of_words_vector(str(t), server.embedding_synonyms)} for i, t in enumerate(texts)]
                tokens = sum(len(str(t).split()) for t in texts)
                payload = json.dumps({"object": "list", "data": data, "model": body.get("model", "scripted"),
                                      "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
                self._send(200, payload, {})

            def _send(self, status: int, payload: str, headers: dict[str, str], reply: Reply | None = None) -> None:
                data = payload.encode()
                if reply is not None and reply.gzip:
                    import gzip

                    data = gzip.compress(data)
                    headers = {**headers, "content-encoding": "gzip"}
                delivery = Delivery(total=len(data))
                if reply is not None:
                    server.deliveries.append(delivery)
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    if reply is None or not reply.omit_length:
                        self.send_header("content-length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.flush()
                    step = 1 if reply is not None and reply.drip_interval_s else (reply.write_chunk if reply else len(data))
                    for start in range(0, len(data), max(1, step)):
                        self.wfile.write(data[start:start + step])
                        self.wfile.flush()
                        delivery.sent += len(data[start:start + step])
                        if reply is not None and reply.drip_interval_s:
                            time.sleep(reply.drip_interval_s)
                except (BrokenPipeError, ConnectionResetError):
                    delivery.closed_early = True  # the client gave up (timeout and size-cap tests)
                finally:
                    delivery.done.set()
                if reply is not None and reply.omit_length:
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
