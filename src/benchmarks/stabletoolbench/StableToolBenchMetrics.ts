/**
 * StableToolBench in ToolEnv, the pure part: a query as a Task (its relevant APIs as the gold calls an oracle may
 * follow) and the per-file metrics — Path, rounds, calls, searches, and the solvable pass rate of StableToolEval.
 */
import { Schema } from "effect"
import type { Json, JsonObject, JsonSchema } from "../../domain/Json.ts"
import { callId, taskId, type ToolName } from "../../domain/Ids.ts"
import type { GoldCall, GoldFact, Level, Task } from "../../domain/Task.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import type { Trajectory } from "../../domain/Trajectory.ts"
import { mean, std } from "../../math/Stats.ts"
import type { BenchmarkQuery } from "../../toolenv/importers/StableToolBench.ts"
import { matchKey } from "../../toolenv/importers/ToolBench.ts"

/** A StableToolEval label of one answer (`AnswerStatus` of its evaluator). */
export const AnswerStatus = Schema.Literals(["Solved", "Unsure", "Unsolved"])
/** A StableToolEval label of one answer. */
export type AnswerStatus = typeof AnswerStatus.Type

/** What a label scores in the solvable pass rate: Unsure counts half. */
export const statusScore: Readonly<Record<AnswerStatus, number>> = { Solved: 1, Unsure: 0.5, Unsolved: 0 }

/** One benchmark query as a ToolEnv task. */
export interface QueryTask {
  readonly id: string
  readonly query: string
  readonly task: Task
  /** Distinct relevant pairs of the query (the Path denominator), resolved or not. */
  readonly relevantCount: number
  /** The library names of the relevant pairs that resolved (distinct). */
  readonly relevant: ReadonlyArray<ToolName>
  /** Relevant pairs that match neither the query's api_list nor the library (counted, never callable). */
  readonly unresolved: number
}

/**
 * The argument an oracle gives a parameter: the documented default when there is one, else the first allowed value,
 * else the empty value of the parameter's type (StableToolBench queries carry no gold arguments; their api_lists' defaults are the examples).
 */
export const oracleValue = (schema: JsonSchema): Json => {
  if (schema.default !== undefined) return schema.default
  const first = schema.enum?.[0]
  if (first !== undefined) return first
  switch (schema.type) {
    case "integer":
    case "number":
      return 0
    case "boolean":
      return false
    case "array":
      return []
    case "object":
      return {}
    default:
      return ""
  }
}

/** The oracle's arguments of a tool: every required parameter, by {@link oracleValue}. */
export const oracleArguments = (spec: ToolSpec): JsonObject => {
  const out: Record<string, Json> = {}
  for (const name of spec.parameters.required ?? []) {
    const schema = spec.parameters.properties[name]
    if (schema !== undefined) out[name] = oracleValue(schema)
  }
  return out
}

/** The ToolBench level of a set of relevant tools: one tool I1, one category I2, several categories I3. */
export const levelOf = (tools: ReadonlyArray<ToolSpec>): Level => {
  if (new Set(tools.map((t) => `${t.category}\u0000${t.group}`)).size <= 1) return "I1"
  return new Set(tools.map((t) => t.category)).size <= 1 ? "I2" : "I3"
}

/**
 * A query as a task: its relevant APIs (resolved to library entries by `resolved`, same order as `query.relevant`) as
 * independent gold calls with oracle arguments, and one fact per gold call naming the output an answer reports. The
 * facts' values are empty: StableToolBench has no gold answer; only an LLM judge grades the answer.
 */
export const toQueryTask = (query: BenchmarkQuery, resolved: ReadonlyArray<ToolSpec | undefined>, file: string): QueryTask => {
  const keys = new Set<string>()
  const specs = new Map<string, ToolSpec>()
  let unresolved = 0
  query.relevant.forEach((pair, i) => {
    const key = matchKey(pair.tool, pair.api)
    if (keys.has(key)) return
    keys.add(key)
    const spec = resolved[i]
    if (spec === undefined) unresolved++
    else specs.set(spec.name, spec)
  })
  const tools = [...specs.values()]
  const gold: Array<GoldCall> = tools.map((spec, i) => ({ id: callId(`r${i + 1}`), tool: spec.name, arguments: oracleArguments(spec), deps: [] }))
  const facts: Array<GoldFact> = gold.map((g, i) => {
    const spec = tools[i] as ToolSpec
    return { key: `${spec.apiName} (${spec.group})`, value: "", call: g.id, path: "" }
  })
  const task: Task = {
    id: taskId(`stb:${file}:${query.id}`),
    request: query.query,
    level: levelOf(tools),
    categories: [...new Set(tools.map((t) => t.category))],
    gold,
    facts,
    split: "test",
    seed: 0,
    source: `stabletoolbench:${file}`
  }
  return { id: query.id, query: query.query, task, relevantCount: keys.size, relevant: tools.map((t) => t.name), unresolved }
}

/** Whether a trajectory ends with a final answer (StableToolEval: no `Finish`, or an empty one, is Unsolved unjudged). */
export const hasFinalAnswer = (trajectory: Trajectory): boolean => (trajectory.answer?.trim() ?? "") !== ""

/** What one rollout of a query did. */
export interface QueryOutcome {
  /** Relevant APIs called successfully / relevant APIs; undefined when the query lists none. */
  readonly path: number | undefined
  readonly rounds: number
  /** Calls that ran (refused calls — unseen tool, unresolved `$ref` — do not count). */
  readonly calls: number
  readonly searches: number
  readonly answered: boolean
}

