"""The ParaAct agent loop for verl: one rollout of an exported row, played against the ToolEnv server, tokens kept.

Checked against verl-project/verl ``verl/experimental/agent_loop/agent_loop.py`` at 2994fde4 (``AgentLoopBase.__init__
(trainer_config, server_manager, tokenizer, processor, dataset_cls, data_config, **kwargs)``, ``async run(
sampling_params, **kwargs) -> AgentLoopOutput``, ``apply_chat_template(messages, ..., remove_system_prompt)``),
``tool_agent_loop.py`` at f60d13d4 (the token bookkeeping this loop follows) and ``workers/rollout/replica.py`` at
065ef9bf (``TokenOutput.token_ids`` / ``log_probs``). With verl importable, :data:`ParaActAgentLoop` subclasses its
``AgentLoopBase`` and is registered as :data:`AGENT_NAME`; without it, :func:`loop_class` builds the same loop over
any stand-in base (the tests do).

Per row (``raw_prompt``, ``extra_info`` from ``npm run export -- verl``, ``index``/``uid``):

1. **open a session** — ``POST /sessions`` with :func:`session_request` (the task by id for generated tasks, posted
   inline otherwise; seed + the rollout's number in its group; T_max; fault rate; paradigm), after checking once per
   server that ``GET /health`` serves the world the row names (:func:`expected_world`).
2. **each round** — prompt ids = the row's chat rendered once + the response so far (never re-tokenised); generate
   with verl's server manager (``max_tokens`` capped at the budget left); append the tokens (mask 1, the engine's
   log-probs); decode; ``POST /sessions/{id}/step`` with that text and the round number; render the step's
   observation (observation.py), chat-template it as a user turn and append it (mask 0).
3. **stop** when the step says ``done`` (an answer, or T_max reached) or the response budget is spent.
4. **score** — ``POST /sessions/{id}/score``: R_ans, R_phase per phase span, R_step per step; each step's phase is
   the span holding it and its pool key the kind of its turn (search 0, call 1, answer 2, other 3), as
   ``src/math/StepKind.ts``; then close the session.

``reward_score`` is R_ans: verl puts it on the last response token, which is what its own ``grpo`` (the ablation)
normalises; the ``paraagent`` estimator reads all three levels from ``extra_fields`` instead.

A malformed turn is the server's to judge: its step records the protocol error (r_base 0) and the episode goes on, as
the runtime would. A bad row, a server error (4xx/5xx), a refused connection, a timeout (every request has one), an
engine output whose log-probs do not match its tokens, or a budget spent before the episode ended (the server then
cannot judge it) ends the episode: ``paraagent_error`` says why, every step scores r_base 0 and R_ans 0
(``Episode.unscored``). ``run`` never raises.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
from uuid import uuid4

from . import observation
from .episode import Episode, EpisodeError, Scoring, StepScore
from .toolenv_client import ToolEnvClient, ToolEnvError

#: The ``agent_name`` the export writes on every RL row (verl picks the loop by it).
AGENT_NAME = "paraagent_paraact"

#: Where the server is when the loop's config names none (``$PARAAGENT_SERVER``, else ``npm run serve``'s default).
DEFAULT_SERVER = "http://127.0.0.1:8765"

#: Ids of generated tasks: the server draws them from its catalogue and refuses them as posted tasks.
GENERATED_TASK_ID = re.compile(r"^gen-(\d+)-(train|validation|test)-(I[123])-(\d+)$")

#: The fields of a task the server accepts when it is posted (``PostedTask`` in src/service/Api.ts).
POSTED_TASK_FIELDS = ("id", "request", "level", "categories", "gold", "facts")

#: Pool keys of the step-level advantage (src/math/StepKind.ts ``stepPoolKey``).
POOL_SEARCH, POOL_CALL, POOL_ANSWER, POOL_OTHER = 0, 1, 2, 3


class RowError(ValueError):
    """A dataset row whose ``extra_info`` cannot open a session (the field, and why)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"extra_info.{field}: {message}")
        self.field = field
        self.message = message


def _get(info: Mapping[str, Any], field: str, kind: Any) -> Any:
    value = info.get(field)
    if isinstance(value, bool) or not isinstance(value, kind):
        name = " or ".join(k.__name__ for k in kind) if isinstance(kind, tuple) else kind.__name__
        raise RowError(field, f"expected {name}, got {value!r}")
    return value


def _info(extra_info: Any) -> Mapping[str, Any]:
    if not isinstance(extra_info, Mapping):
        raise RowError("", f"expected a mapping, got {type(extra_info).__name__}")
    return extra_info


