/**
 * Scripted turns for served episodes: a task's gold DAG as whole rounds (search every gold tool, run the DAG layer by
 * layer with its `$ref`s, answer with the gold facts), and the timing-free view of a trajectory that replicas share.
 */
import type { Task } from "../../src/domain/Task.ts"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import type { StepRequest } from "../../src/service/Api.ts"

/** The rounds that act out a task's gold solution, as structured step requests. */
export const goldRounds = (task: Task): ReadonlyArray<StepRequest> => {
  const depth = new Map<string, number>()
  for (const c of task.gold) depth.set(c.id, 1 + Math.max(0, ...c.deps.map((d) => depth.get(d) ?? 0)))
  const layers: Array<Array<Task["gold"][number]>> = []
  for (const c of task.gold) (layers[(depth.get(c.id) ?? 1) - 1] ??= []).push(c)
  const search: StepRequest = {
    turn: { searches: [...new Set(task.gold.map((c) => c.tool))].map((tool, i) => ({ slot: `s${i + 1}`, query: tool.replace(/_/g, " ") })), calls: [] }
  }
  const calls = layers.map((layer): StepRequest => ({ turn: { searches: [], calls: layer.map((c) => ({ id: c.id, tool: c.tool, arguments: c.arguments })) } }))
  const answer: StepRequest = { turn: { searches: [], calls: [], answer: task.facts.map((f) => `${f.key}: ${f.value}`).join("; ") || "done" } }
  return [search, ...calls, answer]
}

/** A trajectory without its clock readings (all that may differ between replicas or a replay). */
export const timeless = (t: Trajectory): string =>
  JSON.stringify(t, (k, v) => (k === "startMs" || k === "endMs" || k === "policyMs" || k === "startedAt" || k === "durationMs" ? undefined : v))
