/**
 * The student-space oracle: a privileged diagnostic policy that chooses only among the learned policy's own
 * candidates (`ActionSpace.build`), using the gold task — the search candidates whose results hold a gold tool, the
 * call filling that matches a gold call, the gold facts among the fact candidates. Its Pass@1 is the ceiling of the
 * action space; its choices are the DAgger labels. It never scores a learned model.
 */
import { Effect, Layer } from "effect"
import type { Json, JsonObject, JsonSchema } from "../domain/Json.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import type { GoldCall, GoldFact, Task } from "../domain/Task.ts"
import type { Step } from "../domain/Trajectory.ts"
import { canonicalJson, callKey } from "../math/CanonicalJson.ts"
import * as History from "../math/History.ts"
import type { Acceptable, Alternative } from "../math/Acceptable.ts"
import type { Choice, KindSlot } from "../math/TurnDistribution.ts"
import * as ParaAct from "../protocol/ParaAct.ts"
import * as Refs from "../protocol/Refs.ts"
import { defaultTopK, pageOf, pageSpan, Retriever } from "../retrieval/Retriever.ts"
import { transientErrorKinds } from "../domain/Call.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import type { Op } from "../toolenv/world/Ops.ts"
import * as ActionSpace from "./ActionSpace.ts"
import { maxPages } from "./actions/Searches.ts"
import { Policy, PolicyError } from "./Policy.ts"
import type { PolicyContext, PolicyOutput } from "./Policy.ts"

/**
 * Which tools serve a gold call as its own tool does: `equivalent(gold, candidate)` is the map from the gold tool's
 * parameters to the candidate's (undefined: not equivalent). The default knows only the gold tool itself.
 */
export type Equivalence = (gold: ToolSpec, candidate: ToolSpec) => ReadonlyMap<string, string> | undefined

/** Only the gold tool serves its call. */
export const sameToolOnly: Equivalence = (gold, candidate) =>
  gold.name === candidate.name ? new Map(Object.keys(gold.parameters.properties).map((p) => [p, p])) : undefined

/**
 * Equivalent providers of the generated world: the same operation on the same entity type (kind — a name search and
 * an exact-name look-up are one — type, metric, relation, utility or action), with a parameter of the same role and attribute for each of the gold tool's and
 * each required one of the candidate's.
 */
const family = (kind: Op["kind"]): string => (kind === "lookup" ? "search" : kind)

export const worldEquivalence = (ops: ReadonlyMap<string, Op>): Equivalence => {
  const memo = new Map<string, ReadonlyMap<string, string> | undefined>()
  const paramKey = (p: Op["params"][number]) => `${p.role}|${p.key ?? ""}|${p.refType ?? ""}`
  return (gold, candidate) => {
    if (gold.name === candidate.name) return sameToolOnly(gold, candidate)
    const k = `${gold.name}\u0000${candidate.name}`
    if (memo.has(k)) return memo.get(k)
    const a = ops.get(gold.name)
    const b = ops.get(candidate.name)
    let out: Map<string, string> | undefined
    if (a !== undefined && b !== undefined && family(a.kind) === family(b.kind) && a.type === b.type && a.metric === b.metric && a.utility === b.utility &&
      a.action === b.action && a.relation?.name === b.relation?.name && (a.result === b.result || family(a.kind) === "search")) {
      out = new Map()
      const byKey = new Map(b.params.map((p) => [paramKey(p), p.name]))
      for (const p of a.params) {
        const q = byKey.get(paramKey(p))
        if (q !== undefined) out.set(p.name, q)
        else if (p.required) out = undefined
        if (out === undefined) break
      }
      if (out !== undefined) {
        const mapped = new Set(out.values())
        if (b.params.some((q) => q.required && !mapped.has(q.name))) out = undefined
      }
    }
    memo.set(k, out)
    return out
  }
}

