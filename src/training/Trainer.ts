/**
 * The Trainer service: behaviour cloning on judge-filtered demonstrations (SFT), then RL iterations of
 * rollout → judge → reward → advantage (a named estimator) → PPO-clip updates with Adam. It only orchestrates;
 * the losses, the turn distribution and the optimiser are pure functions in `src/math/`.
 */
import { Context, Effect, Layer, Ref, Schema } from "effect"
import type { Task } from "../domain/Task.ts"
import type { Step, Trajectory } from "../domain/Trajectory.ts"
import * as ActionSpace from "../agent/ActionSpace.ts"
import * as LearnedPolicy from "../agent/LearnedPolicy.ts"
import * as Advantage from "../math/Advantage.ts"
import * as Evaluation from "../math/Evaluation.ts"
import * as PolicyGradient from "../math/PolicyGradient.ts"
import { hashParts, rng } from "../math/Random.ts"
import * as Reward from "../math/Reward.ts"
import * as SetScorer from "../math/SetScorer.ts"
import { mean } from "../math/Stats.ts"
import * as TurnDistribution from "../math/TurnDistribution.ts"
import * as Progress from "../io/Progress.ts"
import * as Estimators from "../eval/Estimators.ts"
import * as Scoring from "../eval/Scoring.ts"
import type { Judge } from "../judge/Judge.ts"
import { Rollout } from "../runtime/Rollout.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"

/** Training could not run as configured, or a recorded step could not be rebuilt. */
export class TrainerError extends Schema.TaggedError<TrainerError>()("TrainerError", {
  stage: Schema.String,
  message: Schema.String
}) {}

/** The weights the learned policy acts with: the trainer updates them in place between iterations. */
export class WeightsCell extends Context.Service<WeightsCell, Ref.Ref<LearnedPolicy.Weights>>()("paraagent/WeightsCell") {}

/** One step ready for a loss: its scored matrix, the layout, the choice, and (RL) behaviour log-prob and advantage. */
export interface Sample extends PolicyGradient.RecordedStep {
  readonly behaviour: number
  readonly advantage: number
  /** The reference (SFT) policy's log-probability of the choice, for the KL term. */
  readonly reference?: number
  /** Per-action credit: each factor's behaviour log-probability and advantage (TurnDistribution.factors order). */
  readonly factors?: { readonly behaviour: Float64Array; readonly advantages: Float64Array }
}

/** Whether a scored group's outcomes differ: its unmasked R_ans values spread by at least `tolerance` (dynamic sampling's test). */
export const outcomesDiffer = (group: ReadonlyArray<Trajectory>, tolerance: number): boolean => {
  let min = Infinity
  let max = -Infinity
  for (const t of group) {
    const r = t.answerReward
    if (r === undefined || r.pattern === "none") continue
    min = Math.min(min, r.rAns)
    max = Math.max(max, r.rAns)
  }
  return max - min > 0 && max - min >= tolerance
}

/** Whether a scored group carries any advantage: a step, action or plan advantage that is not 0 (dynamic sampling's `signal`). */
export const carriesSignal = (group: ReadonlyArray<Trajectory>): boolean =>
  group.some((t) => t.steps.some((s) => {
    const a = s.advantage
    return a !== undefined && (a.combined !== 0 || (a.plan !== undefined && a.plan !== 0) || (a.kind !== undefined && a.kind !== 0) || (a.actions ?? []).some((x) => x !== 0))
  }))

/** Whether dynamic sampling trains on a group. */
export const keepsGroup = (filter: DynamicSampling["filter"], group: ReadonlyArray<Trajectory>, tolerance: number): boolean =>
  filter === "off" ? true : filter === "signal" ? carriesSignal(group) : outcomesDiffer(group, tolerance)

/**
 * The advantage of each factor of a step's turn: a chosen candidate gets its own action's advantage when the step
 * carries per-action advantages (the turn's calls, then its searches, in the order the candidates were chosen), the
 * plan bit the plan's advantage, the kind its own when the estimator gives one; the kind (otherwise), unchosen
 * candidates and an answer's facts the step's combined advantage.
 */
