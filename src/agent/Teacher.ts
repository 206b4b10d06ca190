/**
 * The multi-agent teacher: planner, searcher, executor and answerer roles composed into ordinary turns by an
 * orchestrator that decides, per paradigm, which roles act each round. The roles are an interface: the scripted
 * roles here read the task's privileged gold DAG (with a mistake rate, so demonstrations are diverse and show
 * recovery); layers/TeacherLlm.ts makes each role its own LLM call.
 */
import { Effect, Layer } from "effect"
import type { CallId, ToolName } from "../domain/Ids.ts"
import { ConfigError } from "../domain/Errors.ts"
import type { Json, JsonObject } from "../domain/Json.ts"
import type { Plan, PlanNode } from "../domain/Plan.ts"
import type { GoldCall, Task } from "../domain/Task.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import type { Paradigm, Step } from "../domain/Trajectory.ts"
import type { SearchQuery, Turn } from "../domain/Turn.ts"
import { canonicalJson } from "../math/CanonicalJson.ts"
import * as PlanMath from "../math/PlanDag.ts"
import { hashParts, rng } from "../math/Random.ts"
import type { Rng } from "../math/Random.ts"
import * as ParaAct from "../protocol/ParaAct.ts"
import { Policy, PolicyError } from "./Policy.ts"
import type { PolicyContext, PolicyOutput } from "./Policy.ts"
import * as Refs from "../protocol/Refs.ts"
import * as History from "../math/History.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import type { Library } from "../toolenv/ToolLibrary.ts"

/** How the teacher behaves. */
export interface TeacherOptions {
  /**
   * Probability of each kind of mistake a scripted role can make at a decision point: the searcher writes a vague
   * query, the executor sends broken arguments on a first attempt, the planner forgets a dependency, the answerer
   * omits a fact.
   */
  readonly mistakeRate: number
  /** Search attempts per capability slot before the teacher gives up on finding its tool. */
  readonly searchAttempts: number
  /** Attempts per plan node (first try + retries) before the teacher gives up on it. */
  readonly callAttempts: number
}

/** Defaults: 10% mistakes, 3 searches per slot, 3 attempts per call. */
export const defaultOptions: TeacherOptions = { mistakeRate: 0.1, searchAttempts: 3, callAttempts: 3 }

/** Checks options (a rate in [0, 1], attempt counts that are positive integers); a bad value names its field. */
export const validateOptions = (options: TeacherOptions): Effect.Effect<TeacherOptions, ConfigError> => {
  const bad = (field: keyof TeacherOptions, message: string) =>
    Effect.fail(new ConfigError({ field, value: String(options[field]), message }))
  if (!(options.mistakeRate >= 0 && options.mistakeRate <= 1)) return bad("mistakeRate", "mistakeRate must be between 0 and 1")
  if (!Number.isInteger(options.searchAttempts) || options.searchAttempts < 1) {
    return bad("searchAttempts", "searchAttempts must be a positive integer")
  }
  if (!Number.isInteger(options.callAttempts) || options.callAttempts < 1) return bad("callAttempts", "callAttempts must be a positive integer")
  return Effect.succeed(options)
}

