/**
 * The paper's pipeline behind `npm start`: teacher demonstrations on training tasks → judge filter → SFT → RL from
 * the same SFT checkpoint with `grpo` and with `paraagent` → evaluation on held-out tasks of Backbone / +SFT /
 * +SFT & RL (GRPO) / +SFT & RL (ours) over several seeds, and the trained policy under each paradigm. Every stage
 * lands in the run store as it finishes, so `--resume` continues after a crash without redoing finished work.
 */
import { Effect, Layer, Option, Ref, Schema } from "effect"
import type { Json } from "../domain/Json.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import type { Level, Task } from "../domain/Task.ts"
import type { Paradigm, Trajectory } from "../domain/Trajectory.ts"
import * as LearnedPolicy from "../agent/LearnedPolicy.ts"
import { Policy } from "../agent/Policy.ts"
import * as StudentOracle from "../agent/StudentOracle.ts"
import * as Teacher from "../agent/Teacher.ts"
import * as Evaluation from "../math/Evaluation.ts"
import type * as PolicyGradient from "../math/PolicyGradient.ts"
import { hashParts } from "../math/Random.ts"
import * as Reward from "../math/Reward.ts"
import * as Stats from "../math/Stats.ts"
import { mean, std } from "../math/Stats.ts"
import * as Progress from "../io/Progress.ts"
import type * as Report from "../eval/Report.ts"
import type * as TrajectoryBrowser from "../eval/TrajectoryBrowser.ts"
import * as Scoring from "../eval/Scoring.ts"
import { Judge } from "../judge/Judge.ts"
import { Retriever } from "../retrieval/Retriever.ts"
import * as Rollout from "../runtime/Rollout.ts"
import { Simulator } from "../toolenv/Simulator.ts"
import { TaskSource } from "../toolenv/TaskSource.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { GeneratedWorld } from "../toolenv/world/World.ts"
import * as Dagger from "./Dagger.ts"
import { RunStore } from "./RunStore.ts"
import type { RunStoreError } from "./RunStore.ts"
import * as Trainer from "./Trainer.ts"

/** The pipeline's settings (what `config.json` and the run store record). */
export interface PipelineOptions {
  /** Training seeds: each gives its own Backbone initialisation, SFT, and two RL runs. */
  readonly seeds: ReadonlyArray<number>
  /** Seed of the task draws (training pool and held-out test tasks). */
  readonly taskSeed: number
  /** Training tasks the teacher demonstrates (and RL draws from). */
  readonly trainTasks: number
  /** Held-out test tasks per level. */
  readonly testTasksPerLevel: number
  readonly levels: ReadonlyArray<Level>
  readonly paradigms: ReadonlyArray<Paradigm>
  readonly teacherMistakeRate: number
  /**
   * How the teacher phrases a slot's first search (`TeacherOptions.firstQuery`): `request` (the default) from the
   * request's clause, which the learned policy's action space can express; `documentation` from the planned tool's
   * description (what runs stored before this option used).
   */
  readonly teacherFirstQuery: "documentation" | "request"
  readonly sftEpochs: number
  /**
   * DAgger rounds after SFT on the teacher (`Dagger.run`: the student rolled out, its states labelled by the
   * student-space oracle, the aggregate cloned); 0 keeps SFT on the teacher's demonstrations only.
   */
  readonly daggerRounds: number
  readonly rlIterations: number
  readonly rlTasksPerIteration: number
  readonly group: number
  readonly estimators: ReadonlyArray<string>
  /** RL's dynamic sampling (Trainer.DynamicSampling) and where its advantage applies (Trainer.CreditMode). */
  readonly dynamicSampling: Trainer.DynamicSampling
  readonly credit: Trainer.CreditMode
  /**
   * Held-out evaluation: greedy rollouts per task (each its own environment seed: the faults differ), the table's
   * numbers; and sampled rollouts per task of the four ablation rows, reported beside them.
   */
  readonly evalRollouts: number
  readonly evalSampled: number
  readonly concurrency: number
  readonly progress: boolean
}

/** Defaults of `npm start` (sized for ≤ 10 minutes on 2 cores). */
export const defaults: PipelineOptions = {
  seeds: [1, 2, 3],
  taskSeed: 1,
  trainTasks: 240,
  testTasksPerLevel: 50,
  levels: ["I1", "I2", "I3"],
  paradigms: ["ParaAct", "ReAct", "ExploreThenExecute", "DFSDT"],
  teacherMistakeRate: 0.1,
  teacherFirstQuery: "request",
  sftEpochs: 10,
  daggerRounds: 3,
  rlIterations: 8,
  rlTasksPerIteration: 16,
  group: 4,
  // ours: the decoupled advantages with phases pooled by kind and per-action credit (docs/reward.md §7, §11)
  estimators: ["grpo", "paraagent_credit"],
  dynamicSampling: Trainer.defaultRl.dynamicSampling,
  credit: Trainer.defaultRl.credit,
  evalRollouts: 2,
  evalSampled: 1,
  concurrency: 8,
  progress: true
}

/** The four rows of the ablation. */
export const models = ["Backbone", "SFT", "GRPO", "Ours"] as const
/** A row of the ablation. */
export type Model = typeof models[number]

/** The rows' labels as the paper prints them. */
export const modelLabels: Readonly<Record<Model, string>> = {
  Backbone: "Backbone",
  SFT: "+SFT",
  GRPO: "+SFT & RL (GRPO)",
  Ours: "+SFT & RL (ours)"
}

/** The ceiling's row label in the tables (the student-space oracle: privileged, not a learned model). */
export const ceilingLabel = "Ceiling (student-space oracle, privileged)"

/** One evaluation cell's metrics (per level or the average). */
export interface CellMetrics {
  readonly pass1: number
  readonly path: number
  /** Path counting an equivalent provider (same operation, same entity type) as reaching the gold tool. */
  readonly pathEquivalent: number
  readonly rounds: number
  readonly calls: number
  readonly searches: number
  /** Actions decided per task: searches + calls (refused ones included) + the answer. */
  readonly decisions: number
}

/** A metric's mean and sample standard deviation over seeds. */
export interface MeanSd {
  readonly mean: number
  readonly sd: number
}

/** Level ("I1".."I3", "Avg") → metric → mean ± sd over seeds. */
export type LevelTable = Readonly<Record<string, Readonly<Record<keyof CellMetrics, MeanSd>>>>

/** The pairs of rows whose paired Pass@1 difference `summary.json` reports, as `A-B` (A minus B). */
export const pairs = [["SFT", "Backbone"], ["GRPO", "SFT"], ["Ours", "GRPO"], ["Ours", "SFT"]] as const satisfies ReadonlyArray<readonly [Model, Model]>

/** A paired difference in points of Pass@1: its mean and bootstrap 95% interval. */
export interface PairedDifference {
  readonly mean: number
  readonly lo: number
  readonly hi: number
}