export const factorAdvantages = (factors: ReadonlyArray<TurnDistribution.Factor>, step: Pick<Step, "advantage" | "decision" | "turn">): Float64Array => {
  const a = step.advantage
  const combined = a?.combined ?? 0
  const calls = step.turn?.calls.length ?? 0
  const searches = step.turn?.searches.length ?? 0
  const actions = a?.actions !== undefined && a.actions.length === calls + searches ? a.actions : undefined
  const offset = step.decision?.kind === "search" ? calls : 0
  const own = step.decision?.kind === "call" || step.decision?.kind === "search"
  return Float64Array.from(factors, (f) => {
    switch (f.target._tag) {
      case "kind":
        return a?.kind ?? combined
      case "plan":
        return a?.plan ?? combined
      case "candidate":
        return own && f.target.chosen && actions !== undefined ? (actions[offset + f.target.position] ?? combined) : combined
    }
  })
}

/** Which demonstrations SFT keeps: `pass` (Pass@1's success rule, the default) or `pattern111` (the same verdict). */
export type DemoFilter = "pass" | "pattern111"

/** SFT settings. */
export interface SftOptions {
  readonly epochs: number
  readonly minibatch: number
  readonly adam: PolicyGradient.AdamConfig
  readonly seed: number
  /** `pass`: the judge's Quality, Faithfulness and Utility are YES (the rule the Pass@1 metric uses, `Evaluation.solved`). */
  readonly filter: DemoFilter
  readonly progress: boolean
}

/** Defaults of the embedded pipeline. */
export const defaultSft: SftOptions = { epochs: 30, minibatch: 64, adam: { lr: 3e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 }, seed: 1, filter: "pass", progress: false }

/** What SFT did. */
export interface SftReport {
  readonly demonstrations: number
  readonly kept: number
  readonly steps: number
  /** Steps projected whole / in part (some actions dropped) / not at all, and the actions dropped. */
  readonly projectedWhole: number
  readonly projectedPartly: number
  readonly unprojected: number
  readonly droppedActions: number
  readonly totalActions: number
  /** Mean negative log-likelihood per step, first and last epoch. */
  readonly lossFirst: number
  readonly lossLast: number
  readonly durationMs: number
}

/**
 * Dynamic sampling **[ours]** (after DAPO): `outcome` trains only on groups whose outcomes differ (their R_ans spread
 * by at least the advantage tolerance); `signal` on groups where the estimator gave any step, action or plan a
 * non-zero advantage (for `grpo` the same groups as `outcome`; for the decoupled estimators also groups whose answers
 * or phases differ while their R_ans does not). The others are counted as skipped; up to `rounds` draws of
 * `tasksPerIteration` tasks are rolled out per iteration until `tasksPerIteration` groups pass. `off` trains on every group.
 */
export interface DynamicSampling {
  readonly filter: "off" | "outcome" | "signal"
  readonly rounds: number
}

/**
 * Where the advantage applies: `turn` multiplies the whole turn's log-probability by the step's combined advantage;
 * `action` **[ours]** gives each factor of the turn (kind, each candidate decision, plan bit) its own ratio and clip,
 * with the estimator's per-action, plan and kind advantages where it gives them (`paraagent_credit`, `paraagent_attributed`, `paraagent_attributed_stop`), else the step's.
 */
export type CreditMode = "turn" | "action"

/** RL settings. */
export interface RlOptions {
  readonly estimator: string
  readonly dynamicSampling: DynamicSampling
  readonly credit: CreditMode
  readonly iterations: number
  /** Tasks per iteration, and rollouts per task (G). */
  readonly tasksPerIteration: number
  readonly group: number
  readonly ppo: PolicyGradient.PpoConfig
  readonly adam: PolicyGradient.AdamConfig
  readonly seed: number
  readonly reward: Reward.RewardConfig
  readonly concurrency: number
  readonly progress: boolean
  readonly label?: string
}