/**
 * What a search candidate's query retrieves (look-ahead): `next`, the page the runtime's search would return now, and
 * `later`, the tools of the pages after it that the space still lets the agent ask for (`Searches.maxPages` in all).
 */
export type Lookahead = ReadonlyMap<string, { readonly next: ReadonlyArray<string>; readonly later: ReadonlyArray<string> }>

/** What the oracle knows beyond the policy's context: the library (gold tools' documentation) and which tools are equivalent. */
export interface OracleWorld {
  readonly lookup: (name: string) => ToolSpec | undefined
  readonly equivalent: Equivalence
  /**
   * Which searches the oracle's search turn takes **[ours]**: `cover` (the default, the ceiling policy's) a greedy
   * cover — a query only when it brings a needed tool no earlier query brings; `every` every query that brings one.
   * `every` is a label for a student that cannot see what a query retrieves: "this query finds a needed tool" is a
   * property of each query, where under `cover` of two queries finding the same tool the first is labelled and the
   * second is not.
   */
  readonly searches?: "cover" | "every"
}

/** The state of the gold DAG as the history shows it. */
export interface GoldProgress {
  /** gold call id → the agent's call that completed it (its id and tool). */
  readonly completedBy: ReadonlyMap<string, { readonly id: string; readonly tool: string }>
  /** Gold calls not completed whose deps are all completed. */
  readonly ready: ReadonlyArray<GoldCall>
  /** Gold calls not completed. */
  readonly open: ReadonlyArray<GoldCall>
}

const isObject = (v: Json | undefined): v is JsonObject => v !== null && typeof v === "object" && !Array.isArray(v)

const at = (payload: Json | undefined, path: ReadonlyArray<string>): Json | undefined => {
  let cur: Json | undefined = payload
  for (const p of path) {
    if (Array.isArray(cur)) cur = cur[Number(p)]
    else if (isObject(cur)) cur = cur[p]
    else return undefined
  }
  return cur
}

const same = (a: Json | undefined, b: Json | undefined): boolean =>
  a !== undefined && b !== undefined && (canonicalJson(a) === canonicalJson(b) || (typeof a !== "object" && typeof b !== "object" && String(a) === String(b)))

/** The response schema at a payload path (array indices step into `items`). */
const schemaAt = (schema: JsonSchema | undefined, path: ReadonlyArray<string | number>): JsonSchema | undefined => {
  let cur = schema
  for (const p of path) {
    if (cur === undefined) return undefined
    cur = typeof p === "number" || /^\d+$/.test(p) ? cur.items : cur.properties?.[p]
  }
  return cur
}

/** The paths of a response schema's leaves with their `x-entity` (array steps as `#`). */
const entityPaths = (schema: JsonSchema | undefined, prefix: ReadonlyArray<string> = [], out: Array<readonly [ReadonlyArray<string>, string]> = []) => {
  if (schema === undefined || prefix.length > 6) return out
  if (schema["x-entity"] !== undefined) out.push([prefix, schema["x-entity"]])
  if (schema.items !== undefined) entityPaths(schema.items, [...prefix, "#"], out)
  for (const [k, v] of Object.entries(schema.properties ?? {})) entityPaths(v, [...prefix, k], out)
  return out
}

/** A path of the gold tool's response carried to an equivalent tool's response: the leaf of the same entity attribute, same item indices. */
const translatePath = (gold: ToolSpec | undefined, tool: ToolSpec | undefined, path: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  if (gold === undefined || tool === undefined || gold.name === tool.name) return path
  const entity = schemaAt(gold.response, path)?.["x-entity"]
  if (entity === undefined) return undefined
  const target = entityPaths(tool.response).find(([, e]) => e === entity)?.[0]
  if (target === undefined) return undefined
  const indices = path.filter((p) => /^\d+$/.test(p))
  let k = 0
  return target.map((p) => (p === "#" ? indices[k++] ?? "0" : p))
}

/**
 * The gold arguments that decide a call: every required one, and an optional one only when the request states its
 * value or it is a `$ref` (an optional argument the request does not determine — a page size the generator drew — is
 * not the task's).
 */
