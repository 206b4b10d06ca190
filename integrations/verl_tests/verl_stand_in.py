"""Stand-ins for the few verl pieces the ParaAct loop touches (verl is absent here): AgentLoopBase, AgentLoopOutput, a
server manager answering with scripted token ids and log-probs, and a tiny deterministic tokenizer with a chat template.
"""

import types
from typing import Any, Dict, List, Optional

PAD, EOS, BOS = 0, 1, 2  # <pad>, <|im_end|>, <|im_start|>
OFFSET = 3  # byte b is token b + 3


class Tokenizer:
    """Bytes as tokens; ``<|im_start|>role\\ncontent<|im_end|>\\n`` per message, then ``<|im_start|>assistant\\n``."""

    def encode(self, text: str) -> List[int]:
        return [b + OFFSET for b in text.encode("utf-8")]

    def decode(self, ids: List[int], skip_special_tokens: bool = False) -> str:
        out = bytearray()
        for t in ids:
            if t >= OFFSET:
                out.append(t - OFFSET)
            elif not skip_special_tokens:
                out += {PAD: b"<pad>", EOS: b"<|im_end|>", BOS: b"<|im_start|>"}[t]
        return out.decode("utf-8", "replace")

    def apply_chat_template(self, messages: List[Dict[str, str]], add_generation_prompt: bool = True) -> List[int]:
        ids: List[int] = []
        for m in messages:
            ids += [BOS] + self.encode(f"{m['role']}\n{m['content']}") + [EOS] + self.encode("\n")
        if add_generation_prompt:
            ids += [BOS] + self.encode("assistant\n")
        return ids


class AgentLoopOutput:
    """verl's AgentLoopOutput fields (a pydantic model there)."""

    def __init__(self, prompt_ids, response_ids, response_mask, response_logprobs=None, reward_score=None,
                 num_turns=0, metrics=None, extra_fields=None):
        self.prompt_ids = prompt_ids
        self.response_ids = response_ids
        self.response_mask = response_mask
        self.response_logprobs = response_logprobs
        self.reward_score = reward_score
        self.num_turns = num_turns
        self.metrics = metrics
        self.extra_fields = extra_fields or {}


class AgentLoopBase:
    """The part of verl's AgentLoopBase the loop uses: the constructor's fields and the async chat template."""

    def __init__(self, trainer_config, server_manager, tokenizer, processor, **kwargs):
        self.config = trainer_config.config
        self.rollout_config = self.config.actor_rollout_ref.rollout
        self.server_manager = server_manager
        self.tokenizer = tokenizer
        self.processor = processor
        self.init_kwargs = kwargs

    async def apply_chat_template(self, messages, tools=None, images=None, videos=None, remove_system_prompt=False):
        # this template adds no default system prompt, so there is nothing to remove
        return self.tokenizer.apply_chat_template(messages, add_generation_prompt=True)


def logprob(i: int) -> float:
    """The scripted log-prob of the i-th generated token of a turn."""
    return -0.1 * (1 + i % 5)


class ScriptedServerManager:
    """``generate`` answers turn k with ``turns[k]`` as token ids + EOS and :func:`logprob` per token; records every call."""

    def __init__(self, turns: List[str], tokenizer: Tokenizer, bad_logprobs: bool = False) -> None:
        self.turns = list(turns)
        self.tokenizer = tokenizer
        self.bad_logprobs = bad_logprobs
        self.calls: List[Dict[str, Any]] = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, image_data=None, video_data=None):
        k = len(self.calls)
        self.calls.append({"request_id": request_id, "prompt_ids": list(prompt_ids), "sampling_params": dict(sampling_params)})
        text = self.turns[k] if k < len(self.turns) else self.turns[-1]
        ids = self.tokenizer.encode(text) + [EOS]
        ids = ids[: sampling_params.get("max_tokens", len(ids))]
        logprobs = [logprob(i) for i in range(len(ids) + (1 if self.bad_logprobs else 0))]
        return types.SimpleNamespace(token_ids=ids, log_probs=logprobs, stop_reason="completed", num_preempted=0)


def trainer_config(response_length: int = 16384):
    rollout = types.SimpleNamespace(response_length=response_length, prompt_length=4096)
    return types.SimpleNamespace(config=types.SimpleNamespace(actor_rollout_ref=types.SimpleNamespace(rollout=rollout)))


def make_loop(loop_cls, turns: List[str], server_url: str, response_length: int = 16384, bad_logprobs: bool = False,
              timeout_s: Optional[float] = 10.0, close_sessions: bool = False):
    tokenizer = Tokenizer()
    manager = ScriptedServerManager(turns, tokenizer, bad_logprobs)
    loop = loop_cls(trainer_config(response_length), manager, tokenizer, None, server_url=server_url, timeout_s=timeout_s,
                    close_sessions=close_sessions, dataset_cls=None, data_config=None)
    return loop, manager, tokenizer