/** Defaults of the embedded pipeline. */
export const defaultRl: Omit<RlOptions, "estimator"> = {
  dynamicSampling: { filter: "outcome", rounds: 1 },
  credit: "action",
  iterations: 12,
  tasksPerIteration: 16,
  group: 4,
  ppo: { clip: 0.2, epochs: 4, klCoef: 0.02, entropyCoef: 0.005, maxGradNorm: 1.0, minibatch: 128, entropy: "normalised" },
  adam: { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 },
  seed: 1,
  reward: Reward.defaultRewardConfig,
  concurrency: 8,
  progress: false
}

/** The metrics of one RL iteration (means over its rollouts / steps). */
export interface IterationMetrics {
  readonly iteration: number
  readonly version: number
  readonly rAns: number
  readonly pass1: number
  readonly rounds: number
  readonly calls: number
  readonly searches: number
  readonly kl: number
  readonly clipFraction: number
  readonly entropy: number
  readonly loss: number
  readonly steps: number
  readonly gradNorm: number
  /** Groups rolled out, and those left out of the update because their outcomes did not differ (dynamic sampling). */
  readonly groups: number
  readonly groupsSkipped: number
}

/** Where RL keeps its progress: the last checkpoint, and the finished groups of the iteration under way. */
export interface Checkpointer {
  readonly latest: Effect.Effect<Checkpoint | undefined, TrainerError>
  readonly save: (checkpoint: Checkpoint) => Effect.Effect<void, TrainerError>
  /** A finished group of an iteration, when it was stored before a crash. */
  readonly group: (iteration: number, key: string) => Effect.Effect<ReadonlyArray<Trajectory> | undefined, TrainerError>
  readonly putGroup: (iteration: number, key: string, trajectories: ReadonlyArray<Trajectory>) => Effect.Effect<void, TrainerError>
}

/** The state after an iteration: weights, optimiser, and every iteration's metrics so far. */
export interface Checkpoint {
  readonly iteration: number
  readonly weights: LearnedPolicy.Weights
  readonly adam: PolicyGradient.AdamState
  readonly metrics: ReadonlyArray<IterationMetrics>
}

/** What RL did. */
export interface RlReport {
  readonly estimator: string
  readonly metrics: ReadonlyArray<IterationMetrics>
  readonly resumedFrom?: number
  readonly durationMs: number
}

/** One task's demonstration: the teacher's scored trajectory. */
export interface Demonstration {
  readonly task: Task
  readonly trajectory: Trajectory
}

/**
 * Whether a judged demonstration passes the filter. `pass` is Pass@1's rule (`Evaluation.solved`: Quality,
 * Faithfulness and Utility YES); `pattern111` names the same verdict pattern and is kept for configs that spell it.
 */
export const keeps = (filter: DemoFilter, trajectory: Trajectory): boolean => {
  const v = trajectory.verdict
  if (v === undefined) return false
  if (filter === "pattern111") return v.quality === "YES" && v.faithfulness === "YES" && v.utility === "YES"
  return Evaluation.solved(v)
}

/** The trainer. */
export class Trainer extends Context.Service<Trainer, {
  readonly sft: (demonstrations: ReadonlyArray<Demonstration>, options?: Partial<SftOptions>) => Effect.Effect<SftReport, TrainerError>
  readonly rl: (
    tasks: ReadonlyArray<Task>,
    options: Partial<RlOptions> & { readonly estimator: string; readonly checkpointer?: Checkpointer; readonly reference?: LearnedPolicy.Weights }
  ) => Effect.Effect<RlReport, TrainerError>
}>()("paraagent/Trainer") {
  /** The trainer over the learned policy's rollouts, the judge, the library and the weights cell. */
  static readonly layer: Layer.Layer<Trainer, never, Rollout | Judge | ToolLibrary | WeightsCell> = Layer.effect(Trainer, Effect.suspend(() => make))
}