/** Scores one rollout of a query (no LLM). */
export const outcomeOf = (query: QueryTask, trajectory: Trajectory): QueryOutcome => {
  const relevant = new Set<string>(query.relevant)
  const hit = new Set<string>()
  let calls = 0
  let searches = 0
  for (const step of trajectory.steps) {
    searches += step.searches.length
    for (const o of step.observations) {
      if (o.attempts === 0) continue
      calls++
      if (o.outcome._tag === "ok" && relevant.has(o.tool)) hit.add(o.tool)
    }
  }
  return {
    path: query.relevantCount === 0 ? undefined : hit.size / query.relevantCount,
    rounds: trajectory.steps.length,
    calls,
    searches,
    answered: hasFinalAnswer(trajectory)
  }
}

/** The solvable pass rate over queries × evaluation runs. */
export interface PassRate {
  /** Mean over runs of each run's score (Solved 1, Unsure 0.5, Unsolved 0, averaged over queries), in 0–1. */
  readonly mean: number
  /** Population standard deviation of the runs' scores (numpy's default), in 0–1. */
  readonly sd: number
  /** Each run's score, in 0–1. */
  readonly perRun: ReadonlyArray<number>
}

/**
 * StableToolEval's solvable pass rate: `labels[q][r]` is the label of query q in evaluation run r; a run's score is
 * the mean over queries of {@link statusScore}; the rate is the mean of the runs' scores (a query missing a run's
 * label scores 0 in that run, as in the harness). NaN when there is no query or no run.
 */
export const passRate = (labels: ReadonlyArray<ReadonlyArray<AnswerStatus>>, runs: number): PassRate => {
  const perRun = Array.from({ length: runs }, (_, r) =>
    labels.length === 0 ? NaN : labels.reduce((sum, q) => sum + (q[r] === undefined ? 0 : statusScore[q[r] as AnswerStatus]), 0) / labels.length)
  return { mean: mean(perRun), sd: std(perRun), perRun }
}

/** The row of one query file. */
export interface FileSummary {
  /** Mean Path over the queries that list relevant APIs, in 0–1. */
  readonly path: number
  /** Null when no judge graded the answers (the rule judge): never guessed. */
  readonly passRate: PassRate | null
  readonly rounds: number
  readonly calls: number
  readonly searches: number
  readonly queries: number
  /** Queries that ended without a final answer (Unsolved without a judge call). */
  readonly unanswered: number
  /** Judge calls that failed or gave no readable label (scored Unsolved). */
  readonly judgeFailures: number
  /** Relevant pairs that resolved to nothing, over the file. */
  readonly unresolved: number
}

/** One query's rollout and, with a judge, its labels (one per evaluation run). */
export interface JudgedQuery {
  readonly query: QueryTask
  readonly outcome: QueryOutcome
  readonly labels: ReadonlyArray<AnswerStatus> | null
  readonly judgeFailures: number
}

/** Aggregates a file's judged queries; `runs` is the number of evaluation runs (ignored without labels). */
export const summarize = (queries: ReadonlyArray<JudgedQuery>, runs: number): FileSummary => {
  const paths = queries.flatMap((q) => (q.outcome.path === undefined ? [] : [q.outcome.path]))
  const labelled = queries.every((q) => q.labels !== null) && queries.length > 0
  return {
    path: mean(paths),
    passRate: labelled ? passRate(queries.map((q) => q.labels ?? []), runs) : null,
    rounds: mean(queries.map((q) => q.outcome.rounds)),
    calls: mean(queries.map((q) => q.outcome.calls)),
    searches: mean(queries.map((q) => q.outcome.searches)),
    queries: queries.length,
    unanswered: queries.filter((q) => !q.outcome.answered).length,
    judgeFailures: queries.reduce((n, q) => n + q.judgeFailures, 0),
    unresolved: queries.reduce((n, q) => n + q.query.unresolved, 0)
  }
}

const pct = (x: number): string => (Number.isFinite(x) ? (100 * x).toFixed(1) : "–")
const num = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : "–")

/** The per-file table (rates in percent); pass rate "n/a" when no judge graded. */
export const table = (files: ReadonlyArray<readonly [string, FileSummary]>): string =>
  [
    "| File | Queries | Path % | Pass rate % | Rounds | Calls | Searches | No answer | Judge failures |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...files.map(([name, s]) =>
      `| ${name} | ${s.queries} | ${pct(s.path)} | ${s.passRate === null ? "n/a" : `${pct(s.passRate.mean)} ± ${pct(s.passRate.sd)}`} | ${num(s.rounds)} | ${num(s.calls)} | ${num(s.searches)} | ${s.unanswered} | ${s.judgeFailures} |`
    )
  ].join("\n")

const finite = (x: number): number | null => (Number.isFinite(x) ? Number(x.toFixed(6)) : null)

/** The `--json` line: `{"files": {"<name>": {"path", "pass_rate" | null, "rounds", "calls", "searches", "queries", ...}}}` (rates in 0–1). */
export const jsonReport = (files: ReadonlyArray<readonly [string, FileSummary]>, extra: Readonly<Record<string, unknown>> = {}): string =>
  JSON.stringify({
    ...extra,
    files: Object.fromEntries(files.map(([name, s]) => [name, {
      path: finite(s.path),
      pass_rate: s.passRate === null ? null : finite(s.passRate.mean),
      pass_rate_sd: s.passRate === null ? null : finite(s.passRate.sd),
      rounds: finite(s.rounds),
      calls: finite(s.calls),
      searches: finite(s.searches),
      queries: s.queries,
      unanswered: s.unanswered,
      judge_failures: s.judgeFailures,
      unresolved_relevant: s.unresolved
    }]))
  })
