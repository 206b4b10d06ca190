"""A standard-library client for the ParaAgent ToolEnv server (`npm run serve`).

Only urllib and json: a trainer or agent framework in any Python environment can list and search tools, draw or
post tasks, open sessions, step whole ParaAct turns (text or structured), fetch trajectories, score finished
sessions and ask for a GRPO group's advantages. Every refusal of the server is raised as ToolEnvError with its
HTTP status, its tag (NotFound, InvalidRequest, StepConflict, ...) and the field it names.
"""
from __future__ import annotations

import json
import os
import secrets
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional


class ToolEnvError(Exception):
    """A typed refusal of the server: `status`, `tag`, `field` (what was wrong), `message`, the raw `body`."""

    def __init__(self, status: int, tag: str, field: Optional[str], message: str, body: Any) -> None:
        super().__init__(f"{status} {tag}" + (f" ({field})" if field else "") + f": {message}")
        self.status = status
        self.tag = tag
        self.field = field
        self.message = message
        self.body = body


def _error_of(status: int, text: str) -> ToolEnvError:
    try:
        body = json.loads(text) if text else {}
    except ValueError:
        return ToolEnvError(status, "HttpError", None, text[:200], text)
    if isinstance(body, dict) and "_tag" in body:
        return ToolEnvError(status, str(body["_tag"]), body.get("field"), str(body.get("message", "")), body)
    if isinstance(body, dict) and isinstance(body.get("errors"), list) and body["errors"]:
        # a schema failure: each issue's path starts with the request slot (payload, query, params)
        first = body["errors"][0]
        path = [str(p) for p in first.get("path", [])][1:]
        field = ".".join(path) if path else str((first.get("path") or ["payload"])[0])
        return ToolEnvError(status, "BadRequest", field, str(first.get("message", "")), body)
    return ToolEnvError(status, "HttpError", None, str(body)[:200], body)


