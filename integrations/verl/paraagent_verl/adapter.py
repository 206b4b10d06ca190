"""The adapter between verl's batch and the decoupled estimator: per-row rewards out of ``non_tensor_batch``.

verl hands an advantage estimator ``token_level_rewards``, ``response_mask`` and ``index`` (the group uid) only; the
per-step and per-phase rewards, phase ids, step pools and token spans travel in ``non_tensor_batch`` (the agent
loop's ``extra_fields``, under the keys below). This module reads them, groups the rows by uid, normalises each group
with ``advantage.py`` and spreads each step's combined advantage over that step's generated tokens.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .advantage import DEFAULT_CONFIG, AdvantageConfig, InvalidGroup, RolloutRewards, compute

#: ``extra_fields`` / ``non_tensor_batch`` keys the agent loop writes and the adapter reads (one value per row).
STEP_SPANS = "paraagent_step_spans"  # [[start, end), ...] into response_ids: the tokens each step generated
STEP_REWARDS = "paraagent_step_rewards"  # R_step per step
PHASE_REWARDS = "paraagent_phase_rewards"  # R_phase per phase
STEP_PHASE = "paraagent_step_phase"  # the phase index of each step
STEP_POOL = "paraagent_step_pool"  # the pool key of each step: search 0, call 1, answer 2, other 3
R_ANS = "paraagent_r_ans"  # the trajectory reward R_ans
MASKED = "paraagent_masked"  # True: left out of every pool (unjudged), advantage 0

FIELDS = (STEP_SPANS, STEP_REWARDS, PHASE_REWARDS, STEP_PHASE, STEP_POOL, R_ANS, MASKED)


class BatchError(ValueError):
    """A row of the batch whose ParaAgent fields are missing or do not fit together: which row, which field, why."""

    def __init__(self, row: Optional[int], field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if row is None else f"row {row}, {field}: {message}")
        self.row = row
        self.field = field
        self.message = message


def as_list(value: Any) -> Any:
    """A numpy array or torch tensor as nested Python lists (``tolist``); anything else as it is."""
    tolist = getattr(value, "tolist", None)
    return tolist() if callable(tolist) else value


def _column(batch: Mapping[str, Any], field: str, rows: int) -> List[Any]:
    if field not in batch:
        raise BatchError(None, field, f"not in non_tensor_batch (keys: {', '.join(sorted(map(str, batch.keys())))}); the ParaAct agent loop writes it in extra_fields")
    column = list(as_list(batch[field]))
    if len(column) != rows:
        raise BatchError(None, field, f"{len(column)} values for {rows} rows")
    return column


def _numbers(row: int, field: str, value: Any, integer: bool = False) -> List[float]:
    items = as_list(value)
    if not isinstance(items, (list, tuple)):
        raise BatchError(row, field, f"expected a list, got {type(items).__name__}")
    out = []
    for x in items:
        x = as_list(x)
        if isinstance(x, bool) or not isinstance(x, (int, float)) or (integer and not float(x).is_integer()):
            raise BatchError(row, field, f"expected {'integers' if integer else 'numbers'}, got {x!r}")
        out.append(int(x) if integer else float(x))
    return out


def _spans(row: int, value: Any, steps: int) -> List[Tuple[int, int]]:
    items = as_list(value)
    if not isinstance(items, (list, tuple)) or len(items) != steps:
        count = len(items) if isinstance(items, (list, tuple)) else type(items).__name__
        raise BatchError(row, STEP_SPANS, f"{count} spans for {steps} steps")
    spans: List[Tuple[int, int]] = []
    previous = 0
    for i, span in enumerate(items):
        pair = _numbers(row, STEP_SPANS, span, integer=True)
        if len(pair) != 2 or pair[0] < previous or pair[1] < pair[0]:
            raise BatchError(row, STEP_SPANS, f"span {i} is {pair}: spans are [start, end) pairs in order, not overlapping")
        spans.append((int(pair[0]), int(pair[1])))
        previous = int(pair[1])
    return spans


def rows_of(non_tensor_batch: Mapping[str, Any], rows: int) -> List[Tuple[RolloutRewards, List[Tuple[int, int]]]]:
    """Each row's rewards and step spans, checked: one span, one phase id and one pool per step."""
    columns = {field: _column(non_tensor_batch, field, rows) for field in FIELDS}
    out = []
    for r in range(rows):
        steps = _numbers(r, STEP_REWARDS, columns[STEP_REWARDS][r])
        phase_of = _numbers(r, STEP_PHASE, columns[STEP_PHASE][r], integer=True)
        pools = _numbers(r, STEP_POOL, columns[STEP_POOL][r], integer=True)
        if len(phase_of) != len(steps) or len(pools) != len(steps):
            raise BatchError(r, STEP_PHASE, f"{len(steps)} step rewards, {len(phase_of)} phase ids, {len(pools)} pool keys")
        r_ans = as_list(columns[R_ANS][r])
        if isinstance(r_ans, bool) or not isinstance(r_ans, (int, float)):
            raise BatchError(r, R_ANS, f"expected a number, got {r_ans!r}")
        rewards = RolloutRewards(
            traj=float(r_ans),
            phases=_numbers(r, PHASE_REWARDS, columns[PHASE_REWARDS][r]),
            steps=steps,
            step_phase=[int(p) for p in phase_of],
            step_pool=[int(k) for k in pools],
            masked=bool(as_list(columns[MASKED][r])),
        )
        out.append((rewards, _spans(r, columns[STEP_SPANS][r], len(steps))))
    return out


