/**
 * Evaluation metrics of a paradigm comparison (the paper's Table 1): success as Pass@1 / Pass@2, "Path"
 * (gold-API coverage of the calls), and rounds, calls and searches per task. Pure.
 */
import type { Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import { mean, passAtK } from "./Stats.ts"

/** What one rollout achieved. */
export interface Outcome {
  /**
   * Judged solved: Quality, Faithfulness and Utility all YES (issue 24) — a complete answer that only states what the
   * tools said, and the successful calls observed every fact it needed. A stated fact no successful output supports
   * (a guess, even a right one, after a failed call) is not solved.
   */
  readonly success: boolean
  /** Fraction of the task's distinct gold tools the rollout called successfully. */
  readonly path: number
  /**
   * The same with an equivalent provider counted **[ours]**: a gold tool is reached when it, or a tool of the same
   * operation on the same entity type (`options.equivalent`), was called successfully. ≥ `path`.
   */
  readonly pathEquivalent: number
  readonly rounds: number
  /** Calls that ran (refused calls — unseen tool, unresolved `$ref` — do not count). */
  readonly calls: number
  readonly searches: number
  /** T_max forced the end (stop reason `max_rounds`, an answer at the forced last round included). */
  readonly truncated: boolean
  /** The judge gave no verdict (its failure: counted, never hidden as a bad answer). */
  readonly unjudged: boolean
  /** Searches the retriever failed on and calls whose implementation crashed (faults of the machinery). */
  readonly machineryFaults: number
}

/**
 * The success rule of Pass@k and of every "solved" count (the SFT filter's too): Quality, Faithfulness and Utility all
 * YES — the top verdict, R_ans 1.5. Faithfulness alone let a guessed answer after a failed call count as solved; the
 * evidence bit (Utility: the successful calls observed the facts) closes that.
 */
export const solved = (verdict: { readonly quality: string; readonly faithfulness: string; readonly utility: string } | undefined): boolean =>
  verdict !== undefined && verdict.quality === "YES" && verdict.faithfulness === "YES" && verdict.utility === "YES"

/** Options of {@link outcomeOf}: which tools stand in for a gold tool (default: only itself). */
export interface OutcomeOptions {
  readonly equivalent?: (gold: string, tool: string) => boolean
}

/** Scores one rollout of a task. */
export const outcomeOf = (task: Task, trajectory: Trajectory, options: OutcomeOptions = {}): Outcome => {
  const gold = new Set(task.gold.map((g) => g.tool as string))
  const hit = new Set<string>()
  const succeeded = new Set<string>()
  let calls = 0
  let searches = 0
  let machineryFaults = 0
  for (const step of trajectory.steps) {
    searches += step.searches.length
    for (const s of step.searches) if (s.error !== undefined) machineryFaults++
    for (const o of step.observations) {
      if (o.outcome._tag === "error" && o.outcome.error.kind === "tool_defect") machineryFaults++
      if (o.attempts === 0) continue
      calls++
      if (o.outcome._tag === "ok" && gold.has(o.tool)) hit.add(o.tool)
      if (o.outcome._tag === "ok") succeeded.add(o.tool)
    }
  }
  const v = trajectory.verdict
  const equivalent = options.equivalent
  const reached = equivalent === undefined ? hit.size : [...gold].filter((g) => hit.has(g) || [...succeeded].some((t) => equivalent(g, t))).length
  return {
    success: solved(v),
    path: gold.size === 0 ? 1 : hit.size / gold.size,
    pathEquivalent: gold.size === 0 ? 1 : reached / gold.size,
    rounds: trajectory.steps.length,
    calls,
    searches,
    truncated: trajectory.stop === "max_rounds",
    unjudged: v === undefined,
    machineryFaults
  }
}

/** One cell of the table: the means over tasks (each task's rollouts averaged first). */
export interface Cell {
  /** Unbiased pass@1 (the success rate), in 0–1. */
  readonly pass1: number
  /** Unbiased pass@2, in 0–1 (equals pass1 when a task has a single rollout). */
  readonly pass2: number
  readonly path: number
  readonly pathEquivalent: number
  readonly rounds: number
  readonly calls: number
  readonly searches: number
  readonly tasks: number
  readonly rollouts: number
  /** Share of rollouts that T_max ended (stop reason `max_rounds`), in 0–1. */
  readonly truncation: number
  /** Rollouts the judge gave no verdict (counted as unsuccessful in pass@k, masked from advantages). */
  readonly unjudged: number
  /** Machinery faults (retriever failures, tool defects) over the cell's rollouts. */
  readonly machineryFaults: number
}

/** Aggregates per-task rollout outcomes into a cell. */
export const aggregate = (perTask: ReadonlyArray<ReadonlyArray<Outcome>>): Cell => {
  const tasks = perTask.filter((o) => o.length > 0)
  const per = <K extends keyof Outcome>(k: K) => mean(tasks.map((os) => mean(os.map((o) => Number(o[k])))))
  // k is capped at a task's rollout count, so a single-rollout task counts its pass@1 as its pass@2
  const passAt = (k: number) => mean(tasks.map((os) => passAtK(os.length, os.filter((o) => o.success).length, Math.min(k, os.length))))
  return {
    pass1: passAt(1),
    pass2: passAt(2),
    path: per("path"),
    pathEquivalent: per("pathEquivalent"),
    rounds: per("rounds"),
    calls: per("calls"),
    searches: per("searches"),
    tasks: tasks.length,
    rollouts: tasks.reduce((n, os) => n + os.length, 0),
    truncation: mean(tasks.flat().map((o) => Number(o.truncated))),
    unjudged: tasks.flat().filter((o) => o.unjudged).length,
    machineryFaults: tasks.flat().reduce((n, o) => n + o.machineryFaults, 0)
  }
}
