/**
 * The scripted multi-agent teacher: planner, searcher, executor and answerer roles that may read the task's
 * privileged gold DAG, with a mistake rate so demonstrations are diverse and show recovery. Produces ordinary turns.
 */
import { Effect, Layer } from "effect"
import type { CallId, ToolName } from "./domain/Ids.ts"
import type { Json, JsonObject } from "./domain/Json.ts"
import type { Plan } from "./domain/Plan.ts"
import type { GoldCall, Task } from "./domain/Task.ts"
import type { ToolSpec } from "./domain/Tool.ts"
import type { Step } from "./domain/Trajectory.ts"
import type { SearchQuery, Turn } from "./domain/Turn.ts"
import { hashParts, rng } from "./math/Random.ts"
import type { Rng } from "./math/Random.ts"
import * as ParaAct from "./ParaAct.ts"
import { Policy, PolicyError } from "./Policy.ts"
import type { PolicyContext, PolicyOutput } from "./Policy.ts"
import * as Refs from "./Refs.ts"
import { ToolLibrary } from "./ToolLibrary.ts"
import type { Library } from "./ToolLibrary.ts"

/** How the teacher behaves. */
export interface TeacherOptions {
  /**
   * Probability of each kind of mistake a role can make at a decision point: the searcher writes a vague query, the
   * executor sends broken arguments on a first attempt, the planner forgets a dependency, the answerer omits a fact.
   */
  readonly mistakeRate: number
  /** Search attempts per tool before the teacher gives up on finding it. */
  readonly searchAttempts: number
  /** Attempts per gold call (first try + retries) before the teacher gives up on it. */
  readonly callAttempts: number
}

/** Defaults: 10% mistakes, 3 searches per tool, 3 attempts per call. */
export const defaultOptions: TeacherOptions = { mistakeRate: 0.1, searchAttempts: 3, callAttempts: 3 }

/** What the teacher knows after reading the history (its roles share this board). */
export interface Board {
  readonly task: Task
  readonly gold: ReadonlyArray<GoldCall>
  /** Gold node id → the agent call id that completed it, with its payload. */
  readonly done: ReadonlyMap<string, { readonly callId: CallId; readonly payload: Json }>
  /** Gold node id → attempts made (calls actually run). */
  readonly attempts: ReadonlyMap<string, number>
  /** Gold node id → the last error observed for it (kind). */
  readonly lastError: ReadonlyMap<string, string>
  /** Tools the searches returned so far. */
  readonly seen: ReadonlySet<string>
  /** Tool → searches made for it so far. */
  readonly searched: ReadonlyMap<string, number>
  /** Whether a plan was emitted on this path. */
  readonly planned: boolean
  /** Whether any call ran on this path. */
  readonly executed: boolean
  /** Every call id used on this path. */
  readonly usedIds: ReadonlySet<string>
}

/** The teacher's capability slots: the first gold node needing each tool names the slot (`c2` → its tool). */
const slotTools = (task: Task): ReadonlyMap<string, string> => {
  const out = new Map<string, string>()
  const taken = new Set<string>()
  for (const g of task.gold) {
    if (taken.has(g.tool)) continue
    taken.add(g.tool)
    out.set(g.id, g.tool)
  }
  return out
}

/** The gold node a teacher call id belongs to: `c2` or a retry `c2_r7`. */
const goldIdOf = (id: string): string => id.replace(/_r\d+$/, "")

/** Reads the board off a history (the path the agent is on, plus abandoned DFSDT siblings for counting). */
export const readBoard = (task: Task, history: ReadonlyArray<Step>, abandoned: ReadonlyArray<Step> = []): Board => {
  const done = new Map<string, { callId: CallId; payload: Json }>()
  const attempts = new Map<string, number>()
  const lastError = new Map<string, string>()
  const seen = new Set<string>()
  const searched = new Map<string, number>()
  const usedIds = new Set<string>()
  const slotTool = slotTools(task)
  let planned = false
  let executed = false
  const count = (step: Step, onPath: boolean) => {
    if (onPath && step.turn?.plan !== undefined && step.validation.planError === undefined) planned = true
    for (const s of step.searches) {
      if (onPath) for (const h of s.hits) seen.add(h.tool)
      // a search slot of the teacher is named after the first gold node that needs the tool
      const tool = slotTool.get(s.slot)
      if (tool !== undefined) searched.set(tool, (searched.get(tool) ?? 0) + 1)
    }
    for (const o of step.observations) {
      const gold = goldIdOf(o.callId)
      if (onPath) usedIds.add(o.callId)
      if (o.attempts === 0) continue
      if (onPath) executed = true
      attempts.set(gold, (attempts.get(gold) ?? 0) + 1)
      if (o.outcome._tag === "ok") {
        if (onPath && !done.has(gold)) done.set(gold, { callId: o.callId, payload: o.outcome.payload })
      } else {
        lastError.set(gold, o.outcome.error.kind)
      }
    }
  }
  for (const step of history) count(step, true)
  for (const step of abandoned) count(step, false)
  return { task, gold: task.gold, done, attempts, lastError, seen, searched, planned, executed, usedIds }
}

