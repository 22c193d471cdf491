"""``webhook`` (promptfoo ``webhook``): an HTTP service grades the output.

As promptfoo's src/assertions/webhook.ts: POST ``{"output": ..., "context": {"prompt": ...,
"vars": {...}}}`` as JSON to ``url`` and read ``{"pass": bool, "score"?: number,
"reason"?: text}``; the wait is ``WEBHOOK_TIMEOUT`` milliseconds (default 5000); a request
that cannot be made is retried (4 times, backing off), a non-2xx status or a reply that is
not such a JSON object is not. The verdict is the service's ``pass``; the stored score is 1
or 0 with it (its own ``score`` is kept in ``details.webhook_score``), so ``negate`` turns
both, as promptfoo's ``not-webhook`` does. A webhook that cannot be reached or answers badly
is an ``error`` grade (promptfoo: a failed assertion, reason ``Webhook error: ...``).
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from pydantic import field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params

RETRIES = 4
BACKOFF_S = 0.1  # doubled after each failed attempt


class WebhookParams(Params):
    url: str

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value


def _prompt(inp: GradeInput) -> str:
    messages = inp.case.input
    if len(messages) == 1:
        return messages[0].content
    return json.dumps([{"role": m.role, "content": m.content} for m in messages], ensure_ascii=False)


def _timeout_s() -> float:
    try:
        return max(1, int(os.environ.get("WEBHOOK_TIMEOUT", "5000"))) / 1000
    except ValueError:
        return 5.0


def _post(url: str, body: bytes, timeout: float) -> Any:
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    # Proxies from the environment apply, except to this machine itself.
    local = urlsplit(url).hostname in ("localhost", "127.0.0.1", "::1")
    opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if local else []))
    with opener.open(request, timeout=timeout) as response:  # http(s) only, checked at load
        return json.loads(response.read().decode("utf-8"))


class Webhook(Grader[WebhookParams]):
    type = "webhook"
    group = "executed"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = WebhookParams

    async def agrade(self, params: WebhookParams, inp: GradeInput) -> Outcome:
        body = json.dumps({"output": inp.output,
                           "context": {"prompt": _prompt(inp), "vars": inp.case.metadata.get("vars") or {}}},
                          ensure_ascii=False).encode("utf-8")
        attempts = 0
        while True:
            attempts += 1
            try:
                reply = await asyncio.to_thread(_post, params.url, body, _timeout_s())
                break
            except urllib.error.HTTPError as exc:
                return self._error(f"Webhook response status: {exc.code}", attempts)
            except (urllib.error.URLError, OSError) as exc:  # not reached: try again
                if attempts > RETRIES:
                    return self._error(str(getattr(exc, "reason", exc)), attempts)
                await asyncio.sleep(BACKOFF_S * 2 ** (attempts - 1))
            except ValueError as exc:
                return self._error(f"the reply is not JSON ({exc})", attempts)
        if not isinstance(reply, dict) or not isinstance(reply.get("pass"), bool):
            return self._error("the reply is not {pass, score?, reason?}", attempts)
        passed = reply["pass"]
        score = reply.get("score")
        reason = reply.get("reason") or ("Assertion passed" if passed else "Webhook returned false")
        return Outcome.binary(passed, str(reason), webhook_score=score, attempts=attempts)

    @staticmethod
    def _error(why: str, attempts: int) -> Outcome:
        return Outcome(0.0, f"Webhook error: {why}", {"attempts": attempts}, status="error")