const decisiveArgs = (gold: GoldCall, task: Task, spec: ToolSpec | undefined): ReadonlyArray<string> =>
  Object.keys(gold.arguments).filter((name) => {
    if (spec === undefined || spec.parameters.required.includes(name)) return true
    const v = gold.arguments[name] as Json
    return Refs.isRef(v) || task.request.includes(String(v))
  })

/** A gold call's decisive arguments resolved against the agent's outputs (its `$ref`s through the calls that completed their targets). */
const resolveGold = (
  gold: GoldCall,
  keys: ReadonlyArray<string>,
  progress: GoldProgress["completedBy"],
  outputs: ReadonlyMap<string, Json>,
  world: OracleWorld,
  task: Task
): Readonly<Record<string, Json | undefined>> => {
  const out: Record<string, Json | undefined> = {}
  for (const name of keys) {
    const v = gold.arguments[name] as Json
    if (Refs.isRef(v)) {
      const parsed = Refs.parseRef(v.$ref)
      const agent = parsed.ok ? progress.get(parsed.target.call) : undefined
      const target = parsed.ok ? task.gold.find((g) => g.id === parsed.target.call) : undefined
      const path = agent === undefined || target === undefined ? undefined : translatePath(world.lookup(target.tool), world.lookup(agent.tool), parsed.ok ? parsed.target.path : [])
      out[name] = agent === undefined || path === undefined ? undefined : at(outputs.get(agent.id), path)
    } else {
      out[name] = v
    }
  }
  return out
}

/**
 * The entity attributes a gold call must return: those of its gold facts and of the fields later gold calls read
 * through `$ref`s (unannotated fields are not required: their key differs across providers).
 */
const neededEntities = (gold: GoldCall, task: Task, goldSpec: ToolSpec): ReadonlyArray<string> => {
  const paths: Array<ReadonlyArray<string>> = task.facts.filter((f) => f.call === gold.id).map((f) => f.path.split("."))
  for (const later of task.gold) {
    for (const v of Object.values(later.arguments)) {
      if (!Refs.isRef(v as Json)) continue
      const parsed = Refs.parseRef((v as { $ref: string }).$ref)
      if (parsed.ok && parsed.target.call === gold.id) paths.push(parsed.target.path)
    }
  }
  return paths.flatMap((path) => {
    const e = schemaAt(goldSpec.response, path)?.["x-entity"]
    return e === undefined ? [] : [e]
  })
}

/**
 * Whether a call (tool, resolved arguments) serves a gold call: an equivalent tool that returns the attributes the
 * gold call's facts and dependents read, called with the gold's decisive arguments.
 */
const serves = (
  gold: GoldCall,
  tool: ToolSpec | undefined,
  args: JsonObject,
  want: Readonly<Record<string, Json | undefined>>,
  keys: ReadonlyArray<string>,
  world: OracleWorld,
  task: Task
): boolean => {
  const goldSpec = world.lookup(gold.tool)
  if (tool === undefined) return false
  if (goldSpec === undefined) return tool.name === gold.tool && keys.every((k) => same(args[k], want[k]))
  if (!servesTool(gold, goldSpec, tool, world, task)) return false
  const map = world.equivalent(goldSpec, tool) as ReadonlyMap<string, string>
  return keys.every((k) => {
    const q = map.get(k)
    return q !== undefined && same(args[q], want[k])
  })
}

/** Whether a tool can serve a gold call whatever its arguments: equivalent, and returning the attributes needed. */
const servesTool = (gold: GoldCall, goldSpec: ToolSpec, tool: ToolSpec, world: OracleWorld, task: Task): boolean => {
  if (world.equivalent(goldSpec, tool) === undefined) return false
  if (tool.name === goldSpec.name) return true
  const has = new Set(entityPaths(tool.response).map(([, e]) => e))
  return neededEntities(gold, task, goldSpec).every((e) => has.has(e))
}

