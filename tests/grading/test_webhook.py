"""``webhook`` against a real HTTP server on 127.0.0.1 (no mock): what promptfoo's webhook.ts
sends ({output, context: {prompt, vars}}) and how it reads {pass, score?, reason?}."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import assertion_from_raw, grade_output
from eval_pipelines.suite.models import Message, TestCase


class Hook:
    """A webhook that answers each request with the next queued (status, body) and keeps the bodies."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.replies: list[tuple[int, str]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers["Content-Length"])
                hook.received.append({"body": json.loads(self.rfile.read(length)),
                                      "content_type": self.headers["Content-Type"]})
                status, text = hook.replies.pop(0) if hook.replies else (200, '{"pass": true}')
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(text.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/grade"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def hook() -> Iterator[Hook]:
    server = Hook()
    yield server
    server.server.shutdown()
    server.server.server_close()


def grade(raw: dict, output: str = "Paris", variables: dict | None = None):
    case = TestCase(id="t", input=[Message(content="What is the capital of France?")],
                    metadata={"vars": variables or {"country": "France"}})
    return grade_output(assertion_from_raw(raw), GradeInput(case=case, output=output))


def test_webhook_posts_output_and_context_and_reads_pass(hook: Hook) -> None:
    hook.replies = [(200, '{"pass": true, "score": 0.9, "reason": "correct capital"}')]
    g = grade({"type": "webhook", "url": hook.url})
    assert (g.passed, g.score, g.reason, g.details["webhook_score"]) == (True, 1.0, "correct capital", 0.9)
    assert hook.received == [{"content_type": "application/json", "body": {
        "output": "Paris", "context": {"prompt": "What is the capital of France?", "vars": {"country": "France"}}}}]


def test_webhook_false_fails_and_negation_turns_it(hook: Hook) -> None:
    hook.replies = [(200, '{"pass": false}'), (200, '{"pass": false}'), (200, '{"pass": true}')]
    g = grade({"type": "webhook", "url": hook.url})
    assert (g.passed, g.score, g.reason, g.status) == (False, 0.0, "Webhook returned false", "graded")
    assert grade({"type": "webhook", "url": hook.url, "negate": True}).passed
    assert not grade({"type": "webhook", "url": hook.url, "negate": True}).passed
    assert len(hook.received) == 3


@pytest.mark.parametrize(("status", "text", "reason"), [
    (500, '{"pass": true}', "Webhook error: Webhook response status: 500"),
    (200, "not json", "Webhook error: the reply is not JSON"),
    (200, '{"score": 1}', "Webhook error: the reply is not {pass, score?, reason?}"),
])
def test_webhook_bad_answers_are_error_grades_without_retry(hook: Hook, status: int, text: str, reason: str) -> None:
    hook.replies = [(status, text)]
    g = grade({"type": "webhook", "url": hook.url})
    assert (g.status, g.passed) == ("error", False) and g.reason.startswith(reason)
    assert len(hook.received) == 1


def test_webhook_unreachable_is_retried_then_an_error() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    g = grade({"type": "webhook", "url": f"http://127.0.0.1:{port}/"})
    assert (g.status, g.passed, g.details["attempts"]) == ("error", False, 5)
    assert g.reason.startswith("Webhook error:")


def test_webhook_url_must_be_http() -> None:
    g = grade({"type": "webhook", "url": "file:///etc/passwd"})
    assert g.status == "error" and "is not an http(s) URL" in g.reason