class ToolEnvClient:
    """One server (or a load balancer over replicas): `base_url` like http://127.0.0.1:8765.

    Every session belongs to the client key that opened it (sent as `X-Client-Key` on every request): `client_key`,
    else $PARAAGENT_CLIENT_KEY, else a random key made for this client. Two clients with different keys cannot see or
    step each other's sessions; share a key (pass the same `client_key`) between processes that share sessions.
    """

    def __init__(self, base_url: str, token: Optional[str] = None, timeout: float = 60.0, client_key: Optional[str] = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._client_key = client_key or os.environ.get("PARAAGENT_CLIENT_KEY") or secrets.token_urlsafe(24)
        self.timeout = timeout

    def __repr__(self) -> str:  # the token and the client key stay out of reprs and logs
        return f"ToolEnvClient({self.base_url!r}, token={'set' if self._token else 'none'})"

    def _request(self, method: str, path: str, body: Any = None, query: Optional[Dict[str, Any]] = None) -> Any:
        url = self.base_url + path
        if query:
            pairs = {k: ("true" if v is True else "false" if v is False else v) for k, v in query.items() if v is not None}
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"accept": "application/json", "x-client-key": self._client_key}
        if data is not None:
            headers["content-type"] = "application/json"
        if self._token:
            headers["authorization"] = f"Bearer {self._token}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read().decode("utf-8")
                return json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            raise _error_of(e.code, e.read().decode("utf-8", "replace")) from None

    # ---- system, tools, tasks ----
    def health(self) -> Dict[str, Any]:
        return self._request("GET", "/health")

    def tools(self, offset: int = 0, limit: int = 100) -> Dict[str, Any]:
        return self._request("GET", "/tools", query={"offset": offset, "limit": limit})

    def describe(self, name: str) -> Dict[str, Any]:
        return self._request("GET", "/tools/" + urllib.parse.quote(name, safe=""))

    def search(self, query: str, k: int = 10, retriever: Optional[str] = None) -> List[Dict[str, Any]]:
        body: Dict[str, Any] = {"query": query, "k": k}
        if retriever is not None:
            body["retriever"] = retriever
        return self._request("POST", "/tools/search", body)["hits"]

    def tasks(self, split: str = "test", level: Optional[str] = None, count: int = 10, seed: Optional[int] = None, gold: bool = False) -> List[Dict[str, Any]]:
        return self._request("GET", "/tasks", query={"split": split, "level": level, "count": count, "seed": seed, "gold": gold})["tasks"]

    def task(self, task_id: str, gold: bool = False) -> Dict[str, Any]:
        return self._request("GET", "/tasks/" + urllib.parse.quote(task_id, safe=""), query={"gold": gold})

    def post_task(self, request: str, **fields: Any) -> Dict[str, Any]:
        return self._request("POST", "/tasks", {"request": request, **fields})

    # ---- sessions ----
    def create_session(self, **fields: Any) -> Dict[str, Any]:
        """taskId= / task= / split=, level=, index=; seed=, paradigm=, faults=, faultRate=, maxRounds=, topK=."""
        return self._request("POST", "/sessions", fields)

    def step(self, session_id: str, text: Optional[str] = None, turn: Optional[Dict[str, Any]] = None, round: Optional[int] = None, **extra: Any) -> Dict[str, Any]:
        """One whole round: ParaAct `text` as a model wrote it, or a structured `turn` {searches, calls, answer}."""
        body: Dict[str, Any] = dict(extra)
        if text is not None:
            body["text"] = text
        if turn is not None:
            body["turn"] = turn
        if round is not None:
            body["round"] = round
        return self._request("POST", f"/sessions/{urllib.parse.quote(session_id, safe='')}/step", body)

    def session(self, session_id: str) -> Dict[str, Any]:
        return self._request("GET", f"/sessions/{urllib.parse.quote(session_id, safe='')}")

    def trajectory(self, session_id: str) -> Dict[str, Any]:
        return self._request("GET", f"/sessions/{urllib.parse.quote(session_id, safe='')}/trajectory")

    def close(self, session_id: str) -> Dict[str, Any]:
        return self._request("DELETE", f"/sessions/{urllib.parse.quote(session_id, safe='')}")

    # ---- scoring ----
    def score(self, session_id: str) -> Dict[str, Any]:
        return self._request("POST", f"/sessions/{urllib.parse.quote(session_id, safe='')}/score")

    def advantages(self, sessions: Optional[List[str]] = None, estimator: Optional[str] = None, task_id: Optional[str] = None, trajectories: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
        body: Dict[str, Any] = {}
        if sessions is not None:
            body["sessions"] = sessions
        if estimator is not None:
            body["estimator"] = estimator
        if task_id is not None:
            body["taskId"] = task_id
        if trajectories is not None:
            body["trajectories"] = trajectories
        return self._request("POST", "/advantages", body)

    # ---- OpenEnv ----
    def reset(self, episode_id: Optional[str] = None, **fields: Any) -> Dict[str, Any]:
        body = dict(fields)
        if episode_id is not None:
            body["episode_id"] = episode_id
        return self._request("POST", "/reset", body)

    def openenv_step(self, action: Dict[str, Any], episode_id: Optional[str] = None) -> Dict[str, Any]:
        body: Dict[str, Any] = {"action": action}
        if episode_id is not None:
            body["episode_id"] = episode_id
        return self._request("POST", "/step", body)

    def state(self, episode_id: Optional[str] = None) -> Dict[str, Any]:
        return self._request("GET", "/state", query={"episode_id": episode_id})


def gold_rounds(task: Dict[str, Any]) -> List[Dict[str, Any]]:
    """A task's gold DAG (listed with gold=True) as whole rounds: search its tools, run it layer by layer, answer."""
    depth: Dict[str, int] = {}
    for call in task["gold"]:
        depth[call["id"]] = 1 + max([0] + [depth.get(d, 0) for d in call["deps"]])
    layers: List[List[Dict[str, Any]]] = []
    for call in task["gold"]:
        while len(layers) < depth[call["id"]]:
            layers.append([])
        layers[depth[call["id"]] - 1].append(call)
    tools = list(dict.fromkeys(c["tool"] for c in task["gold"]))
    rounds = [{"searches": [{"slot": f"s{i + 1}", "query": t.replace("_", " ")} for i, t in enumerate(tools)], "calls": []}]
    for layer in layers:
        rounds.append({"searches": [], "calls": [{"id": c["id"], "tool": c["tool"], "arguments": c["arguments"]} for c in layer]})
    answer = "; ".join(f"{f['key']}: {f['value']}" for f in task["facts"]) or "done"
    rounds.append({"searches": [], "calls": [], "answer": answer})
    return rounds
