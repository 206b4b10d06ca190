"""Group-normalised advantages over plain Python lists: the same estimators as src/math/Advantage.ts.

One group is the G rollouts of one prompt (verl's ``uid``). Each rollout brings its trajectory reward R_ans, its
phase rewards, its step rewards, the phase of each step and the pool key of each step (search 0, call 1, answer 2,
other 3). Standard library only: verl's trainer calls it through ``estimator.py``, the tests call it directly, and
``integrations/verl/fixtures/advantage_groups.json`` (written by the TypeScript side) pins it to the TS numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

#: The largest step-pool key + 1 accepted (as in Advantage.ts).
MAX_STEP_POOLS = 1024


@dataclass(frozen=True)
class AdvantageConfig:
    """λτ, λp, λs, ε and the tolerance below which a pool counts as constant (Reward.ts defaults)."""

    lambda_traj: float = 1.0
    lambda_phase: float = 0.5
    lambda_step: float = 0.25
    epsilon: float = 1e-6
    tolerance: float = 0.02


DEFAULT_CONFIG = AdvantageConfig()


@dataclass(frozen=True)
class RolloutRewards:
    """The rewards of one rollout at the three levels; ``step_phase[i]`` indexes ``phases``.

    ``step_pool`` None puts every step in pool 0; ``masked`` leaves the rollout out of every pool (it gets 0).
    """

    traj: float
    phases: Sequence[float]
    steps: Sequence[float]
    step_phase: Sequence[int]
    step_pool: Optional[Sequence[int]] = None
    masked: bool = False


@dataclass(frozen=True)
class StepAdvantage:
    """One step's advantages by level and combined."""

    traj: float
    phase: float
    step: float
    combined: float


class InvalidGroup(ValueError):
    """A rollout whose rewards cannot be normalised: which rollout, and why."""

    def __init__(self, rollout: int, message: str) -> None:
        super().__init__(f"rollout {rollout}: {message}")
        self.rollout = rollout
        self.message = message


class UnknownEstimator(KeyError):
    """An estimator name that is not registered, with the names that are."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        super().__init__(f"unknown advantage estimator {name!r}; known: {', '.join(known)}")
        self.name = name
        self.known = list(known)


@dataclass
class FlatGroup:
    """A group laid out flat, rollout-major; a key of -1 marks a member of a masked rollout."""

    size: int
    traj: List[float] = field(default_factory=list)
    traj_key: List[int] = field(default_factory=list)
    phase_reward: List[float] = field(default_factory=list)
    phase_key: List[int] = field(default_factory=list)
    phase_index: List[int] = field(default_factory=list)
    step_reward: List[float] = field(default_factory=list)
    step_key: List[int] = field(default_factory=list)
    step_index: List[int] = field(default_factory=list)
    step_pool: List[int] = field(default_factory=list)
    step_pool_count: int = 1
    step_rollout: List[int] = field(default_factory=list)
    step_phase: List[int] = field(default_factory=list)
    step_offsets: List[int] = field(default_factory=list)
    max_phases: int = 0
    max_steps: int = 0


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) or (isinstance(x, float) and x.is_integer())


def flatten(rollouts: Sequence[RolloutRewards]) -> FlatGroup:
    """Lays a group out flat, checking every reward is finite and every step points at one of its rollout's phases."""
    group = FlatGroup(size=len(rollouts))
    for g, r in enumerate(rollouts):
        if not _finite(r.traj):
            raise InvalidGroup(g, f"trajectory reward is {r.traj}")
        if len(r.step_phase) != len(r.steps):
            raise InvalidGroup(g, f"{len(r.steps)} step rewards but {len(r.step_phase)} step-to-phase entries")
        if r.step_pool is not None and len(r.step_pool) != len(r.steps):
            raise InvalidGroup(g, f"{len(r.steps)} step rewards but {len(r.step_pool)} step-pool keys")
        for i, x in enumerate(r.phases):
            if not _finite(x):
                raise InvalidGroup(g, f"phase {i} reward is {x}")
        for i, x in enumerate(r.steps):
            if not _finite(x):
                raise InvalidGroup(g, f"step {i} reward is {x}")
            p = r.step_phase[i]
            if not _is_int(p) or p < 0 or p >= len(r.phases):
                raise InvalidGroup(g, f"step {i} points at phase {p}, but the rollout has {len(r.phases)} phases")
            k = 0 if r.step_pool is None else r.step_pool[i]
            if not _is_int(k) or k < 0 or k >= MAX_STEP_POOLS:
                raise InvalidGroup(g, f"step {i} has step-pool key {k}; keys are integers in [0, {MAX_STEP_POOLS})")
            group.step_pool_count = max(group.step_pool_count, int(k) + 1)
        group.max_phases = max(group.max_phases, len(r.phases))
        group.max_steps = max(group.max_steps, len(r.steps))

    for g, r in enumerate(rollouts):
        masked = bool(r.masked)
        p0 = len(group.phase_reward)
        group.traj.append(float(r.traj))
        group.traj_key.append(-1 if masked else 0)
        for i, x in enumerate(r.phases):
            group.phase_reward.append(float(x))
            group.phase_key.append(-1 if masked else 0)
            group.phase_index.append(-1 if masked else i)
        group.step_offsets.append(len(group.step_reward))
        for i, x in enumerate(r.steps):
            group.step_reward.append(float(x))
            group.step_key.append(-1 if masked else 0)
            group.step_index.append(-1 if masked else i)
            group.step_pool.append(-1 if masked else (0 if r.step_pool is None else int(r.step_pool[i])))
            group.step_rollout.append(g)
            group.step_phase.append(p0 + int(r.step_phase[i]))
    group.step_offsets.append(len(group.step_reward))
    return group


