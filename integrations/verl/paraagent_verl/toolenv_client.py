"""A standard-library client of the ToolEnv server (``npm run serve``): the few routes the ParaAct agent loop calls.

Every call has a timeout; every failure — an HTTP error status, a refused connection, a timeout, a body that is not
JSON — is one :class:`ToolEnvError` saying which request failed and why, so the loop can end its episode cleanly.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Optional


class ToolEnvError(Exception):
    """A request to the ToolEnv server that did not give a JSON answer with a 2xx status.

    ``kind`` is ``http`` (the server answered ``status``; ``tag``/``field`` from its typed error body when it sent
    one), ``connection`` (refused, reset, unreachable), ``timeout`` or ``protocol`` (a 2xx body that is not JSON).
    """

    def __init__(self, kind: str, request: str, message: str, status: Optional[int] = None,
                 tag: Optional[str] = None, field: Optional[str] = None) -> None:
        where = f"{request} -> {status}" if status is not None else request
        super().__init__(f"{kind}: {where}: {message}")
        self.kind = kind
        self.request = request
        self.status = status
        self.tag = tag
        self.field = field
        self.message = message


class ToolEnvClient:
    """The server at ``base_url`` (``http://host:port``), an optional bearer token, ``timeout_s`` per request.

    Sessions belong to the client key that opened them (``X-Client-Key`` on every request): ``client_key``, else
    ``$PARAAGENT_CLIENT_KEY``, else a random key of this client (one per agent-loop worker: its rollouts are its own).
    """

    def __init__(self, base_url: str, token: Optional[str] = None, timeout_s: float = 30.0, client_key: Optional[str] = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.client_key = client_key or os.environ.get("PARAAGENT_CLIENT_KEY") or secrets.token_urlsafe(24)
        self.timeout_s = timeout_s

    def request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        """The decoded JSON answer of one request, or a :class:`ToolEnvError`."""
        label = f"{method} {path}"
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"accept": "application/json", "x-client-key": self.client_key}
        if data is not None:
            headers["content-type"] = "application/json"
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            raise self._http_error(label, e) from None
        except (socket.timeout, TimeoutError) as e:
            raise ToolEnvError("timeout", label, f"no answer within {self.timeout_s} s ({e})") from None
        except urllib.error.URLError as e:
            if isinstance(e.reason, (socket.timeout, TimeoutError)):
                raise ToolEnvError("timeout", label, f"no answer within {self.timeout_s} s") from None
            raise ToolEnvError("connection", label, f"{e.reason} ({self.base_url})") from None
        except (ConnectionError, OSError) as e:
            raise ToolEnvError("connection", label, f"{e} ({self.base_url})") from None
        try:
            return json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ToolEnvError("protocol", label, f"the answer is not JSON ({e})") from None

    @staticmethod
    def _http_error(label: str, e: urllib.error.HTTPError) -> ToolEnvError:
        try:
            body = e.read()
        except (OSError, socket.timeout):
            body = b""
        tag = field = None
        message = body.decode("utf-8", "replace")[:500] or e.reason or "error"
        try:
            parsed = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            parsed = None
        if isinstance(parsed, dict):
            tag = parsed.get("_tag") if isinstance(parsed.get("_tag"), str) else None
            field = parsed.get("field") if isinstance(parsed.get("field"), str) else None
            if isinstance(parsed.get("message"), str):
                message = parsed["message"]
        return ToolEnvError("http", label, str(message), status=e.code, tag=tag, field=field)

    # ---- the routes the loop uses ----

    def health(self) -> Dict[str, Any]:
        """``GET /health``: status, the world this replica serves, live sessions."""
        return self.request("GET", "/health")

    def create(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /sessions``: opens an episode; the answer names ``sessionId`` and ``next.maxRounds``."""
        return self.request("POST", "/sessions", body)

    def step(self, session_id: str, text: str, round_index: int) -> Dict[str, Any]:
        """``POST /sessions/{id}/step``: one whole turn as text; ``round`` makes a retried request a 409, not a 2nd turn."""
        return self.request("POST", f"/sessions/{_quote(session_id)}/step", {"text": text, "round": round_index})

    def score(self, session_id: str) -> Dict[str, Any]:
        """``POST /sessions/{id}/score``: the judged episode — R_ans, the phases with their spans, R_step per step."""
        return self.request("POST", f"/sessions/{_quote(session_id)}/score")

    def trajectory(self, session_id: str) -> Dict[str, Any]:
        """``GET /sessions/{id}/trajectory``: the recorded steps."""
        return self.request("GET", f"/sessions/{_quote(session_id)}/trajectory")

    def tool(self, name: str) -> Dict[str, Any]:
        """``GET /tools/{name}``: a tool's spec (description and parameter schema)."""
        return self.request("GET", f"/tools/{_quote(name)}")

    def close(self, session_id: str) -> Dict[str, Any]:
        """``DELETE /sessions/{id}``."""
        return self.request("DELETE", f"/sessions/{_quote(session_id)}")


def _quote(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")
