/**
 * Executes generated endpoints (L2 state + L3 rendering for the generated world): each Op is compiled once into a
 * closure that looks entities up in the Universe, applies the filters, and renders the payload in the endpoint's
 * envelope. Values are recomputed from (seed, entity, attribute), so every call about an entity agrees.
 */
import type { Json, JsonObject } from "../../domain/Json.ts"
import { canonicalJson } from "../../math/CanonicalJson.ts"
import { hash32 } from "../../math/Random.ts"
import { actionFor, entityDefs } from "../world/Entities.ts"
import type { Entity } from "../world/Model.ts"
import { type Field, type Op, type Param, paramOf } from "../world/Ops.ts"
import type { Universe } from "../world/Universe.ts"
import { utility } from "../world/Utilities.ts"
import * as V from "../world/Values.ts"

/** A record created by an action during an episode. */
export interface CreatedRecord {
  readonly type: string
  readonly id: string
  readonly value: { readonly [key: string]: Json }
}

/** What an execution may read and write besides its arguments. */
export interface ExecContext {
  /** Records created earlier in the episode, by id. */
  readonly records: ReadonlyMap<string, CreatedRecord>
  /** Ids the response carries (`x-entity: <type>.id` values): they become known once the call completes. */
  readonly produced: Array<string>
}

/** The outcome of executing an op. */
export type Result =
  | { readonly ok: true; readonly payload: Json; readonly record?: CreatedRecord }
  | { readonly ok: false; readonly kind: "not_found" | "invalid_arguments"; readonly message: string }

/** A compiled op. */
export type Compiled = (args: JsonObject, ctx: ExecContext) => Result

/** Longest date range a series endpoint serves, like real APIs' per-request limits. */
export const maxSeriesDays = 31

const notFound = (what: string, value: Json): Result => ({ ok: false, kind: "not_found", message: `404 Not Found: no ${what} matches ${JSON.stringify(value)}` })
const badRequest = (message: string): Result => ({ ok: false, kind: "invalid_arguments", message: `400 Bad Request: ${message}` })

/** How an item field gets its value: null, the entity's id, its name, or its attribute's generator. */
type Take = "null" | "id" | "name" | "attr"

/** Item renderers of one op: an entity (or a created record) as the endpoint's item object, noting the ids it carries. */
interface ItemRenderer {
  readonly entity: (e: Entity, produced: Array<string>) => { [key: string]: Json }
  readonly record: (r: CreatedRecord, produced: Array<string>) => { [key: string]: Json }
}

/** Notes the ids a field value carries (a string, or the strings of a list). */
const noteIds = (v: Json, produced: Array<string>): void => {
  if (typeof v === "string") {
    if (v !== "") produced.push(v)
  } else if (Array.isArray(v)) for (const x of v) if (typeof x === "string") produced.push(x)
}

const compileFields = (u: Universe, type: string, fields: ReadonlyArray<Field>): ItemRenderer => {
  // Parallel arrays, one slot per field, so rendering an item allocates nothing but the item.
  const n = fields.length
  const outs: Array<string> = []
  const takes: Array<Take> = []
  const keys: Array<string> = []
  const fromAttr: Array<boolean> = []
  const gens: Array<((e: Entity) => Json) | undefined> = []
  const isId: Array<boolean> = []
  for (const f of fields) {
    outs.push(f.out)
    isId.push((f.schema["x-entity"] ?? f.schema.items?.["x-entity"])?.endsWith(".id") === true)
    const src = f.source
    fromAttr.push(src.kind === "attr")
    if (src.kind !== "attr") {
      takes.push("null")
      keys.push("")
      gens.push(undefined)
      continue
    }
    const gen = src.key === "id" || src.key === "name" ? undefined : u.attrDef(type, src.key)?.gen
    takes.push(src.key === "id" ? "id" : src.key === "name" ? "name" : gen === undefined ? "null" : "attr")
    keys.push(src.key)
    gens.push(gen)
  }
  return {
    entity: (e, produced) => {
      const o: { [key: string]: Json } = {}
      for (let i = 0; i < n; i++) {
        const take = takes[i]
        const v: Json = take === "id" ? e.id : take === "name" ? e.name : take === "attr" ? (gens[i] as (e: Entity) => Json)(e) : null
        o[outs[i] as string] = v
        if (isId[i] === true) noteIds(v, produced)
      }
      return o
    },
    record: (r, produced) => {
      const o: { [key: string]: Json } = {}
      for (let i = 0; i < n; i++) {
        // A record answers every attribute field from its own values (the entity's generators do not apply).
        const v: Json = fromAttr[i] !== true ? null : takes[i] === "id" ? r.id : r.value[keys[i] as string] ?? null
        o[outs[i] as string] = v
        if (isId[i] === true) noteIds(v, produced)
      }
      return o
    }
  }
}