def _is_constant(lo: float, hi: float, tolerance: float) -> bool:
    return not (hi - lo > 0) or hi - lo < tolerance


def normalise(values: Sequence[float], keys: Sequence[int], key_count: int, epsilon: float, tolerance: float = 0.0) -> List[float]:
    """(x − mean)/(std + ε) per key, population std (Welford); a negative key gives 0; a constant pool gives 0."""
    pools = max(1, key_count)
    count = [0.0] * pools
    mean = [0.0] * pools
    m2 = [0.0] * pools
    lo = [math.inf] * pools
    hi = [-math.inf] * pools
    for x, k in zip(values, keys):
        if k < 0:
            continue
        n = count[k] + 1
        count[k] = n
        delta = x - mean[k]
        mean[k] = mean[k] + delta / n
        m2[k] = m2[k] + delta * (x - mean[k])
        if x < lo[k]:
            lo[k] = x
        if x > hi[k]:
            hi[k] = x
    scale = [
        0.0 if count[k] == 0 or _is_constant(lo[k], hi[k], tolerance) else 1 / (math.sqrt(m2[k] / count[k]) + epsilon)
        for k in range(pools)
    ]
    out: List[float] = []
    for x, k in zip(values, keys):
        s = 0.0 if k < 0 else scale[k]
        out.append(0.0 if s == 0 else (x - mean[k]) * s)
    return out


@dataclass(frozen=True)
class FlatAdvantages:
    """Per-step advantages, flat and aligned with the group's steps."""

    traj: List[float]
    phase: List[float]
    step: List[float]
    combined: List[float]
    step_offsets: List[int]


def _combine(group: FlatGroup, traj_adv: List[float], phase_adv: Optional[List[float]], step_adv: Optional[List[float]],
             weights: tuple) -> FlatAdvantages:
    wt, wp, ws = weights
    traj: List[float] = []
    phase: List[float] = []
    step: List[float] = []
    combined: List[float] = []
    for i in range(len(group.step_reward)):
        t = traj_adv[group.step_rollout[i]]
        p = 0.0 if phase_adv is None else phase_adv[group.step_phase[i]]
        s = 0.0 if step_adv is None else step_adv[i]
        traj.append(t)
        phase.append(p)
        step.append(s)
        combined.append(wt * t + wp * p + ws * s)
    return FlatAdvantages(traj, phase, step, combined, list(group.step_offsets))


def _traj_level(group: FlatGroup, c: AdvantageConfig) -> List[float]:
    return normalise(group.traj, group.traj_key, 1, c.epsilon, c.tolerance)


def _lambdas(c: AdvantageConfig) -> tuple:
    return (c.lambda_traj, c.lambda_phase, c.lambda_step)


Estimator = Callable[[FlatGroup, AdvantageConfig], FlatAdvantages]


def grpo(group: FlatGroup, c: AdvantageConfig) -> FlatAdvantages:
    """GRPO: the trajectory level only, A = A_traj."""
    return _combine(group, _traj_level(group, c), None, None, (1.0, 0.0, 0.0))


def paraagent(group: FlatGroup, c: AdvantageConfig) -> FlatAdvantages:
    """The decoupled estimator: λτ·A_traj + λp·A_phase + λs·A_step, phases pooled, steps pooled by kind."""
    return _combine(
        group,
        _traj_level(group, c),
        normalise(group.phase_reward, group.phase_key, 1, c.epsilon, c.tolerance),
        normalise(group.step_reward, group.step_pool, group.step_pool_count, c.epsilon, c.tolerance),
        _lambdas(c),
    )


def paraagent_single_pool(group: FlatGroup, c: AdvantageConfig) -> FlatAdvantages:
    """The decoupled estimator with one pool of all steps (the ablation)."""
    return _combine(
        group,
        _traj_level(group, c),
        normalise(group.phase_reward, group.phase_key, 1, c.epsilon, c.tolerance),
        normalise(group.step_reward, group.step_key, 1, c.epsilon, c.tolerance),
        _lambdas(c),
    )


def grpo_per_index(group: FlatGroup, c: AdvantageConfig) -> FlatAdvantages:
    """The decoupled estimator with position-index pools (the biased ablation)."""
    return _combine(
        group,
        _traj_level(group, c),
        normalise(group.phase_reward, group.phase_index, group.max_phases, c.epsilon, c.tolerance),
        normalise(group.step_reward, group.step_index, group.max_steps, c.epsilon, c.tolerance),
        _lambdas(c),
    )


#: Estimators by name, as in Advantage.ts's registry.
ESTIMATORS: Dict[str, Estimator] = {
    "grpo": grpo,
    "paraagent": paraagent,
    "paraagent_single_pool": paraagent_single_pool,
    "grpo_per_index": grpo_per_index,
}


def compute(name: str, rollouts: Sequence[RolloutRewards], config: AdvantageConfig = DEFAULT_CONFIG) -> List[List[StepAdvantage]]:
    """Runs the named estimator on a group: per rollout, per step, the advantage by level and combined."""
    estimator = ESTIMATORS.get(name)
    if estimator is None:
        raise UnknownEstimator(name, list(ESTIMATORS))
    flat = estimator(flatten(rollouts), config)
    out: List[List[StepAdvantage]] = []
    for g in range(len(rollouts)):
        lo, hi = flat.step_offsets[g], flat.step_offsets[g + 1]
        out.append([StepAdvantage(flat.traj[i], flat.phase[i], flat.step[i], flat.combined[i]) for i in range(lo, hi)])
    return out
