/**
 * Tasks sampled from G_dep over the generated world: an anchor call the request makes possible (a name to search, a
 * filter value, inputs), follow-up calls along hard edges (ids fed by `$ref`), parallel branches, and the facts the
 * simulator returns on that DAG with faults off. Levels: I1 one provider (1–3 calls), I2 several providers of one
 * category with parallel branches, I3 several categories with parallel branches and a cross-category hard dependency.
 */
import type { JsonObject, Json } from "../../domain/Json.ts"
import { callId, type CallId, taskId, toolName } from "../../domain/Ids.ts"
import type { GoldCall, GoldFact, Level, Split, Task } from "../../domain/Task.ts"
import { type DepEdge, groupKey, type ToolSpec } from "../../domain/Tool.ts"
import { canonicalJson } from "../../math/CanonicalJson.ts"
import { hash32, hashParts, rng as makeRng, type Rng } from "../../math/Random.ts"
import * as Refs from "../../protocol/Refs.ts"
import { Engine, type EpisodeState } from "../simulator/Engine.ts"
import { actionFor, entityDefs } from "./Entities.ts"
import type { ActionDef, EntityDef } from "./Model.ts"
import { type Field, fieldPath, type Op, type Param, paramOf } from "./Ops.ts"
import { listing } from "./Wording.ts"
import { utility } from "./Utilities.ts"
import * as V from "./Values.ts"
import type { World } from "./World.ts"

/** How tasks are split. */
export interface TaskOptions {
  /** Seed of the task stream (default: the world's seed). */
  readonly seed?: number
  /**
   * Hold out whole providers: each provider belongs to one split (by a hash of its name, in these proportions) and
   * a task of a split uses only that split's providers, so test tasks use tools no training task uses.
   * Without it, splits partition tasks by their anchor call (no request appears in two splits).
   */
  readonly holdoutTools?: boolean
  /** Shares of train / validation / test (default 0.8 / 0.1 / 0.1). */
  readonly splitShares?: readonly [number, number, number]
}

/** A call of a draft, as it was executed. */
interface DraftCall {
  readonly id: CallId
  readonly spec: ToolSpec
  readonly op: Op
  readonly args: JsonObject
  readonly deps: ReadonlyArray<CallId>
  readonly payload: Json
  /** How the request refers to the entity this call's first item is (`the team "Ashford Falcons"`). */
  readonly subject: string
  /** The entity type of the call's first item. */
  readonly type: string
}

interface Draft {
  readonly calls: Array<DraftCall>
  readonly clauses: Array<string>
  readonly facts: Array<GoldFact>
  readonly state: EpisodeState
}

/** Types a list can be "in" (other references read "for the user ..."). */
const placeTypes: ReadonlySet<string> = new Set(["city", "country", "venue", "station", "transit_line", "league"])

const quote = (s: string): string => `"${s}"`

const fmt = (v: Json | undefined): string => (typeof v === "string" ? v : JSON.stringify(v ?? null))

/** The task generator over a world. */
export interface TaskGenerator {
  /**
   * The task at position `index` of the stream of (split, level) — the one whose id is
   * `gen-<seed>-<split>-<level>-<index>` — or undefined when that draw fails. One draw: no earlier task is drawn.
   */
  readonly draw: (split: Split, level: Level, index: number, seed?: number) => Task | undefined
  /** `count` tasks of a split, levels round-robin, deterministic from the seed. */
  readonly take: (options: TakeOptions) => ReadonlyArray<Task>
  /**
   * `take` one draw at a time: the generator yields after each draw and returns the tasks, so a caller can give the
   * thread back between draws (a long draw on a server). The same tasks as `take`.
   */
  readonly takeStepwise: (options: TakeOptions) => Generator<void, ReadonlyArray<Task>>
  /** Which split a provider belongs to under tool hold-out. */
  readonly splitOfGroup: (spec: ToolSpec) => Split
}

/** What `take` draws: `count` tasks of a split, levels round-robin (default all three), from a seed. */
export interface TakeOptions {
  readonly split: Split
  readonly count: number
  readonly levels?: ReadonlyArray<Level>
  readonly seed?: number
}

