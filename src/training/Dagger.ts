/**
 * On-policy distillation (DAgger) of the student-space oracle into the learned policy: roll out the student, label
 * every state it visited with the oracle's choice among the student's own candidates, aggregate the labels over
 * rounds (the teacher's projected demonstrations as the cold start), and clone the aggregate. Also the teacher-forced
 * exact-turn accuracy of a policy on labelled states.
 */
import { Effect, Ref } from "effect"
import type { Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import * as ActionSpace from "../agent/ActionSpace.ts"
import * as LearnedPolicy from "../agent/LearnedPolicy.ts"
import * as StudentOracle from "../agent/StudentOracle.ts"
import * as Mlp from "../math/Mlp.ts"
import * as PolicyGradient from "../math/PolicyGradient.ts"
import { hashParts, rng } from "../math/Random.ts"
import * as TurnDistribution from "../math/TurnDistribution.ts"
import * as Progress from "../io/Progress.ts"
import { Rollout } from "../runtime/Rollout.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { TrainerError, WeightsCell } from "./Trainer.ts"
import type { Demonstration } from "./Trainer.ts"

/** DAgger settings. */
export interface DaggerOptions {
  /** Rounds of roll-out → label → clone. */
  readonly rounds: number
  /** Training tasks the student is rolled out on per round (a seeded draw). */
  readonly tasksPerRound: number
  /** Passes over the aggregate per round, minibatch size, optimiser. */
  readonly epochs: number
  readonly minibatch: number
  readonly adam: PolicyGradient.AdamConfig
  readonly seed: number
  /** Which tools serve a gold call (the oracle's); default: the gold tool only. */
  readonly equivalent: StudentOracle.Equivalence
  readonly concurrency: number
  readonly progress: boolean
}

/** Defaults of the embedded pipeline. */
export const defaultDagger: DaggerOptions = {
  rounds: 3,
  tasksPerRound: 80,
  epochs: 4,
  minibatch: 64,
  adam: { lr: 3e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 },
  seed: 1,
  equivalent: StudentOracle.sameToolOnly,
  concurrency: 8,
  progress: false
}

/** One labelled state: the space's matrix and layout, and the oracle's choice in it. */
export interface Labelled extends PolicyGradient.RecordedStep {
  /** Where the label came from: the teacher's projected demonstration, or the oracle on a student state. */
  readonly source: "teacher" | "oracle"
}

/** What DAgger did, per round: the states labelled, the aggregate's size, the student's training Pass@1 proxy. */
export interface DaggerReport {
  readonly coldStart: number
  readonly rounds: ReadonlyArray<{ readonly round: number; readonly rollouts: number; readonly labelled: number; readonly aggregate: number; readonly lossLast: number; readonly answered: number }>
  readonly durationMs: number
}

/** Whether two choices are the same turn: the same kind, the same candidates, the same plan bit. */
export const sameChoice = (a: TurnDistribution.Choice, b: TurnDistribution.Choice): boolean =>
  a.kind === b.kind && a.plan === b.plan && a.selected.length === b.selected.length && a.selected.every((r, i) => r === b.selected[i])

/**
 * Teacher-forced exact-turn accuracy: the share of labelled states where the policy's most probable turn
 * (`TurnDistribution.greedy`) is the label — kind, every candidate and the plan bit.
 */
export const exactTurnAccuracy = (params: Mlp.Params, states: ReadonlyArray<PolicyGradient.RecordedStep>): number => {
  if (states.length === 0) return Number.NaN
  let hit = 0
  for (const s of states) {
    const logits = Mlp.logits(params, s.x, s.layout.rows)
    if (sameChoice(TurnDistribution.greedy(s.layout, logits), s.choice)) hit++
  }
  return hit / states.length
}

/** The teacher's demonstration steps that project onto the space whole (the cold start: what the student can copy exactly). */
export const projectedDemonstrations = (
  demonstrations: ReadonlyArray<Demonstration>,
  maxRounds: number,
  lookup: (name: string) => ReturnType<ToolLibrary["Service"]["get"]>
): ReadonlyArray<Labelled> =>
  demonstrations.flatMap((demo) =>
    demo.trajectory.steps.flatMap((step, index): Array<Labelled> => {
      if (step.turn === undefined) return []
      const space = LearnedPolicy.spaceOf(LearnedPolicy.contextAt(demo.trajectory, index, demo.task.request, maxRounds, lookup))
      const projection = ActionSpace.project(space, step.turn)
      return projection.choice === undefined || projection.dropped.length > 0 ? [] : [{ x: space.features, layout: space.layout, choice: projection.choice, source: "teacher" }]
    })
  )

/**
 * The oracle's labels of every state of a student's trajectories: each step's context rebuilt, the oracle's choice
 * among that space's candidates (the only label source besides the cold start).
 */
export const labelTrajectories = (trajectories: ReadonlyArray<Trajectory>, tasks: ReadonlyMap<string, Task>, maxRounds: number, equivalent: StudentOracle.Equivalence) =>
  Effect.gen(function*() {
    const library = yield* ToolLibrary
    const world: StudentOracle.OracleWorld = { lookup: (name) => library.get(name), equivalent }
    const out: Array<Labelled> = []
    for (const trajectory of trajectories) {
      const task = tasks.get(trajectory.taskId)
      if (task === undefined) continue
      for (let index = 0; index < trajectory.steps.length; index++) {
        const context = LearnedPolicy.contextAt(trajectory, index, task.request, maxRounds, world.lookup)
        const labelled = yield* StudentOracle.label(context, task, world)
        out.push({ x: labelled.space.features, layout: labelled.space.layout, choice: labelled.choice, source: "oracle" })
      }
    }
    return out
  })

/** Behaviour cloning over a dataset for some epochs from the given parameters (seeded minibatches); the last epoch's mean NLL. */
export const clone = (start: Mlp.Params, data: ReadonlyArray<PolicyGradient.RecordedStep>, options: Pick<DaggerOptions, "epochs" | "minibatch" | "adam">, seed: number): { readonly params: Mlp.Params; readonly loss: number } => {
  const params: Mlp.Params = { shape: start.shape, data: Float64Array.from(start.data) }
  const adam = PolicyGradient.adamInit(params.data.length)
  let loss = 0
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    const order = rng(hashParts(seed, "dagger-clone", epoch)).shuffle(Array.from({ length: data.length }, (_, i) => i))
    let total = 0
    for (let at = 0; at < order.length; at += options.minibatch) {
      const grad = new Float64Array(params.data.length)
      for (const l of PolicyGradient.sftBatch({ params, steps: order.slice(at, at + options.minibatch).map((i) => data[i] as PolicyGradient.RecordedStep), grad })) total += l
      PolicyGradient.clipGradNorm(grad, 1.0)
      PolicyGradient.adamStep(params.data, grad, adam, options.adam)
    }
    loss = total / Math.max(1, data.length)
  }
  return { params, loss }
}

