/**
 * The teacher's board: what its roles know after reading the history (plan nodes done, attempts, errors, the tools
 * retrieved on the path, calls of a wrong tool and what their observations showed), and the helpers that bind the
 * agent's calls to plan and gold nodes.
 */
import { type CallOutcome, transientErrorKinds } from "../../domain/Call.ts"
import type { CallId, ToolName } from "../../domain/Ids.ts"
import type { Json, JsonObject } from "../../domain/Json.ts"
import type { Plan, PlanNode } from "../../domain/Plan.ts"
import type { GoldCall, Task } from "../../domain/Task.ts"
import type { Step } from "../../domain/Trajectory.ts"
import { canonicalJson } from "../../math/CanonicalJson.ts"
import * as History from "../../math/History.ts"
import * as Refs from "../../protocol/Refs.ts"

/** The call that completed a plan node, with its output. */
export interface Completed {
  readonly callId: CallId
  readonly payload: Json
}

/** What the teacher knows after reading the history (its roles share this board). */
export interface Board {
  readonly task: Task
  readonly gold: ReadonlyArray<GoldCall>
  /**
   * The plan the orchestrator works from: the gold DAG (scripted roles), or the latest valid plan the planner
   * emitted on the path (LLM roles; empty before the first one).
   */
  readonly nodes: ReadonlyArray<PlanNode>
  /** Plan node id → the agent call that completed it (a call `c2` or a retry `c2_r7` with the node's tool). */
  readonly done: ReadonlyMap<string, Completed>
  /** Gold node id → the agent call that completed it: equal to `done` when the plan is the gold DAG. */
  readonly goldDone: ReadonlyMap<string, Completed>
  /** Plan node id → attempts made (calls actually run, abandoned DFSDT branches included). */
  readonly attempts: ReadonlyMap<string, number>
  /** Plan node id → the last error observed for it (kind). */
  readonly lastError: ReadonlyMap<string, string>
  /** Plan node id → the index in the history of the last step that ran a call for it. */
  readonly lastTried: ReadonlyMap<string, number>
  /** Tools the searches on the path returned so far. */
  readonly seen: ReadonlySet<string>
  /** Search slot → searches made for it so far (abandoned DFSDT branches included). */
  readonly searched: ReadonlyMap<string, number>
  /** Whether a valid plan was emitted on this path. */
  readonly planned: boolean
  /** Whether any call ran on this path. */
  readonly executed: boolean
  /** Every call id used on this path. */
  readonly usedIds: ReadonlySet<string>
  /** Search slot → the tools its searches on the path returned, in order, each once. */
  readonly hitsOf: ReadonlyMap<string, ReadonlyArray<string>>
  /** Search slot → the index in the history of the last step that searched it. */
  readonly searchedAt: ReadonlyMap<string, number>
  /**
   * Plan node id → the last call made for it on the path with another tool than the node's, and what its observation
   * showed (gold plan only): what an agent sees after calling the wrong one of the retrieved tools. A call whose
   * output has every value the node must provide completes the node instead (see {@link unservedBy}).
   */
  readonly misfires: ReadonlyMap<string, Misfire>
  /** Plan node ids called with another tool at least once (abandoned DFSDT branches included; gold plan only). */
  readonly misfired: ReadonlySet<string>
  /** What the last step on the path did: searched (`explore`), ran calls (`execute`), or neither / no step yet. */
  readonly lastStep: "explore" | "execute" | undefined
}

/** A call of another tool than a node's, made for the node, and what its observation showed. */
export interface Misfire {
  readonly tool: ToolName
  /** The call's arguments as the turn wrote them (a transient failure is retried with them). */
  readonly arguments: JsonObject
  /** The index in the history of the step that ran it. */
  readonly index: number
  /**
   * `unfit`: the observation shows the tool cannot serve the node (a 400 / 404, an output without a needed value);
   * `transient`: a 429 / 500 / 504 that says nothing about the tool (see {@link shownUnfit}).
   */
  readonly verdict: "unfit" | "transient"
  /** What the observation showed, e.g. `400 invalid_arguments` or `no "0.name" in its output`. */
  readonly problem: string
  /** Calls of this tool made for the node on the path. */
  readonly attempts: number
}

/** A plan node bound to a tool (what the executor can call). */
export type BoundNode = PlanNode & { readonly tool: ToolName }

/** The gold DAG as a plan: one node per gold call, bound to its tool. */
export const goldPlan = (task: Task): Plan => ({
  nodes: task.gold.map((g) => ({ id: g.id, tool: g.tool, deps: g.deps }))
})