/** Builds the task generator of a world. */
export const make = (world: World, options: TaskOptions = {}): TaskGenerator => {
  const baseSeed = options.seed ?? world.seed
  const shares = options.splitShares ?? [0.8, 0.1, 0.1]
  const engine = new Engine(world.library, world, { seed: 0, faultRate: 0, latency: undefined })
  const u = world.universe
  const tools = world.library.tools
  const opOf = (spec: ToolSpec): Op | undefined => world.ops.get(spec.name)

  const shareSplit = (h: number): Split => {
    const x = h / 4294967296
    return x < shares[0] ? "train" : x < shares[0] + shares[1] ? "validation" : "test"
  }
  const groupSplit = new Map<string, Split>()
  /** The split of a provider, by its group key (see {@link TaskOptions.holdoutTools}). */
  const groupSplitOf = (g: string): Split => {
    let s = groupSplit.get(g)
    if (s === undefined) groupSplit.set(g, s = shareSplit(hash32(g, 0x5eed)))
    return s
  }
  const splitOfGroup = (spec: ToolSpec): Split => groupSplitOf(groupKey(spec))

  // Entry tools (callable from the request alone), by provider and by category.
  const entryByGroup = new Map<string, Array<ToolSpec>>()
  const entryGroupsByCategory = new Map<string, Array<string>>()
  for (const t of tools) {
    const op = opOf(t)
    if (op === undefined || !isEntry(op)) continue
    const k = groupKey(t)
    let list = entryByGroup.get(k)
    if (list === undefined) {
      entryByGroup.set(k, list = [])
      let cats = entryGroupsByCategory.get(t.category)
      if (cats === undefined) entryGroupsByCategory.set(t.category, cats = [])
      cats.push(k)
    }
    list.push(t)
  }
  const allGroups = [...entryByGroup.keys()]
  const categoryNames = [...entryGroupsByCategory.keys()]

  /** Edges a follow-up can take: hard ones, and soft ones that carry a required public id (a currency code to convert). */
  const hardOut = (name: string): ReadonlyArray<DepEdge> =>
    world.library.graph.outgoing(name).filter((e) => e.kind === "hard" || (e.entity !== undefined && entityDefs.get(e.entity.slice(0, -3))?.publicIds === true && world.library.get(e.to)?.parameters.required.includes(e.param ?? "") === true))

  /** Executes a call of a draft (refs resolved against the draft's payloads); undefined when it fails. */
  const exec = (d: Draft, spec: ToolSpec, op: Op, args: JsonObject, subject: string, type: string): DraftCall | undefined => {
    const payloads = new Map(d.calls.map((c) => [c.id as string, c.payload] as const))
    const resolved = Refs.resolveRefs(args, (id) => payloads.get(id))
    if (resolved.unresolved.length > 0) return undefined
    const id = callId(`c${d.calls.length + 1}`)
    const out = engine.run(d.state, { id, tool: toolName(spec.name), arguments: resolved.arguments })
    if (out.outcome._tag !== "ok") return undefined
    const payload = out.outcome.payload
    if (op.result === "list") {
      const items = Refs.select(payload, [...op.envelope.path])
      if (!items.ok || !Array.isArray(items.value) || items.value.length === 0) return undefined
    }
    const call: DraftCall = { id, spec, op, args, deps: resolved.consumed, payload, subject, type }
    d.calls.push(call)
    return call
  }

  // ---------------------------------------------------------------------------------------------------------
  // Anchors: calls the request alone makes possible.

  /** A unique-named entity of a type (so a name search finds exactly it first). */
  const uniqueEntity = (rng: Rng, type: string): number | undefined => {
    const n = u.size(type)
    for (let k = 0; k < 12 && n > 0; k++) {
      const i = rng.int(n)
      if (u.byExactName(type, u.name(type, i)).length === 1) return i
    }
    return undefined
  }

  const anchor = (d: Draft, rng: Rng, spec: ToolSpec): DraftCall | undefined => {
    const op = opOf(spec)
    if (op === undefined) return undefined
    const def = entityDefs.get(op.type)
    const args: Record<string, Json> = {}
    const noun = def?.noun ?? op.type
    switch (op.kind) {
      case "search":
      case "lookup": {
        const i = uniqueEntity(rng, op.type)
        const q = paramOf(op, "query")
        if (i === undefined || q === undefined) return undefined
        const name = u.name(op.type, i)
        args[q.name] = name
        const call = exec(d, spec, op, args, `the ${noun} ${quote(name)}`, op.type)
        if (call === undefined) return undefined
        if (firstId(call) !== u.id(op.type, i)) {
          d.calls.pop()
          return undefined
        }
        return call
      }
      case "list": {
        const p = op.params.find((x) => x.required && (x.role === "eq" || x.role === "ref_name"))
        if (p === undefined) return undefined
        let phrase: string
        if (p.role === "eq") {
          const a = u.attrDef(op.type, p.key ?? "")
          const values: ReadonlyArray<Json> = a?.values ?? (a?.type === "boolean" ? [true, false] : [])
          if (values.length === 0) return undefined
          const v = rng.pick(values)
          args[p.name] = v
          phrase = a?.type === "boolean" ? `${v === true ? "" : "not "}${a.label}` : `with ${a?.label ?? p.key} ${quote(String(v))}`
        } else {
          const target = entityDefs.get(p.refType ?? "")
          const t = target === undefined ? undefined : uniqueEntity(rng, target.type)
          if (target === undefined || t === undefined) return undefined
          if (u.referrers(op.type, p.key ?? "", t).length === 0) return undefined
          args[p.name] = u.name(target.type, t)
          // `in the city "X"` when the reference is just "the city"; `with origin city "X"` when it has a role.
          const role = (u.attrDef(op.type, p.key ?? "")?.label ?? target.noun).replace(/ (ID|id|code)$/, "")
          phrase = role === target.noun || role === `${target.noun} ID`
            ? `${placeTypes.has(target.type) ? "in" : "for"} the ${target.noun} ${quote(u.name(target.type, t))}`
            : `with ${role} ${quote(u.name(target.type, t))}`
        }
        return exec(d, spec, op, args, `the first of the ${def?.plural ?? "items"} ${phrase}`, op.type)
      }
      case "top": {
        const lim = paramOf(op, "limit")
        if (lim !== undefined && rng.next() < 0.6) args[lim.name] = 3 + rng.int(3)
        const by = u.attrDef(op.type, op.metric ?? "")?.label ?? op.metric ?? ""
        return exec(d, spec, op, args, `the ${noun} with the highest ${by}`, op.type)
      }
      case "featured": {
        const p = paramOf(op, "date")
        const day = V.isoDate(V.today - rng.int(30))
        if (p !== undefined) args[p.name] = day
        return exec(d, spec, op, args, `the featured ${noun} of ${day}`, op.type)
      }
      case "convert": {
        const amount = [10, 25, 50, 75, 100, 250, 500, 1000, 1200, 5000][rng.int(10)] ?? 100
        const codes = rng.shuffle(Array.from({ length: u.size("currency") }, (_, i) => u.id("currency", i))).slice(0, 2)
        for (const p of op.params) {
          if (p.role === "amount") args[p.name] = amount
          if (p.role === "base") args[p.name] = codes[0] ?? "USD"
          if (p.role === "quote") args[p.name] = codes[1] ?? "EUR"
        }
        return exec(d, spec, op, args, `${amount} ${codes[0]} in ${codes[1]}`, "")
      }
      case "utility": {
        const util = utility(op.utility ?? "")
        if (util === undefined) return undefined
        for (const p of op.params) {
          const input = util.inputs.find((i) => i.key === p.key)
          // Optional inputs sometimes; a utility with only optional inputs always gets its first one, so the request states it.
          const wanted = p.required || rng.next() < 0.3 || (Object.keys(args).length === 0 && op.params.every((q) => !q.required))
          if (input !== undefined && wanted) args[p.name] = input.example(rng.int(4294967296))
        }
        return exec(d, spec, op, args, util.topic, "")
      }
      case "action": {
        const action = actionOf(op)
        if (action === undefined || op.params.some((p) => p.role === "id")) return undefined
        fillInputs(rng, op, action, args)
        return exec(d, spec, op, args, `the new ${entityDefs.get(action.creates)?.noun ?? "record"}`, op.type)
      }
      default:
        return undefined
    }
  }

  // ---------------------------------------------------------------------------------------------------------
  // Follow-ups along hard edges.

  const follow = (d: Draft, rng: Rng, from: DraftCall, edge: DepEdge): DraftCall | undefined => {
    const spec = world.library.get(edge.to)
    const op = spec === undefined ? undefined : opOf(spec)
    if (spec === undefined || op === undefined || edge.field === undefined || edge.param === undefined) return undefined
    if (d.calls.some((c) => c.spec.name === spec.name)) return undefined
    const path = edge.field.replace(/\[\]/g, ".0").replace(/^\./, "")
    const value = Refs.select(from.payload, path.split("."))
    if (!value.ok || value.value === null || value.value === "") return undefined
    const args: Record<string, Json> = { [edge.param]: { $ref: `${from.id}.${path}` } }
    const field = fieldAt(from.op, edge.field)
    // The subject of the new call: the same entity, or the entity the field references, or the children.
    const sameEntity = field?.source.kind === "attr" && field.source.key === "id"
    // A reference attribute names the entity it points at: `home city ID` → `the home city of ...`.
    const via = field === undefined || sameEntity ? "" : labelOf(from.type, field).replace(/ (ID|id|code|number|symbol|slug|\(ID\))$/, "")
    const refSubject = sameEntity ? from.subject : `the ${via} of ${from.subject}`
    const consumed = op.params.find((p) => p.name === edge.param)
    for (const p of op.params) {
      // Inputs, date ranges and conversion arguments are filled below; any other required argument must be choosable.
      if (p.name === edge.param || !p.required || p.role === "input" || p.role === "from" || p.role === "to" || p.role === "amount" || p.role === "base" || p.role === "quote") continue
      const v = fillRequired(rng, p)
      if (v === undefined) return undefined
      args[p.name] = v
    }
    if (op.kind === "action") {
      const action = actionOf(op)
      if (action === undefined) return undefined
      fillInputs(rng, op, action, args)
    }
    if (op.kind === "series" || op.kind === "stats") {
      const to = V.today - rng.int(20)
      const from2 = to - (op.kind === "stats" ? 6 + rng.int(20) : 2 + rng.int(5))
      const pf = paramOf(op, "from")
      const pt = paramOf(op, "to")
      if (pf !== undefined) args[pf.name] = V.isoDate(from2)
      if (pt !== undefined) args[pt.name] = V.isoDate(to)
    }
    if (op.kind === "convert") {
      // The amount comes from a money field beside the currency in the producing item, when there is one.
      const money = moneyField(from)
      const amountParam = paramOf(op, "amount")
      const quoteParam = paramOf(op, "quote")
      const baseParam = paramOf(op, "base")
      if (amountParam === undefined || quoteParam === undefined || baseParam === undefined || consumed?.role !== "base" || money === undefined) return undefined
      args[amountParam.name] = { $ref: `${from.id}.${money.path}` }
      const base = String(value.value)
      const others = ["EUR", "USD", "GBP", "JPY", "CHF", "CAD"].filter((c) => c !== base)
      args[quoteParam.name] = rng.pick(others)
      return exec(d, spec, op, args, `the ${money.label} of ${from.subject} in ${String(args[quoteParam.name])}`, "")
    }
    // A relation that leads back to the same single entity (a stock → its company → its one stock) asks nothing new.
    const loopsBack = (call: DraftCall): boolean => {
      if (op.result !== "list" || op.type !== from.type) return false
      const items = Refs.select(call.payload, [...op.envelope.path])
      return items.ok && Array.isArray(items.value) && items.value.length === 1 && firstId(call) === firstId(from)
    }
    const subject = op.kind === "children" ? `the ${relationLabel(op)} of ${refSubject}`
      : op.kind === "list" ? `the ${entityDefs.get(op.type)?.plural ?? "items"} of ${refSubject}`
      : op.kind === "record" ? from.subject : refSubject
    const made = exec(d, spec, op, args, subject, op.type)
    if (made !== undefined && loopsBack(made)) {
      d.calls.pop()
      return undefined
    }
    return made
  }

  /** Candidate hard edges leaving a call whose field holds a usable value. */
  const edgesFrom = (call: DraftCall, accept: (to: ToolSpec) => boolean): Array<DepEdge> =>
    hardOut(call.spec.name).filter((e) => {
      const to = world.library.get(e.to)
      const op = to === undefined ? undefined : opOf(to)
      return to !== undefined && op !== undefined && accept(to) && isFollowable(op, e)
    })

  // ---------------------------------------------------------------------------------------------------------
  // Facts and clauses.

  const ask = (d: Draft, rng: Rng, c: DraftCall): void => {
    const op = c.op
    const base = [...op.envelope.path]
    const itemPath = (out: string, k = 0): string => fieldPath(op, out, k)
    const value = (path: string): Json | undefined => {
      const r = Refs.select(c.payload, path.split("."))
      return r.ok ? r.value : undefined
    }
    const fact = (key: string, path: string): void => {
      const v = value(path)
      if (v === undefined || v === null || typeof v === "object") return
      d.facts.push({ key, value: fmt(v), call: c.id, path })
    }
    const def = entityDefs.get(op.type)
    const askable = op.fields.filter((f) => f.source.kind === "attr" && f.source.key !== "id" && f.schema.type !== "array" && !(f.schema["x-entity"] ?? "").endsWith(".id") && f.source.key !== "name" && u.attrDef(op.type, f.source.key)?.fact !== false)
    switch (op.kind) {
      case "details":
      case "lookup":
      case "featured":
      case "record": {
        const chosen = rng.shuffle(askable).slice(0, 1 + rng.int(2))
        if (chosen.length === 0) return
        const labels = chosen.map((f) => labelOf(op.type, f))
        for (const f of chosen) fact(`${labelOf(op.type, f)} of ${c.subject}`, itemPath(f.out))
        d.clauses.push(rng.pick([
          `what ${labels.length > 1 ? "are" : "is"} the ${listing(labels)} of ${c.subject}?`,
          `find the ${listing(labels)} of ${c.subject}.`,
          `tell me the ${listing(labels)} of ${c.subject}.`,
          `I need the ${listing(labels)} of ${c.subject}.`
        ]))
        if (op.kind === "featured") fact(`name of ${c.subject}`, itemPath(nameOut(op) ?? "name"))
        return
      }
      case "search":
      case "list":
      case "children":
      case "top": {
        const items = Refs.select(c.payload, base)
        const returned = items.ok && Array.isArray(items.value) ? items.value.length : 0
        const n = Math.min(3, returned)
        const nameField = nameOut(op)
        if (op.kind === "search" && askable.length > 0) {
          const f = rng.pick(askable)
          fact(`${labelOf(op.type, f)} of ${c.subject}`, itemPath(f.out))
          d.clauses.push(rng.pick([`look up ${c.subject} and give me its ${labelOf(op.type, f)}.`, `what is the ${labelOf(op.type, f)} of ${c.subject}?`]))
          return
        }
        if (nameField === undefined || n === 0) return
        for (let k = 0; k < n; k++) fact(`${def?.noun ?? "item"} ${k + 1} of ${c.subject.replace(/^the first of /, "")}`, itemPath(nameField, k))
        // Three names at most: all of them when the list is that short, else the first three in the API's order.
        const group = c.subject.replace(/^the first of /, "")
        const what = op.kind === "top" ? `the top ${n} ${def?.plural ?? "items"} by ${u.attrDef(op.type, op.metric ?? "")?.label ?? op.metric}`
          : returned <= 3 ? `all ${group}` : `the first three ${group.replace(/^the /, "")}`
        d.clauses.push(rng.pick([`list ${what}.`, `name ${what}.`, `which are ${what}?`]))
        return
      }
      case "latest": {
        const f = op.fields.find((x) => x.source.kind === "value")
        if (f === undefined) return
        const label = u.seriesDef(op.type, op.metric ?? "")?.label ?? op.metric ?? "value"
        fact(`current ${label} of ${c.subject}`, itemPath(f.out))
        d.clauses.push(rng.pick([`what is the current ${label} of ${c.subject}?`, `give me the latest ${label} of ${c.subject}.`]))
        return
      }
      case "series": {
        const f = op.fields.find((x) => x.source.kind === "value")
        const items = Refs.select(c.payload, base)
        const n = items.ok && Array.isArray(items.value) ? items.value.length : 0
        if (f === undefined || n === 0) return
        const label = u.seriesDef(op.type, op.metric ?? "")?.label ?? op.metric ?? "value"
        const dateF = op.fields.find((x) => x.source.kind === "date")
        const day = dateF === undefined ? undefined : value(itemPath(dateF.out, n - 1))
        fact(`${label} of ${c.subject} on ${fmt(day)}`, itemPath(f.out, n - 1))
        d.clauses.push(`what was the ${label} of ${c.subject} on ${fmt(day)}?`)
        return
      }
      case "stats": {
        const label = u.seriesDef(op.type, op.metric ?? "")?.label ?? op.metric ?? "value"
        const mean = op.fields.find((x) => x.source.kind === "stat" && x.source.stat === "mean")
        const max = op.fields.find((x) => x.source.kind === "stat" && x.source.stat === "max")
        const from = paramOf(op, "from")
        const to = paramOf(op, "to")
        const range = `between ${fmt(from === undefined ? undefined : c.args[from.name])} and ${fmt(to === undefined ? undefined : c.args[to.name])}`
        if (mean !== undefined) fact(`average ${label} of ${c.subject} ${range}`, itemPath(mean.out))
        if (max !== undefined) fact(`highest ${label} of ${c.subject} ${range}`, itemPath(max.out))
        d.clauses.push(`what were the average and the highest ${label} of ${c.subject} ${range}?`)
        return
      }
      case "convert": {
        const f = op.fields.find((x) => x.source.kind === "out" && x.source.key === "result")
        if (f === undefined) return
        fact(`${c.subject}`, itemPath(f.out))
        d.clauses.push(c.deps.length === 0 ? rng.pick([`how much is ${c.subject}?`, `convert ${c.subject.replace(" in ", " to ")}.`]) : `how much is ${c.subject}?`)
        return
      }
      case "utility": {
        const util = utility(op.utility ?? "")
        const f = op.fields[0]
        if (util === undefined || f === undefined) return
        const input = op.params.find((p) => p.required) ?? op.params.find((p) => c.args[p.name] !== undefined)
        const given = input === undefined ? "" : fmt(c.args[input.name])
        fact(`${util.outputs.find((o) => f.source.kind === "out" && o.key === f.source.key)?.label ?? f.out} (${util.topic})`, itemPath(f.out))
        const others = op.params.filter((p) => p.required && p !== input).map((p) => `${p.schema.description ?? p.name}: ${fmt(c.args[p.name])}`)
        d.clauses.push(input === undefined ? `${util.label}.` : `${util.label}: ${quote(given)}${others.length > 0 ? ` (${others.join(", ")})` : ""}.`)
        return
      }
      case "action": {
        const action = actionOf(op)
        if (action === undefined) return
        const rec = entityDefs.get(action.creates)
        const idField = op.fields.find((f) => f.source.kind === "attr" && f.source.key === "id")
        if (idField !== undefined) fact(`${rec?.id.label ?? "reference"} of ${c.subject}`, itemPath(idField.out))
        const extra = op.fields.find((f) => f.source.kind === "attr" && f.source.key !== "id" && !(f.schema["x-entity"] ?? "").endsWith(".id"))
        if (extra !== undefined) fact(`${labelOf(op.type, extra)} of ${c.subject}`, itemPath(extra.out))
        const inputs = op.params.filter((p) => p.role === "input" && c.args[p.name] !== undefined).map((p) => `${p.schema.description?.toLowerCase() ?? p.name} ${fmt(c.args[p.name])}`)
        const target = op.params.some((p) => p.role === "id") ? ` for ${c.subject}` : ""
        d.clauses.push(`please ${action.label}${target} (${inputs.join(", ")}) and give me the ${rec?.id.label ?? "reference"}${extra === undefined ? "" : ` and the ${labelOf(op.type, extra)}`}.`)
        return
      }
    }
  }

  // ---------------------------------------------------------------------------------------------------------
  // Levels.

  const newDraft = (): Draft => ({ calls: [], clauses: [], facts: [], state: engine.open({ taskId: taskId("draft"), seed: 0, request: "", faults: false }) })

  /** A branch: an anchor in `group`, then up to `depth` follow-ups along hard edges accepted by `accept`. */
  const branch = (d: Draft, rng: Rng, group: string, depth: number, accept: (to: ToolSpec) => boolean, parallel = 0): boolean => {
    const entries = entryByGroup.get(group) ?? []
    if (entries.length === 0) return false
    const start = d.calls.length
    let a: DraftCall | undefined
    for (let k = 0; k < 4 && a === undefined; k++) a = anchor(d, rng, rng.pick(entries))
    if (a === undefined) return false
    const leaves: Array<DraftCall> = []
    let frontier: DraftCall = a
    for (let level = 0; level < depth; level++) {
      const edges = rng.shuffle(edgesFrom(frontier, accept))
      const next: Array<DraftCall> = []
      const want = level === 0 ? 1 + parallel : 1
      for (const e of edges) {
        if (next.length >= want) break
        const c = follow(d, rng, frontier, e)
        if (c !== undefined) next.push(c)
      }
      if (next.length === 0) break
      leaves.push(...next.slice(1))
      frontier = next[0] as DraftCall
    }
    leaves.push(frontier)
    // Facts: leaves always; the anchor only when it is the whole branch (its ids feed the rest otherwise).
    for (const c of d.calls.slice(start)) if (leaves.includes(c) || c.op.kind === "action") ask(d, rng, c)
    return true
  }

  // the groups of a split (and category) never change: filtered once, not at every draw
  const groupsMemo = new Map<string, Array<string>>()
  const groupsOf = (split: Split | undefined, category?: string): ReadonlyArray<string> => {
    const base = category === undefined ? allGroups : entryGroupsByCategory.get(category) ?? []
    if (split === undefined) return base
    const key = `${split}\u0000${category ?? ""}`
    let groups = groupsMemo.get(key)
    if (groups === undefined) groupsMemo.set(key, groups = base.filter((g) => groupSplitOf(g) === split))
    return groups
  }
  const inSplit = (split: Split | undefined) => (t: ToolSpec): boolean => split === undefined || splitOfGroup(t) === split

  const build = (level: Level, rng: Rng, split: Split | undefined): Draft | undefined => {
    const d = newDraft()
    if (level === "I1") {
      const groups = groupsOf(split)
      const g = rng.pick(groups)
      const sameGroup = (t: ToolSpec): boolean => groupKey(t) === g
      if (!branch(d, rng, g, rng.next() < 0.85 ? 1 : 2, sameGroup, rng.next() < 0.35 ? 1 : 0)) return undefined
      if (d.calls.length === 1 && rng.next() < 0.4) branch(d, rng, g, 0, sameGroup)
      return d.calls.length <= 3 && d.facts.length > 0 ? d : undefined
    }
    if (level === "I2") {
      const cats = categoryNames.filter((c) => groupsOf(split, c).length >= 2)
      if (cats.length === 0) return undefined
      const cat = rng.pick(cats)
      const groups = rng.shuffle(groupsOf(split, cat))
      const sameCat = (t: ToolSpec): boolean => t.category === cat && inSplit(split)(t)
      const branches = 2 + (rng.next() < 0.3 ? 1 : 0)
      let made = 0
      for (const g of groups) {
        if (made >= branches) break
        if (branch(d, rng, g, 1 + (rng.next() < 0.2 ? 1 : 0), sameCat)) made++
      }
      const providers = new Set(d.calls.map((c) => groupKey(c.spec)))
      return made >= 2 && providers.size >= 2 && d.facts.length > 0 ? d : undefined
    }
    // I3: a branch whose follow-up crosses into another category, plus a parallel branch elsewhere.
    const groups = rng.shuffle(groupsOf(split))
    let crossed = false
    for (const g of groups.slice(0, 40)) {
      const entries = entryByGroup.get(g) ?? []
      const cat = entries[0]?.category
      const crossCat = (t: ToolSpec): boolean => t.category !== cat && inSplit(split)(t)
      const hasCross = entries.some((t) => world.library.graph.outgoing(t.name).some((e) => {
        const to = e.kind === "hard" ? world.library.get(e.to) : undefined
        return to !== undefined && crossCat(to)
      }))
      if (!hasCross) continue
      const before = d.calls.length
      if (!branch(d, rng, g, 1 + (rng.next() < 0.3 ? 1 : 0), (t) => crossCat(t) || (groupKey(t) === g))) continue
      crossed = d.calls.slice(before).some((c) => c.spec.category !== cat && c.deps.some((dep) => {
        const from = d.calls.find((x) => x.id === dep)
        return from !== undefined && world.library.graph.kind(from.spec.name, c.spec.name) === "hard" && from.spec.category !== c.spec.category
      }))
      if (crossed) break
      d.calls.length = before
      d.clauses.length = 0
      d.facts.length = 0
    }
    if (!crossed) return undefined
    const used = new Set(d.calls.map((c) => c.spec.category))
    const others = rng.shuffle(groupsOf(split)).filter((g) => !used.has(g.split("\u0000")[0] ?? "")).slice(0, 10)
    for (const g of others) if (branch(d, rng, g, rng.next() < 0.6 ? 1 : 0, (t) => inSplit(split)(t))) break
    const cats = new Set(d.calls.map((c) => c.spec.category))
    const roots = d.calls.filter((c) => c.deps.length === 0)
    return cats.size >= 2 && roots.length >= 2 && d.facts.length > 0 ? d : undefined
  }

  // ---------------------------------------------------------------------------------------------------------
  // Requests.

  const openers: ReadonlyArray<string> = ["", "", "", "Hi! ", "Quick question: ", "I need some help. ", "For a report I'm writing: ", "Can you help me out? "]
  const joiners: ReadonlyArray<string> = ["Also, ", "In addition, ", "And ", "Plus, ", "Separately, ", "At the same time, "]

  const request = (rng: Rng, d: Draft): string => {
    const parts = d.clauses.map((c, i) => V.capitalize(i === 0 ? c : `${rng.pick(joiners)}${c}`))
    return `${rng.pick(openers)}${parts.join(" ")}`.trim()
  }

  const toTask = (d: Draft, rng: Rng, split: Split, level: Level, id: string, seed: number): Task => {
    const gold: Array<GoldCall> = d.calls.map((c) => ({ id: c.id, tool: toolName(c.spec.name), arguments: c.args, deps: c.deps }))
    const categories: Array<string> = []
    for (const c of d.calls) if (!categories.includes(c.spec.category)) categories.push(c.spec.category)
    return { id: taskId(id), request: request(rng, d), level, categories, gold, facts: d.facts, split, seed, source: "generated" }
  }

  const draw = (split: Split, level: Level, index: number, seed = baseSeed): Task | undefined => {
    const rng = makeRng(hashParts(seed, "task", split, level, index))
    const d = build(level, rng, options.holdoutTools === true ? split : undefined)
    if (d === undefined) return undefined
    if (options.holdoutTools !== true) {
      // Tasks partition by their anchor call: the same request never lands in two splits.
      const a = d.calls[0]
      if (a === undefined || shareSplit(hash32(`${a.spec.name}(${canonicalJson(a.args)})`, seed)) !== split) return undefined
    }
    return toTask(d, rng, split, level, `gen-${seed}-${split}-${level}-${index}`, seed)
  }

  function* takeStepwise({ split, count, levels = ["I1", "I2", "I3"], seed = baseSeed }: TakeOptions): Generator<void, ReadonlyArray<Task>> {
    const out: Array<Task> = []
    const cursor = new Map<Level, number>()
    for (let k = 0; out.length < count && k < count * 400; k++) {
      const level = levels[out.length % levels.length] ?? "I1"
      const index = cursor.get(level) ?? 0
      cursor.set(level, index + 1)
      const t = draw(split, level, index, seed)
      if (t !== undefined) out.push(t)
      yield
    }
    return out
  }

  return {
    draw: (split, level, index, seed) => draw(split, level, index, seed),
    take: (options) => {
      const steps = takeStepwise(options)
      for (;;) {
        const next = steps.next()
        if (next.done === true) return next.value
      }
    },
    takeStepwise,
    splitOfGroup
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers on ops.

/** Whether an op can start a task (its required parameters come from the request, not from earlier calls). */
export const isEntry = (op: Op): boolean => {
  switch (op.kind) {
    case "search":
    case "lookup":
    case "top":
    case "featured":
    case "convert":
    case "utility":
      return true
    case "list":
      return op.params.some((p) => p.required && (p.role === "eq" || p.role === "ref_name")) && !op.params.some((p) => p.required && p.role === "ref_id")
    case "action":
      return !op.params.some((p) => p.role === "id")
    default:
      return false
  }
}

const isFollowable = (op: Op, e: DepEdge): boolean => {
  if (op.kind === "convert") return true
  if (op.kind === "list") return op.params.every((p) => !p.required || p.name === e.param)
  return op.kind !== "search" && op.kind !== "lookup" && op.kind !== "top" && op.kind !== "featured" && op.kind !== "utility"
}

const actionOf = (op: Op): ActionDef | undefined => actionFor(op.action, op.type)?.action

const fillInputs = (rng: Rng, op: Op, action: ActionDef, args: Record<string, Json>): void => {
  for (const p of op.params) {
    if (p.role !== "input") continue
    const input = action.inputs.find((i) => i.key === p.key)
    if (input === undefined || (!p.required && rng.next() < 0.5)) continue
    const v = input.example(rng.int(4294967296))
    if (v !== "") args[p.name] = v
  }
}

/** A value for a required parameter a follow-up needs besides the id it consumes (a categorical filter, a limit). */
const fillRequired = (rng: Rng, p: Param): Json | undefined => {
  if (p.role === "limit") return 5
  const values = p.role === "eq" ? p.schema.enum : undefined
  return values === undefined || values.length === 0 ? undefined : values[rng.int(values.length)]
}

/** The id of a call's first item. */
const firstId = (c: DraftCall): Json | undefined => {
  const f = c.op.fields.find((x) => x.source.kind === "attr" && x.source.key === "id")
  if (f === undefined) return undefined
  const r = Refs.select(c.payload, fieldPath(c.op, f.out, 0).split("."))
  return r.ok ? r.value : undefined
}

const fieldAt = (op: Op, edgeField: string): Field | undefined => {
  const last = edgeField.replace(/\[\]$/, "").split(".").pop() ?? ""
  return op.fields.find((f) => f.out === last)
}

const labelOf = (type: string, f: Field): string => {
  if (f.source.kind !== "attr") return f.schema.description ?? f.out
  const key = f.source.key
  const def = entityDefs.get(type)
  if (key === "name") return def?.nameLabel ?? "name"
  if (key === "id") return def?.id.label ?? "id"
  return def?.attrs.find((a) => a.key === key)?.label ?? f.schema.description ?? key
}

const nameOut = (op: Op): string | undefined => op.fields.find((f) => f.source.kind === "attr" && f.source.key === "name")?.out

const relationLabel = (op: Op): string => {
  const rel = op.relation
  if (rel === undefined) return entityDefs.get(op.type)?.plural ?? "items"
  const from = entityDefs.get(rel.from)
  const child = entityDefs.get(op.type)
  if (rel.via === "parent") return child?.plural ?? rel.name
  const label = child?.attrs.find((a) => a.ref?.type === rel.from && a.ref.inverse === rel.name)?.ref?.inverseLabel
  return label ?? `${child?.plural ?? rel.name} of the ${from?.noun ?? rel.from}`
}

/** A money field of a call's first item (an attribute with a currency unit), with its path. */
const moneyField = (c: DraftCall): { readonly path: string; readonly label: string } | undefined => {
  const def: EntityDef | undefined = entityDefs.get(c.type)
  for (const f of c.op.fields) {
    if (f.source.kind !== "attr") continue
    const key = f.source.key
    const a = def?.attrs.find((x) => x.key === key)
    if (a !== undefined && a.type === "number" && (a.unit === undefined || a.unit === "USD") && /price|amount|total|fare|cost/.test(a.key)) {
      return { path: fieldPath(c.op, f.out, 0), label: a.label }
    }
  }
  return undefined
}
