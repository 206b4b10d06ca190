/**
 * The paper's pipeline behind `npm start`: teacher demonstrations on training tasks → judge filter → SFT → RL from
 * the same SFT checkpoint with `grpo` and with `paraagent` → evaluation on held-out tasks of Backbone / +SFT /
 * +SFT & RL (GRPO) / +SFT & RL (ours) over several seeds, and the trained policy under each paradigm. Every stage
 * lands in the run store as it finishes, so `--resume` continues after a crash without redoing finished work.
 */
import { Effect, Layer, Ref, Schema } from "effect"
import type { Json } from "../domain/Json.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import type { Level, Task } from "../domain/Task.ts"
import type { Paradigm, Trajectory } from "../domain/Trajectory.ts"
import * as LearnedPolicy from "../agent/LearnedPolicy.ts"
import { Policy } from "../agent/Policy.ts"
import * as Teacher from "../agent/Teacher.ts"
import * as Evaluation from "../math/Evaluation.ts"
import type * as PolicyGradient from "../math/PolicyGradient.ts"
import { hashParts } from "../math/Random.ts"
import * as Reward from "../math/Reward.ts"
import * as Stats from "../math/Stats.ts"
import { mean, std } from "../math/Stats.ts"
import * as Progress from "../io/Progress.ts"
import type * as Report from "../eval/Report.ts"
import * as Scoring from "../eval/Scoring.ts"
import { Judge } from "../judge/Judge.ts"
import { Retriever } from "../retrieval/Retriever.ts"
import * as Rollout from "../runtime/Rollout.ts"
import { Simulator } from "../toolenv/Simulator.ts"
import { TaskSource } from "../toolenv/TaskSource.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
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
      size = 1
    ) =>
      Effect.gen(function*() {
        const byKey = yield* storedGroups(store, runId, stage)
        const progress = Progress.make(label, tasks.length, options.progress)
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

    const learnedRollout = (cell: Ref.Ref<LearnedPolicy.Weights>, decoding: "sample" | "greedy" = "sample") =>
      Rollout.make({ maxRounds }).pipe(Effect.provide(Layer.merge(base, Layer.succeed(Policy, LearnedPolicy.make(cell, { decoding })))))

    /** The teacher's judged demonstrations on the training tasks (stage `demonstrations`). */
    const demonstrations = Effect.gen(function*() {
      const teacher = yield* Rollout.make({ maxRounds }).pipe(
        Effect.provide(Layer.merge(base, Teacher.layer({ mistakeRate: options.teacherMistakeRate, firstQuery: options.teacherFirstQuery }).pipe(Layer.provide(base)))),
        Effect.mapError((e) => new PipelineError({ stage: "demonstrations", message: e.message }))
      )
      const groups = yield* rolloutStage("demonstrations", teacher, trainTasks, "ParaAct", (t) => hashParts(options.taskSeed, "demo", t.id) & 0x3fffffff, "teacher demonstrations").pipe(
        Effect.mapError((e) => new PipelineError({ stage: "demonstrations", message: e.message }))
      )
      return groups.map((group, i): Trainer.Demonstration => ({ task: trainTasks[i] as Task, trajectory: group[0] as Trajectory }))
    })

    const equivalent = yield* Scoring.equivalence
    return { store, library, base, trainTasks, testTasks, rolloutStage, learnedRollout, demonstrations, equivalent }
  })

/**
 * One seed: SFT from the seeded Backbone, RL from that SFT checkpoint with each estimator (same tasks, same rollout
 * seeds), and the held-out evaluation of the four rows and of the trained policy under each paradigm.
 */
