"""The ``paraagent`` advantage estimators for verl: registered with ``register_adv_est`` and fed ``non_tensor_batch``.

verl (verl-project/verl, ray_trainer.compute_advantage) passes a registered estimator ``token_level_rewards``,
``response_mask``, ``config`` and ``index`` (the uid) — ``non_tensor_batch`` only to ``gdpo``. :func:`install`
registers the estimators below and wraps ``compute_advantage`` so that, for these names, the estimator also gets
``non_tensor_batch`` (where the agent loop's per-step rewards and spans are). Run it in the process that runs the
trainer's ``fit`` (verl's TaskRunner actor): e.g. Ray's ``runtime_env.worker_process_setup_hook``, see the README.

Nothing here imports torch or numpy at module top: tensors are read with ``tolist`` and written back with the input
tensor's ``new_tensor`` (same dtype and device), so the same code runs on plain lists in the tests.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, Dict, Optional, Tuple

from .adapter import as_list, config_from, token_advantages

#: verl's estimator name → this package's estimator it runs (``paraagent_grpo`` is GRPO with the TS math).
VERL_ESTIMATORS: Dict[str, str] = {
    "paraagent": "paraagent",
    "paraagent_grpo": "grpo",
    "paraagent_single_pool": "paraagent_single_pool",
    "paraagent_grpo_per_index": "grpo_per_index",
}


class MissingBatch(ValueError):
    """The estimator was called without ``non_tensor_batch``: the ``compute_advantage`` wrapper is not installed."""


def _like(values: Any, template: Any) -> Any:
    """``values`` (nested lists) as a tensor like ``template`` when it is one, else as they are."""
    new_tensor = getattr(template, "new_tensor", None)
    return new_tensor(values) if callable(new_tensor) else values


def make_estimator(name: str) -> Callable[..., Tuple[Any, Any]]:
    """A verl advantage estimator running this package's estimator ``name`` (see :data:`VERL_ESTIMATORS`)."""

    def estimator(
        token_level_rewards: Any,
        response_mask: Any,
        index: Any = None,
        config: Any = None,
        non_tensor_batch: Optional[Dict[str, Any]] = None,
        **_: Any,
    ) -> Tuple[Any, Any]:
        if non_tensor_batch is None or index is None:
            raise MissingBatch(
                f"advantage estimator {name!r} needs non_tensor_batch (the ParaAct agent loop's per-step rewards) and the "
                "uid index: call paraagent_verl.install() in the trainer process so compute_advantage passes them"
            )
        advantages = token_advantages(as_list(response_mask), as_list(index), non_tensor_batch, name, config_from(config))
        out = _like(advantages, token_level_rewards)
        return out, out

    estimator.__name__ = f"compute_{name}_advantage"
    estimator.__qualname__ = estimator.__name__
    return estimator


#: One function object per name, so registering twice is harmless (verl refuses a different function under a name).
ESTIMATOR_FUNCTIONS: Dict[str, Callable[..., Tuple[Any, Any]]] = {
    verl_name: make_estimator(ours) for verl_name, ours in VERL_ESTIMATORS.items()
}


def register(core_algos: Any = None) -> None:
    """Registers every estimator of :data:`VERL_ESTIMATORS` with verl's ``register_adv_est``."""
    module = core_algos if core_algos is not None else importlib.import_module("verl.trainer.ppo.core_algos")
    for verl_name, fn in ESTIMATOR_FUNCTIONS.items():
        module.register_adv_est(verl_name)(fn)


def _wrap(original: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(original)

    def compute_advantage(data: Any, adv_estimator: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(adv_estimator, "value", adv_estimator)
        fn = ESTIMATOR_FUNCTIONS.get(name) if isinstance(name, str) else None
        if fn is None:
            return original(data, adv_estimator, *args, **kwargs)
        bound = signature.bind(data, adv_estimator, *args, **kwargs)
        if "response_mask" not in data.batch:
            # verl's own fallback: the response part of the attention mask
            responses = data.batch["responses"]
            data.batch["response_mask"] = data.batch["attention_mask"][:, -responses.size(1):]
        advantages, returns = fn(
            token_level_rewards=data.batch["token_level_rewards"],
            response_mask=data.batch["response_mask"],
            index=data.non_tensor_batch["uid"],
            config=bound.arguments.get("config"),
            non_tensor_batch=data.non_tensor_batch,
        )
        data.batch["advantages"] = advantages
        data.batch["returns"] = returns
        return data

    compute_advantage.__paraagent_wrapped__ = original  # type: ignore[attr-defined]
    return compute_advantage


def install(core_algos: Any = None, ray_trainer: Any = None) -> None:
    """Registers the estimators and wraps ``ray_trainer.compute_advantage`` to hand them ``non_tensor_batch`` (idempotent)."""
    register(core_algos)
    module = ray_trainer if ray_trainer is not None else importlib.import_module("verl.trainer.ppo.ray_trainer")
    current = module.compute_advantage
    if getattr(current, "__paraagent_wrapped__", None) is None:
        module.compute_advantage = _wrap(current)
