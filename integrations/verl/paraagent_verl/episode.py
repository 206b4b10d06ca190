"""One episode's tokens, kept end to end, and the fields the agent loop returns to verl.

The agent loop appends each round's generated tokens (mask 1, the engine's log-probs) and the observation tokens
that follow (mask 0), never re-tokenising what came before: PPO needs the exact tokens the policy sampled. When the
server has scored the trajectory, :meth:`Episode.output` gives ``AgentLoopOutput``'s fields, with the per-step spans
and rewards under the keys ``adapter.py`` reads. Pure Python: no verl, no HTTP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from . import adapter


@dataclass(frozen=True)
class StepScore:
    """The server's score of one step: R_step, the index of its phase, its pool key (search 0, call 1, answer 2, other 3)."""

    r_step: float
    phase: int
    pool: int


@dataclass(frozen=True)
class Scoring:
    """The server's score of a trajectory: R_ans, R_phase per phase, one :class:`StepScore` per step, masked or not."""

    r_ans: float
    phases: Sequence[float]
    steps: Sequence[StepScore]
    masked: bool = False


class EpisodeError(ValueError):
    """A score or a token run that does not fit the episode (named field, and why)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@dataclass
class Episode:
    """The growing response of one rollout; ``max_response_tokens`` is verl's ``rollout.response_length``."""

    prompt_ids: List[int]
    max_response_tokens: int
    response_ids: List[int] = field(default_factory=list)
    response_mask: List[int] = field(default_factory=list)
    response_logprobs: List[float] = field(default_factory=list)
    spans: List[List[int]] = field(default_factory=list)
    turns: int = 0
    truncated: bool = False
    error: Optional[str] = None

    @property
    def remaining(self) -> int:
        """How many response tokens still fit."""
        return max(0, self.max_response_tokens - len(self.response_ids))

    def _append(self, ids: Sequence[int], mask: int, logprobs: Sequence[float]) -> int:
        room = self.remaining
        if len(ids) > room:
            self.truncated = True
        kept = list(ids[:room])
        self.response_ids.extend(kept)
        self.response_mask.extend([mask] * len(kept))
        self.response_logprobs.extend(list(logprobs[: len(kept)]))
        return len(kept)

    def add_generation(self, token_ids: Sequence[int], logprobs: Optional[Sequence[float]] = None) -> int:
        """Appends one round's generated tokens (a step; an empty generation is a zero-length step); returns the step index."""
        if logprobs is not None and len(logprobs) != len(token_ids):
            raise EpisodeError("logprobs", f"{len(logprobs)} log-probs for {len(token_ids)} tokens")
        start = len(self.response_ids)
        kept = self._append(token_ids, 1, logprobs if logprobs is not None else [0.0] * len(token_ids))
        self.spans.append([start, start + kept])
        self.turns += 1
        return len(self.spans) - 1

    def add_observation(self, token_ids: Sequence[int]) -> int:
        """Appends the observation tokens that answer the last step (mask 0, log-prob 0); returns how many fitted."""
        kept = self._append(token_ids, 0, [0.0] * len(token_ids))
        self.turns += 1
        return kept

    def fail(self, reason: str) -> None:
        """Ends the episode on a malformed turn, a server error or a timeout: the reason is kept, nothing more is appended."""
        self.error = reason

    def unscored(self) -> Scoring:
        """The score of an episode the server could not score: every step r_step 0 (so r_base 0), one phase of 0, R_ans 0."""
        return Scoring(r_ans=0.0, phases=[0.0], steps=[StepScore(0.0, 0, 3) for _ in self.spans], masked=False)

    def check(self, scoring: Scoring) -> None:
        """Fails naming the field when the score does not fit the episode (one step score per generated step, finite values)."""
        if len(scoring.steps) != len(self.spans):
            raise EpisodeError("steps", f"{len(scoring.steps)} step scores for {len(self.spans)} generated steps")
        if not math.isfinite(scoring.r_ans):
            raise EpisodeError("r_ans", f"{scoring.r_ans} is not finite")
        for i, r in enumerate(scoring.phases):
            if not math.isfinite(r):
                raise EpisodeError("phases", f"phase {i} reward {r} is not finite")
        for i, s in enumerate(scoring.steps):
            if not math.isfinite(s.r_step):
                raise EpisodeError("steps", f"step {i} reward {s.r_step} is not finite")
            if not 0 <= s.phase < len(scoring.phases):
                raise EpisodeError("steps", f"step {i} points at phase {s.phase}, but there are {len(scoring.phases)} phases")

    def output(self, scoring: Scoring) -> Dict[str, Any]:
        """``AgentLoopOutput``'s fields (minus ``metrics``), the ParaAgent fields in ``extra_fields``."""
        self.check(scoring)
        extra = {
            adapter.STEP_SPANS: [list(s) for s in self.spans],
            adapter.STEP_REWARDS: [float(s.r_step) for s in scoring.steps],
            adapter.PHASE_REWARDS: [float(r) for r in scoring.phases],
            adapter.STEP_PHASE: [int(s.phase) for s in scoring.steps],
            adapter.STEP_POOL: [int(s.pool) for s in scoring.steps],
            adapter.R_ANS: float(scoring.r_ans),
            adapter.MASKED: bool(scoring.masked),
            "paraagent_truncated": self.truncated,
            "paraagent_error": self.error,
        }
        return {
            "prompt_ids": list(self.prompt_ids),
            "response_ids": list(self.response_ids),
            "response_mask": list(self.response_mask),
            "response_logprobs": list(self.response_logprobs),
            "reward_score": float(scoring.r_ans),
            "num_turns": self.turns + 1,
            "extra_fields": extra,
        }