export const runSeed = Effect.fn("Pipeline.runSeed")(function*(runId: string, options: PipelineOptions, seed: number) {
  const { store, base, trainTasks, testTasks, rolloutStage, learnedRollout, demonstrations: demonstrate, equivalent } = yield* prepare(runId, options)
  const fail = (stage: string) => (e: RunStoreError | Trainer.TrainerError | Scoring.ScoringError | PipelineError) => new PipelineError({ stage, message: e.message })
  const demonstrations = yield* demonstrate
  const stages: Array<Report.Stage> = []
  const cells: Record<string, Record<string, CellMetrics>> = {}

  /** Held-out evaluation: `size` rollouts per test task with the given decoding (the same environment seeds for every model). */
  const evaluate = (stage: string, weights: LearnedPolicy.Weights, paradigm: Paradigm, decoding: "sample" | "greedy", size: number) =>
    Effect.gen(function*() {
      const cell = yield* Ref.make(weights)
      const r = yield* learnedRollout(cell, decoding)
      const groups = yield* rolloutStage(stage, r, testTasks, paradigm, (t) => hashParts(seed, "eval", t.id) & 0x3fffffff, stage, size)
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
  if (storedSft !== undefined && sftDone !== undefined) {
    sft = { params: { shape: LearnedPolicy.shape, data: Float64Array.from(storedSft.params) }, version: (storedSft.state as { version: number }).version }
    sftReport = sftDone as unknown as Trainer.SftReport
  } else {
    sftReport = yield* trainer.sft(demonstrations, { epochs: options.sftEpochs, seed, progress: options.progress }).pipe(Effect.mapError(fail(sftStage)))
    sft = yield* Ref.get(cell)
    yield* store.putCheckpoint(runId, sftStage, 0, { params: sft.params.data, optimiser: [], state: weightsState(sft) }).pipe(Effect.mapError(fail(sftStage)))
    yield* store.markStage(runId, sftStage, toJson(sftReport)).pipe(Effect.mapError(fail(sftStage)))
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
      label: `${estimator} seed ${seed}`,
      checkpointer: checkpointerFor(store, runId, stage),
      reference: sft
    }).pipe(Effect.mapError(fail(stage)))
    if (done === undefined) yield* store.markStage(runId, stage, toJson({ iterations: report.metrics.length })).pipe(Effect.mapError(fail(stage)))
    finals.set(estimator, yield* Ref.get(cell))
    rl.push({ estimator, metrics: report.metrics })
    const groups = report.metrics.reduce((n, m) => n + m.groups, 0)
    const skipped = report.metrics.reduce((n, m) => n + m.groupsSkipped, 0)
    stages.push({
      name: `RL ${estimator} (seed ${seed})`,
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
  const { library, testTasks, trainTasks, demonstrations: demonstrate } = yield* prepare(runId, options)
  const demonstrations = yield* demonstrate
  const kept = demonstrations.filter((d) => Trainer.keeps("pass", d.trajectory)).length
  const stages: Array<Report.Stage> = [
    { name: "teacher demonstrations", durationMs: Date.now() - t0, detail: `${demonstrations.length} rollouts of the multi-agent teacher on training tasks` },
    { name: "judge filter", durationMs: 0, detail: `kept ${kept} / dropped ${demonstrations.length - kept} (rule: Quality and Faithfulness YES)` }
  ]
  const context = yield* Effect.context<RunStore | TaskSource | ToolLibrary | Judge | Retriever | Simulator>()
  const inProcess: SeedRunner = (seed) => runSeed(runId, options, seed).pipe(Effect.provide(context))
  // the first seed runs on this thread, which holds a world already; the others on workers (a world each)
  const runner: SeedRunner = seeds === undefined ? inProcess : (seed) => (seed === options.seeds[0] ? inProcess(seed) : seeds.runner(seed))
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
  const summary: Summary = {
    ablation,
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
    ablation: Object.fromEntries(models.map((m) => [
      modelLabels[m],
      Object.fromEntries(Object.entries(ablation[m]).map(([level, row]) => [level, { ...row, ...(sampled[m][level] !== undefined ? { pass1Sampled: sampled[m][level].pass1 } : {}) }]))
    ])),
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
const checkpointerFor = (store: RunStore["Service"], runId: string, stage: string): Trainer.Checkpointer => {
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