/** Which gold calls the history completed: a successful call serving the gold call (its deps completed first). */
export const progress = (task: Task, history: ReadonlyArray<Step>, world: OracleWorld): GoldProgress => {
  const h = History.of(history)
  const successes = history.flatMap((s) => s.observations.filter((o) => o.outcome._tag === "ok"))
  const completedBy = new Map<string, { id: string; tool: string }>()
  const used = new Set<string>()
  // the gold DAG lists a call after its deps: one pass completes in order
  for (const gold of task.gold) {
    if (!gold.deps.every((d) => completedBy.has(d))) continue
    const keys = decisiveArgs(gold, task, world.lookup(gold.tool))
    const want = resolveGold(gold, keys, completedBy, h.outputs, world, task)
    const hit = successes.find((o) => !used.has(o.callId) && serves(gold, world.lookup(o.tool), o.arguments, want, keys, world, task))
    if (hit !== undefined) {
      completedBy.set(gold.id, { id: hit.callId, tool: hit.tool })
      used.add(hit.callId)
    }
  }
  const open = task.gold.filter((g) => !completedBy.has(g.id))
  return { completedBy, open, ready: open.filter((g) => g.deps.every((d) => completedBy.has(d))) }
}

/** Whether a fact candidate states a gold fact: the same value at a leaf of the same entity attribute (or, unannotated, the same key). */
export const factMatches = (fact: ActionSpace.FactCandidate, factTool: ToolSpec | undefined, gold: GoldFact, goldTool: ToolSpec | undefined): boolean => {
  if (fact.value !== gold.value) return false
  const goldPath = gold.path.split(".")
  const a = schemaAt(goldTool?.response, goldPath)?.["x-entity"]
  const b = schemaAt(factTool?.response, fact.path)?.["x-entity"]
  // unannotated fields (a statistic, a computed value) are named differently by each provider: the value decides
  return (a !== undefined && a === b) || String(fact.path.at(-1)) === goldPath.at(-1) || (a === undefined && b === undefined && gold.value.length >= 3)
}

/** How the oracle decided (for diagnostics and the DAgger report). */
export interface OracleChoice {
  readonly choice: Choice
  /** Why: `call` (ready gold calls with a serving filling), `search` (queries retrieving a needed tool), `answer`. */
  readonly reason: "call" | "search" | "answer" | "answer_forced"
  /**
   * Every turn as good as `choice` by the oracle's own criteria (the set-valued label): a call turn taking, for each
   * ready gold call, one of the candidates that serve it (equivalent providers, equal fillings) and nothing else; a
   * search turn taking, for each open gold call a look-ahead can bring, one of the queries that bring a serving tool
   * (a search is as good as a call when both help: it costs no extra round); an answer stating each gold fact through
   * any candidate that states it. With nothing to state (`answer_forced`) only the kind is labelled.
   */
  readonly acceptable: Acceptable
}

/**
 * The oracle's choice in a space (pure): per ready gold call, the first candidate that serves it (an equivalent tool,
 * the decisive arguments equal); else the search candidates whose look-ahead results bring a tool serving an open
 * gold call that no search brought yet; else the gold facts among the fact candidates. Under a one-of kind (ReAct,
 * DFSDT) the first of them.
 */