/** Rewrites `$ref`s to gold ids into refs to the agent's own calls that completed those nodes. */
export const rewriteRefs = (args: JsonObject, done: Board["done"]): JsonObject => {
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
// The roles

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

const firstSentence = (text: string): string => {
  const cleaned = text.replace(/\s+/g, " ").trim()
  const cut = cleaned.search(/[.!?](\s|$)/)
  return (cut > 0 ? cleaned.slice(0, cut) : cleaned).slice(0, 160)
}

/** Searcher: one query per tool still to find, phrased differently on each attempt (a vague one by mistake). */
export const searcher = (tools: ReadonlyArray<string>, board: Board, library: Library, random: Rng, options: TeacherOptions): Array<SearchQuery> =>
  tools.map((tool) => {
    const spec = library.get(tool)
    const attempt = board.searched.get(tool) ?? 0
    const slot = board.gold.find((g) => g.tool === tool)?.id ?? tool
    if (spec === undefined) return { slot, query: tool.replace(/_/g, " ") }
    const phrasings = [
      firstSentence(spec.description),
      `${spec.apiName.replace(/[_-]+/g, " ")} ${spec.group}`,
      `${spec.group} ${spec.category} ${firstSentence(spec.description)}`
    ]
    const vague = attempt === 0 && random.next() < options.mistakeRate
    const query = vague ? `${spec.category} data` : (phrasings[attempt % phrasings.length] as string)
    return { slot, query }
  })

/** Executor: calls for the ready gold nodes (deps done, tool seen), retrying failures; broken arguments by mistake. */
export const executor = (ready: ReadonlyArray<GoldCall>, board: Board, round: number, random: Rng, options: TeacherOptions, library: Library) =>
  ready.map((g) => {
    const tried = board.attempts.get(g.id) ?? 0
    const id = (tried === 0 && !board.usedIds.has(g.id) ? g.id : `${g.id}_r${round}`) as CallId
    let args = rewriteRefs(g.arguments, board.done)
    if (tried === 0 && random.next() < options.mistakeRate) args = breakArguments(args, library.get(g.tool))
    return { id, tool: g.tool as ToolName, arguments: args }
  })

/** A realistic argument slip: a required argument left out, or a number sent as a word. */
const breakArguments = (args: JsonObject, spec: ToolSpec | undefined): JsonObject => {
  const required = spec?.parameters.required ?? []
  const victim = required.find((k) => k in args)
  if (victim === undefined) return args
  const { [victim]: _dropped, ...rest } = args
  return rest
}

/** Answerer: states every gold fact it observed; says plainly which ones the tools did not give; may omit one by mistake. */
export const answerer = (board: Board, random: Rng, options: TeacherOptions): string => {
  const found: Array<string> = []
  const missing: Array<string> = []
  for (const fact of board.task.facts) {
    const done = board.done.get(fact.call)
    const value = done === undefined ? undefined : Refs.select(done.payload, fact.path.split(".").filter((s) => s !== ""))
    if (value !== undefined && value.ok) found.push(`${fact.key}: ${typeof value.value === "string" ? value.value : JSON.stringify(value.value)}`)
    else missing.push(fact.key)
  }
  if (found.length > 1 && random.next() < options.mistakeRate) found.splice(random.int(found.length), 1)
  const parts: Array<string> = []
  if (found.length > 0) parts.push(`Here is what the tools returned. ${found.join("; ")}.`)
  if (missing.length > 0) parts.push(`I could not obtain ${missing.join(", ")}: the tools failed or were not found.`)
  if (parts.length === 0) parts.push("I could not complete the request: the tools failed or were not found.")
  return parts.join(" ")
}

// ------------------------------------------------------------------------------------------------------------
// The orchestrator: which roles act this round, by paradigm

/** The gold nodes whose deps are done and whose tool was seen, not done, with attempts left. */
const readyNodes = (board: Board, options: TeacherOptions): Array<GoldCall> =>
  board.gold.filter((g) =>
    !board.done.has(g.id) &&
    board.seen.has(g.tool) &&
    (board.attempts.get(g.id) ?? 0) < options.callAttempts &&
    g.deps.every((d) => board.done.has(d))
  )

/** Tools of not-done gold nodes that were not seen yet and may still be searched for. */
const toolsToFind = (board: Board, options: TeacherOptions): Array<string> => {
  const out: Array<string> = []
  for (const g of board.gold) {
    if (board.done.has(g.id) || board.seen.has(g.tool) || out.includes(g.tool)) continue
    if ((board.searched.get(g.tool) ?? 0) < options.searchAttempts) out.push(g.tool)
  }
  return out
}

/** The teacher's next turn. */
export const nextTurn = (context: PolicyContext, task: Task, library: Library, options: TeacherOptions): Turn => {
  const board = readBoard(task, context.history, context.abandoned ?? [])
  const random = rng(hashParts(context.seed, task.id, context.round, context.history.length))
  const answer = (): Turn => ({ think: "Every step I can take is done; answering.", searches: [], calls: [], answer: answerer(board, random, options) })
  if (context.controller === "Answer") return answer()
  const find = toolsToFind(board, options)
  const ready = readyNodes(board, options)
  const plan = !board.planned && (context.paradigm === "ParaAct" || context.paradigm === "ExploreThenExecute")
    ? planner(board, library, random, options)
    : undefined
  const withPlan = (turn: Turn): Turn => (plan === undefined ? turn : { ...turn, plan })
  switch (context.paradigm) {
    case "ParaAct": {
      // Explore all missing tools at once; otherwise execute every ready node at once.
      if (find.length > 0 && (ready.length === 0 || !board.executed)) {
        return withPlan({ think: `Looking for ${find.length} tool(s).`, searches: searcher(find, board, library, random, options), calls: [] })
      }
      if (ready.length > 0) {
        return withPlan({ think: `Running ${ready.length} independent call(s).`, searches: [], calls: executor(ready, board, context.round, random, options, library) })
      }
      if (find.length > 0) {
        return { think: "Searching again for what is still missing.", searches: searcher(find, board, library, random, options), calls: [] }
      }
      return answer()
    }
    case "ExploreThenExecute": {
      if (!board.executed && find.length > 0) {
        return withPlan({ think: "Exploring before executing.", searches: searcher(find, board, library, random, options), calls: [] })
      }
      const next = ready[0]
      if (next !== undefined) return withPlan({ think: `Executing ${next.id}.`, searches: [], calls: executor([next], board, context.round, random, options, library) })
      return answer()
    }
    case "ReAct":
    case "DFSDT": {
      // One action: the first gold node in order that is not done decides what it is.
      for (const g of board.gold) {
        if (board.done.has(g.id)) continue
        if (!g.deps.every((d) => board.done.has(d))) continue
        if (!board.seen.has(g.tool)) {
          if ((board.searched.get(g.tool) ?? 0) >= options.searchAttempts) continue
          return { think: `Looking for a tool for ${g.id}.`, searches: searcher([g.tool], board, library, random, options), calls: [] }
        }
        if ((board.attempts.get(g.id) ?? 0) >= options.callAttempts) continue
        return { think: `Calling ${g.tool}.`, searches: [], calls: executor([g], board, context.round, random, options, library) }
      }
      return answer()
    }
  }
}

/** The scripted teacher as a Policy layer (privileged: it reads the gold DAG). */
export const layer = (overrides: Partial<TeacherOptions> = {}) =>
  Layer.effect(
    Policy,
    Effect.gen(function*() {
      const library = yield* ToolLibrary
      const options: TeacherOptions = { ...defaultOptions, ...overrides }
      const act = Effect.fn("Teacher.act")(function*(context: PolicyContext) {
        const task = context.task
        if (task === undefined) return yield* new PolicyError({ message: "the teacher needs the task's gold DAG (privileged context)" })
        const turn = nextTurn(context, task, library, options)
        const output: PolicyOutput = { text: ParaAct.printTurn(turn), turn, usage: { promptTokens: 0, completionTokens: 0 } }
        return output
      })
      return Policy.of({ name: "teacher", privileged: true, act })
    })
  )
