"""The ParaAct agent loop's interface: what it reads from a dataset row and the session protocol it speaks.

The loop itself (``ParaActAgentLoop(AgentLoopBase)``, registered as :data:`AGENT_NAME`) is wired to ``npm run serve``
in a later change; this module fixes its contract with the two sides that exist now — the RL parquet written by
``npm run export -- verl`` (:func:`session_request` reads a row's ``extra_info``) and the estimator's adapter
(:class:`episode.Episode` writes the ``extra_fields`` it reads).

Per row (verl: ``AgentLoopBase.run(sampling_params, **row)``; ``row`` holds ``raw_prompt``, ``extra_info``,
``agent_name``, ``index``, ``data_source``, ``reward_model``), the loop will:

1. **open a session** — ``POST`` the body :func:`session_request` builds (task id and split, or the task itself from
   ``extra_info.task``; the rollout seed; T_max; paradigm) to the server's session-create route (the path is the
   server's OpenAPI document, ``/openapi.json``); keep the session id it answers. Any replica behind a balancer serves
   any later call: the session is rebuilt from (world, seed, task, actions so far).
2. **each round** — prompt ids = the row's chat template (``raw_prompt``, rendered once, never re-tokenised) + the
   episode's response so far; generate with verl's server manager (``server_manager.generate(request_id,
   prompt_ids=..., sampling_params=...)``, log-probs on); :meth:`episode.Episode.add_generation` (mask 1); decode the
   new tokens and ``POST`` that text as one whole turn to the session's step route; tokenise the observation the
   server returns and :meth:`episode.Episode.add_observation` (mask 0). Stop when the step says ``done`` (an answer),
   at T_max, or when the response budget (``rollout.response_length``) is spent.
3. **score** — ``POST`` the session's score route; map its R_ans, phase rewards and per-step (R_step, phase, kind)
   into :class:`episode.Scoring`; close the session.
4. **return** ``AgentLoopOutput(**episode.output(scoring), metrics=...)``.

A malformed turn is the server's to judge (its step reports the protocol error; the episode goes on as the runtime
would). A server error, a refused request or a timeout (every call has one) ends the episode: ``episode.fail(reason)``
and ``episode.output(episode.unscored())`` — r_base 0 on every step, R_ans 0 — never an exception out of ``run``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping

#: The ``agent_name`` the export writes on every RL row (verl picks the loop by it).
AGENT_NAME = "paraagent_paraact"


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


def session_request(extra_info: Mapping[str, Any], rollout: int = 0) -> Dict[str, Any]:
    """The session-create body for one rollout of a row: the task (posted when the row carries it), seed, T_max, paradigm.

    ``rollout`` tells the G rollouts of one prompt apart (verl repeats the row G times): each gets seed + rollout.
    """
    if not isinstance(extra_info, Mapping):
        raise RowError("", f"expected a mapping, got {type(extra_info).__name__}")
    body: Dict[str, Any] = {
        "task_id": _get(extra_info, "task_id", str),
        "split": _get(extra_info, "split", str),
        "paradigm": _get(extra_info, "paradigm", str),
        "seed": _get(extra_info, "seed", int) + rollout,
        "max_rounds": _get(extra_info, "max_rounds", int),
        "fault_rate": float(_get(extra_info, "fault_rate", (int, float))),
    }
    task = extra_info.get("task")
    if task is not None:
        try:
            body["task"] = json.loads(_get(extra_info, "task", str))
        except json.JSONDecodeError as e:
            raise RowError("task", f"not JSON ({e.msg})") from e
    library = extra_info.get("library")
    if library is not None:
        body["library"] = _get(extra_info, "library", str)
    else:
        body["world"] = {"seed": _get(extra_info, "world_seed", int), "size": _get(extra_info, "world_size", int)}
    return body