const copyWeights = (w: LearnedPolicy.Weights): LearnedPolicy.Weights => ({ params: { shape: w.params.shape, data: Float64Array.from(w.params.data) }, version: w.version })

/** A seeded permutation of 0..n-1. */
const permutation = (n: number, seed: number): ReadonlyArray<number> => rng(seed).shuffle(Array.from({ length: n }, (_, i) => i))

/** Builds the trainer. */
export const make = Effect.gen(function*() {
  const rollout = yield* Rollout
  const library = yield* ToolLibrary
  const cell = yield* WeightsCell
  const judgeContext = yield* Effect.context<Judge | ToolLibrary>()
  // the registry of the context the trainer is built in: an estimator a program registered trains here
  const registry = yield* Estimators.current
  const lookup = (name: string) => library.get(name)
  const maxRounds = rollout.config.maxRounds

  /** A recorded step's space, rebuilt from its trajectory (linear paradigms only). */
  const spaceAt = (trajectory: Trajectory, index: number, request: string): ActionSpace.Space =>
    LearnedPolicy.spaceOf(LearnedPolicy.contextAt(trajectory, index, request, maxRounds, lookup))

  const sft = Effect.fn("Trainer.sft")(function*(demonstrations: ReadonlyArray<Demonstration>, given: Partial<SftOptions> = {}) {
    const options = { ...defaultSft, ...given }
    const started = Date.now()
    const kept = demonstrations.filter((d) => keeps(options.filter, d.trajectory))
    const samples: Array<PolicyGradient.RecordedStep> = []
    let steps = 0
    let whole = 0
    let partly = 0
    let none = 0
    let dropped = 0
    let actions = 0
    for (const demo of kept) {
      demo.trajectory.steps.forEach((step, index) => {
        steps++
        if (step.turn === undefined) {
          none++
          return
        }
        const space = spaceAt(demo.trajectory, index, demo.task.request)
        const projection = ActionSpace.project(space, step.turn)
        dropped += projection.dropped.length
        actions += projection.actions
        if (projection.choice === undefined) {
          none++
          return
        }
        if (projection.dropped.length === 0) whole++
        else partly++
        samples.push({ x: space.features, layout: space.layout, choice: projection.choice })
      })
    }
    if (samples.length === 0) {
      return yield* new TrainerError({ stage: "sft", message: `no demonstration step fits the action space (${kept.length} of ${demonstrations.length} demonstrations kept by the filter)` })
    }
    const start = yield* Ref.get(cell)
    const params: SetScorer.Params = { shape: start.params.shape, data: Float64Array.from(start.params.data) }
    const adam = PolicyGradient.adamInit(params.data.length)
    const progress = Progress.make("sft epochs", options.epochs, options.progress)
    const losses: Array<number> = []
    for (let epoch = 0; epoch < options.epochs; epoch++) {
      const order = permutation(samples.length, hashParts(options.seed, "sft", epoch))
      let total = 0
      for (let at = 0; at < order.length; at += options.minibatch) {
        const batch = order.slice(at, at + options.minibatch)
        const grad = new Float64Array(params.data.length)
        for (const loss of PolicyGradient.sftBatch({ params, steps: batch.map((i) => samples[i] as PolicyGradient.RecordedStep), grad })) total += loss
        PolicyGradient.clipGradNorm(grad, 1.0)
        PolicyGradient.adamStep(params.data, grad, adam, options.adam)
      }
      losses.push(total / samples.length)
      yield* progress.tick(1)
    }
    yield* progress.done
    yield* Ref.set(cell, { params, version: start.version + 1 })
    const report: SftReport = {
      demonstrations: demonstrations.length,
      kept: kept.length,
      steps,
      projectedWhole: whole,
      projectedPartly: partly,
      unprojected: none,
      droppedActions: dropped,
      totalActions: actions,
      lossFirst: losses[0] ?? 0,
      lossLast: losses[losses.length - 1] ?? 0,
      durationMs: Date.now() - started
    }
    return report
  })

  const rl = Effect.fn("Trainer.rl")(function*(
    tasks: ReadonlyArray<Task>,
    given: Partial<RlOptions> & { readonly estimator: string; readonly checkpointer?: Checkpointer; readonly reference?: LearnedPolicy.Weights }
  ) {
    const options: RlOptions = { ...defaultRl, ...given }
    const started = Date.now()
    if (Advantage.lookup(options.estimator, registry)._tag === "UnknownEstimator") {
      return yield* new TrainerError({ stage: "rl", message: `unknown estimator ${JSON.stringify(options.estimator)}; known: ${[...registry.keys()].join(", ")}` })
    }
    if (!(Number.isInteger(options.dynamicSampling.rounds) && options.dynamicSampling.rounds >= 1)) {
      return yield* new TrainerError({ stage: "rl", message: `dynamicSampling.rounds is ${options.dynamicSampling.rounds}; expected an integer ≥ 1` })
    }
    if (tasks.length === 0) return yield* new TrainerError({ stage: "rl", message: "no training tasks" })
    const temperature = options.ppo.temperature ?? 1
    if (!(Number.isFinite(temperature) && temperature > 0)) {
      return yield* new TrainerError({ stage: "rl", message: `ppo.temperature is ${temperature}; expected a finite number > 0 (1: the policy's own distribution)` })
    }
    const byId = new Map(tasks.map((t) => [t.id as string, t]))
    const reference = given.reference
    const checkpointer = given.checkpointer
    const resumed = checkpointer === undefined ? undefined : yield* checkpointer.latest
    let weights = resumed?.weights ?? copyWeights(yield* Ref.get(cell))
    const adam = resumed?.adam ?? PolicyGradient.adamInit(weights.params.data.length)
    const metrics: Array<IterationMetrics> = [...(resumed?.metrics ?? [])]
    const scoring: Scoring.ScoringOptions = { reward: options.reward, estimator: options.estimator }
    const progress = Progress.make(`rl ${options.label ?? options.estimator}`, options.iterations, options.progress)
    if (resumed !== undefined) yield* progress.tick(resumed.iteration + 1)
    for (let iteration = (resumed?.iteration ?? -1) + 1; iteration < options.iterations; iteration++) {
      yield* Ref.set(cell, weights)
      // this iteration's tasks: seeded draws from the training pool, `tasksPerIteration` at a time
      const order = permutation(tasks.length, hashParts(options.seed, "rl-tasks", iteration))
      const per = Math.min(options.tasksPerIteration, tasks.length)
      const groups: Array<ReadonlyArray<Trajectory>> = []
      let informative = 0
      for (let round = 0; round < options.dynamicSampling.rounds && round * per < order.length; round++) {
        const drawn = order.slice(round * per, (round + 1) * per).map((i) => tasks[i] as Task)
        const batch = yield* Effect.forEach(drawn, (task, j) =>
          Effect.gen(function*() {
            const g = round * per + j
            const key = `${iteration}/${g}/${task.id}`
            const stored = checkpointer === undefined ? undefined : yield* checkpointer.group(iteration, key)
            if (stored !== undefined) return stored
            const trajectories = yield* rollout.runGroup(task, { paradigm: "ParaAct", seed: hashParts(options.seed, "rl-rollout", iteration, g) & 0x3fffffff, size: options.group })
            const scored = yield* Scoring.scoreGroup(task, trajectories, scoring).pipe(
              Effect.provide(judgeContext),
              Effect.provideService(Estimators.Estimators, registry),
              Effect.mapError((e) => new TrainerError({ stage: "rl", message: e.message }))
            )
            if (checkpointer !== undefined) yield* checkpointer.putGroup(iteration, key, scored)
            return scored
          }), { concurrency: options.concurrency })
        groups.push(...batch)
        informative += batch.filter((group) => keepsGroup(options.dynamicSampling.filter, group, options.reward.advantage.tolerance)).length
        if (options.dynamicSampling.filter === "off" || informative >= per) break
      }
      const trained = groups.filter((group) => keepsGroup(options.dynamicSampling.filter, group, options.reward.advantage.tolerance))

      // the batch: every recorded step of the trained groups, rebuilt, with its behaviour log-prob and advantage(s)
      const samples: Array<Sample> = []
      for (const group of trained) {
        for (const trajectory of group) {
          const task = byId.get(trajectory.taskId) as Task
          for (const step of trajectory.steps) {
            const sample = yield* sampleOf(trajectory, step, task.request, reference, weights, options.credit === "action", options.ppo)
            if (sample !== undefined) samples.push(sample)
          }
        }
      }
      const update = updatePolicy(weights.params, adam, samples, options, iteration)
      weights = { params: update.params, version: weights.version + 1 }
      const all = groups.flat()
      const outcomes = all.map((t) => Evaluation.outcomeOf(byId.get(t.taskId) as Task, t))
      const m: IterationMetrics = {
        iteration,
        version: weights.version,
        rAns: mean(all.map((t) => t.answerReward?.rAns ?? 0)),
        pass1: mean(outcomes.map((o) => (o.success ? 1 : 0))),
        rounds: mean(outcomes.map((o) => o.rounds)),
        calls: mean(outcomes.map((o) => o.calls)),
        searches: mean(outcomes.map((o) => o.searches)),
        kl: update.kl,
        clipFraction: update.clipFraction,
        entropy: update.entropy,
        loss: update.loss,
        steps: samples.length,
        gradNorm: update.gradNorm,
        groups: groups.length,
        groupsSkipped: groups.length - trained.length
      }
      metrics.push(m)
      if (checkpointer !== undefined) yield* checkpointer.save({ iteration, weights, adam, metrics })
      yield* progress.tick(1)
    }
    yield* progress.done
    yield* Ref.set(cell, weights)
    const report: RlReport = {
      estimator: options.estimator,
      metrics,
      ...(resumed !== undefined ? { resumedFrom: resumed.iteration } : {}),
      durationMs: Date.now() - started
    }
    return report
  })

  /**
   * A recorded step as a sample: its space rebuilt (and checked against the recorded digest), each factor's behaviour
   * log-probability under the weights that acted checked to sum to the recorded log-probability, and with `factored`
   * (per-action credit) those factors and each factor's advantage ({@link factorAdvantages}). They, and the
   * reference's log-probability, are of the distribution PPO trains (`ppo.temperature`: logits / T).
   */
  const sampleOf = (
    trajectory: Trajectory,
    step: Step,
    request: string,
    reference: LearnedPolicy.Weights | undefined,
    behaviourWeights: LearnedPolicy.Weights,
    factored: boolean,
    ppo: Pick<PolicyGradient.PpoConfig, "temperature">
  ) =>
    Effect.gen(function*() {
      const decision = step.decision
      if (decision === undefined || step.logprob === undefined) return undefined
      const space = spaceAt(trajectory, step.index, request)
      if (ActionSpace.digest(space) !== decision.digest) {
        return yield* new TrainerError({ stage: "rl", message: `${trajectory.id} step ${step.index}: the rebuilt action space differs from the recorded one` })
      }
      const choice = LearnedPolicy.choiceOf(decision)
      // the behaviour check, under either credit: the factors of the weights that acted, at PPO's temperature, must sum
      // to the recorded log-probability (a policy that sampled at another temperature is refused)
      const fs = TurnDistribution.factors(space.layout, PolicyGradient.tempered(ppo, SetScorer.logits(behaviourWeights.params, space.features, space.layout.rows, space.layout.sets)), choice)
      const behaviour = Float64Array.from(fs, (f) => f.logprob)
      const total = behaviour.reduce((a, b) => a + b, 0)
      if (!(Math.abs(total - step.logprob) <= 1e-6 * (1 + Math.abs(step.logprob)))) {
        return yield* new TrainerError({
          stage: "rl",
          message: `${trajectory.id} step ${step.index}: the acting weights give log-probability ${total} at temperature ${ppo.temperature ?? 1}, the step recorded ${step.logprob} (the step was not rolled out with this iteration's weights, or its policy sampled at another temperature than ppo.temperature)`
        })
      }
      const factors = factored ? { behaviour, advantages: factorAdvantages(fs, step) } : undefined
      const sample: Sample = {
        x: space.features,
        layout: space.layout,
        choice,
        behaviour: step.logprob,
        advantage: step.advantage?.combined ?? 0,
        ...(factors !== undefined ? { factors } : {}),
        ...(reference !== undefined
          ? { reference: TurnDistribution.logProb(space.layout, PolicyGradient.tempered(ppo, SetScorer.logits(reference.params, space.features, space.layout.rows, space.layout.sets)), choice) }
          : {})
      }
      return sample
    })

  return Trainer.of({ sft, rl })
})