export const choose = (
  space: ActionSpace.Space,
  context: Pick<PolicyContext, "request" | "history" | "controller" | "tools">,
  task: Task,
  lookahead: Lookahead,
  world: OracleWorld
): OracleChoice => {
  const kindIndex = (k: ActionSpace.Kind) => space.kinds.indexOf(k)
  const slotOf = (k: number) => space.layout.kinds[k] as KindSlot
  const planOf = (k: number) => slotOf(k).plan && context.controller === "Need"
  const fit = (k: number, rows: ReadonlyArray<number>): Choice => {
    const slot = slotOf(k)
    const selected = slot.mode === "one" ? rows.slice(0, 1) : [...rows].sort((a, b) => a - b)
    return { kind: k, selected, plan: planOf(k) }
  }
  const alternativeOf = (k: number, groups: ReadonlyArray<ReadonlyArray<number>>): Alternative => ({
    kind: k,
    groups,
    allowed: [...new Set(groups.flat())].sort((a, b) => a - b),
    plan: slotOf(k).plan ? planOf(k) : undefined
  })
  const state = progress(task, context.history, world)
  const h = History.of(context.history)
  const alternatives: Array<Alternative> = []
  let picked: { readonly choice: Choice; readonly reason: OracleChoice["reason"] } | undefined

  // calls: per ready gold call, the first candidate serving it that was not settled before
  const callK = kindIndex("call")
  if (callK >= 0) {
    const settled = new Set<string>()
    for (const step of context.history) {
      for (const o of step.observations) {
        if (o.outcome._tag === "ok" || (!transientErrorKinds.has(o.outcome.error.kind) && o.attempts > 0)) settled.add(callKey(o.tool, o.arguments))
      }
    }
    const rows: Array<number> = []
    const groups: Array<ReadonlyArray<number>> = []
    for (const gold of state.ready) {
      const keys = decisiveArgs(gold, task, world.lookup(gold.tool))
      const want = resolveGold(gold, keys, state.completedBy, h.outputs, world, task)
      const serving = space.calls.flatMap((c, i) => {
        const resolved = ActionSpace.resolvePreview(c.arguments, h.outputs)
        return serves(gold, c.tool, resolved, want, keys, world, task) && !settled.has(callKey(c.tool.name, resolved)) ? [{ c, i }] : []
      })
      if (serving.length > 0) groups.push(serving.map(({ i }) => slotOf(callK).start + i))
      const ranked = [...serving].sort((x, y) => Number(y.c.tool.name === gold.tool) - Number(x.c.tool.name === gold.tool))
      const hit = ranked.find(({ i }) => !rows.includes(slotOf(callK).start + i))
      if (hit !== undefined) rows.push(slotOf(callK).start + hit.i)
    }
    if (rows.length > 0) {
      picked = { choice: fit(callK, rows), reason: "call" }
      alternatives.push(alternativeOf(callK, groups))
    }
  }

  // searches: the candidates whose results bring a tool serving an open gold call, not retrieved yet
  const searchK = kindIndex("search")
  if (searchK >= 0) {
    const servedBy = (tool: string): ReadonlyArray<string> => {
      const spec = world.lookup(tool)
      if (spec === undefined || h.retrieved.has(tool)) return []
      return state.open.filter((g) => {
        const goldSpec = world.lookup(g.tool)
        return goldSpec === undefined ? g.tool === tool : servesTool(g, goldSpec, spec, world, task)
      }).map((g) => g.id as string)
    }
    const covered = new Set(state.open.filter((g) => [...h.retrieved].some((t) => {
      const spec = world.lookup(t)
      const goldSpec = world.lookup(g.tool)
      return spec !== undefined && goldSpec !== undefined && servesTool(g, goldSpec, spec, world, task)
    })).map((g) => g.id as string))
    const rows: Array<number> = []
    const byGold = new Map<string, Array<number>>()
    const greedy = new Set(covered)
    // a query asked before looks ahead to its next page (a follow-up top-k); when no next page brings an open gold
    // call a serving tool, the queries whose later pages do are asked (their next page is the way to the later ones)
    const pass = (pages: "next" | "later") =>
      space.searches.forEach((s, i) => {
        const brings = [...new Set((lookahead.get(s.query)?.[pages] ?? []).flatMap(servedBy))].filter((g) => !covered.has(g))
        for (const g of brings) byGold.set(g, [...(byGold.get(g) ?? []), slotOf(searchK).start + i])
        const fresh = brings.filter((g) => !greedy.has(g))
        if ((world.searches === "every" ? brings : fresh).length === 0) return
        for (const g of fresh) greedy.add(g)
        rows.push(slotOf(searchK).start + i)
      })
    pass("next")
    if (rows.length === 0) pass("later")
    if (rows.length > 0) {
      picked ??= { choice: fit(searchK, rows), reason: "search" }
      alternatives.push(alternativeOf(searchK, [...byGold.values()]))
    }
  }
  if (picked !== undefined) return { ...picked, acceptable: { alternatives } }

  // the answer: a fact candidate stating each gold fact
  const answerK = kindIndex("answer")
  const slot = slotOf(answerK)
  if (slot.mode === "none") {
    return { choice: { kind: answerK, selected: [], plan: false }, reason: "answer", acceptable: { alternatives: [{ kind: answerK, groups: [], allowed: [], plan: undefined }] } }
  }
  const { rows, groups } = goldFacts(space, context, task, world)
  if (rows.length === 0) {
    // nothing to state: the first fact (an answer chooses at least one); the judge will find it incomplete. The label
    // says only "answer": which facts to state when none is right is not the oracle's to teach
    const all = Array.from({ length: slot.end - slot.start }, (_, j) => slot.start + j)
    return { choice: { kind: answerK, selected: [slot.start], plan: false }, reason: "answer_forced", acceptable: { alternatives: [{ kind: answerK, groups: [], allowed: all, plan: undefined }] } }
  }
  return { choice: { kind: answerK, selected: rows, plan: false }, reason: "answer", acceptable: { alternatives: [alternativeOf(answerK, groups)] } }
}