const isObject = (v: Json): v is { readonly [key: string]: Json } => v !== null && typeof v === "object" && !Array.isArray(v)

/** An op's envelope, compiled: wraps a payload (built fresh by this module) with the op's path and meta fields. */
type Wrap = (payload: Json, total: number, returned: number, limit: number) => Json

const compileEnvelope = (op: Op): Wrap => {
  const path = op.envelope.path
  const meta = op.envelope.meta
  if (path.length === 0 && meta.length === 0) return (payload) => payload
  const head = path[0] as string
  return (payload, total, returned, limit) => {
    let inner: Json = payload
    for (let i = path.length - 1; i >= 1; i--) inner = { [path[i] as string]: inner }
    // A bare object payload takes the meta fields beside its own: it is fresh, so it is extended rather than copied.
    const root: { [key: string]: Json } = path.length === 0 && isObject(payload)
      ? payload as { [key: string]: Json }
      : { [head]: inner }
    for (const m of meta) {
      root[m.out] = m.value === "total" ? total : m.value === "returned" ? returned : m.value === "limit" ? limit
        : m.value === "page" ? 1 : m.value === "ok" ? "success" : true
    }
    return root
  }
}

/** The values of an action's or utility's inputs, by input key (absent arguments left out). */
const inputValues = (inputs: ReadonlyArray<Param>, args: JsonObject): { [key: string]: Json } => {
  const values: { [key: string]: Json } = {}
  for (const p of inputs) {
    const v = args[p.name]
    if (v !== undefined && p.key !== undefined) values[p.key] = v
  }
  return values
}

const num = (v: Json | undefined): number | undefined => (typeof v === "number" ? v : undefined)
const str = (v: Json | undefined): string | undefined => (typeof v === "string" ? v : undefined)