/** PPO over a batch: `epochs` passes of minibatches, gradient clipping, Adam; returns the new parameters and stats. */
export const updatePolicy = (
  start: SetScorer.Params,
  adam: PolicyGradient.AdamState,
  samples: ReadonlyArray<Sample>,
  options: Pick<RlOptions, "ppo" | "adam" | "seed">,
  iteration: number
): { readonly params: SetScorer.Params; readonly kl: number; readonly clipFraction: number; readonly entropy: number; readonly loss: number; readonly gradNorm: number } => {
  const params: SetScorer.Params = { shape: start.shape, data: Float64Array.from(start.data) }
  if (samples.length === 0) return { params, kl: 0, clipFraction: 0, entropy: 0, loss: 0, gradNorm: 0 }
  const size = options.ppo.minibatch ?? samples.length
  let kl = 0
  let clipped = 0
  let entropy = 0
  let loss = 0
  let counted = 0
  let clipBase = 0
  let gradNorm = 0
  for (let epoch = 0; epoch < options.ppo.epochs; epoch++) {
    const order = permutation(samples.length, hashParts(options.seed, "ppo", iteration, epoch))
    for (let at = 0; at < order.length; at += size) {
      const batch = order.slice(at, at + size)
      const grad = new Float64Array(params.data.length)
      const chosen = batch.map((i) => samples[i] as Sample)
      const factored = chosen.every((s) => s.factors !== undefined)
      const results: ReadonlyArray<PolicyGradient.StepLossResult & Partial<PolicyGradient.FactorLossResult>> = factored
        ? PolicyGradient.ppoFactorBatch({
          params,
          steps: chosen.map((s) => ({ x: s.x, layout: s.layout, choice: s.choice, behaviour: s.factors?.behaviour ?? new Float64Array(), advantages: s.factors?.advantages ?? new Float64Array(), ...(s.reference !== undefined ? { reference: s.reference } : {}) })),
          config: options.ppo,
          grad
        })
        : PolicyGradient.ppoBatch({ params, steps: chosen, config: options.ppo, grad })
      for (const r of results) {
        // the statistics of the last epoch describe the update that was made
        if (epoch === options.ppo.epochs - 1) {
          kl += r.kl
          // per factor under per-action credit: the share of factors on the clipped branch
          if (r.factors !== undefined && r.clippedFactors !== undefined) {
            clipped += r.clippedFactors
            clipBase += r.factors
          } else {
            clipped += r.clipped ? 1 : 0
            clipBase++
          }
          entropy += r.entropy
          loss += r.loss
          counted++
        }
      }
      gradNorm = PolicyGradient.clipGradNorm(grad, options.ppo.maxGradNorm)
      PolicyGradient.adamStep(params.data, grad, adam, options.adam)
    }
  }
  return { params, kl: kl / counted, clipFraction: clipBase === 0 ? 0 : clipped / clipBase, entropy: entropy / counted, loss: loss / counted, gradNorm }
}
