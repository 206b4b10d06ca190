/**
 * The paradigm comparison job behind `npm start`: held-out tasks × paradigms × G rollouts, each group judged,
 * rewarded and given advantages, trajectories appended to a run folder as they finish, then the Table-1 summary.
 */
import { Effect, Schema } from "effect"
import type { Level, Task } from "../domain/Task.ts"
import type { Paradigm, Trajectory } from "../domain/Trajectory.ts"
import * as Evaluation from "../math/Evaluation.ts"
import { hashParts } from "../math/Random.ts"
import * as Reward from "../math/Reward.ts"
import * as Progress from "../io/Progress.ts"
import { Rollout } from "../runtime/Rollout.ts"
import * as RunFolder from "../io/RunFolder.ts"
import * as Estimators from "./Estimators.ts"
import * as Scoring from "./Scoring.ts"
import { TaskSource } from "../toolenv/TaskSource.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { Policy } from "../agent/Policy.ts"
import { Retriever } from "../retrieval/Retriever.ts"

/** The job's options. */
export interface JobOptions {
  readonly tasksPerLevel: number
  readonly levels: ReadonlyArray<Level>
  /** Seed of the task draw and of the rollouts (a task gets the same rollout seeds under every paradigm). */
  readonly seed: number
  readonly paradigms: ReadonlyArray<Paradigm>
  /** Rollouts per task (G). */
  readonly group: number
  /** Task groups in flight at once. */
  readonly concurrency: number
  readonly estimator: string
  readonly reward?: Reward.RewardConfig
  readonly out: string
  readonly progress: boolean
  /**
   * The configuration the run was started from (a program's decoded flags plus provenance, see `RunConfig`). When
   * given, `config.json` is this record plus what the job resolved (policy, retriever, library, rollout and reward
   * settings); else the options themselves.
   */
  readonly record?: Readonly<Record<string, unknown>>
}

/** Defaults of `npm start`. */
export const defaults = { tasksPerLevel: 25, seed: 1, group: 2, concurrency: 8 } as const

/** The default run folder: `runs/<UTC date-time>-seed<seed>`. */
export const defaultOut = (seed: number): string =>
  `runs/${new Date().toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")}-seed${seed}`

/** A job option out of range. */
export class JobError extends Schema.TaggedError<JobError>()("JobError", {
  field: Schema.String,
  message: Schema.String
}) {}

/** Every rollout of the run failed (e.g. a dead endpoint): the table would be all zeros. */
export class RunFailedError extends Schema.TaggedError<RunFailedError>()("RunFailedError", {
  dir: Schema.String,
  rollouts: Schema.Number,
  message: Schema.String
}) {}

/** One row of `table.json`: a cell of Table 1 (rates in 0–1) for a paradigm and a level (or "Avg"). */
export interface TableRow extends Evaluation.Cell {
  readonly paradigm: string
  readonly level: string
}

/** The summary written to `summary.json`: per paradigm, per level, the cell of Table 1 (rates in 0–1). */
export interface Summary {
  readonly paradigms: Readonly<Record<string, Readonly<Record<string, Evaluation.Cell>>>>
  /** Per paradigm, the unweighted mean of its level cells (the paper's "Avg" column). */
  readonly average: Readonly<Record<string, Evaluation.Cell>>
  readonly run: {
    readonly policy: string
    readonly retriever: string
    readonly library: string
    readonly tasks: number
    readonly group: number
    readonly seed: number
    readonly durationMs: number
  }
}