/** Compiles an op against a universe. */
export const compile = (op: Op, u: Universe): Compiled => {
  const def = entityDefs.get(op.type)
  const render = compileFields(u, op.type, op.fields)
  const item = render.entity
  const wrap = compileEnvelope(op)
  const idName = paramOf(op, "id")?.name
  const limitName = paramOf(op, "limit")?.name
  const fromName = paramOf(op, "from")?.name
  const toName = paramOf(op, "to")?.name
  const defaultLimit = op.defaultLimit ?? 10
  const limitOf = (args: JsonObject): number => Math.max(1, Math.min(50, num(limitName === undefined ? undefined : args[limitName]) ?? defaultLimit))
  /** The first `limit` items of `indexes` (or of the range [start, start + count) when `indexes` is undefined). */
  const list = (args: JsonObject, ctx: ExecContext, indexes: ReadonlyArray<number> | undefined, start: number, count: number, extra?: (o: { [key: string]: Json }, k: number) => void): Result => {
    const limit = limitOf(args)
    const total = indexes === undefined ? count : indexes.length
    const n = Math.min(limit, total)
    const items: Array<Json> = []
    for (let k = 0; k < n; k++) {
      const o = item(u.entity(op.type, indexes === undefined ? start + k : indexes[k] as number), ctx.produced)
      if (extra !== undefined) extra(o, k)
      items.push(o)
    }
    return { ok: true, payload: wrap(items, total, items.length, limit) }
  }
  const listOf = (args: JsonObject, ctx: ExecContext, indexes: ReadonlyArray<number>): Result => list(args, ctx, indexes, 0, 0)
  const one = (ctx: ExecContext, type: string, index: number): Result =>
    ({ ok: true, payload: wrap(item(u.entity(type, index), ctx.produced), 1, 1, 1) })
  /** The entity an id argument names, or a 404. */
  const target = (args: JsonObject, type: string, name: string | undefined): number | Result => {
    const v = name === undefined ? undefined : args[name]
    const i = typeof v === "string" ? u.indexOf(type, v) : -1
    return i >= 0 ? i : notFound(entityDefs.get(type)?.noun ?? type, v ?? null)
  }
  const filters = op.params.filter((p) => p.role === "eq" || p.role === "ref_id" || p.role === "ref_name" || p.role === "min" || p.role === "max")
  /**
   * Applies equality, reference and range filters to `start` (undefined = every entity of the type). Returns the
   * matching indexes in order, `undefined` when nothing filtered (all entities), or an error result.
   */
  const filtered = (args: JsonObject, start: ReadonlyArray<number> | undefined): ReadonlyArray<number> | undefined | Result => {
    let current = start
    let ranges: Array<{ key: string; bound: "min" | "max"; value: Json }> | undefined
    for (const p of filters) {
      const v = args[p.name]
      if (v === undefined) continue
      const key = p.key ?? ""
      let next: ReadonlyArray<number>
      if (p.role === "eq") next = u.whereEq(op.type, key, v)
      else if (p.role === "ref_id") {
        const t = typeof v === "string" ? u.indexOf(p.refType ?? "", v) : -1
        if (t < 0) return notFound(entityDefs.get(p.refType ?? "")?.noun ?? "entity", v)
        next = u.referrers(op.type, key, t)
      } else if (p.role === "ref_name") {
        const targets = typeof v === "string" ? u.byExactName(p.refType ?? "", v) : []
        const acc: Array<number> = []
        for (const t of targets) acc.push(...u.referrers(op.type, key, t))
        next = targets.length > 1 ? [...new Set(acc)].sort((a, b) => a - b) : acc
      } else {
        ;(ranges ??= []).push({ key, bound: p.role === "min" ? "min" : "max", value: v })
        continue
      }
      if (current === undefined) current = next
      else {
        const keep = new Set(next)
        current = current.filter((i) => keep.has(i))
      }
    }
    if (ranges === undefined) return current
    const rs = ranges
    const cols = rs.map((r) => u.column(op.type, r.key))
    const pass = (i: number): boolean => rs.every((r, k) => {
      const x = cols[k]?.[i]
      if (typeof x === "number" && typeof r.value === "number") return r.bound === "min" ? x >= r.value : x <= r.value
      if (typeof x === "string" && typeof r.value === "string") return r.bound === "min" ? x >= r.value : x <= r.value
      return false
    })
    if (current !== undefined) return current.filter(pass)
    const out: Array<number> = []
    const n = u.size(op.type)
    for (let i = 0; i < n; i++) if (pass(i)) out.push(i)
    return out
  }
  const isResult = (x: ReadonlyArray<number> | undefined | Result): x is Result => x !== undefined && "ok" in x
  const dayRange = (args: JsonObject): { from: number; to: number } | Result => {
    const toText = str(toName === undefined ? undefined : args[toName])
    const fromText = str(fromName === undefined ? undefined : args[fromName])
    const to = toText === undefined ? (fromText === undefined ? V.today : Math.min(V.today, V.dayNumber(fromText) + 6)) : V.dayNumber(toText)
    const from = fromText === undefined ? to - 6 : V.dayNumber(fromText)
    if (from > to) return badRequest(`'${fromName}' (${V.isoDate(from)}) is after '${toName}' (${V.isoDate(to)})`)
    if (to - from + 1 > maxSeriesDays) return badRequest(`date range too long: ${to - from + 1} days requested, at most ${maxSeriesDays} allowed`)
    return { from, to }
  }

  switch (op.kind) {
    case "search": {
      const q = paramOf(op, "query")?.name ?? "query"
      return (args, ctx) => {
        const text = str(args[q]) ?? ""
        const hits = u.search(op.type, text, 10_000).matches
        const f = filtered(args, hits)
        return isResult(f) ? f : listOf(args, ctx, f ?? hits)
      }
    }
    case "lookup": {
      const q = paramOf(op, "query")?.name ?? "name"
      return (args, ctx) => {
        const hits = u.byExactName(op.type, str(args[q]) ?? "")
        const first = hits[0]
        return first === undefined ? notFound(def?.noun ?? op.type, args[q] ?? null) : one(ctx, op.type, first)
      }
    }
    case "details":
      return (args, ctx) => {
        const i = target(args, op.type, idName)
        return typeof i === "number" ? one(ctx, op.type, i) : i
      }
    case "featured": {
      const dateName = paramOf(op, "date")?.name
      return (args, ctx) => {
        const d = str(dateName === undefined ? undefined : args[dateName]) ?? V.isoDate(V.today)
        const n = u.size(op.type)
        return n === 0 ? notFound(def?.noun ?? op.type, d) : one(ctx, op.type, hash32(d, hash32(op.type, u.seed)) % n)
      }
    }
    case "list":
      return (args, ctx) => {
        const f = filtered(args, undefined)
        return isResult(f) ? f : f === undefined ? list(args, ctx, undefined, 0, u.size(op.type)) : listOf(args, ctx, f)
      }
    case "top": {
      const metric = op.metric ?? ""
      const rankOut = op.fields.find((x) => x.source.kind === "rank")?.out
      return (args, ctx) => {
        const ranked = u.rankedBy(op.type, metric)
        const f = filtered(args, undefined)
        if (isResult(f)) return f
        const keep = f === undefined ? undefined : new Set(f)
        const order: Array<number> = []
        const limit = limitOf(args)
        for (let k = 0; k < ranked.length && order.length < limit; k++) {
          const i = ranked[k] as number
          if (keep === undefined || keep.has(i)) order.push(i)
        }
        return list(args, ctx, order, 0, 0, (o, k) => {
          if (rankOut !== undefined) o[rankOut] = k + 1
        })
      }
    }
    case "children": {
      const rel = op.relation
      return (args, ctx) => {
        if (rel === undefined) return notFound(op.type, null)
        const i = target(args, rel.from, idName)
        if (typeof i !== "number") return i
        if (rel.via === "parent") {
          const c = u.children(op.type, i)
          return list(args, ctx, undefined, c.start, c.count)
        }
        return listOf(args, ctx, u.inverse(op.type, rel.name, rel.from, i))
      }
    }
    case "series":
    case "latest":
    case "stats": {
      const metric = op.metric ?? ""
      const dateOut = op.fields.find((f) => f.source.kind === "date")?.out
      const valueOut = op.fields.find((f) => f.source.kind === "value")?.out
      return (args, ctx) => {
        const i = target(args, op.type, idName)
        if (typeof i !== "number") return i
        if (op.kind === "latest") {
          const o = item(u.entity(op.type, i), ctx.produced)
          if (valueOut !== undefined) o[valueOut] = u.seriesValue(op.type, i, metric, V.today)
          if (dateOut !== undefined) o[dateOut] = V.isoDate(V.today)
          return { ok: true, payload: wrap(o, 1, 1, 1) }
        }
        const range = dayRange(args)
        if ("ok" in range) return range
        const values = u.seriesRange(op.type, i, metric, range.from, range.to)
        if (op.kind === "series") {
          const items = values.map((v, k) => ({ [dateOut ?? "date"]: V.isoDate(range.from + k), [valueOut ?? "value"]: v }))
          return { ok: true, payload: wrap(items, items.length, items.length, items.length) }
        }
        const first = values[0] ?? 0
        const last = values[values.length - 1] ?? 0
        const stats: Record<string, number> = {
          min: Math.min(...values), max: Math.max(...values),
          mean: Math.round((values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)) * 100) / 100,
          days: values.length, first, last,
          change_pct: first === 0 ? 0 : Math.round(((last - first) / Math.abs(first)) * 10000) / 100
        }
        const o: { [key: string]: Json } = {}
        for (const f of op.fields) if (f.source.kind === "stat") o[f.out] = stats[f.source.stat] ?? 0
        return { ok: true, payload: wrap(o, 1, 1, 1) }
      }
    }
    case "action": {
      const entry = actionFor(op.action, op.type)
      const action = entry?.action
      const targetDef = entry?.target
      const inputs = op.params.filter((p) => p.role === "input")
      return (args, ctx) => {
        if (action === undefined) return notFound("action", op.action ?? null)
        let entity: Entity | undefined
        if (targetDef !== undefined) {
          const i = target(args, targetDef, idName)
          if (typeof i !== "number") return i
          entity = u.entity(targetDef, i)
        }
        const values = inputValues(inputs, args)
        // Keyed on what the action means (action, target, inputs by key), not on the provider or its parameter
        // names: the same booking through any provider gets the same confirmation.
        const h = hash32(canonicalJson({ action: action.creates, target: entity?.id ?? null, inputs: values }), u.seed)
        const id = action.recordId(h)
        const record: CreatedRecord = { type: action.creates, id, value: action.compute(entity, values, h) }
        ctx.produced.push(id)
        const o = render.record(record, ctx.produced)
        return { ok: true, payload: wrap(o, 1, 1, 1), record }
      }
    }
    case "record":
      return (args, ctx) => {
        const v = idName === undefined ? undefined : args[idName]
        const rec = typeof v === "string" ? ctx.records.get(v) : undefined
        if (rec === undefined || rec.type !== op.type) return notFound(def?.noun ?? op.type, v ?? null)
        return { ok: true, payload: wrap(render.record(rec, ctx.produced), 1, 1, 1) }
      }
    case "convert": {
      const amountName = paramOf(op, "amount")?.name ?? "amount"
      const baseName = paramOf(op, "base")?.name ?? "from"
      const quoteName = paramOf(op, "quote")?.name ?? "to"
      return (args, ctx) => {
        const amount = num(args[amountName]) ?? 0
        const b = str(args[baseName]) ?? ""
        const q = str(args[quoteName]) ?? ""
        const bi = u.indexOf("currency", b.toUpperCase())
        const qi = u.indexOf("currency", q.toUpperCase())
        if (bi < 0) return notFound("currency", b)
        if (qi < 0) return notFound("currency", q)
        const rb = num(u.attr("currency", bi, "rate_per_usd")) ?? 1
        const rq = num(u.attr("currency", qi, "rate_per_usd")) ?? 1
        const rate = Math.round((rq / rb) * 1e6) / 1e6
        const decimals = num(u.attr("currency", qi, "decimals")) ?? 2
        const f = 10 ** decimals
        const outs: Record<string, Json> = { result: Math.round(amount * (rq / rb) * f) / f, rate }
        const o: { [key: string]: Json } = {}
        for (const fl of op.fields) {
          o[fl.out] = fl.source.kind === "out" ? outs[fl.source.key] ?? null : fl.source.kind === "arg" ? (str(args[fl.source.param]) ?? "").toUpperCase() : null
        }
        ctx.produced.push(b.toUpperCase(), q.toUpperCase())
        return { ok: true, payload: wrap(o, 1, 1, 1) }
      }
    }
    case "utility": {
      const util = utility(op.utility ?? "")
      const inputs = op.params.filter((p) => p.role === "input")
      return (args, ctx) => {
        if (util === undefined) return notFound("utility", op.utility ?? null)
        const values = inputValues(inputs, args)
        const res = util.run(values, hash32(canonicalJson({ utility: util.key, inputs: values }), u.seed))
        const o: { [key: string]: Json } = {}
        for (const f of op.fields) o[f.out] = f.source.kind === "out" ? res[f.source.key] ?? null : null
        return { ok: true, payload: wrap(o, 1, 1, 1) }
      }
    }
  }
}