def spread(response_mask: Sequence[float], spans: Sequence[Tuple[int, int]], combined: Sequence[float]) -> List[float]:
    """Step i's combined advantage on the tokens of its span that the model generated (mask 1), 0 elsewhere."""
    length = len(response_mask)
    out = [0.0] * length
    for (start, end), a in zip(spans, combined):
        for t in range(max(0, start), min(end, length)):
            m = float(response_mask[t])
            out[t] = 0.0 if m == 0 else a * m
    return out


def token_advantages(
    response_mask: Sequence[Sequence[float]],
    index: Sequence[Any],
    non_tensor_batch: Mapping[str, Any],
    estimator: str = "paraagent",
    config: AdvantageConfig = DEFAULT_CONFIG,
) -> List[List[float]]:
    """Per-token advantages of a batch: rows grouped by uid (``index``), each group normalised, each step spread."""
    mask_rows = [list(map(float, as_list(m))) for m in as_list(response_mask)]
    uids = list(as_list(index))
    if len(uids) != len(mask_rows):
        raise BatchError(None, "index", f"{len(uids)} uids for {len(mask_rows)} rows")
    rows = rows_of(non_tensor_batch, len(mask_rows))
    groups: Dict[Any, List[int]] = {}
    for r, uid in enumerate(uids):
        groups.setdefault(uid, []).append(r)
    out: List[Optional[List[float]]] = [None] * len(mask_rows)
    for members in groups.values():
        try:
            advantages = compute(estimator, [rows[r][0] for r in members], config)
        except InvalidGroup as e:
            raise BatchError(members[e.rollout], "rewards", e.message) from e
        for r, steps in zip(members, advantages):
            out[r] = spread(mask_rows[r], rows[r][1], [a.combined for a in steps])
    return [row if row is not None else [] for row in out]


def config_from(algorithm_config: Any) -> AdvantageConfig:
    """The estimator's coefficients from verl's ``algorithm`` config: its optional ``paraagent`` block, else the defaults."""
    block = None
    if algorithm_config is not None:
        getter = getattr(algorithm_config, "get", None)
        block = getter("paraagent", None) if callable(getter) else getattr(algorithm_config, "paraagent", None)
    if block is None:
        return DEFAULT_CONFIG
    read = block.get if callable(getattr(block, "get", None)) else (lambda k, d: getattr(block, k, d))
    fields = ("lambda_traj", "lambda_phase", "lambda_step", "epsilon", "tolerance")
    return AdvantageConfig(**{k: float(read(k, getattr(DEFAULT_CONFIG, k))) for k in fields})
