/**
 * What the pipeline produces: the ablation's rows and their labels, per-cell metrics over seeds, the paired
 * differences with bootstrap intervals, the summary and its markdown table, a seed's result, and the RL metrics CSV.
 * Pure.
 */
import { Effect, Schema } from "effect"
import type { ToolSpec } from "../domain/Tool.ts"
import type { Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import type * as LearnedPolicy from "../agent/LearnedPolicy.ts"
import * as Evaluation from "../math/Evaluation.ts"
import * as Stats from "../math/Stats.ts"
import { mean, std } from "../math/Stats.ts"
import type * as Report from "../eval/Report.ts"
import type * as Trainer from "./Trainer.ts"

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
  /**
   * The paired differences over all tasks again, with whole category sets resampled instead of single tasks
   * (`Stats.pairedBootstrap`'s `clusters`, {@link categorySet}) **[ours]**: tasks of one category share providers and
   * entity types and pass or fail together, so this interval is the one that does not count them as independent.
   * Absent in runs before it.
   */
  readonly pairedByCategory?: Readonly<Record<string, PairedDifference>>
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
    /** Greedy decoding states every answer fact with p above this (`LearnedPolicy.evalAnswerThreshold`). */
    readonly evalAnswerThreshold: number
    /** Greedy decoding also states each uncovered clause's best fact above this (`LearnedPolicy.evalAnswerCover`). */
    readonly evalAnswerCover: number
    /** Greedy decoding also fills each clause's quota of distinct values above this (`LearnedPolicy.evalAnswerQuota`; absent in runs before it: off). */
    readonly evalAnswerQuota?: number
    /** Greedy decoding keeps each list's answer facts to the records their clause asks about (`LearnedPolicy.evalAnswerRecords`; absent in runs before it: off). */
    readonly evalAnswerRecords?: boolean
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

export const estimatorModel = (estimator: string): Model => (estimator === "grpo" ? "GRPO" : "Ours")

/** Actions a trajectory decided: searches + calls (refused ones included) + the answer. */
const decisionsOf = (t: Trajectory): number =>
  t.steps.reduce((n, s) => n + (s.turn === undefined ? 0 : s.turn.searches.length + s.turn.calls.length + (s.turn.answer !== undefined ? 1 : 0)), 0)

/** The metrics of one evaluation: per task the mean over its rollouts, then the mean over tasks. */
export const cellOf = (tasks: ReadonlyArray<Task>, groups: ReadonlyArray<ReadonlyArray<Trajectory>>, equivalent: Evaluation.OutcomeOptions["equivalent"]): CellMetrics => {
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
  const byCategory = summary.pairedByCategory
  return [
    `Table 2 (ablation), held-out test tasks, greedy decoding, answer facts with p > ${summary.run.evalAnswerThreshold} and each clause's best above ${summary.run.evalAnswerCover}${summary.run.evalAnswerQuota === undefined ? "" : `, each clause's quota of values filled above ${summary.run.evalAnswerQuota}`}${summary.run.evalAnswerRecords === true ? ", each list's facts kept to the records their clause asks about" : ""} (${summary.run.evalRollouts} rollouts per task; sampled: ${summary.run.evalSampled}), mean ± sd over seeds ${summary.run.seeds.join(", ")}:`,
    head,
    ...rows,
    "",
    "Table 1 (paradigms), the trained policy (+SFT & RL, ours), greedy:",
    head.replace("Model", "Paradigm"),
    ...paradigmRows,
    "",
    `Paired differences in points of Pass@1 (greedy, the same held-out tasks; mean [bootstrap 95% CI], seeds and tasks resampled${byCategory === undefined ? "" : "; by category: seeds and whole category sets resampled"}):`,
    `| Pair | All | ${levels.join(" | ")} |${byCategory === undefined ? "" : " All, by category |"}`,
    `|---|---|${levels.map(() => "---|").join("")}${byCategory === undefined ? "" : "---|"}`,
    ...pairs.map(([a, b]) => {
      const key = `${a}-${b}`
      const clustered = byCategory === undefined ? "" : ` ${formatPaired(byCategory[key] as PairedDifference)} |`
      return `| ${key} | ${formatPaired(summary.paired[key] as PairedDifference)} | ${levels.map((l) => formatPaired(summary.pairedLevels[l]?.[key] as PairedDifference)).join(" | ")} |${clustered}`
    })
  ].join("\n")
}

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

/**
 * The paired Pass@1 differences of {@link pairs} in points: per pair, A − B on every (seed, test task), each task's
 * success averaged over its greedy rollouts, with the bootstrap 95% interval over seeds and tasks (a fixed bootstrap
 * seed: the same run gives the same interval); over all tasks and per level; and over all tasks with whole category sets
 * resampled ({@link categorySet}, `Stats.pairedBootstrap`'s `clusters`).
 */
export const pairedDifferences = (
  results: ReadonlyArray<Pick<SeedResult, "successes">>,
  testTasks: ReadonlyArray<Pick<Task, "level" | "categories">>,
  levels: ReadonlyArray<string>
): {
  readonly all: Record<string, PairedDifference>
  readonly levels: Record<string, Record<string, PairedDifference>>
  readonly byCategory: Record<string, PairedDifference>
} => {
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
  const clusters = Stats.clusterIndex(testTasks.map(categorySet))
  const byCategory = Object.fromEntries(pairs.map(([a, b]) => [`${a}-${b}`, Stats.pairedBootstrap(diffs(a, b, () => true), { seed: 1, clusters })]))
  return { all, levels: byLevel, byCategory }
}

/** A task's category set as one key (its categories sorted, joined by `+`): the cluster of the category bootstrap. */
export const categorySet = (task: Pick<Task, "categories">): string => [...task.categories].sort().join("+")

/** The RL runs' per-iteration metrics as CSV (`rl-metrics.csv`): one row per seed, estimator and iteration. */
export const metricsCsv = (rl: Summary["training"]["rl"]): string => {
  const keys: Array<string> = []
  for (const run of rl) for (const m of run.metrics) for (const k of Object.keys(m)) if (!keys.includes(k) && typeof (m as unknown as Record<string, unknown>)[k] === "number") keys.push(k)
  const cell = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? String(v) : "")
  const rows = rl.flatMap((run) => run.metrics.map((m) => [String(run.seed), run.estimator, ...keys.map((k) => cell((m as unknown as Record<string, unknown>)[k]))].join(",")))
  return [["seed", "estimator", ...keys].join(","), ...rows].join("\n") + "\n"
}