def session_request(extra_info: Mapping[str, Any], rollout: int = 0) -> Dict[str, Any]:
    """The ``POST /sessions`` body (``CreateSession``) for rollout ``rollout`` of a row; a bad field is a :class:`RowError`.

    A generated task goes by id (``taskId``; the server draws it from its catalogue), any other task is posted inline
    (``task``, the ``PostedTask`` fields of ``extra_info.task``). ``rollout`` tells the G rollouts of a row apart:
    rollout k uses seed + k, so each meets its own fault draws.
    """
    info = _info(extra_info)
    task_id = _get(info, "task_id", str)
    fault_rate = float(_get(info, "fault_rate", (int, float)))
    body: Dict[str, Any] = {
        "paradigm": _get(info, "paradigm", str),
        "seed": _get(info, "seed", int) + rollout,
        "maxRounds": _get(info, "max_rounds", int),
        "faults": fault_rate > 0,
        "faultRate": fault_rate,
        "policy": "verl",
    }
    if GENERATED_TASK_ID.match(task_id):
        body["taskId"] = task_id
        return body
    text = info.get("task")
    if text is None:
        raise RowError("task", f"task {task_id!r} is not a generated task, so the row must carry it (export without --no-post-task)")
    try:
        task = json.loads(_get(info, "task", str))
    except json.JSONDecodeError as e:
        raise RowError("task", f"not JSON ({e.msg})") from e
    if not isinstance(task, dict) or not isinstance(task.get("request"), str):
        raise RowError("task", "expected a task object with a `request`")
    body["task"] = {k: task[k] for k in POSTED_TASK_FIELDS if k in task}
    body["task"]["id"] = task_id
    return body


def expected_world(extra_info: Mapping[str, Any]) -> Tuple[str, bool]:
    """The world id a server must report on ``/health`` for this row, and whether it is a prefix (a library's digest varies)."""
    info = _info(extra_info)
    library = info.get("library")
    if library is not None:
        return f"library:{os.path.abspath(_get(info, 'library', str))}:", True
    return f"generated:seed={_get(info, 'world_seed', int)}:size={_get(info, 'world_size', int)}", False


def step_pool(step: Mapping[str, Any]) -> int:
    """The pool key of a recorded step by its own kind: answer 2, else call 1, else search 0, else (malformed, plan-only) 3."""
    turn = step.get("turn")
    if not isinstance(turn, Mapping):
        return POOL_OTHER
    if turn.get("answer") is not None:
        return POOL_ANSWER
    if turn.get("calls"):
        return POOL_CALL
    if turn.get("searches"):
        return POOL_SEARCH
    return POOL_OTHER


def step_pools(steps: List[Mapping[str, Any]]) -> List[int]:
    """The pool keys of one rollout's steps (src/math/StepKind.ts ``stepPools``): each step's kind, except a malformed
    turn (no parsed ``turn``), which takes the kind of the nearest parsed step after it (its retry), else before it,
    else other — so it is compared with well-formed turns of the group, where its R_step 0 loses."""
    keys = [step_pool(s) if isinstance(s.get("turn"), Mapping) else -1 for s in steps]
    after = [-1] * len(keys)
    following = -1
    for i in range(len(keys) - 1, -1, -1):
        after[i] = following
        if keys[i] >= 0:
            following = keys[i]
    out: List[int] = []
    previous = -1
    for i, k in enumerate(keys):
        if k >= 0:
            previous = k
            out.append(k)
        else:
            out.append(after[i] if after[i] >= 0 else previous if previous >= 0 else POOL_OTHER)
    return out


def scoring_of(score: Mapping[str, Any], steps: List[Mapping[str, Any]]) -> Scoring:
    """The server's ``Score`` as :class:`episode.Scoring`: each step in the phase span that holds it, pooled by its kind."""
    phases = list(score.get("phases", []))
    rewards = list(score.get("steps", []))
    if len(rewards) != len(steps):
        raise EpisodeError("steps", f"the server scored {len(rewards)} steps; the loop played {len(steps)}")

    def phase_of(i: int) -> int:
        for p, span in enumerate(phases):
            if span["start"] <= i < span["end"]:
                return p
        raise EpisodeError("phases", f"no phase span holds step {i} ({[(s['start'], s['end']) for s in phases]})")

    return Scoring(
        r_ans=float(score["answer"]["rAns"]),
        phases=[float(p["reward"]["rPhase"]) for p in phases],
        steps=[StepScore(float(r["rStep"]), phase_of(i), pool) for i, (r, pool) in enumerate(zip(rewards, step_pools(steps)))],
        masked=False,
    )