/** The plan node a call id belongs to: `c2` or a retry `c2_r7`. */
export const nodeIdOf = (id: string): string => id.replace(/_r\d+$/, "")

/** The search slot of a node: the first node bound to the same tool names it; an unbound node is its own slot. */
export const slotOf = (nodes: ReadonlyArray<PlanNode>, node: PlanNode): string =>
  node.tool === undefined ? node.id : (nodes.find((n) => n.tool === node.tool)?.id ?? node.id)

/** The latest valid plan on the path, the index of the step that emitted it, and the tools seen before that step. */
export interface EmittedPlan {
  readonly plan: Plan
  readonly index: number
  readonly seenBefore: ReadonlySet<string>
}

/** Finds the latest valid plan on a path (the history's, see {@link History.LatestPlan}). */
export const latestPlan = (history: ReadonlyArray<Step>): EmittedPlan | undefined => {
  const latest = History.of(history).latestPlan
  return latest === undefined ? undefined : { plan: latest.plan, index: latest.emittedAt, seenBefore: latest.retrievedBefore }
}

/**
 * Reads the board off a history (the path the agent is on, plus abandoned DFSDT siblings for counting) against a
 * plan: `nodes` (default: the gold DAG). A call counts for a node when its id is the node's id (or a retry of it)
 * and it called the node's tool.
 */
export const readBoard = (
  task: Task,
  history: ReadonlyArray<Step>,
  abandoned: ReadonlyArray<Step> = [],
  nodes?: ReadonlyArray<PlanNode>
): Board => {
  const plan = nodes ?? goldPlan(task).nodes
  const toolOf = new Map(plan.map((n) => [n.id as string, n.tool]))
  const done = new Map<string, Completed>()
  const attempts = new Map<string, number>()
  const lastError = new Map<string, string>()
  const lastTried = new Map<string, number>()
  const seen = History.retrievedTools(history)
  const searched = new Map<string, number>()
  const usedIds = new Set<string>()
  const hitsOf = new Map<string, Array<string>>()
  const searchedAt = new Map<string, number>()
  const misfires = new Map<string, Misfire>()
  const misfired = new Set<string>()
  const gold = nodes === undefined
  let planned = false
  let executed = false
  const count = (step: Step, onPath: boolean, index: number) => {
    if (onPath && step.turn?.plan !== undefined && step.validation.planError === undefined) planned = true
    if (onPath) for (const c of step.turn?.calls ?? []) usedIds.add(c.id)
    for (const s of step.searches) {
      searched.set(s.slot, (searched.get(s.slot) ?? 0) + 1)
      if (!onPath) continue
      searchedAt.set(s.slot, index)
      const hits = hitsOf.get(s.slot) ?? []
      for (const h of s.hits) if (!hits.includes(h.tool)) hits.push(h.tool)
      hitsOf.set(s.slot, hits)
    }
    for (const o of step.observations) {
      if (onPath) usedIds.add(o.callId)
      if (o.attempts === 0) continue
      if (onPath) executed = true
      const node = nodeIdOf(o.callId)
      const tool = toolOf.get(node)
      if (gold && tool !== undefined && tool !== o.tool) {
        misfired.add(node)
        if (!onPath || done.has(node)) continue
        const problem = unservedBy(task, node, o.outcome)
        if (problem === undefined) {
          // The other tool gave every value the node must provide: the agent has no reason to doubt it.
          if (o.outcome._tag === "ok") done.set(node, { callId: o.callId, payload: o.outcome.payload })
          continue
        }
        const before = misfires.get(node)
        const attempts = before?.tool === o.tool ? before.attempts + 1 : 1
        const transient = o.outcome._tag === "error" && transientErrorKinds.has(o.outcome.error.kind)
        const written = step.turn?.calls.find((c) => c.id === o.callId)?.arguments ?? o.arguments
        misfires.set(node, { tool: o.tool, arguments: written, index, verdict: transient ? "transient" : "unfit", problem, attempts })
        continue
      }
      if (tool !== o.tool) continue
      attempts.set(node, (attempts.get(node) ?? 0) + 1)
      if (onPath) lastTried.set(node, index)
      if (o.outcome._tag === "ok") {
        if (onPath && !done.has(node)) done.set(node, { callId: o.callId, payload: o.outcome.payload })
      } else {
        lastError.set(node, o.outcome.error.kind)
      }
    }
  }
  history.forEach((step, i) => count(step, true, i))
  for (const step of abandoned) count(step, false, -1)
  const goldDone = nodes === undefined ? done : alignGold(task, history, plan, done)
  const last = history.at(-1)
  const lastStep = last === undefined
    ? undefined
    : last.observations.length > 0
    ? "execute"
    : last.searches.length > 0
    ? "explore"
    : undefined
  return {
    task,
    gold: task.gold,
    nodes: plan,
    done,
    goldDone,
    attempts,
    lastError,
    lastTried,
    seen,
    searched,
    planned,
    executed,
    usedIds,
    hitsOf,
    searchedAt,
    misfires,
    misfired,
    lastStep
  }
}