/**
 * DAgger from the weights in the cell: the cold start (the teacher's demonstrations that project whole) is the first
 * aggregate; each round rolls the current student out on a seeded draw of training tasks (ParaAct, the rollout
 * service's policy reads the cell), labels every visited state with the oracle, adds the labels, and clones the
 * aggregate from the current weights. The cell holds the result.
 */
export const run = Effect.fn("Dagger.run")(function*(
  tasks: ReadonlyArray<Task>,
  demonstrations: ReadonlyArray<Demonstration>,
  given: Partial<DaggerOptions> = {}
) {
  const options = { ...defaultDagger, ...given }
  const started = Date.now()
  const rollout = yield* Rollout
  const library = yield* ToolLibrary
  const cell = yield* WeightsCell
  if (tasks.length === 0) return yield* new TrainerError({ stage: "dagger", message: "no training tasks" })
  const maxRounds = rollout.config.maxRounds
  const byId = new Map(tasks.map((t) => [t.id as string, t]))
  const aggregate: Array<Labelled> = [...projectedDemonstrations(demonstrations, maxRounds, (name) => library.get(name))]
  const coldStart = aggregate.length
  const rounds: Array<DaggerReport["rounds"][number]> = []
  const progress = Progress.make("dagger rounds", options.rounds, options.progress)
  for (let round = 0; round < options.rounds; round++) {
    const order = rng(hashParts(options.seed, "dagger-tasks", round)).shuffle(Array.from({ length: tasks.length }, (_, i) => i))
    const drawn = order.slice(0, Math.min(options.tasksPerRound, tasks.length)).map((i) => tasks[i] as Task)
    const trajectories = yield* rollout.runAll(
      drawn.map((task) => ({ task, options: { paradigm: "ParaAct" as const, seed: hashParts(options.seed, "dagger-rollout", round, task.id) & 0x3fffffff } })),
      { concurrency: options.concurrency }
    )
    const labels = yield* labelTrajectories(trajectories, byId, maxRounds, options.equivalent).pipe(
      Effect.mapError((e) => new TrainerError({ stage: "dagger", message: e.message }))
    )
    aggregate.push(...labels)
    const current = yield* Ref.get(cell)
    const cloned = clone(current.params, aggregate, options, hashParts(options.seed, round))
    yield* Ref.set(cell, { params: cloned.params, version: current.version + 1 })
    rounds.push({
      round,
      rollouts: trajectories.length,
      labelled: labels.length,
      aggregate: aggregate.length,
      lossLast: cloned.loss,
      answered: trajectories.filter((t) => t.answer !== undefined).length
    })
    yield* progress.tick(1)
  }
  yield* progress.done
  const report: DaggerReport = { coldStart, rounds, durationMs: Date.now() - started }
  return report
})
