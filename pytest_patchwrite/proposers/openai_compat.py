"""A client for any OpenAI-compatible chat-completions server (no vendor SDK, no vendor-specific code)."""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from typing import Any

from ..errors import InputError
from ..files.inputs import load_json
from .base import Proposal, ProposalRequest, ProposerError
from .prompt import build_messages

RETRY_STATUS = {429, 500, 502, 503, 504}


class OpenAICompatibleProposer:
    """POST {base_url}/chat/completions with bounded retries on connection errors, 429 and 5xx."""

    name = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.0,
        max_tokens: int = 512,
        timeout: float = 60.0,
        retries: int = 2,
        backoff: float = 0.5,
    ) -> None:
        self.base_url = (base_url or os.environ.get("PATCHWRITE_OPENAI_BASE_URL") or "http://127.0.0.1:8000/v1").rstrip(
            "/"
        )
        self.model = model or os.environ.get("PATCHWRITE_OPENAI_MODEL") or "default"
        self.api_key = os.environ.get(api_key_env, "")
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/chat/completions"
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    data = load_json(response.read().decode("utf-8"), url)
                    if not isinstance(data, dict):
                        raise ValueError("not a JSON object")
                    return data
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", errors="replace")[:200]
                last = f"HTTP {exc.code} {exc.reason}: {detail}".strip()
                if exc.code not in RETRY_STATUS:
                    break
            except TimeoutError:
                last = f"no answer within {self.timeout:g} s"
            except urllib.error.URLError as exc:
                reason = exc.reason
                if isinstance(reason, (TimeoutError, socket.timeout)):
                    last = f"no answer within {self.timeout:g} s"
                else:
                    last = f"cannot connect ({reason})"
            except InputError as exc:
                last = f"bad reply ({exc.problem})"
            except (ValueError, OSError) as exc:
                last = f"bad reply ({exc})"
        raise ProposerError(f"{url}: {last} after {attempt + 1} attempt(s)")

    def propose(self, request: ProposalRequest) -> Proposal:
        """Return the server's reply to one request."""
        return self.complete(build_messages(request))

    def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> Proposal:
        """Return the server's reply to chat `messages` (judges use this too)."""
        started = time.perf_counter()
        payload = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": max_tokens or self.max_tokens,
        }
        data = self._post(payload)
        try:
            raw = data["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as exc:
            raise ProposerError(f"{self.base_url}: a reply without choices[0].message.content ({exc})") from exc
        return Proposal(raw, time.perf_counter() - started, str(data.get("model", self.model)))