class _Rollouts:
    """Numbers the rollouts of one prompt in this process (verl repeats a row G times under one uid)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: Dict[Any, int] = {}

    def next(self, key: Any) -> int:
        with self._lock:
            k = self._seen.get(key, 0)
            self._seen[key] = k + 1
            if len(self._seen) > 100_000:
                self._seen.clear()
            return k


class ParaActLoopMixin:
    """The loop itself, over whatever ``AgentLoopBase`` provides: ``server_manager``, ``tokenizer``, ``apply_chat_template``.

    Options (the agent-loop registry entry's keys, else the environment): ``server_url`` ($PARAAGENT_SERVER),
    ``token`` ($PARAAGENT_SERVER_TOKEN), ``timeout_s`` per request (30), ``close_sessions`` (true),
    ``response_length`` (verl's ``rollout.response_length``).
    """

    output_class: Any = dict
    _rollouts = _Rollouts()
    _worlds: Dict[str, str] = {}
    _tools: Dict[Tuple[str, str], Optional[Dict[str, Any]]] = {}

    def _setup(self, server_url: Optional[str], token: Optional[str], timeout_s: Optional[float],
               close_sessions: Optional[bool], response_length: Optional[int]) -> None:
        self.server_url = server_url or os.environ.get("PARAAGENT_SERVER") or DEFAULT_SERVER
        self.token = token if token is not None else os.environ.get("PARAAGENT_SERVER_TOKEN")
        self.timeout_s = float(timeout_s) if timeout_s is not None else 30.0
        self.close_sessions = True if close_sessions is None else bool(close_sessions)
        if response_length is None:
            rollout_config = getattr(self, "rollout_config", None)
            response_length = getattr(rollout_config, "response_length", None)
            if response_length is None and hasattr(rollout_config, "get"):
                response_length = rollout_config.get("response_length")
        self.response_length = int(response_length) if response_length is not None else 16384
        self.client = ToolEnvClient(self.server_url, self.token, self.timeout_s)

    async def _blocking(self, fn: Callable[..., Any], *args: Any) -> Any:
        # urllib blocks: keep verl's event loop (hundreds of concurrent rollouts) free
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    def _lookup(self, name: str) -> Optional[Dict[str, Any]]:
        key = (self.server_url, name)
        if key not in self._tools:
            try:
                self._tools[key] = self.client.tool(name)
            except ToolEnvError:
                return None
            if len(self._tools) > 50_000:
                self._tools.clear()
        return self._tools[key]

    async def _check_world(self, extra_info: Mapping[str, Any]) -> None:
        want, prefix = expected_world(extra_info)
        served = self._worlds.get(self.server_url)
        if served is None:
            health = await self._blocking(self.client.health)
            served = str(health.get("world")) if isinstance(health, Mapping) else ""
            self._worlds[self.server_url] = served
        if not (served.startswith(want) if prefix else served == want):
            raise RowError("world_seed" if not prefix else "library",
                           f"the row's world is {want}{'…' if prefix else ''}, but {self.server_url} serves {served}: start the server with the export's world")

    async def run(self, sampling_params: Dict[str, Any], **kwargs: Any) -> Any:
        """One rollout of the row: ``AgentLoopOutput`` with the ParaAgent fields in ``extra_fields``; never raises."""
        metrics = {"generate_sequences": 0.0, "tool_calls": 0.0, "num_preempted": -1}
        try:
            prompt_ids = list(await self.apply_chat_template(list(kwargs["raw_prompt"])))
        except Exception as e:  # a row the chat template cannot render: nothing to train on, still no crash
            episode = Episode(prompt_ids=[], max_response_tokens=self.response_length)
            episode.fail(f"row: raw_prompt could not be rendered ({type(e).__name__}: {e})")
            return self._finish(episode, episode.unscored(), metrics, None)
        episode = Episode(prompt_ids=prompt_ids, max_response_tokens=self.response_length)
        session_id: Optional[str] = None
        try:
            extra_info = _info(kwargs.get("extra_info"))
            key = kwargs.get("uid", kwargs.get("index", extra_info.get("index")))
            rollout = int(kwargs["rollout_n"]) if isinstance(kwargs.get("rollout_n"), int) else self._rollouts.next(key)
            body = session_request(extra_info, rollout)
            await self._check_world(extra_info)
            info = await self._blocking(self.client.create, body)
            session_id = str(info["sessionId"])
            scoring = await self._play(episode, session_id, sampling_params, metrics)
        except (RowError, ToolEnvError, EpisodeError) as e:
            episode.fail(str(e))
            scoring = episode.unscored()
        except Exception as e:  # an engine or tokenizer failure: the episode ends, the batch goes on
            episode.fail(f"{type(e).__name__}: {e}")
            scoring = episode.unscored()
        if session_id is not None and self.close_sessions:
            try:
                await self._blocking(self.client.close, session_id)
            except ToolEnvError:
                pass
        return self._finish(episode, scoring, metrics, session_id)

    async def _play(self, episode: Episode, session_id: str, sampling_params: Dict[str, Any], metrics: Dict[str, Any]) -> Scoring:
        request_id = uuid4().hex
        steps: List[Mapping[str, Any]] = []
        done = False
        while not done:
            if episode.remaining == 0:
                raise EpisodeError("response_length", f"the response budget ({self.response_length} tokens) was spent after {len(steps)} rounds, before the episode ended: the server cannot judge an unfinished episode")
            params = dict(sampling_params)
            params["max_tokens"] = min(int(params.get("max_tokens") or episode.remaining), episode.remaining)
            started = time.monotonic()
            out = await self.server_manager.generate(request_id, prompt_ids=episode.prompt_ids + episode.response_ids, sampling_params=params)
            metrics["generate_sequences"] += time.monotonic() - started
            token_ids = list(getattr(out, "token_ids", None) if not isinstance(out, Mapping) else out.get("token_ids"))
            logprobs = getattr(out, "log_probs", None) if not isinstance(out, Mapping) else out.get("log_probs")
            start = len(episode.response_ids)
            episode.add_generation(token_ids, list(logprobs) if logprobs else None)
            text = self.tokenizer.decode(episode.response_ids[start:], skip_special_tokens=True)
            started = time.monotonic()
            result = await self._blocking(self.client.step, session_id, text, len(steps))
            metrics["tool_calls"] += time.monotonic() - started
            steps.append(result["step"])
            done = bool(result.get("done"))
            if not done:
                shown = observation.messages(result["step"], result.get("next"), self._lookup)
                if not shown:
                    shown = [{"role": "user", "content": "<observation>\n</observation>"}]
                obs_ids = await self.apply_chat_template(shown, remove_system_prompt=True)
                episode.add_observation(list(obs_ids))
        score = await self._blocking(self.client.score, session_id)
        return scoring_of(score, steps)

    def _finish(self, episode: Episode, scoring: Scoring, metrics: Dict[str, Any], session_id: Optional[str]) -> Any:
        try:
            fields = episode.output(scoring)
        except EpisodeError as e:
            episode.fail(str(e))
            fields = episode.output(episode.unscored())
        fields["extra_fields"]["paraagent_session_id"] = session_id
        return self.output_class(**fields, metrics=metrics)


def loop_class(base: type, output_class: Any, register: Optional[Callable[[str], Callable[[type], type]]] = None) -> type:
    """``ParaActAgentLoop`` over ``base`` (verl's ``AgentLoopBase`` or a stand-in), returning ``output_class``."""

    class ParaActAgentLoop(ParaActLoopMixin, base):  # type: ignore[misc, valid-type]
        """verl's agent loop for ParaAgent rows (``agent_name: paraagent_paraact``), stepping ToolEnv over HTTP."""

        def __init__(self, trainer_config: Any, server_manager: Any, tokenizer: Any, processor: Any = None, *,
                     server_url: Optional[str] = None, token: Optional[str] = None, timeout_s: Optional[float] = None,
                     close_sessions: Optional[bool] = None, response_length: Optional[int] = None, **kwargs: Any) -> None:
            base.__init__(self, trainer_config, server_manager, tokenizer, processor, **kwargs)
            self._setup(server_url, token, timeout_s, close_sessions, response_length)

    ParaActAgentLoop.output_class = output_class
    return register(AGENT_NAME)(ParaActAgentLoop) if register is not None else ParaActAgentLoop


try:  # pragma: no cover - verl is absent here; the tests build the loop over stand-ins with loop_class
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase as _VerlBase  # type: ignore
    from verl.experimental.agent_loop.agent_loop import AgentLoopOutput as _VerlOutput  # type: ignore
    from verl.experimental.agent_loop.agent_loop import register as _verl_register  # type: ignore
except ImportError:
    ParaActAgentLoop: Optional[type] = None
else:
    ParaActAgentLoop = loop_class(_VerlBase, _VerlOutput, _verl_register)