/** `summary.json`. */
export interface Summary {
  /** Greedy decoding, `evalRollouts` rollouts per held-out task. */
  readonly ablation: Readonly<Record<Model, LevelTable>>
  /**
   * The student-space oracle (`StudentOracle`: privileged, choosing among the learned policy's own candidates with
   * the gold task) on the same held-out tasks and rollout seeds: the action space's ceiling. Never a learned model.
   */
  readonly ceiling?: LevelTable
  readonly paradigms: Readonly<Record<string, LevelTable>>
  /** The ablation rows' Pass@1 under sampled decoding (temperature 1), `evalSampled` rollouts per task. */
  readonly sampled: Readonly<Record<Model, Readonly<Record<string, { readonly pass1: MeanSd }>>>>
  /**
   * Paired differences over the same held-out tasks, in points of Pass@1 (greedy): per pair `A-B` the mean of A − B
   * over every (seed, task) and its bootstrap 95% interval (seeds and tasks resampled; Stats.pairedBootstrap).
   */
  readonly paired: Readonly<Record<string, PairedDifference>>
  /** The same per level. */
  readonly pairedLevels: Readonly<Record<string, Readonly<Record<string, PairedDifference>>>>
  readonly training: {
    readonly demonstrations: number
    readonly kept: number
    readonly sft: ReadonlyArray<Trainer.SftReport>
    readonly rl: ReadonlyArray<{ readonly seed: number; readonly estimator: string; readonly metrics: ReadonlyArray<Trainer.IterationMetrics> }>
  }
  readonly run: {
    readonly seeds: ReadonlyArray<number>
    readonly testTasks: number
    readonly trainTasks: number
    readonly library: string
    readonly evalRollouts: number
    readonly evalSampled: number
  }
}

/** A stage failed in a way the run cannot go on from. */
export class PipelineError extends Schema.TaggedError<PipelineError>()("PipelineError", {
  stage: Schema.String,
  message: Schema.String
}) {}

/** What the pipeline returns: the summary, the report's input, and the final weights of the first seed's `Ours`. */
export interface PipelineResult {
  readonly summary: Summary
  readonly report: Omit<Report.ReportInput, "title" | "command">
  readonly shipped: LearnedPolicy.Weights
  readonly demonstrations: ReadonlyArray<Trainer.Demonstration>
  readonly experience: ReadonlyArray<Trajectory>
  readonly testTasks: ReadonlyArray<Task>
  /** The library's look-up, for exports. */
  readonly lookup: (name: string) => ToolSpec | undefined
}

const estimatorModel = (estimator: string): Model => (estimator === "grpo" ? "GRPO" : "Ours")

/** The estimator of the "Ours" row: the last one that is not `grpo`. */
export const oursEstimator = (options: Pick<PipelineOptions, "estimators">): string | undefined =>
  [...options.estimators].reverse().find((e) => e !== "grpo")

/** Actions a trajectory decided: searches + calls (refused ones included) + the answer. */
const decisionsOf = (t: Trajectory): number =>
  t.steps.reduce((n, s) => n + (s.turn === undefined ? 0 : s.turn.searches.length + s.turn.calls.length + (s.turn.answer !== undefined ? 1 : 0)), 0)

/** The metrics of one evaluation: per task the mean over its rollouts, then the mean over tasks. */
const cellOf = (tasks: ReadonlyArray<Task>, groups: ReadonlyArray<ReadonlyArray<Trajectory>>, equivalent: Evaluation.OutcomeOptions["equivalent"]): CellMetrics => {
  const outcomes = groups.map((g, i) => g.map((t) => Evaluation.outcomeOf(tasks[i] as Task, t, equivalent === undefined ? {} : { equivalent })))
  const cell = Evaluation.aggregate(outcomes)
  return {
    pass1: cell.pass1,
    path: cell.path,
    pathEquivalent: cell.pathEquivalent,
    rounds: cell.rounds,
    calls: cell.calls,
    searches: cell.searches,
    decisions: mean(groups.map((g) => mean(g.map(decisionsOf))))
  }
}

const metricKeys: ReadonlyArray<keyof CellMetrics> = ["pass1", "path", "pathEquivalent", "rounds", "calls", "searches", "decisions"]

/** Mean ± sd over seeds of per-seed level cells (the average column is the unweighted mean of the levels). */
export const overSeeds = (perSeed: ReadonlyArray<Readonly<Record<string, CellMetrics>>>, levels: ReadonlyArray<string>): LevelTable => {
  const out: Record<string, Record<keyof CellMetrics, MeanSd>> = {}
  const withAvg = perSeed.map((cells) => {
    const avg = Object.fromEntries(metricKeys.map((k) => [k, mean(levels.map((l) => (cells[l] as CellMetrics)[k]))])) as unknown as CellMetrics
    const all: Record<string, CellMetrics> = { ...cells, Avg: avg }
    return all
  })
  for (const level of [...levels, "Avg"]) {
    const row = {} as Record<keyof CellMetrics, MeanSd>
    for (const k of metricKeys) {
      const xs = withAvg.map((c) => (c[level] as CellMetrics)[k])
      row[k] = { mean: mean(xs), sd: xs.length > 1 ? std(xs) * Math.sqrt(xs.length / (xs.length - 1)) : 0 }
    }
    out[level] = row
  }
  return out
}

