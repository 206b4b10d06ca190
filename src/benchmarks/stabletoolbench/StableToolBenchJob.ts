/**
 * The StableToolBench job behind `npm run stabletoolbench`: a ToolBench-format library merged with the query files'
 * api_lists (G_dep inferred), each query rolled out once as a task, its answer labelled `runs` times, per-file rows.
 */
import { Duration, Effect, Schema } from "effect"
import type { PlatformError } from "effect/PlatformError"
import * as nodePath from "node:path"
import type { Paradigm, Trajectory } from "../../domain/Trajectory.ts"
import { hashParts } from "../../math/Random.ts"
import * as Progress from "../../io/Progress.ts"
import { Rollout } from "../../runtime/Rollout.ts"
import * as DepGraph from "../../toolenv/DepGraph.ts"
import * as DepInference from "../../toolenv/DepInference.ts"
import type { ImportReport } from "../../toolenv/importers/ImportReport.ts"
import * as StableToolBenchFiles from "../../toolenv/importers/StableToolBench.ts"
import * as ToolBench from "../../toolenv/importers/ToolBench.ts"
import { type Library, makeLibrary } from "../../toolenv/ToolLibrary.ts"
import * as Metrics from "./StableToolBenchMetrics.ts"
import type { Labeler } from "./StableToolBenchJudge.ts"

/** The queries of one file as tasks. */
export interface QueryFileTasks {
  /** The file's basename (`#2`, `#3` appended to repeats): the key of the JSON report. */
  readonly name: string
  readonly path: string
  readonly queries: ReadonlyArray<Metrics.QueryTask>
  readonly report: ImportReport
}

/** A loaded benchmark: the library every query runs in, and the query files. */
export interface Setup {
  readonly library: Library
  readonly files: ReadonlyArray<QueryFileTasks>
  readonly libraryReport: ImportReport
  /** Query APIs added to the library / distinct ones already in it. */
  readonly added: number
  readonly matchedApis: number
  readonly loadMs: number
}

/** A job option out of range. */
export class StableToolBenchError extends Schema.TaggedError<StableToolBenchError>()("StableToolBenchError", {
  field: Schema.String,
  message: Schema.String
}) {}

/**
 * Loads the library folder and the query files, adds the api_list APIs the folder lacks (so every listed API is
 * callable and retrievable), infers G_dep (the `x-entity` marks the simulator's L2 checks ids with) and turns each
 * query into a task whose gold calls are its resolved relevant APIs.
 */
export const load = Effect.fn("StableToolBenchJob.load")(function*(libraryDir: string, queryFiles: ReadonlyArray<string>) {
  const [elapsed, loaded] = yield* Effect.timed(
    Effect.all([
      ToolBench.loadDirectory(libraryDir),
      Effect.forEach(queryFiles, (file) => StableToolBenchFiles.loadQueryFile(file))
    ])
  )
  const [folder, files] = loaded
  const merged = StableToolBenchFiles.mergeQueryApis(folder.tools, files.flatMap((f) => f.queries))
  const [inferTime, inferred] = yield* Effect.timed(Effect.sync(() => DepInference.infer(merged.tools)))
  const library = makeLibrary(`toolbench:${libraryDir}+queries`, inferred.tools, DepGraph.make(inferred.edges))
  const find = StableToolBenchFiles.matcher(merged.tools).find
  let offset = 0
  const names = new Map<string, number>()
  const out = files.map((file, i): QueryFileTasks => {
    const path = queryFiles[i] as string
    const base = nodePath.basename(path)
    const seen = (names.get(base) ?? 0) + 1
    names.set(base, seen)
    const name = seen === 1 ? base : `${base}#${seen}`
    const queries = merged.queries.slice(offset, offset + file.queries.length).map((q) =>
      Metrics.toQueryTask(q, StableToolBenchFiles.resolveRelevant(q, find), name)
    )
    offset += file.queries.length
    return { name, path, queries, report: file.report }
  })
  return {
    library,
    files: out,
    libraryReport: folder.report,
    added: merged.added,
    matchedApis: merged.matched,
    loadMs: Duration.toMillis(elapsed) + Duration.toMillis(inferTime)
  } satisfies Setup
})

