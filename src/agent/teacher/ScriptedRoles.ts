/**
 * The scripted roles: privileged, they read the task's gold DAG and make realistic mistakes at a given rate
 * (a vague query, a wrong one of the retrieved tools, a dropped argument, a forgotten dependency, an overlooked part
 * of the request, an omitted fact), so demonstrations show recovery.
 */
import { Effect } from "effect"
import * as ActionSpace from "../ActionSpace.ts"
import type { JsonObject } from "../../domain/Json.ts"
import type { Plan, PlanNode } from "../../domain/Plan.ts"
import type { GoldCall } from "../../domain/Task.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import type { SearchQuery } from "../../domain/Turn.ts"
import type { Rng } from "../../math/Random.ts"
import * as Refs from "../../protocol/Refs.ts"
import type { Library } from "../../toolenv/Library.ts"
import { type Board, type BoundNode, rewriteRefs, shownUnfit, slotOf } from "./Board.ts"
import type { TeacherOptions } from "./Options.ts"
import type { NodeCall, Roles } from "./Roles.ts"

/**
 * Planner: the gold DAG as a plan, each node bound to its tool; may forget one dependency; leaves out the node
 * `overlook` when given (a part of the request it overlooked).
 */
export const planner = (board: Board, library: Library, random: Rng, options: TeacherOptions, overlook?: string): Plan => ({
  nodes: board.gold.filter((g) => g.id !== overlook).map((g) => {
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

/**
 * The part of the request a first plan overlooks, by mistake: a node nothing depends on whose tool no other node
 * uses (a capability of its own), when the plan keeps another node. Drawn only when there is such a node.
 */
export const overlooked = (gold: ReadonlyArray<GoldCall>, random: Rng, options: TeacherOptions): string | undefined => {
  if (gold.length < 2) return undefined
  const candidates = gold.filter((g) => !gold.some((o) => o.deps.includes(g.id)) && !gold.some((o) => o.id !== g.id && o.tool === g.tool))
  if (candidates.length === 0 || !(random.next() < options.mistakeRate)) return undefined
  return random.pick(candidates).id
}

/**
 * The planner's reason when it adds what the first plan overlooked: the plan is carried out and the outputs hold
 * nothing for a part of the request.
 */
const overlookNote = (board: Board): string | undefined => {
  const missing = board.gold.filter((g) => !board.nodes.some((n) => n.id === g.id))
  if (missing.length === 0) return undefined
  const labels = missing.flatMap((g) => board.task.facts.filter((f) => f.call === g.id).slice(0, 1).map((f) => factLabel(f.key)))
  const what = labels.length > 0 ? labels.join(", ") : missing.map((g) => g.id).join(", ")
  return `The results so far say nothing about ${what}: my plan missed that part of the request; adding it.`
}

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
export const searcher = (slots: ReadonlyArray<PlanNode>, board: Board, library: Library, random: Rng, options: TeacherOptions): Array<SearchQuery> => {
  const taken = new Set<string>()
  const clauses = options.firstQuery === "request" ? ActionSpace.clausesOf(board.task.request) : []
  return slots.map((node) => {
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
    // from the request: the clause's capability words, or the whole clause when another slot of this round took them
    const fromRequest = attempt === 0 && options.firstQuery === "request"
      ? requestQueries(board.task, clauses, slot).find((q) => !taken.has(q))
      : undefined
    const query = vague ? `${spec.category} data` : fromRequest ?? (phrasings[attempt % phrasings.length] as string)
    taken.add(query)
    return { slot, query }
  })
}

/**
 * The clause of the request a gold call serves (privileged: it reads the gold DAG): the clause quoting one of its
 * argument values, else its first dependency's clause, else the clause that names most of its facts' words, else the
 * clause of a call that depends on it.
 */
export const clauseOfCall = (task: Board["task"], id: string, clauses: ReadonlyArray<string>, seen: ReadonlySet<string> = new Set()): number => {
  const gold = task.gold.find((g) => g.id === id)
  if (gold === undefined || seen.has(id)) return -1
  const visited = new Set([...seen, id])
  const values = Object.values(gold.arguments).filter((v): v is string => typeof v === "string" && v.length >= 3)
  const quoted = clauses.findIndex((c) => values.some((v) => c.includes(v)))
  if (quoted >= 0) return quoted
  for (const dep of gold.deps) {
    const at = clauseOfCall(task, dep, clauses, visited)
    if (at >= 0) return at
  }
  const words = new Set(task.facts.filter((f) => f.call === id).flatMap((f) => f.key.toLowerCase().split(/\W+/).filter((w) => w.length > 2)))
  if (words.size > 0) {
    const scores = clauses.map((c) => c.toLowerCase().split(/\W+/).filter((w) => words.has(w)).length)
    const best = Math.max(...scores)
    if (best > 0) return scores.indexOf(best)
  }
  for (const child of task.gold.filter((g) => g.deps.includes(gold.id))) {
    const at = clauseOfCall(task, child.id, clauses, visited)
    if (at >= 0) return at
  }
  return -1
}

/** A slot's request-grounded queries, best first: its clause's capability words, then the whole clause. */
const requestQueries = (task: Board["task"], clauses: ReadonlyArray<string>, slot: string): ReadonlyArray<string> => {
  const at = clauseOfCall(task, slot, clauses)
  if (at < 0) return []
  const { bare, full } = ActionSpace.clauseQueries(clauses[at] as string)
  return bare.length > 0 && bare !== full ? [bare, full] : [full]
}

/** The gold call a node stands for: same id and tool, else an open gold call of the same tool, else any of it. */
const goldCallFor = (board: Board, node: BoundNode): GoldCall | undefined =>
  board.gold.find((g) => g.id === node.id && g.tool === node.tool) ??
    board.gold.find((g) => g.tool === node.tool && !board.goldDone.has(g.id)) ??
    board.gold.find((g) => g.tool === node.tool)

/**
 * Executor: the gold arguments of each ready node, refs rewritten to the calls that completed their targets. By
 * mistake, on a node's first call: another tool its slot's searches returned (one that no gold call uses), with the
 * arguments that tool's schema names; or else broken arguments. A transient failure of the other tool is retried as
 * it was. A node with no gold call of its tool gets no call.
 */
export const executor = (ready: ReadonlyArray<BoundNode>, board: Board, random: Rng, options: TeacherOptions, library: Library): Array<NodeCall> =>
  ready.flatMap((node): Array<NodeCall> => {
    const gold = goldCallFor(board, node)
    if (gold === undefined) return []
    const tried = board.attempts.get(node.id) ?? 0
    let args = rewriteRefs(gold.arguments, board.goldDone)
    // A transient failure of the other tool says nothing about it yet: the same call is retried.
    const misfire = board.misfires.get(node.id)
    if (misfire !== undefined && !shownUnfit(misfire, options.callAttempts)) return [{ node, tool: misfire.tool, arguments: misfire.arguments }]
    if (tried === 0 && !board.misfired.has(node.id) && !board.usedIds.has(node.id)) {
      const wrong = wrongTools(board, node, library)
      if (wrong.length > 0 && random.next() < options.mistakeRate) {
        const spec = random.pick(wrong)
        return [{ node, tool: spec.name, arguments: fitArguments(args, spec) }]
      }
    }
    if (tried === 0 && !board.misfired.has(node.id) && random.next() < options.mistakeRate) args = breakArguments(args, library.get(node.tool))
    return [{ node, arguments: args }]
  })

/** The tools a node's slot's searches returned that no gold call uses (what a wrong pick among the hits could be). */
const wrongTools = (board: Board, node: BoundNode, library: Library): Array<ToolSpec> => {
  const goldTools = new Set<string>(board.gold.map((g) => g.tool))
  return (board.hitsOf.get(slotOf(board.nodes, node)) ?? []).flatMap((t) => {
    const spec = goldTools.has(t) ? undefined : library.get(t)
    return spec === undefined ? [] : [spec]
  })
}

/** The arguments a tool's schema names, taken from the arguments meant for another tool (what an agent would fill in). */
const fitArguments = (args: JsonObject, spec: ToolSpec): JsonObject => {
  const properties = spec.parameters.properties ?? {}
  return Object.fromEntries(Object.entries(args).filter(([k]) => Object.hasOwn(properties, k)))
}

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
  plan: ({ board, context, random }) =>
    Effect.sync(() => {
      // Only ParaAct's loop can go back to exploring, so only its first plan may overlook a part of the request.
      const overlook = !board.planned && context.paradigm === "ParaAct" ? overlooked(board.gold, random, options) : undefined
      const value = planner(board, library, random, options, overlook)
      const note = board.planned ? overlookNote(board) : undefined
      return note === undefined ? { value } : { value, note }
    }),
  search: ({ board, random }, slots) => Effect.succeed({ value: searcher(slots, board, library, random, options) }),
  execute: ({ board, random }, ready) => Effect.succeed({ value: executor(ready, board, random, options, library) }),
  answer: ({ board, random }) => Effect.succeed({ value: answerer(board, random, options) })
})