const averageCells = (cells: ReadonlyArray<Evaluation.Cell>): Evaluation.Cell => {
  const m = (k: keyof Evaluation.Cell) => cells.reduce((s, c) => s + c[k], 0) / Math.max(1, cells.length)
  return {
    pass1: m("pass1"),
    pass2: m("pass2"),
    path: m("path"),
    pathEquivalent: m("pathEquivalent"),
    rounds: m("rounds"),
    calls: m("calls"),
    searches: m("searches"),
    tasks: cells.reduce((s, c) => s + c.tasks, 0),
    rollouts: cells.reduce((s, c) => s + c.rollouts, 0),
    truncation: m("truncation"),
    unjudged: cells.reduce((s, c) => s + c.unjudged, 0),
    machineryFaults: cells.reduce((s, c) => s + c.machineryFaults, 0)
  }
}

const pct = (x: number) => (Number.isFinite(x) ? (100 * x).toFixed(1) : "–")
const num = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "–")

/**
 * What the table means when the policy is the scripted teacher: it reads the gold DAG and follows one hand-written
 * strategy per paradigm, so its rounds are the structural cost of each paradigm and its "success" is completion
 * within T_max — not a finding about learned agents.
 */
export const oracleCaption =
  "Oracle teacher (privileged: it reads the gold DAG): the structural cost of each paradigm. Pass@k = the oracle " +
  "completed the task within T_max (judged); Trunc % = rollouts T_max ended; not a comparison of learned agents."

/** Renders the summary as a markdown table: one row per paradigm and level, then the paradigm's average. */
export const renderTable = (summary: Summary): string => {
  const rows = [
    ...(summary.run.policy === "teacher" ? [oracleCaption, ""] : []),
    "| Paradigm | Level | Pass@1 % | Pass@2 % | Path % | Path≈ % | Rounds | Calls | Searches | Trunc % | Unjudged | Tasks |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const [paradigm, levels] of Object.entries(summary.paradigms)) {
    const avg = summary.average[paradigm]
    const entries: Array<[string, Evaluation.Cell]> = [...Object.entries(levels), ...(avg !== undefined ? [["Avg", avg] as [string, Evaluation.Cell]] : [])]
    for (const [level, c] of entries) {
      rows.push(
        `| ${paradigm} | ${level} | ${pct(c.pass1)} | ${pct(c.pass2)} | ${pct(c.path)} | ${pct(c.pathEquivalent)} | ${num(c.rounds)} | ${num(c.calls)} | ${num(c.searches)} | ${pct(c.truncation)} | ${c.unjudged} | ${c.tasks} |`
      )
    }
  }
  return rows.join("\n")
}

/** The rows of the table, in the order of `table.md`. */
export const tableRows = (summary: Summary): ReadonlyArray<TableRow> =>
  Object.entries(summary.paradigms).flatMap(([paradigm, levels]) => {
    const avg = summary.average[paradigm]
    return [...Object.entries(levels), ...(avg !== undefined ? [["Avg", avg] as const] : [])].map(([level, cell]) => ({ paradigm, level, ...cell }))
  })

/** The rollout seed of a task: the same under every paradigm, so they meet the same faults. */
export const taskSeed = (seed: number, task: Task): number => hashParts(seed, "rollout", task.id) & 0x3fffffff

/** The held-out tasks a job runs: `tasksPerLevel` per level of the test split, drawn with the job's seed. */
export const drawTasks = (source: TaskSource["Service"], options: Pick<JobOptions, "tasksPerLevel" | "levels" | "seed">) =>
  source.sample({ split: "test", count: options.tasksPerLevel * options.levels.length, levels: options.levels, seed: options.seed })