/** Whether a misfire shows its tool cannot serve the node: an unfit answer, or transient failures on every attempt. */
export const shownUnfit = (misfire: Misfire, callAttempts: number): boolean =>
  misfire.verdict === "unfit" || misfire.attempts >= callAttempts

/**
 * The output paths a gold node must provide: those of the facts it answers and those its dependents' `$ref`s read.
 */
export const neededPaths = (task: Task, node: string): ReadonlyArray<ReadonlyArray<string>> => [
  ...task.facts.filter((f) => f.call === node).map((f) => f.path.split(".").filter((s) => s !== "")),
  ...task.gold.flatMap((g) =>
    Refs.collectRefs(g.arguments).flatMap((site) => site._tag === "Ref" && site.target.call === node ? [site.target.path] : [])
  )
]

/**
 * What an observation of a call made for `node` with another tool shows an agent: an error (that tool refuses the
 * request), or an output without a value the node must provide. `undefined` when the output has every such value,
 * so nothing in the observation tells the agent it called the wrong tool.
 */
export const unservedBy = (task: Task, node: string, outcome: CallOutcome): string | undefined => {
  if (outcome._tag === "error") return `${outcome.error.status} ${outcome.error.kind}`
  const missing = neededPaths(task, node).find((path) => !Refs.select(outcome.payload, path).ok)
  return missing === undefined ? undefined : `no "${missing.join(".")}" in its output`
}

/**
 * Which agent call completed each gold node, when the agent followed a plan of its own: a node of the plan with the
 * gold id and tool, else the first unclaimed successful call of the gold tool, preferring one whose literal
 * arguments equal the gold ones.
 */
const alignGold = (
  task: Task,
  history: ReadonlyArray<Step>,
  plan: ReadonlyArray<PlanNode>,
  done: ReadonlyMap<string, Completed>
): ReadonlyMap<string, Completed> => {
  const out = new Map<string, Completed>()
  const claimed = new Set<string>()
  for (const g of task.gold) {
    const completed = done.get(g.id)
    if (completed !== undefined && plan.some((n) => n.id === g.id && n.tool === g.tool)) {
      out.set(g.id, completed)
      claimed.add(completed.callId)
    }
  }
  const successes = history.flatMap((s) => s.observations.filter((o) => o.attempts > 0 && o.outcome._tag === "ok"))
  for (const g of task.gold) {
    if (out.has(g.id)) continue
    const candidates = successes.filter((o) => o.tool === g.tool && !claimed.has(o.callId))
    const literal = Object.entries(literalArguments(g.arguments))
    const pick = candidates.find((o) => literal.every(([k, v]) => canonicalJson(o.arguments[k]) === canonicalJson(v))) ?? candidates[0]
    if (pick === undefined || pick.outcome._tag !== "ok") continue
    out.set(g.id, { callId: pick.callId, payload: pick.outcome.payload })
    claimed.add(pick.callId)
  }
  return out
}

/** The arguments that hold no `$ref` anywhere inside: the values a call passes literally. */
export const literalArguments = (args: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(args).filter(([, v]) => Refs.collectRefs({ v }).length === 0))

/** Rewrites `$ref`s to plan node ids into refs to the agent's own calls that completed those nodes. */
export const rewriteRefs = (args: JsonObject, done: ReadonlyMap<string, Completed>): JsonObject => {
  const walk = (v: Json): Json => {
    if (Array.isArray(v)) return v.map(walk)
    if (v !== null && typeof v === "object") {
      const o = v as JsonObject
      const ref = o["$ref"]
      if (typeof ref === "string" && Object.keys(o).length === 1) {
        const parsed = Refs.parseRef(ref)
        if (parsed.ok) {
          const target = done.get(parsed.target.call)
          if (target !== undefined) return { $ref: Refs.formatRef({ ...parsed.target, call: target.callId }) }
        }
        return o
      }
      const out: Record<string, Json> = {}
      for (const [k, x] of Object.entries(o)) out[k] = walk(x)
      return out
    }
    return v
  }
  return walk(args) as JsonObject
}