/**
 * The gold facts among a space's fact candidates, whatever the oracle would do this round: per gold fact of the task,
 * the fact rows stating it (`groups`) and the first of them not taken by an earlier gold fact (`rows`, ascending).
 * Empty when the answer kind has no candidates or none states a gold fact.
 */
export const goldFacts = (
  space: ActionSpace.Space,
  context: Pick<PolicyContext, "history">,
  task: Task,
  world: OracleWorld
): { readonly rows: ReadonlyArray<number>; readonly groups: ReadonlyArray<ReadonlyArray<number>> } => {
  const slot = space.layout.kinds[space.kinds.indexOf("answer")]
  if (slot === undefined || slot.mode === "none") return { rows: [], groups: [] }
  const toolOf = new Map(context.history.flatMap((s) => s.observations.map((o) => [o.callId as string, o.tool as string] as const)))
  const rows: Array<number> = []
  const groups: Array<ReadonlyArray<number>> = []
  for (const gold of task.facts) {
    const goldTool = world.lookup(task.gold.find((g) => g.id === gold.call)?.tool ?? "")
    const stating = space.facts.flatMap((f, j) => (factMatches(f, world.lookup(toolOf.get(f.callId) ?? ""), gold, goldTool) ? [slot.start + j] : []))
    if (stating.length > 0) groups.push(stating)
    const first = stating.find((r) => !rows.includes(r))
    if (first !== undefined) rows.push(first)
  }
  return { rows: [...rows].sort((a, b) => a - b), groups }
}

/**
 * The look-ahead of a space's search candidates: each query's top-k as the runtime's search would return it — a query
 * the agent already searched (in `history`, the steps it sees) gives its next page (`Retriever.pageOf`).
 */