/** How the job runs. */
export interface JobOptions {
  readonly paradigm: Paradigm
  /** Seed of the rollouts (each query's rollout seed derives from it and the task id). */
  readonly seed: number
  /** Evaluation runs per answer (StableToolEval's `--evaluate_times`); the pass rate is their mean. */
  readonly runs: number
  /** Queries in flight at once. */
  readonly concurrency: number
  readonly progress: boolean
  /** The pass-rate judge; absent (the rule judge) the pass rate is null. */
  readonly labeler?: Labeler
  /** Sees every finished rollout (to store it). */
  readonly onTrajectory?: (file: string, query: Metrics.QueryTask, trajectory: Trajectory, labels: ReadonlyArray<Metrics.AnswerStatus> | null) => Effect.Effect<void, PlatformError>
}

/** The rollout seed of a query's task. */
export const querySeed = (seed: number, taskId: string): number => hashParts(seed, "stabletoolbench", taskId) & 0x3fffffff

/**
 * The labels of one answer over `runs` evaluations: Unsolved without a judge call when there is no final answer;
 * a failed or unreadable judgement is Unsolved and counted.
 */
export const labelAnswer = Effect.fn("StableToolBenchJob.labelAnswer")(function*(
  labeler: Labeler,
  query: Metrics.QueryTask,
  trajectory: Trajectory,
  runs: number
) {
  if (!Metrics.hasFinalAnswer(trajectory)) {
    return { labels: Array.from({ length: runs }, (): Metrics.AnswerStatus => "Unsolved"), failures: 0 }
  }
  const results = yield* Effect.forEach(Array.from({ length: runs }, (_, r) => r), () => labeler.label(query.query, trajectory))
  return { labels: results.map((r) => r.status), failures: results.filter((r) => r.failure !== undefined).length }
})

/** Runs every query of every file once and labels the answers; returns the per-file rows in file order. */
export const run = Effect.fn("StableToolBenchJob.run")(function*(files: ReadonlyArray<QueryFileTasks>, options: JobOptions) {
  if (!Number.isInteger(options.runs) || options.runs < 1) {
    return yield* new StableToolBenchError({ field: "runs", message: `runs must be a positive integer, got ${options.runs}` })
  }
  const empty = files.find((f) => f.queries.length === 0)
  if (empty !== undefined) {
    // metrics over no query are 0/0: refuse instead of printing NaN
    return yield* new StableToolBenchError({ field: "queries", message: `${empty.path}: no usable query (see the import report)` })
  }
  const rollout = yield* Rollout
  const total = files.reduce((n, f) => n + f.queries.length, 0)
  const progress = Progress.make("queries", total, options.progress)
  const labeler = options.labeler
  const rows = yield* Effect.forEach(files, (file) =>
    Effect.forEach(file.queries, (query) =>
      Effect.gen(function*() {
        const trajectory = yield* rollout.run(query.task, { paradigm: options.paradigm, seed: querySeed(options.seed, query.task.id) })
        const outcome = Metrics.outcomeOf(query, trajectory)
        const judged = labeler === undefined ? undefined : yield* labelAnswer(labeler, query, trajectory, options.runs)
        const labels = judged?.labels ?? null
        if (options.onTrajectory !== undefined) yield* options.onTrajectory(file.name, query, trajectory, labels)
        yield* progress.tick(1)
        return { query, outcome, labels, judgeFailures: judged?.failures ?? 0 } satisfies Metrics.JudgedQuery
      }), { concurrency: options.concurrency }).pipe(
        Effect.map((judged) => [file.name, Metrics.summarize(judged, options.runs)] as const)
      ))
  yield* progress.done
  return rows
})