// ------------------------------------------------------------------------------------------------------------
// The board: what the roles know after reading the history

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
  let planned = false
  let executed = false
  const count = (step: Step, onPath: boolean, index: number) => {
    if (onPath && step.turn?.plan !== undefined && step.validation.planError === undefined) planned = true
    if (onPath) for (const c of step.turn?.calls ?? []) usedIds.add(c.id)
    for (const s of step.searches) {
      searched.set(s.slot, (searched.get(s.slot) ?? 0) + 1)
    }
    for (const o of step.observations) {
      if (onPath) usedIds.add(o.callId)
      if (o.attempts === 0) continue
      if (onPath) executed = true
      const node = nodeIdOf(o.callId)
      if (toolOf.get(node) !== o.tool) continue
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
  return { task, gold: task.gold, nodes: plan, done, goldDone, attempts, lastError, lastTried, seen, searched, planned, executed, usedIds }
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

// ------------------------------------------------------------------------------------------------------------
// The roles as an interface

/** The four roles. */
export type RoleName = "plan" | "search" | "execute" | "answer"

/** The roles in the order a round consults them. */
export const roleNames: ReadonlyArray<RoleName> = ["plan", "search", "execute", "answer"]

/** What a role sees: the rollout's context, the task (privileged), the board, and the round's random stream. */
export interface RoleInput {
  readonly context: PolicyContext
  readonly task: Task
  readonly board: Board
  /** Scripted roles draw their mistakes from it, in the order the orchestrator consults them. */
  readonly random: Rng
}

/** A role's piece of the turn, with an optional line of reasoning for the turn's `<think>`. */
export interface Piece<A> {
  readonly value: A
  readonly note?: string
}

/** One call the executor decided to make: a ready node and its arguments (ids are assigned by the orchestrator). */
export interface NodeCall {
  readonly node: BoundNode
  readonly arguments: JsonObject
}

/** The roles the orchestrator consults. */
export interface Roles<E = never, R = never> {
  /**
   * `gold`: the orchestrator follows the task's gold DAG and the planner's plan is only shown (scripted roles);
   * `emitted`: it follows the latest plan the planner emitted on the path, revising it when needed (LLM roles).
   */
  readonly follows: "gold" | "emitted"
  /** A plan DAG of capability slots. */
  readonly plan: (input: RoleInput) => Effect.Effect<Piece<Plan>, E, R>
  /** One query per slot (the node that names it) still lacking a tool. */
  readonly search: (input: RoleInput, slots: ReadonlyArray<PlanNode>) => Effect.Effect<Piece<ReadonlyArray<SearchQuery>>, E, R>
  /** Calls for ready nodes; an empty list means none can be made now. */
  readonly execute: (input: RoleInput, ready: ReadonlyArray<BoundNode>) => Effect.Effect<Piece<ReadonlyArray<NodeCall>>, E, R>
  /** The final answer. */
  readonly answer: (input: RoleInput) => Effect.Effect<Piece<string>, E, R>
}

// ------------------------------------------------------------------------------------------------------------
// The scripted roles

/** Planner: the gold DAG as a plan, each node bound to its tool; may forget one dependency. */
export const planner = (board: Board, library: Library, random: Rng, options: TeacherOptions): Plan => ({
  nodes: board.gold.map((g) => {
    const spec = library.get(g.tool)
    const forget = g.deps.length > 0 && random.next() < options.mistakeRate
    return {
      id: g.id,
      tool: g.tool,
      ...(spec !== undefined ? { slot: firstSentence(spec.description) } : {}),
      deps: forget ? g.deps.slice(1) : g.deps
    }
  })
})

/** The first sentence of a text, whitespace collapsed, at most 160 characters. */
export const firstSentence = (text: string): string => {
  const cleaned = text.replace(/\s+/g, " ").trim()
  const cut = cleaned.search(/[.!?](\s|$)/)
  return (cut > 0 ? cleaned.slice(0, cut) : cleaned).slice(0, 160)
}

/**
 * Searcher: one query per slot, phrased differently on each attempt from the bound tool's documentation (a vague
 * one by mistake); a slot without a known tool is searched by its capability words.
 */
export const searcher = (slots: ReadonlyArray<PlanNode>, board: Board, library: Library, random: Rng, options: TeacherOptions): Array<SearchQuery> =>
  slots.map((node) => {
    const slot = node.id
    const spec = node.tool === undefined ? undefined : library.get(node.tool)
    if (spec === undefined) return { slot, query: node.tool?.replace(/_/g, " ") ?? (node.slot ?? node.id) }
    const attempt = board.searched.get(slot) ?? 0
    const phrasings = [
      firstSentence(spec.description),
      `${spec.apiName.replace(/[_-]+/g, " ")} ${spec.group}`,
      `${spec.group} ${spec.category} ${firstSentence(spec.description)}`
    ]
    const vague = attempt === 0 && random.next() < options.mistakeRate
    const query = vague ? `${spec.category} data` : (phrasings[attempt % phrasings.length] as string)
    return { slot, query }
  })

/** The gold call a node stands for: same id and tool, else an open gold call of the same tool, else any of it. */
const goldCallFor = (board: Board, node: BoundNode): GoldCall | undefined =>
  board.gold.find((g) => g.id === node.id && g.tool === node.tool) ??
    board.gold.find((g) => g.tool === node.tool && !board.goldDone.has(g.id)) ??
    board.gold.find((g) => g.tool === node.tool)

/**
 * Executor: the gold arguments of each ready node, refs rewritten to the calls that completed their targets; broken
 * arguments on a first attempt by mistake. A node with no gold call of its tool gets no call.
 */
export const executor = (ready: ReadonlyArray<BoundNode>, board: Board, random: Rng, options: TeacherOptions, library: Library): Array<NodeCall> =>
  ready.flatMap((node) => {
    const gold = goldCallFor(board, node)
    if (gold === undefined) return []
    const tried = board.attempts.get(node.id) ?? 0
    let args = rewriteRefs(gold.arguments, board.goldDone)
    if (tried === 0 && random.next() < options.mistakeRate) args = breakArguments(args, library.get(node.tool))
    return [{ node, arguments: args }]
  })

/** A realistic argument slip: a required argument left out. */
const breakArguments = (args: JsonObject, spec: ToolSpec | undefined): JsonObject => {
  const required = spec?.parameters.required ?? []
  const victim = required.find((k) => k in args)
  if (victim === undefined) return args
  const { [victim]: _dropped, ...rest } = args
  return rest
}

/**
 * The label a fact is stated under: list positions are folded away (`fund 2 of the funds in X` → `the funds in X`),
 * so an answer reads "the funds in X: A, B, C" instead of numbering what the tools did not number.
 */
export const factLabel = (key: string): string => {
  const listed = /^[^"]+? \d+ of (.+)$/.exec(key)
  return listed?.[1] ?? key
}

/** Answerer: states every gold fact it observed; says plainly which ones the tools did not give; may omit one by mistake. */
export const answerer = (board: Board, random: Rng, options: TeacherOptions): string => {
  const found: Array<{ readonly label: string; readonly value: string }> = []
  const missing = new Set<string>()
  for (const fact of board.task.facts) {
    const done = board.goldDone.get(fact.call)
    const value = done === undefined ? undefined : Refs.select(done.payload, fact.path.split(".").filter((s) => s !== ""))
    if (value !== undefined && value.ok) {
      found.push({ label: factLabel(fact.key), value: typeof value.value === "string" ? value.value : JSON.stringify(value.value) })
    } else {
      missing.add(factLabel(fact.key))
    }
  }
  if (found.length > 1 && random.next() < options.mistakeRate) found.splice(random.int(found.length), 1)
  const grouped = new Map<string, Array<string>>()
  for (const f of found) grouped.set(f.label, [...(grouped.get(f.label) ?? []), f.value])
  const parts: Array<string> = []
  if (grouped.size > 0) {
    parts.push(`Here is what the tools returned. ${[...grouped].map(([label, values]) => `${label}: ${values.join(", ")}`).join("; ")}.`)
  }
  if (missing.size > 0) parts.push(`I could not obtain ${[...missing].join(", ")}: the tools failed or were not found.`)
  if (parts.length === 0) parts.push("I could not complete the request: the tools failed or were not found.")
  return parts.join(" ")
}

/** The scripted roles: privileged, following the gold DAG, with the option's mistake rate. */
export const scriptedRoles = (library: Library, options: TeacherOptions): Roles => ({
  follows: "gold",
  plan: ({ board, random }) => Effect.succeed({ value: planner(board, library, random, options) }),
  search: ({ board, random }, slots) => Effect.succeed({ value: searcher(slots, board, library, random, options) }),
  execute: ({ board, random }, ready) => Effect.succeed({ value: executor(ready, board, random, options, library) }),
  answer: ({ board, random }) => Effect.succeed({ value: answerer(board, random, options) })
})

// ------------------------------------------------------------------------------------------------------------
// The orchestrator: which roles act this round, by paradigm

const isBound = (node: PlanNode): node is BoundNode => node.tool !== undefined

/** Whether a node's tool is known and was retrieved on the path. */
const isFound = (board: Board, node: PlanNode): node is BoundNode => isBound(node) && board.seen.has(node.tool)

/** The plan nodes whose deps are done and whose tool was seen, not done, with attempts left. */
export const readyNodes = (board: Board, options: TeacherOptions): Array<BoundNode> =>
  board.nodes.filter((n): n is BoundNode =>
    !board.done.has(n.id) &&
    isFound(board, n) &&
    (board.attempts.get(n.id) ?? 0) < options.callAttempts &&
    n.deps.every((d) => board.done.has(d))
  )

/** The node that names `node`'s search slot, when that slot has search attempts left. */
const searchableSlot = (board: Board, node: PlanNode, options: TeacherOptions): PlanNode | undefined => {
  const slot = slotOf(board.nodes, node)
  return (board.searched.get(slot) ?? 0) < options.searchAttempts ? (board.nodes.find((o) => o.id === slot) ?? node) : undefined
}

/** One node per slot of the not-done nodes whose tool was not found yet and that may still be searched for. */
export const slotsToFind = (board: Board, options: TeacherOptions): Array<PlanNode> => {
  const out: Array<PlanNode> = []
  for (const n of board.nodes) {
    if (board.done.has(n.id) || isFound(board, n)) continue
    const slot = searchableSlot(board, n, options)
    if (slot !== undefined && !out.some((o) => o.id === slot.id)) out.push(slot)
  }
  return out
}

/**
 * Whether a plan the roles emitted needs revising: tools were found since it was written while a node whose slot
 * was already searched still lacks a found tool (the planner may bind one of them), or a node ran out of attempts
 * after it was written. A slot not searched yet triggers nothing: its own search comes first.
 */
export const needsRevision = (board: Board, emitted: EmittedPlan, options: TeacherOptions): boolean => {
  const open = board.nodes.filter((n) => !board.done.has(n.id))
  const newTools = [...board.seen].some((t) => !emitted.seenBefore.has(t))
  const searchedInVain = (n: PlanNode) => !isFound(board, n) && (board.searched.get(slotOf(board.nodes, n)) ?? 0) > 0
  if (newTools && open.some(searchedInVain)) return true
  return open.some((n) => (board.attempts.get(n.id) ?? 0) >= options.callAttempts && (board.lastTried.get(n.id) ?? -1) > emitted.index)
}

/** What a round may do, before the roles are consulted. */
export type Action =
  | { readonly _tag: "Search"; readonly slots: ReadonlyArray<PlanNode>; readonly think: string }
  | { readonly _tag: "Execute"; readonly nodes: ReadonlyArray<BoundNode>; readonly think: string }

/**
 * The round's options in order of preference; the first that yields an action is taken (an executor may decline
 * every call), and with none left the answerer speaks.
 * - ParaAct: search every missing slot at once until execution starts, then run every ready node at once; search
 *   again for what is still missing when nothing is ready.
 * - ExploreThenExecute: search every missing slot until the first call, then one ready node per round.
 * - ReAct and DFSDT: one action, decided by the first node in plan order that is not done and whose deps are.
 */
export const decide = (board: Board, paradigm: Paradigm, options: TeacherOptions): ReadonlyArray<Action> => {
  const find = slotsToFind(board, options)
  const ready = readyNodes(board, options)
  switch (paradigm) {
    case "ParaAct": {
      const out: Array<Action> = []
      if (find.length > 0 && (ready.length === 0 || !board.executed)) {
        out.push({ _tag: "Search", slots: find, think: `Looking for ${find.length} tool(s).` })
      }
      if (ready.length > 0) out.push({ _tag: "Execute", nodes: ready, think: `Running ${ready.length} independent call(s).` })
      if (find.length > 0) out.push({ _tag: "Search", slots: find, think: "Searching again for what is still missing." })
      return out
    }
    case "ExploreThenExecute": {
      const out: Array<Action> = []
      if (!board.executed && find.length > 0) out.push({ _tag: "Search", slots: find, think: "Exploring before executing." })
      for (const next of ready) out.push({ _tag: "Execute", nodes: [next], think: `Executing ${next.id}.` })
      return out
    }
    case "ReAct":
    case "DFSDT": {
      const out: Array<Action> = []
      for (const n of board.nodes) {
        if (board.done.has(n.id)) continue
        if (!n.deps.every((d) => board.done.has(d))) continue
        if (!isFound(board, n)) {
          const slot = searchableSlot(board, n, options)
          if (slot !== undefined) out.push({ _tag: "Search", slots: [slot], think: `Looking for a tool for ${n.id}.` })
          continue
        }
        if ((board.attempts.get(n.id) ?? 0) >= options.callAttempts) continue
        out.push({ _tag: "Execute", nodes: [n], think: `Calling ${n.tool}.` })
      }
      return out
    }
  }
}

/** The id of a node's next call: the node id on a first try, else a retry id `<node>_r<round>`. */
export const callIdFor = (node: PlanNode, board: Board, round: number): CallId =>
  ((board.attempts.get(node.id) ?? 0) === 0 && !board.usedIds.has(node.id) ? node.id : `${node.id}_r${round}`) as CallId

/** Free text fit for `<think>` / `<answer>`: no closing tag of its own, no surrounding whitespace. */
export const cleanText = (text: string, tag: "think" | "answer"): string => text.split(ParaAct.closeTag(tag)).join(" ").trim()

const thinkOf = (fallback: string, notes: ReadonlyArray<string | undefined>): string => {
  const text = cleanText(notes.filter((n): n is string => n !== undefined && n.trim() !== "").join(" "), "think")
  return text === "" ? fallback : text
}

/** The paradigms in which a teacher that follows the gold DAG shows its plan. */
const showsPlan: ReadonlySet<Paradigm> = new Set(["ParaAct", "ExploreThenExecute"])

/**
 * The teacher's next turn: reads the board, consults the planner when a plan is due, picks the round's action with
 * {@link decide}, and asks the role for it. Roles are consulted in order plan → search | execute → answer, so the
 * scripted roles draw from the round's random stream in a fixed order.
 */
export const nextTurn = <E, R>(context: PolicyContext, task: Task, roles: Roles<E, R>, options: TeacherOptions): Effect.Effect<Turn, E, R> =>
  Effect.gen(function*() {
    const abandoned = context.abandoned ?? []
    const random = rng(hashParts(context.seed, task.id, context.round, context.history.length))
    const emitted = roles.follows === "gold" ? undefined : latestPlan(context.history)
    const nodesOf = (plan: Plan | undefined) => roles.follows === "gold" ? undefined : (plan?.nodes ?? [])
    let board = readBoard(task, context.history, abandoned, nodesOf(emitted?.plan))
    const input = (): RoleInput => ({ context, task, board, random })
    const answer = (notes: ReadonlyArray<string | undefined>) =>
      Effect.map(roles.answer(input()), (piece): Turn => ({
        think: thinkOf("Every step I can take is done; answering.", [...notes, piece.note]),
        searches: [],
        calls: [],
        answer: cleanText(piece.value, "answer")
      }))
    if (context.controller === "Answer") return yield* answer([])
    const planDue = roles.follows === "gold"
      ? !board.planned && showsPlan.has(context.paradigm)
      : emitted === undefined || needsRevision(board, emitted, options)
    const planned = planDue ? yield* roles.plan(input()) : undefined
    if (planned !== undefined && roles.follows === "emitted") board = readBoard(task, context.history, abandoned, nodesOf(planned.value))
    // A revision identical to the plan in force (ids, tools, deps: the reward's identity) is not shown again, since a
    // repeated plan earns no plan credit; the plan in force stays.
    const shown = planned !== undefined && !(emitted !== undefined && PlanMath.samePlan(emitted.plan, planned.value)) ? planned : undefined
    const planNote = shown?.note
    const withPlan = (turn: Turn): Turn => (shown === undefined ? turn : { ...turn, plan: shown.value })
    for (const action of decide(board, context.paradigm, options)) {
      if (action._tag === "Search") {
        const piece = yield* roles.search(input(), action.slots)
        if (piece.value.length === 0) continue
        return withPlan({ think: thinkOf(action.think, [planNote, piece.note]), searches: piece.value, calls: [] })
      }
      const piece = yield* roles.execute(input(), action.nodes)
      if (piece.value.length === 0) continue
      const calls = piece.value.map((c) => ({ id: callIdFor(c.node, board, context.round), tool: c.node.tool, arguments: c.arguments }))
      return withPlan({ think: thinkOf(action.think, [planNote, piece.note]), searches: [], calls })
    }
    return yield* answer([planNote])
  })

/** The turn as the policy's output: its canonical text, the structured turn, and the usage of the round. */
export const toOutput = (turn: Turn, usage: PolicyOutput["usage"]): PolicyOutput => ({ text: ParaAct.printTurn(turn), turn, usage })

/** The scripted teacher as a Policy layer (privileged: it reads the gold DAG). */
export const layer = (overrides: Partial<TeacherOptions> = {}): Layer.Layer<Policy, ConfigError, ToolLibrary> =>
  Layer.effect(
    Policy,
    Effect.gen(function*() {
      const library = yield* ToolLibrary
      const options = yield* validateOptions({ ...defaultOptions, ...overrides })
      const roles = scriptedRoles(library, options)
      const act = Effect.fn("Teacher.act")(function*(context: PolicyContext) {
        const task = context.task
        if (task === undefined) return yield* new PolicyError({ message: "the teacher needs the task's gold DAG (privileged context)" })
        const turn = yield* nextTurn(context, task, roles, options)
        return toOutput(turn, { promptTokens: 0, completionTokens: 0 })
      })
      return Policy.of({ name: "teacher", privileged: true, act })
    })
  )