export const lookaheadOf = (space: ActionSpace.Space, history: ReadonlyArray<Step> = [], topK: number = defaultTopK, cache?: LookaheadCache) =>
  Effect.gen(function*() {
    const retriever = yield* Retriever
    const queries = [...new Set(space.searches.map((s) => s.query))]
    if (queries.length === 0) return new Map() as Lookahead
    const pages = new Map(queries.map((q) => [q, pageOf(history, q)]))
    const keyOf = (q: string) => `${topK}\u0000${pages.get(q) ?? 0}\u0000${q}`
    const missing = cache === undefined ? queries : queries.filter((q) => !cache.entries.has(keyOf(q)))
    const found = new Map<string, { readonly next: ReadonlyArray<string>; readonly later: ReadonlyArray<string> }>()
    // one ranking per page index, deep enough for the look-ahead's pages (a top-k is a prefix of a deeper top-k)
    for (const page of [...new Set(missing.map((q) => pages.get(q) ?? 0))].sort((a, b) => a - b)) {
      const batch = missing.filter((q) => pages.get(q) === page)
      const next = pageSpan(topK, page)
      const { start, end } = pageSpan(topK, page, Math.max(1, maxPages - page))
      const lists = start >= end ? batch.map(() => []) : yield* retriever.search(batch, end).pipe(Effect.mapError((e) => new PolicyError({ message: `oracle look-ahead: ${e.message}` })))
      batch.forEach((q, i) => {
        const tools = (lists[i] ?? []).map((h) => h.tool as string)
        found.set(q, { next: tools.slice(next.start, next.end), later: tools.slice(next.end, end) })
      })
    }
    if (cache !== undefined && found.size > 0) {
      if (cache.entries.size + found.size > cache.capacity) cache.entries.clear()
      for (const [q, entry] of found) cache.entries.set(keyOf(q), entry)
    }
    return new Map(queries.map((q) => [q, found.get(q) ?? cache?.entries.get(keyOf(q)) ?? { next: [], later: [] }])) as Lookahead
  })

/**
 * A memo of look-ahead searches ((top-k, page, query) → the tools retrieved): the retriever answers a query the same way
 * over one library, and labelling asks the same clause queries at every step of a rollout and in every DAgger round.
 * Emptied when it would exceed `capacity` entries.
 */
export interface LookaheadCache {
  readonly entries: Map<string, { readonly next: ReadonlyArray<string>; readonly later: ReadonlyArray<string> }>
  readonly capacity: number
}

/** An empty look-ahead memo (one per retriever and library: share it only among labellings over the same ones). */
export const lookaheadCache = (capacity = 50_000): LookaheadCache => ({ entries: new Map(), capacity })

/**
 * The oracle's choice for a context (its space built as the learned policy builds it, with the retriever's
 * look-ahead, memoised in `cache` when given).
 */
export const label = (context: PolicyContext, task: Task, world: OracleWorld, options: ActionSpace.SpaceOptions = ActionSpace.defaultSpaceOptions, cache?: LookaheadCache) =>
  Effect.gen(function*() {
    const space = ActionSpace.build(context, options)
    const lookahead = yield* lookaheadOf(space, context.history, defaultTopK, cache)
    return { space, ...choose(space, context, task, lookahead, world) }
  })

/** The oracle as a Policy (privileged: the runtime gives it the task), with an equivalence of tools (default: the gold tool only). */
export const make = (equivalent: Equivalence = sameToolOnly) => Effect.gen(function*() {
  const retriever = yield* Retriever
  const library = yield* ToolLibrary
  const world: OracleWorld = { lookup: (name) => library.get(name), equivalent }
  const cache = lookaheadCache()
  const act = Effect.fn("StudentOracle.act")(function*(context: PolicyContext) {
    const task = context.task
    if (task === undefined) return yield* new PolicyError({ message: "the student-space oracle needs the task's gold DAG (privileged context)" })
    const { space, choice } = yield* label(context, task, world, ActionSpace.defaultSpaceOptions, cache).pipe(Effect.provideService(Retriever, retriever))
    const turn = ActionSpace.toTurn(space, choice)
    const output: PolicyOutput = { text: ParaAct.printTurn(turn), turn, usage: { promptTokens: 0, completionTokens: 0 } }
    return output
  })
  return Policy.of({ name: "ceiling", privileged: true, act })
})

/** The oracle as a Policy layer, over the retriever the runtime searches with and the library. */
export const layer = (equivalent: Equivalence = sameToolOnly): Layer.Layer<Policy, never, Retriever | ToolLibrary> => Layer.effect(Policy, make(equivalent))