/** A paired difference as `+2.3 [−0.4, +5.1]` (points). */
export const formatPaired = (d: PairedDifference): string => {
  const f = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(1)}` : "–")
  return `${f(d.mean)} [${f(d.lo)}, ${f(d.hi)}]`
}

/** Renders the ablation (Table 2 shape) as markdown: one row per model and level; then Table 1 and the paired differences. */
export const renderAblation = (summary: Summary): string => {
  const head = "| Model | Level | Pass@1 | Pass@1 sampled | Path | Path≈ | Rounds | Calls | Searches | Decisions |\n|---|---|---|---|---|---|---|---|---|---|"
  const fmt = (m: MeanSd | undefined, pct: boolean) =>
    m === undefined ? "–" : pct ? `${(100 * m.mean).toFixed(1)} ± ${(100 * m.sd).toFixed(1)}` : `${m.mean.toFixed(2)} ± ${m.sd.toFixed(2)}`
  const line = (label: string, level: string, m: Readonly<Record<keyof CellMetrics, MeanSd>>, sampled: MeanSd | undefined) =>
    `| ${label} | ${level} | ${fmt(m.pass1, true)} | ${fmt(sampled, true)} | ${fmt(m.path, true)} | ${fmt(m.pathEquivalent, true)} | ${fmt(m.rounds, false)} | ${fmt(m.calls, false)} | ${fmt(m.searches, false)} | ${fmt(m.decisions, false)} |`
  const rows: Array<string> = []
  for (const model of models) {
    for (const [level, m] of Object.entries(summary.ablation[model])) rows.push(line(modelLabels[model], level, m, summary.sampled[model]?.[level]?.pass1))
  }
  if (summary.ceiling !== undefined) {
    for (const [level, m] of Object.entries(summary.ceiling)) rows.push(line(ceilingLabel, level, m, undefined))
  }
  const paradigmRows: Array<string> = []
  for (const [paradigm, levels] of Object.entries(summary.paradigms)) {
    for (const level of ["I2", "I3", "Avg"]) {
      const m = levels[level]
      if (m !== undefined) paradigmRows.push(line(paradigm, level, m, undefined))
    }
  }
  const levels = Object.keys(summary.pairedLevels)
  return [
    `Table 2 (ablation), held-out test tasks, greedy decoding (${summary.run.evalRollouts} rollouts per task; sampled: ${summary.run.evalSampled}), mean ± sd over seeds ${summary.run.seeds.join(", ")}:`,
    head,
    ...rows,
    "",
    "Table 1 (paradigms), the trained policy (+SFT & RL, ours), greedy:",
    head.replace("Model", "Paradigm"),
    ...paradigmRows,
    "",
    "Paired differences in points of Pass@1 (greedy, the same held-out tasks; mean [bootstrap 95% CI], seeds and tasks resampled):",
    `| Pair | All | ${levels.join(" | ")} |`,
    `|---|---|${levels.map(() => "---|").join("")}`,
    ...pairs.map(([a, b]) => {
      const key = `${a}-${b}`
      return `| ${key} | ${formatPaired(summary.paired[key] as PairedDifference)} | ${levels.map((l) => formatPaired(summary.pairedLevels[l]?.[key] as PairedDifference)).join(" | ")} |`
    })
  ].join("\n")
}

const toJson = (value: unknown): Json => JSON.parse(JSON.stringify(value)) as Json

const weightsState = (w: LearnedPolicy.Weights): Json => ({ version: w.version, shape: { input: w.params.shape.input, hidden: [...w.params.shape.hidden] } })

/** What one seed's training and evaluation produced (structured-clonable: it crosses a worker boundary). */
export interface SeedResult {
  readonly seed: number
  readonly sft: Trainer.SftReport
  readonly rl: ReadonlyArray<{ readonly estimator: string; readonly metrics: ReadonlyArray<Trainer.IterationMetrics> }>
  /** Evaluation cells by row key (`Backbone`, `SFT`, `GRPO`, `Ours`, `paradigm:<name>`, `sampled:<model>`) and level. */
  readonly cells: Readonly<Record<string, Readonly<Record<string, CellMetrics>>>>
  /** Per ablation row, each held-out task's greedy success rate over its rollouts (test-task order): the paired comparison's input. */
  readonly successes: Readonly<Record<string, ReadonlyArray<number>>>
  readonly stages: ReadonlyArray<Report.Stage>
  /** The final `Ours` weights. */
  readonly ours: { readonly data: Float64Array; readonly version: number }
  readonly timeline?: Trajectory
  /** The last RL iteration's scored rollouts (for the experience export). */
  readonly experience: ReadonlyArray<Trajectory>
}

/** Runs one seed's stages; the pipeline calls it in-process, or a worker per seed (see layers/PipelineWorkers.ts). */
export type SeedRunner = (seed: number) => Effect.Effect<SeedResult, PipelineError>

/** The shared context of a run: the services, task draws, and the stage helpers over the run store. */
const prepare = (runId: string, options: PipelineOptions) =>
  Effect.gen(function*() {
    const store = yield* RunStore
    const source = yield* TaskSource
    const library = yield* ToolLibrary
    const judge = yield* Judge
    const retriever = yield* Retriever
    const simulator = yield* Simulator
    const base = Layer.mergeAll(
      Layer.succeed(ToolLibrary, library),
      Layer.succeed(Judge, judge),
      Layer.succeed(Retriever, retriever),
      Layer.succeed(Simulator, simulator)
    )
    const trainTasks = yield* source.sample({ split: "train", count: options.trainTasks, levels: options.levels, seed: options.taskSeed })
    const testTasks = yield* source.sample({ split: "test", count: options.testTasksPerLevel * options.levels.length, levels: options.levels, seed: options.taskSeed })
    const maxRounds = Rollout.defaultConfig.maxRounds

    /**
     * `size` rollouts of each of many tasks (environment seeds seedOf(task), +1, …), each task's group stored as it
     * finishes; a stored group is read back instead of re-run.
     */
    const rolloutStage = (
      stage: string,
      rollout: Rollout.RolloutService,
      tasks: ReadonlyArray<Task>,
      paradigm: Paradigm,
      seedOf: (task: Task) => number,
      label: string,
      size = 1,
      progress$: boolean = options.progress
    ) =>
      Effect.gen(function*() {
        const byKey = yield* storedGroups(store, runId, stage)
        const progress = Progress.make(label, tasks.length, progress$)
        const out = yield* Effect.forEach(tasks, (task) =>
          Effect.gen(function*() {
            const known = byKey.get(task.id)
            if (known !== undefined && known.length === size) {
              yield* progress.tick(1)
              return known
            }
            const trajectories = yield* rollout.runGroup(task, { paradigm, seed: seedOf(task), size })
            const scored = yield* Scoring.scoreGroup(task, trajectories, { reward: Reward.defaultRewardConfig, estimator: "grpo" }).pipe(Effect.provide(base))
            yield* store.putTrajectories(runId, stage, task.id, 0, scored)
            yield* progress.tick(1)
            return scored
          }), { concurrency: options.concurrency })
        yield* progress.done
        return out
      })

    // the oracle's equivalent providers: the generated world's operations when the world is there
    const world = yield* Effect.serviceOption(GeneratedWorld)
    const oracleEquivalent = Option.isSome(world) ? StudentOracle.worldEquivalence(world.value.ops) : StudentOracle.sameToolOnly
    const oracleRollout = Rollout.make({ maxRounds }).pipe(Effect.provide(Layer.merge(base, StudentOracle.layer(oracleEquivalent).pipe(Layer.provide(base)))))

    const learnedRollout = (cell: Ref.Ref<LearnedPolicy.Weights>, decoding: "sample" | "greedy" = "sample") =>
      Rollout.make({ maxRounds }).pipe(Effect.provide(Layer.merge(base, Layer.succeed(Policy, LearnedPolicy.make(cell, { decoding, answerThreshold: LearnedPolicy.evalAnswerThreshold })))))

    /** The teacher's judged demonstrations on the training tasks (stage `demonstrations`); a bar when `progress`. */
    const demonstrations = (progress: boolean) => Effect.gen(function*() {
      const teacher = yield* Rollout.make({ maxRounds }).pipe(
        Effect.provide(Layer.merge(base, Teacher.layer({ mistakeRate: options.teacherMistakeRate, firstQuery: options.teacherFirstQuery }).pipe(Layer.provide(base)))),
        Effect.mapError((e) => new PipelineError({ stage: "demonstrations", message: e.message }))
      )
      const groups = yield* rolloutStage("demonstrations", teacher, trainTasks, "ParaAct", (t) => hashParts(options.taskSeed, "demo", t.id) & 0x3fffffff, "teacher demonstrations", 1, progress).pipe(
        Effect.mapError((e) => new PipelineError({ stage: "demonstrations", message: e.message }))
      )
      return groups.map((group, i): Trainer.Demonstration => ({ task: trainTasks[i] as Task, trajectory: group[0] as Trajectory }))
    })

    // the same equivalence by tool name, for Path≈ and the reward's coverage
    const equivalent = yield* Scoring.equivalence
    return { store, library, base, trainTasks, testTasks, rolloutStage, learnedRollout, oracleRollout, oracleEquivalent, demonstrations, equivalent }
  })

/**
 * One seed: SFT from the seeded Backbone, RL from that SFT checkpoint with each estimator (same tasks, same rollout
 * seeds), and the held-out evaluation of the four rows and of the trained policy under each paradigm.
 */
export const runSeed = Effect.fn("Pipeline.runSeed")(function*(runId: string, options: PipelineOptions, seed: number, plan?: PlanTracker) {
  const { store, base, trainTasks, testTasks, rolloutStage, learnedRollout, oracleRollout, oracleEquivalent, demonstrations: demonstrate, equivalent } = yield* prepare(runId, options)
  const fail = (stage: string) => (e: RunStoreError | Trainer.TrainerError | Scoring.ScoringError | PipelineError) => new PipelineError({ stage, message: e.message })
  // the demonstrations were made (or read back) by `run` before the seeds: here they are only read back, with no bar
  const demonstrations = yield* demonstrate(false)
  const track = plan ?? noPlan
  const stages: Array<Report.Stage> = []
  const cells: Record<string, Record<string, CellMetrics>> = {}

  /** Held-out evaluation: `size` rollouts per test task with the given decoding (the same environment seeds for every model). */
  const evaluate = (stage: string, weights: LearnedPolicy.Weights, paradigm: Paradigm, decoding: "sample" | "greedy", size: number) =>
    Effect.gen(function*() {
      const cell = yield* Ref.make(weights)
      const r = yield* learnedRollout(cell, decoding)
      const restored = (yield* storedGroups(store, runId, stage)).size >= testTasks.length
      yield* track.start(stage, `${testTasks.length} held-out tasks, ${paradigm}, ${size} ${decoding === "greedy" ? "greedy" : "sampled"} rollouts each`)
      const groups = yield* rolloutStage(stage, r, testTasks, paradigm, (t) => hashParts(seed, "eval", t.id) & 0x3fffffff, stage, size)
      yield* track.finish(stage, restored)
      const byLevel: Record<string, CellMetrics> = {}
      for (const level of options.levels) {
        const idx = testTasks.flatMap((t, i) => (t.level === level ? [i] : []))
        byLevel[level] = cellOf(idx.map((i) => testTasks[i] as Task), idx.map((i) => groups[i] as ReadonlyArray<Trajectory>), equivalent)
      }
      const successes = groups.map((g, i) => mean(g.map((t) => (Evaluation.outcomeOf(testTasks[i] as Task, t).success ? 1 : 0))))
      return { cells: byLevel, groups, successes }
    })

  const backbone = LearnedPolicy.initial(seed)
  const cell = yield* Ref.make(backbone)
  const rollout = yield* learnedRollout(cell)
  const trainer = yield* Trainer.make.pipe(
    Effect.provide(Layer.mergeAll(base, Layer.succeed(Rollout.Rollout, rollout), Layer.succeed(Trainer.WeightsCell, cell)))
  )

  // --- SFT from the Backbone (a stored checkpoint is read back)
  const sftStage = `sft/seed${seed}`
  // the stage's finished mark decides: a checkpoint without it (a crash between the two writes) is redone —
  // SFT is deterministic, and the checkpoint row is replaced
  const storedSft = yield* store.latestCheckpoint(runId, sftStage).pipe(Effect.mapError(fail(sftStage)))
  const sftDone = yield* store.stageResult(runId, sftStage).pipe(Effect.mapError(fail(sftStage)))
  let sft: LearnedPolicy.Weights
  let sftReport: Trainer.SftReport
  yield* track.start(sftStage, `${options.sftEpochs} epochs over ${demonstrations.length} demonstrations`)
  if (storedSft !== undefined && sftDone !== undefined) {
    sft = { params: { shape: LearnedPolicy.shape, data: Float64Array.from(storedSft.params) }, version: (storedSft.state as { version: number }).version }
    sftReport = sftDone as unknown as Trainer.SftReport
  } else {
    sftReport = yield* trainer.sft(demonstrations, { epochs: options.sftEpochs, seed, progress: options.progress }).pipe(Effect.mapError(fail(sftStage)))
    sft = yield* Ref.get(cell)
    yield* store.putCheckpoint(runId, sftStage, 0, { params: sft.params.data, optimiser: [], state: weightsState(sft) }).pipe(Effect.mapError(fail(sftStage)))
    yield* store.markStage(runId, sftStage, toJson(sftReport)).pipe(Effect.mapError(fail(sftStage)))
  }
  yield* track.finish(sftStage, storedSft !== undefined && sftDone !== undefined)
  // --- DAgger from the SFT checkpoint: the student's states labelled by the student-space oracle (a stored one is read back)
  if (options.daggerRounds > 0) {
    const daggerStage = `dagger/seed${seed}`
    const stored = yield* store.latestCheckpoint(runId, daggerStage).pipe(Effect.mapError(fail(daggerStage)))
    const done = yield* store.stageResult(runId, daggerStage).pipe(Effect.mapError(fail(daggerStage)))
    yield* track.start(daggerStage, `${options.daggerRounds} rounds over ${trainTasks.length} training tasks`)
    if (stored !== undefined && done !== undefined) {
      sft = { params: { shape: LearnedPolicy.shape, data: Float64Array.from(stored.params) }, version: (stored.state as { version: number }).version }
    } else {
      yield* Ref.set(cell, sft)
      const t0 = Date.now()
      const report = yield* Dagger.run(trainTasks, demonstrations, { rounds: options.daggerRounds, seed, equivalent: oracleEquivalent, concurrency: options.concurrency, progress: options.progress }).pipe(
        Effect.provide(Layer.mergeAll(base, Layer.succeed(Rollout.Rollout, rollout), Layer.succeed(Trainer.WeightsCell, cell))),
        Effect.mapError(fail(daggerStage))
      )
      sft = yield* Ref.get(cell)
      yield* store.putCheckpoint(runId, daggerStage, 0, { params: sft.params.data, optimiser: [], state: weightsState(sft) }).pipe(Effect.mapError(fail(daggerStage)))
      yield* store.markStage(runId, daggerStage, toJson(report)).pipe(Effect.mapError(fail(daggerStage)))
      stages.push({
        name: `DAgger (seed ${seed})`,
        durationMs: Date.now() - t0,
        detail: `${report.rounds.length} rounds: ${report.rounds.map((r) => `${r.labelled} states labelled by the oracle`).join(", ")}; aggregate ${report.rounds.at(-1)?.aggregate ?? report.coldStart} (cold start ${report.coldStart} projected teacher steps)`
      })
    }
    yield* track.finish(daggerStage, stored !== undefined && done !== undefined)
  }
  stages.push({
    name: `SFT (seed ${seed})`,
    durationMs: sftReport.durationMs,
    detail: `${sftReport.steps} demonstration steps: ${sftReport.projectedWhole} projected whole, ${sftReport.projectedPartly} in part, ${sftReport.unprojected} not expressible; ${sftReport.droppedActions} of ${sftReport.totalActions} actions dropped; NLL ${sftReport.lossFirst.toFixed(2)} → ${sftReport.lossLast.toFixed(2)}`
  })

  // --- RL from the same SFT checkpoint, once per estimator
  const finals = new Map<string, LearnedPolicy.Weights>()
  const rl: Array<{ estimator: string; metrics: ReadonlyArray<Trainer.IterationMetrics> }> = []
  let experience: ReadonlyArray<Trajectory> = []
  for (const estimator of options.estimators) {
    const stage = `rl/${estimator}/seed${seed}`
    yield* Ref.set(cell, sft)
    const done = yield* store.stageResult(runId, stage).pipe(Effect.mapError(fail(stage)))
    const t0 = Date.now()
    yield* track.start(stage, `${options.rlIterations} iterations × ${options.rlTasksPerIteration} tasks × G=${options.group}`)
    const label = `${estimator} seed ${seed}`
    const report = yield* trainer.rl(trainTasks, {
      estimator,
      dynamicSampling: options.dynamicSampling,
      credit: options.credit,
      iterations: options.rlIterations,
      tasksPerIteration: options.rlTasksPerIteration,
      group: options.group,
      seed,
      concurrency: options.concurrency,
      progress: options.progress && done === undefined,
      label,
      checkpointer: checkpointerFor(store, runId, stage, options.progress ? announceIteration(`rl ${label}`, options.rlIterations) : undefined),
      reference: sft
    }).pipe(Effect.mapError(fail(stage)))
    if (done === undefined) yield* store.markStage(runId, stage, toJson({ iterations: report.metrics.length })).pipe(Effect.mapError(fail(stage)))
    yield* track.finish(stage, done !== undefined || report.resumedFrom !== undefined)
    finals.set(estimator, yield* Ref.get(cell))
    rl.push({ estimator, metrics: report.metrics })
    const groups = report.metrics.reduce((n, m) => n + m.groups, 0)
    const skipped = report.metrics.reduce((n, m) => n + m.groupsSkipped, 0)
    stages.push({
      name: `RL to ${modelLabels[estimatorModel(estimator)]}, estimator ${estimator} (seed ${seed})`,
      durationMs: Date.now() - t0,
      detail: `${report.metrics.length} iterations × ${options.rlTasksPerIteration} tasks × G=${options.group}; ${groups - skipped} of ${groups} groups trained, ${skipped} skipped (outcomes did not differ)${report.resumedFrom !== undefined ? `, resumed after iteration ${report.resumedFrom}` : ""}`
    })
    if (estimator === oursEstimator(options)) {
      experience = yield* store.trajectories(runId, stage, { iteration: Math.max(0, options.rlIterations - 1) }).pipe(Effect.mapError(fail(stage)))
    }
  }

  // --- held-out evaluation of the four rows, and the trained policy under each paradigm
  const rows: ReadonlyArray<readonly [Model, LearnedPolicy.Weights]> = [
    ["Backbone", backbone],
    ["SFT", sft],
    ...options.estimators.map((e) => [estimatorModel(e), finals.get(e) as LearnedPolicy.Weights] as const)
  ]
  let timeline: Trajectory | undefined
  const successes: Record<string, ReadonlyArray<number>> = {}
  for (const [model, weights] of rows) {
    const t0 = Date.now()
    const result = yield* evaluate(`eval/${model}/seed${seed}/ParaAct`, weights, "ParaAct", "greedy", options.evalRollouts).pipe(Effect.mapError(fail(`eval ${model}`)))
    cells[model] = result.cells
    successes[model] = result.successes
    if (options.evalSampled > 0) {
      const sampled = yield* evaluate(`eval/${model}/seed${seed}/ParaAct/sampled`, weights, "ParaAct", "sample", options.evalSampled).pipe(Effect.mapError(fail(`eval ${model} sampled`)))
      cells[`sampled:${model}`] = sampled.cells
    }
    stages.push({
      name: `evaluate ${modelLabels[model]} (seed ${seed})`,
      durationMs: Date.now() - t0,
      detail: `${testTasks.length} held-out tasks, ParaAct: ${options.evalRollouts} greedy rollouts each, ${options.evalSampled} sampled`
    })
    if (model === "Ours") {
      cells["paradigm:ParaAct"] = result.cells
      timeline = result.groups.flat().find((t) => t.steps.some((s) => s.observations.length >= 2))
    }
  }
  // --- the ceiling: the student-space oracle on the same tasks and rollout seeds (privileged; scores no learned model)
  {
    const t0 = Date.now()
    const oracle = yield* oracleRollout
    const stage = `eval/ceiling/seed${seed}/ParaAct`
    // read back on a resumed run: it then teaches the ETA nothing
    const restored = (yield* storedGroups(store, runId, stage).pipe(Effect.mapError(fail("eval ceiling")))).size >= testTasks.length
    yield* track.start(stage, `${testTasks.length} held-out tasks, the student-space oracle, ${options.evalRollouts} rollouts each`)
    const groups = yield* rolloutStage(stage, oracle, testTasks, "ParaAct", (t) => hashParts(seed, "eval", t.id) & 0x3fffffff, stage, options.evalRollouts).pipe(Effect.mapError(fail("eval ceiling")))
    const byLevel: Record<string, CellMetrics> = {}
    for (const level of options.levels) {
      const idx = testTasks.flatMap((t, i) => (t.level === level ? [i] : []))
      byLevel[level] = cellOf(idx.map((i) => testTasks[i] as Task), idx.map((i) => groups[i] as ReadonlyArray<Trajectory>), equivalent)
    }
    cells["ceiling"] = byLevel
    yield* track.finish(stage, restored)
    stages.push({ name: `evaluate the ceiling (seed ${seed})`, durationMs: Date.now() - t0, detail: `${testTasks.length} held-out tasks, ParaAct, the student-space oracle (privileged), ${options.evalRollouts} rollouts each` })
  }
  const ours = finals.get(oursEstimator(options) ?? "") ?? finals.get(options.estimators[options.estimators.length - 1] ?? "") ?? sft
  for (const paradigm of options.paradigms) {
    if (paradigm === "ParaAct") continue
    const t0 = Date.now()
    const result = yield* evaluate(`eval/Ours/seed${seed}/${paradigm}`, ours, paradigm, "greedy", options.evalRollouts).pipe(Effect.mapError(fail(`eval ${paradigm}`)))
    stages.push({ name: `evaluate ours under ${paradigm} (seed ${seed})`, durationMs: Date.now() - t0, detail: `${testTasks.length} held-out tasks, ${options.evalRollouts} greedy rollouts each` })
    cells[`paradigm:${paradigm}`] = result.cells
  }
  const result: SeedResult = {
    seed,
    sft: sftReport,
    rl,
    cells,
    successes,
    stages,
    ours: { data: ours.params.data, version: ours.version },
    ...(timeline !== undefined ? { timeline } : {}),
    experience
  }
  return result
})

/**
 * Runs the pipeline (or resumes it: every finished stage is read back from the store): the demonstrations, then
 * each seed in-process, or — given a worker `runner` — the first seed in-process and the others on workers,
 * `concurrency` seeds at once.
 */
export const run = Effect.fn("Pipeline.run")(function*(
  runId: string,
  options: PipelineOptions,
  seeds?: { readonly runner: SeedRunner; readonly concurrency: number }
) {
  const t0 = Date.now()
  const { library, testTasks, trainTasks, demonstrations: demonstrate, store } = yield* prepare(runId, options)
  const tracker = planTracker(options, seeds === undefined)
  const storedDemos = (yield* storedGroups(store, runId, "demonstrations").pipe(Effect.mapError((e) => new PipelineError({ stage: "demonstrations", message: e.message })))).size
  yield* tracker.start("demonstrations", `the multi-agent teacher on ${trainTasks.length} training tasks`)
  const demonstrations = yield* demonstrate(options.progress)
  yield* tracker.finish("demonstrations", storedDemos >= trainTasks.length)
  const kept = demonstrations.filter((d) => Trainer.keeps("pass", d.trajectory)).length
  const stages: Array<Report.Stage> = [
    { name: "teacher demonstrations", durationMs: Date.now() - t0, detail: `${demonstrations.length} rollouts of the multi-agent teacher on training tasks` },
    { name: "judge filter", durationMs: 0, detail: `kept ${kept} / dropped ${demonstrations.length - kept} (rule: Quality, Faithfulness and Utility YES, as Pass@1)` }
  ]
  const context = yield* Effect.context<RunStore | TaskSource | ToolLibrary | Judge | Retriever | Simulator>()
  const inProcess: SeedRunner = (seed) => runSeed(runId, options, seed, seeds === undefined ? tracker : undefined).pipe(Effect.provide(context))
  // the first seed runs on this thread, which holds a world already; the others on workers (a world each), whose
  // stages the plan counts a seed at a time
  const runner: SeedRunner = seeds === undefined
    ? inProcess
    : (seed) =>
      tracker.start(`seed ${seed}`, "SFT, RL, evaluation").pipe(
        Effect.andThen(seed === options.seeds[0] ? inProcess(seed) : seeds.runner(seed)),
        Effect.tap(() => tracker.finish(`seed ${seed}`, false))
      )
  const progress = Progress.make(`seeds (SFT, RL ×${options.estimators.length}, evaluation)`, options.seeds.length, options.progress && seeds !== undefined)
  const results = yield* Effect.forEach(options.seeds, (seed) => Effect.tap(runner(seed), () => progress.tick(1)), { concurrency: seeds?.concurrency ?? 1 })
  yield* progress.done

  const collect = (key: string) => results.map((r) => r.cells[key] as Record<string, CellMetrics>)
  const ablation = Object.fromEntries(models.map((m) => [m, overSeeds(collect(m), options.levels)])) as Record<Model, LevelTable>
  const paradigms = Object.fromEntries(options.paradigms.map((p) => [p, overSeeds(collect(`paradigm:${p}`), options.levels)]))
  const sampled = Object.fromEntries(models.map((m) => {
    const cells = collect(`sampled:${m}`)
    const table = cells.every((c) => c !== undefined) ? overSeeds(cells, options.levels) : {}
    return [m, Object.fromEntries(Object.entries(table).map(([level, row]) => [level, { pass1: row.pass1 }]))]
  })) as Record<Model, Record<string, { pass1: MeanSd }>>
  const paired = pairedDifferences(results, testTasks, options.levels)
  const ceiling = results.every((r) => r.cells["ceiling"] !== undefined) ? overSeeds(collect("ceiling"), options.levels) : undefined
  const summary: Summary = {
    ablation,
    ...(ceiling !== undefined ? { ceiling } : {}),
    paradigms,
    sampled,
    paired: paired.all,
    pairedLevels: paired.levels,
    training: {
      demonstrations: demonstrations.length,
      kept,
      sft: results.map((r) => r.sft),
      rl: results.flatMap((r) => r.rl.map((x) => ({ seed: r.seed, estimator: x.estimator, metrics: x.metrics })))
    },
    run: {
      seeds: options.seeds,
      testTasks: testTasks.length,
      trainTasks: trainTasks.length,
      library: library.label,
      evalRollouts: options.evalRollouts,
      evalSampled: options.evalSampled
    }
  }
  const first = results[0] as SeedResult
  const timeline = first.timeline
  const timelineTask = timeline === undefined ? undefined : testTasks.find((t) => t.id === timeline.taskId)
  const report: Omit<Report.ReportInput, "title" | "command"> = {
    seeds: options.seeds,
    curves: results.flatMap((r) => r.rl.map((x): Report.Curve => ({
      estimator: x.estimator,
      seed: r.seed,
      points: x.metrics.map((m) => ({ iteration: m.iteration, rAns: m.rAns, pass1: m.pass1, rounds: m.rounds, calls: m.calls, kl: m.kl, clipFraction: m.clipFraction, entropy: m.entropy }))
    }))),
    // the report's Table 2 shows the sampled Pass@1 beside the greedy one
    ablation: {
      ...Object.fromEntries(models.map((m) => [
        modelLabels[m],
        Object.fromEntries(Object.entries(ablation[m]).map(([level, row]) => [level, { ...row, ...(sampled[m][level] !== undefined ? { pass1Sampled: sampled[m][level].pass1 } : {}) }]))
      ])),
      ...(ceiling !== undefined ? { [ceilingLabel]: ceiling } : {})
    },
    modelNames: Object.fromEntries(options.estimators.map((e) => [e, modelLabels[estimatorModel(e)]])),
    paradigms,
    paired: {
      caption: "Points of Pass@1 (greedy) on the same held-out tasks: mean over seeds × tasks [bootstrap 95% CI, seeds and tasks resampled].",
      columns: ["All", ...options.levels],
      rows: pairs.map(([a, b]) => {
        const key = `${a}-${b}`
        return { pair: key, cells: { All: summary.paired[key] as PairedDifference, ...Object.fromEntries(options.levels.map((l) => [l, summary.pairedLevels[l]?.[key] as PairedDifference])) } }
      })
    },
    stages: [...stages, ...results.flatMap((r) => r.stages)],
    ...(timeline !== undefined && timelineTask !== undefined ? { timeline: { taskId: timelineTask.id, request: timelineTask.request, trajectory: timeline } } : {})
  }
  const result: PipelineResult = {
    summary,
    report,
    shipped: { params: { shape: LearnedPolicy.shape, data: Float64Array.from(first.ours.data) }, version: first.ours.version },
    demonstrations,
    experience: first.experience,
    testTasks,
    lookup: (name) => library.get(name)
  }
  return result
})

/**
 * The paired Pass@1 differences of {@link pairs} in points: per pair, A − B on every (seed, test task), each task's
 * success averaged over its greedy rollouts, with the bootstrap 95% interval over seeds and tasks (a fixed bootstrap
 * seed: the same run gives the same interval); over all tasks and per level.
 */
export const pairedDifferences = (
  results: ReadonlyArray<Pick<SeedResult, "successes">>,
  testTasks: ReadonlyArray<Pick<Task, "level">>,
  levels: ReadonlyArray<string>
): { readonly all: Record<string, PairedDifference>; readonly levels: Record<string, Record<string, PairedDifference>> } => {
  const diffs = (a: Model, b: Model, keep: (i: number) => boolean) =>
    results.map((r) => {
      const sa = r.successes[a] ?? []
      const sb = r.successes[b] ?? []
      return sa.flatMap((x, i) => (keep(i) ? [100 * (x - (sb[i] ?? NaN))] : []))
    })
  const interval = (d: ReadonlyArray<ReadonlyArray<number>>) => Stats.pairedBootstrap(d, { seed: 1 })
  const all = Object.fromEntries(pairs.map(([a, b]) => [`${a}-${b}`, interval(diffs(a, b, () => true))]))
  const byLevel = Object.fromEntries(levels.map((level) => [
    level,
    Object.fromEntries(pairs.map(([a, b]) => [`${a}-${b}`, interval(diffs(a, b, (i) => testTasks[i]?.level === level))]))
  ]))
  return { all, levels: byLevel }
}

/** A stage's stored groups (of one iteration, when given) by key: the store's trajectories cut at the group sizes. */
const storedGroups = (store: RunStore["Service"], runId: string, stage: string, iteration?: number) =>
  Effect.gen(function*() {
    const filter = iteration === undefined ? undefined : { iteration }
    const groups = yield* store.groups(runId, stage, filter)
    const stored = yield* store.trajectories(runId, stage, filter)
    const byKey = new Map<string, ReadonlyArray<Trajectory>>()
    let at = 0
    for (const g of groups) {
      byKey.set(g.key, stored.slice(at, at + g.size))
      at += g.size
    }
    return byKey as ReadonlyMap<string, ReadonlyArray<Trajectory>>
  })

/** RL's checkpointer over the run store: checkpoints with their metrics, and each finished group. */
const checkpointerFor = (
  store: RunStore["Service"],
  runId: string,
  stage: string,
  announce?: (metrics: Trainer.IterationMetrics) => Effect.Effect<void>
): Trainer.Checkpointer => {
  const wrap = (e: RunStoreError) => new Trainer.TrainerError({ stage, message: e.message })
  const cache = new Map<number, ReadonlyMap<string, ReadonlyArray<Trajectory>>>()
  return {
    latest: Effect.gen(function*() {
      const stored = yield* store.latestCheckpoint(runId, stage)
      if (stored === undefined) return undefined
      const state = stored.state as unknown as { version: number; t: number; metrics: ReadonlyArray<Trainer.IterationMetrics> }
      const adam: PolicyGradient.AdamState = { m: Float64Array.from(stored.optimiser[0] ?? []), v: Float64Array.from(stored.optimiser[1] ?? []), t: state.t }
      const checkpoint: Trainer.Checkpoint = {
        iteration: stored.iteration,
        weights: { params: { shape: LearnedPolicy.shape, data: Float64Array.from(stored.params) }, version: state.version },
        adam,
        metrics: state.metrics
      }
      return checkpoint
    }).pipe(Effect.mapError(wrap)),
    save: (checkpoint) =>
      Effect.gen(function*() {
          const last = checkpoint.metrics[checkpoint.metrics.length - 1]
        yield* store.putCheckpoint(
          runId,
          stage,
          checkpoint.iteration,
          {
            params: checkpoint.weights.params.data,
            optimiser: [checkpoint.adam.m, checkpoint.adam.v],
            state: toJson({ version: checkpoint.weights.version, t: checkpoint.adam.t, metrics: checkpoint.metrics })
          },
          last === undefined ? undefined : toJson(last)
        )
        if (announce !== undefined && last !== undefined) yield* announce(last)
      }).pipe(Effect.mapError(wrap)),
    group: (iteration, key) =>
      Effect.gen(function*() {
        let byKey = cache.get(iteration)
        if (byKey === undefined) {
          byKey = yield* storedGroups(store, runId, stage, iteration)
          cache.set(iteration, byKey)
        }
        return byKey.get(key)
      }).pipe(Effect.mapError(wrap)),
    putGroup: (iteration, key, trajectories) =>
      Effect.gen(function*() {
          yield* store.putTrajectories(runId, stage, key, iteration, trajectories)
      }).pipe(Effect.mapError(wrap))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Progress a person can plan by: the stages in order with an overall counter and an estimate of the time left, and a
// line of metrics per RL iteration (all on stderr)

/** The plan of a run, addressed by the run store's stage names (`demonstrations`, `sft/seed1`, `rl/grpo/seed1`, …). */
export interface PlanTracker {
  readonly start: (stage: string, detail?: string) => Effect.Effect<void>
  readonly finish: (stage: string, restored: boolean) => Effect.Effect<void>
}

const noPlan: PlanTracker = { start: () => Effect.void, finish: () => Effect.void }

/**
 * A unit's first-guess cost per kind of stage, relative to one evaluation rollout of the learned policy — measured on
 * a one-seed run of this pipeline (80 training tasks, 30 held-out tasks per level, 3 RL iterations of 8 tasks × G=4;
 * 2026-12-03, 2 cores): a teacher rollout costs ~1.5 of them, an RL rollout with its share of the update ~2.3, an SFT
 * epoch over one demonstration ~0.12; a DAgger round over one training task (the student's rollout, the oracle's labels
 * with their searches, and its share of the cloning) is guessed at ~3. Each kind's own measured rate replaces its guess once a stage of it has run.
 */
export const stageWeights = { demonstrations: 1.5, sft: 0.12, dagger: 3, rl: 2.3, eval: 1 } as const

/**
 * The stages of a run in the order they run — the demonstrations, then per seed SFT, RL per estimator, the four
 * evaluated rows and the other paradigms (`perSeed`), or one stage per seed when seeds run on workers — sized in units.
 */
export const plannedStages = (options: PipelineOptions, perSeed: boolean): ReadonlyArray<Progress.PlannedStage & { readonly key: string }> => {
  const testTasks = options.testTasksPerLevel * options.levels.length
  const seedStages = (seed: number) => [
    { key: `sft/seed${seed}`, name: `SFT, seed ${seed}`, kind: "sft", units: options.trainTasks * options.sftEpochs, weight: stageWeights.sft },
    ...(options.daggerRounds > 0
      ? [{ key: `dagger/seed${seed}`, name: `DAgger, seed ${seed}`, kind: "dagger", units: options.daggerRounds * options.trainTasks, weight: stageWeights.dagger }]
      : []),
    ...options.estimators.map((e) => ({
      key: `rl/${e}/seed${seed}`,
      name: `RL to ${modelLabels[estimatorModel(e)]} (estimator ${e}), seed ${seed}`,
      kind: "rl",
      units: options.rlIterations * options.rlTasksPerIteration * options.group,
      weight: stageWeights.rl
    })),
    // each evaluated row: its greedy rollouts, then its sampled ones (when any)
    ...[...new Set([...models.slice(0, 2), ...options.estimators.map(estimatorModel)])].flatMap((m) => [
      {
        key: `eval/${m}/seed${seed}/ParaAct`,
        name: `evaluate ${modelLabels[m]} (greedy), seed ${seed}`,
        kind: "eval",
        units: testTasks * options.evalRollouts,
        weight: stageWeights.eval
      },
      ...(options.evalSampled > 0
        ? [{
          key: `eval/${m}/seed${seed}/ParaAct/sampled`,
          name: `evaluate ${modelLabels[m]} (sampled), seed ${seed}`,
          kind: "eval",
          units: testTasks * options.evalSampled,
          weight: stageWeights.eval
        }]
        : [])
    ]),
    { key: `eval/ceiling/seed${seed}/ParaAct`, name: `evaluate the ceiling, seed ${seed}`, kind: "eval", units: testTasks * options.evalRollouts, weight: stageWeights.eval },
    ...options.paradigms.filter((p) => p !== "ParaAct").map((p) => ({
      key: `eval/Ours/seed${seed}/${p}`,
      name: `evaluate ours under ${p}, seed ${seed}`,
      kind: "eval",
      units: testTasks * options.evalRollouts,
      weight: stageWeights.eval
    }))
  ]
  const demonstrations = { key: "demonstrations", name: "teacher demonstrations", kind: "demonstrations", units: options.trainTasks, weight: stageWeights.demonstrations }
  return [
    demonstrations,
    ...options.seeds.flatMap((seed) => {
      const stages = seedStages(seed)
      if (perSeed) return stages
      const units = stages.reduce((n, s) => n + s.units * s.weight, 0)
      return [{ key: `seed ${seed}`, name: `seed ${seed} (SFT, RL, evaluation on a worker)`, kind: "seed", units, weight: 1 }]
    })
  ]
}

const planTracker = (options: PipelineOptions, perSeed: boolean): PlanTracker => {
  const stages = plannedStages(options, perSeed)
  const plan = Progress.plan(stages, options.progress)
  const index = (stage: string) => stages.findIndex((s) => s.key === stage)
  return {
    start: (stage, detail) => (index(stage) < 0 ? Effect.void : plan.start(index(stage), detail)),
    finish: (stage, restored) => (index(stage) < 0 ? Effect.void : plan.finish(index(stage), restored))
  }
}

/** A number for a metrics line: fixed decimals, "–" when not finite. */
const metric = (x: number | undefined, digits: number, scale = 1): string => (x === undefined || !Number.isFinite(x) ? "–" : (x * scale).toFixed(digits))

/** One stderr line per finished RL iteration: its training-split metrics as they land. */
const announceIteration = (label: string, iterations: number) => (m: Trainer.IterationMetrics): Effect.Effect<void> =>
  Effect.sync(() => {
    process.stderr.write(
      `${label} · iteration ${m.iteration + 1}/${iterations} · R_ans ${metric(m.rAns, 3)} · Pass@1 ${metric(m.pass1, 1, 100)}% · rounds ${metric(m.rounds, 2)}` +
        ` · calls ${metric(m.calls, 2)} · KL ${metric(m.kl, 4)} · clip ${metric(m.clipFraction, 1, 100)}% · entropy ${metric(m.entropy, 3)} (training split)\n`
    )
  })

/** The RL runs' per-iteration metrics as CSV (`rl-metrics.csv`): one row per seed, estimator and iteration. */
export const metricsCsv = (rl: Summary["training"]["rl"]): string => {
  const keys: Array<string> = []
  for (const run of rl) for (const m of run.metrics) for (const k of Object.keys(m)) if (!keys.includes(k) && typeof (m as unknown as Record<string, unknown>)[k] === "number") keys.push(k)
  const cell = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? String(v) : "")
  const rows = rl.flatMap((run) => run.metrics.map((m) => [String(run.seed), run.estimator, ...keys.map((k) => cell((m as unknown as Record<string, unknown>)[k]))].join(",")))
  return [["seed", "estimator", ...keys].join(","), ...rows].join("\n") + "\n"
}

/**
 * Visits every held-out trajectory of a run, read back from the run store (the `eval/<model>/seed<k>/<paradigm>`
 * stages), for the trajectory browser: the four rows under ParaAct (greedy, then sampled), then the trained policy
 * under the other paradigms, seed by seed — one stage's trajectories in memory at a time.
 */
export const eachHeldOut = <E, R>(
  runId: string,
  options: PipelineOptions,
  testTasks: ReadonlyArray<Task>,
  visit: (entry: TrajectoryBrowser.BrowserEntry) => Effect.Effect<void, E, R>
) =>
  Effect.gen(function*() {
    const store = yield* RunStore
    const byId = new Map(testTasks.map((t) => [t.id as string, t]))
    const rows = [...new Set([...models.slice(0, 2), ...options.estimators.map(estimatorModel)])]
    const stages = options.seeds.flatMap((seed) => [
      ...rows.flatMap((m) => [
        { stage: `eval/${m}/seed${seed}/ParaAct`, model: modelLabels[m], seed },
        ...(options.evalSampled > 0 ? [{ stage: `eval/${m}/seed${seed}/ParaAct/sampled`, model: `${modelLabels[m]}, sampled`, seed }] : [])
      ]),
      ...options.paradigms.filter((p) => p !== "ParaAct").map((p) => ({ stage: `eval/Ours/seed${seed}/${p}`, model: modelLabels.Ours, seed }))
    ])
    // one stage's trajectories in memory at a time
    for (const { stage, model, seed } of stages) {
      for (const trajectory of yield* store.trajectories(runId, stage)) {
        const task = byId.get(trajectory.taskId)
        yield* visit({ model, seed, level: task?.level ?? "?", request: task?.request ?? "", trajectory })
      }
    }
  })

/** Every held-out trajectory of the run at once, in {@link eachHeldOut}'s order (the browser of a small run, tests). */
export const heldOutEntries = (runId: string, options: PipelineOptions, testTasks: ReadonlyArray<Task>) =>
  Effect.gen(function*() {
    const entries: Array<TrajectoryBrowser.BrowserEntry> = []
    yield* eachHeldOut(runId, options, testTasks, (entry) => Effect.sync(() => void entries.push(entry)))
    return entries as ReadonlyArray<TrajectoryBrowser.BrowserEntry>
  })