/** Runs the job; returns the run folder, the summary and the rendered table. */
export const run = Effect.fn("Job.run")(function*(options: JobOptions) {
  if (!Number.isInteger(options.tasksPerLevel) || options.tasksPerLevel < 1) {
    return yield* new JobError({ field: "tasks", message: `tasks per level must be a positive integer, got ${options.tasksPerLevel}` })
  }
  if (!Number.isInteger(options.group) || options.group < 1) {
    return yield* new JobError({ field: "group", message: `group must be a positive integer, got ${options.group}` })
  }
  if (options.paradigms.length === 0) return yield* new JobError({ field: "paradigms", message: "no paradigm to run" })
  if (options.levels.length === 0) return yield* new JobError({ field: "levels", message: "no level to run" })
  const estimator = yield* Estimators.lookup(options.estimator)
  if (estimator._tag === "UnknownEstimator") {
    return yield* new JobError({ field: "estimator", message: `unknown estimator ${JSON.stringify(options.estimator)}; known: ${estimator.known.join(", ")}` })
  }
  const started = Date.now()
  const source = yield* TaskSource
  const rollout = yield* Rollout
  const library = yield* ToolLibrary
  const policy = yield* Policy
  const retriever = yield* Retriever
  const tasks = yield* drawTasks(source, options)
  const folder = yield* RunFolder.make(options.out)
  const reward = options.reward ?? Reward.defaultRewardConfig
  const resolved = { policy: policy.name, retriever: retriever.name, library: library.label, rollout: rollout.config }
  const { record, ...plain } = options
  yield* folder.writeJson("config.json", record === undefined ? { ...plain, ...resolved } : { ...record, resolved: { ...resolved, reward } })
  yield* folder.writeText("tasks.jsonl", tasks.map((t) => JSON.stringify(t)).join("\n") + "\n")

  const groups = options.paradigms.flatMap((paradigm) => tasks.map((task) => ({ paradigm, task })))
  const progress = Progress.make("rollouts", groups.length * options.group, options.progress)
  const scoring: Scoring.ScoringOptions = { reward, estimator: options.estimator }
  const equivalent = yield* Scoring.equivalence
  const outcomes = yield* Effect.forEach(groups, ({ paradigm, task }) =>
    Effect.gen(function*() {
      const trajectories = yield* rollout.runGroup(task, { paradigm, seed: taskSeed(options.seed, task), size: options.group })
      const scored: ReadonlyArray<Trajectory> = yield* Scoring.scoreGroup(task, trajectories, scoring)
      yield* folder.appendJsonl("trajectories.jsonl", scored)
      yield* progress.tick(scored.length)
      return { paradigm, level: task.level, outcomes: scored.map((t) => Evaluation.outcomeOf(task, t, { equivalent })), failed: scored.filter((t) => t.stop === "policy_error") }
    }), { concurrency: options.concurrency })
  yield* progress.done

  const paradigms: Record<string, Record<string, Evaluation.Cell>> = {}
  const average: Record<string, Evaluation.Cell> = {}
  for (const paradigm of options.paradigms) {
    const cells: Record<string, Evaluation.Cell> = {}
    for (const level of options.levels) {
      cells[level] = Evaluation.aggregate(outcomes.filter((o) => o.paradigm === paradigm && o.level === level).map((o) => o.outcomes))
    }
    paradigms[paradigm] = cells
    average[paradigm] = averageCells(Object.values(cells))
  }
  const summary: Summary = {
    paradigms,
    average,
    run: {
      policy: policy.name,
      retriever: retriever.name,
      library: library.label,
      tasks: tasks.length,
      group: options.group,
      seed: options.seed,
      durationMs: Date.now() - started
    }
  }
  const table = renderTable(summary)
  yield* folder.writeText("table.md", `${table}\n`)
  yield* folder.writeJson("table.json", tableRows(summary))
  yield* folder.writeJson("summary.json", summary)
  const failed = outcomes.flatMap((o) => o.failed)
  const rollouts = outcomes.reduce((n, o) => n + o.outcomes.length, 0)
  if (rollouts > 0 && failed.length === rollouts) {
    const first = failed.find((t) => t.error !== undefined)?.error ?? "no error text"
    return yield* new RunFailedError({
      dir: folder.dir,
      rollouts,
      message: `every one of the ${rollouts} rollouts ended policy_error (first: ${first.replace(/\s+/g, " ").slice(0, 300)}); the table in ${folder.dir} is meaningless`
    })
  }
  return { dir: folder.dir, summary, table }
})
