/**
 * The endpoint builders of the generated library, one per kind (search, lookup, details, list, children, series,
 * top, featured, action, record, convert, utility): each draws the op, its name words, a path and a description.
 */
import type { JsonSchema } from "../../domain/Json.ts"
import type { Rng } from "../../math/Random.ts"
import {
  caseOf,
  dateRangeParams,
  defOf,
  entityFields,
  factAttrs,
  filterParam,
  idParam,
  inputParam,
  limitParam,
  listEnvelope,
  objectEnvelope,
  param,
  rangeParam,
  someAttrs,
  type Style
} from "./EndpointParts.ts"
import type { ActionDef, Attr, EntityDef, SeriesDef } from "./Model.ts"
import type { Field, Op, Param } from "./Ops.ts"
import type { UtilityDef } from "./Utilities.ts"
import * as T from "./Wording.ts"
import { capitalize, slug } from "./Values.ts"

/** An endpoint before it becomes a ToolSpec: its op, name words, path, description, method, whether it can start a task. */
export interface Endpoint {
  readonly op: Op
  /** Lower-case words of the endpoint name (`get team details`). */
  readonly words: string
  readonly path: string
  readonly description: string
  readonly method: "GET" | "POST"
  /** Whether it can start a task (needs nothing the caller could not know). */
  readonly entry: boolean
}

/** What every builder draws from: the provider's random stream and its style. */
export interface Ctx {
  readonly rng: Rng
  readonly style: Style
}

const describeFields = (ctx: Ctx, fields: ReadonlyArray<Field>, labels: ReadonlyMap<string, string>): string => {
  const named = fields.map((f) => labels.get(f.out)).filter((l): l is string => l !== undefined)
  if (!ctx.style.verbose || named.length === 0) return ""
  return ` ${ctx.rng.pick(["Returns", "Response includes", "Includes", "Fields:", "Provides"])} ${T.listing(named.slice(0, 7))}.`
}

const labelsOf = (def: EntityDef, fields: ReadonlyArray<Field>): ReadonlyMap<string, string> => {
  const m = new Map<string, string>()
  for (const f of fields) {
    if (f.source.kind !== "attr") continue
    const key = f.source.key
    m.set(f.out, key === "id" ? def.id.label : key === "name" ? def.nameLabel : def.attrs.find((a) => a.key === key)?.label ?? key)
  }
  return m
}

const noun = (ctx: Ctx, def: EntityDef): string => T.nounVariant(ctx.rng, def.noun, def.synonyms)
const plural = (ctx: Ctx, def: EntityDef): string => {
  const n = T.nounVariant(ctx.rng, def.plural, def.synonyms, 0.3)
  return n === def.plural ? n : n.endsWith("s") ? n : `${n}s`
}

/** Search an entity type by name: an entry point. */
export const searchEndpoint = (ctx: Ctx, def: EntityDef): Endpoint => {
  const { rng, style } = ctx
  const attrs = someAttrs(rng, factAttrs(def).filter((a) => a.type !== "string[]"), 1, 3)
  const fields = entityFields(style, def, attrs)
  const defaultLimit = rng.pick([5, 10, 10, 20])
  const eqAttrs = def.attrs.filter((a) => a.filter === "eq" && a.ref === undefined && (a.values !== undefined || a.type === "boolean"))
  const params: Array<Param> = [
    param(caseOf(style, def.nameLabel === "title" && rng.next() < 0.5 ? "title" : style.queryName), "query", {
      type: "string", description: `${capitalize(rng.pick(["search text", "name or part of the name", "keywords", "free-text query"]))} to match against the ${def.noun}'s ${def.nameLabel}`, "x-entity": `${def.type}.name`
    }, true)
  ]
  if (eqAttrs.length > 0 && rng.next() < 0.35) params.push(filterParam(style, def, rng.pick(eqAttrs), false, rng))
  if (rng.next() < 0.8) params.push(limitParam(style, def, defaultLimit))
  const op: Op = { kind: "search", type: def.type, params, result: "list", envelope: listEnvelope(style, def), fields, defaultLimit }
  const p = plural(ctx, def)
  const description = T.phrase(rng, [
    `Search ${p} by ${def.nameLabel}.`,
    `Find ${p} whose ${def.nameLabel} matches a query.`,
    `Look up ${p} by keyword and get their ${def.id.label}s.`,
    `Full-text search over ${def.plural}.`,
    `Returns ${p} matching the search term, best matches first.`
  ]) + describeFields(ctx, fields, labelsOf(def, fields))
  return { op, words: T.phrase(rng, [`search ${def.plural}`, `find ${def.noun}`, `${def.noun} search`, `search ${def.plural} by name`]), path: `/${slug(def.plural)}/search`, description, method: "GET", entry: true }
}

/** Get an entity by its exact name: an entry point. */
export const lookupEndpoint = (ctx: Ctx, def: EntityDef): Endpoint => {
  const { rng, style } = ctx
  const attrs = someAttrs(rng, factAttrs(def), 2, 5)
  const fields = entityFields(style, def, attrs)
  const params = [param(caseOf(style, def.nameLabel === "name" ? "name" : slug(def.nameLabel, "_")), "query", {
    type: "string", description: `Exact ${def.nameLabel} of the ${def.noun}`, "x-entity": `${def.type}.name`
  }, true)]
  const op: Op = { kind: "lookup", type: def.type, params, result: "object", envelope: objectEnvelope(style, def), fields }
  const description = T.phrase(rng, [
    `Get a ${noun(ctx, def)} by its exact ${def.nameLabel}.`,
    `Resolve a ${def.noun} ${def.nameLabel} to its record.`,
    `Returns the ${def.noun} with the given ${def.nameLabel}; 404 when there is none.`
  ]) + describeFields(ctx, fields, labelsOf(def, fields))
  return { op, words: T.phrase(rng, [`get ${def.noun} by name`, `${def.noun} lookup`, `find ${def.noun} by ${def.nameLabel}`]), path: `/${slug(def.plural)}/by-${slug(def.nameLabel)}`, description, method: "GET", entry: true }
}

/** Get an entity by id: all its facts, some, or a lite one- or two-attribute view. */
export const detailsEndpoint = (ctx: Ctx, def: EntityDef, variant: "full" | "some" | "lite"): Endpoint => {
  const { rng, style } = ctx
  const pool = factAttrs(def)
  const attrs = variant === "full" ? [...pool] : variant === "lite" ? someAttrs(rng, pool.filter((a) => a.ref === undefined), 1, 2) : someAttrs(rng, pool, 3, 7)
  const fields = entityFields(style, def, attrs, variant !== "lite" || rng.next() < 0.5)
  const params = [idParam(style, def, rng, def.id.label)]
  const op: Op = { kind: "details", type: def.type, params, result: "object", envelope: objectEnvelope(style, def), fields }
  const n = noun(ctx, def)
  const lite = variant === "lite" ? ` Only the ${T.listing(attrs.map((a) => a.label))}.` : ""
  const description = T.phrase(rng, variant === "lite"
    ? [`Quick ${n} lookup by ${def.id.label}.`, `Get the ${T.listing(attrs.map((a) => a.label))} of a ${n}.`, `Lightweight ${n} endpoint.`]
    : [
      `Get detailed information about a ${n} by its ${def.id.label}.`,
      `Retrieve the full profile of a ${n}.`,
      `Returns ${def.noun} details for the given ${def.id.label}.`,
      `Look up a ${n} using its ID.`,
      `Fetch ${def.noun} data by ID.`
    ]) + lite + describeFields(ctx, fields, labelsOf(def, fields))
  const words = variant === "lite"
    ? T.phrase(rng, [`${def.noun} ${attrs[0]?.label ?? "summary"}`, `${def.noun} summary`, `get ${def.noun} ${attrs[0]?.key.replace(/_/g, " ") ?? "basics"}`])
    : T.phrase(rng, [`get ${def.noun} details`, `${def.noun} info`, `${def.noun} profile`, `get ${def.noun} by id`, `${def.noun} details`])
  return { op, words, path: `/${slug(def.plural)}/{${params[0]?.name ?? "id"}}${variant === "lite" ? `/${slug(attrs[0]?.key ?? "summary")}` : ""}`, description, method: "GET", entry: false }
}

/** How many children of a type an entity has (the count only). */
export const countEndpoint = (ctx: Ctx, def: EntityDef, countAttr: Attr, child: EntityDef): Endpoint => {
  const { rng, style } = ctx
  const fields = entityFields(style, def, [countAttr], rng.next() < 0.5)
  const params = [idParam(style, def, rng, def.id.label)]
  const op: Op = { kind: "details", type: def.type, params, result: "object", envelope: objectEnvelope(style, def), fields }
  const description = T.phrase(rng, [
    `Get the number of ${child.plural} of a ${def.noun} (count only, no list).`,
    `Returns how many ${child.plural} a ${noun(ctx, def)} has.`,
    `${capitalize(countAttr.label)} for a ${def.noun}.`
  ])
  return { op, words: T.phrase(rng, [`${def.noun} ${child.plural} count`, `count ${def.noun} ${child.plural}`, `${def.noun} ${countAttr.key.replace(/_/g, " ")}`]), path: `/${slug(def.plural)}/{id}/${slug(child.plural)}/count`, description, method: "GET", entry: false }
}

/** List entities by an attribute or a referenced entity (by its id, or by its name as an entry point). */
export const listEndpoint = (ctx: Ctx, def: EntityDef, by: Attr, byName: boolean): Endpoint => {
  const { rng, style } = ctx
  const attrs = someAttrs(rng, factAttrs(def).filter((a) => a.key !== by.key && a.type !== "string[]"), 1, 3)
  const fields = entityFields(style, def, attrs)
  const defaultLimit = rng.pick([10, 20, 25])
  const params: Array<Param> = []
  const target = by.ref === undefined ? undefined : defOf(by.ref.type)
  if (by.ref !== undefined && byName && target !== undefined) {
    params.push(param(caseOf(style, rng.next() < 0.5 ? target.type : `${target.type}_name`), "ref_name", {
      type: "string", description: `${capitalize(target.noun)} ${target.nameLabel}`, "x-entity": `${target.type}.name`
    }, true, { key: by.key, refType: target.type }))
  } else params.push(filterParam(style, def, by, true, rng))
  const ranges = def.attrs.filter((a) => a.filter === "range" && a.key !== by.key && (a.type === "integer" || a.type === "number" || a.format === "date"))
  if (ranges.length > 0 && rng.next() < 0.45) {
    const r = rng.pick(ranges)
    params.push(rangeParam(style, def, r, rng.next() < 0.5 ? "min" : "max"))
  }
  if (rng.next() < 0.75) params.push(limitParam(style, def, defaultLimit))
  const op: Op = { kind: "list", type: def.type, params, result: "list", envelope: listEnvelope(style, def), fields, defaultLimit }
  const p = plural(ctx, def)
  const byLabel = target !== undefined ? target.noun : by.label
  const description = T.phrase(rng, [
    `List ${p} by ${byLabel}.`,
    `Returns ${p} filtered by ${byLabel}${params.length > 2 ? " and an optional range" : ""}.`,
    `Find all ${def.plural} for a given ${byLabel}.`,
    `${capitalize(def.plural)} in a ${byLabel}.`
  ]) + describeFields(ctx, fields, labelsOf(def, fields))
  return {
    op,
    words: T.phrase(rng, [`list ${def.plural} by ${byLabel}`, `${def.plural} by ${byLabel}`, `get ${def.plural}`, `${byLabel} ${def.plural}`]),
    path: `/${slug(def.plural)}?${params[0]?.name ?? "filter"}=`,
    description, method: "GET", entry: target === undefined || byName
  }
}

/** List the children of an entity through a parent or inverse relation. */
export const childrenEndpoint = (ctx: Ctx, parent: EntityDef, child: EntityDef, via: "parent" | "inverse", name: string, label: string): Endpoint => {
  const { rng, style } = ctx
  const attrs = someAttrs(rng, factAttrs(child).filter((a) => a.ref?.type !== parent.type && a.names !== parent.type && a.type !== "string[]"), 1, 3)
  const fields = entityFields(style, child, attrs)
  const defaultLimit = rng.pick([10, 20, 50])
  const params: Array<Param> = [idParam(style, parent, rng, parent.id.label)]
  if (rng.next() < 0.5) params.push(limitParam(style, child, defaultLimit))
  const op: Op = { kind: "children", type: child.type, params, result: "list", envelope: listEnvelope(style, child), fields, defaultLimit, relation: { via, from: parent.type, name } }
  const description = T.phrase(rng, [
    `List the ${label} of a ${noun(ctx, parent)}.`,
    `Get all ${label} for a given ${parent.noun} ${parent.id.label}.`,
    `Returns the ${label} belonging to a ${parent.noun}.`,
    `${capitalize(label)} of a ${parent.noun}.`
  ]) + describeFields(ctx, fields, labelsOf(child, fields))
  return { op, words: T.phrase(rng, [`${parent.noun} ${label}`, `get ${parent.noun} ${label}`, `list ${label} by ${parent.noun}`]), path: `/${slug(parent.plural)}/{id}/${slug(name)}`, description, method: "GET", entry: false }
}

/** A daily series of an entity: its history over a date range, its latest value, or statistics over a range. */
export const seriesEndpoint = (ctx: Ctx, def: EntityDef, s: SeriesDef): Endpoint => {
  const { rng, style } = ctx
  const metricOut = caseOf(style, rng.next() < 0.5 ? s.key : "value")
  const kind = rng.pick(["series", "series", "latest", "stats"] as const)
  const idp = idParam(style, def, rng, def.id.label)
  const valueSchema: JsonSchema = { type: s.type, description: s.label, "x-entity": `${def.type}.${s.key}` }
  if (kind === "series") {
    const fields: Array<Field> = [
      { out: rng.pick(["date", "day", "timestamp"]), source: { kind: "date" }, schema: { type: "string", format: "date", description: "day" } },
      { out: metricOut, source: { kind: "value" }, schema: valueSchema }
    ]
    const op: Op = { kind: "series", type: def.type, params: [idp, ...dateRangeParams(style, rng.next() < 0.6)], result: "list", envelope: listEnvelope(style, undefined), fields, metric: s.key }
    return {
      op, method: "GET", entry: false, path: `/${slug(def.plural)}/{id}/${slug(s.key)}/history`,
      words: T.phrase(rng, [`${def.noun} ${s.label} history`, `historical ${s.label}`, `get ${s.key.replace(/_/g, " ")} time series`, `daily ${s.label}`]),
      description: T.phrase(rng, [
        `Daily ${s.label} of a ${noun(ctx, def)} between two dates.`,
        `Historical ${s.label} for a ${def.noun}, one value per day (max 31 days).`,
        `Time series of ${s.label} for the given ${def.id.label}.`
      ])
    }
  }
  if (kind === "latest") {
    const fields: Array<Field> = [
      ...entityFields(style, def, [], rng.next() < 0.5),
      { out: metricOut, source: { kind: "value" }, schema: valueSchema },
      { out: rng.pick(["as_of", "date", "updated"]), source: { kind: "date" }, schema: { type: "string", format: "date", description: "date of the value" } }
    ]
    const op: Op = { kind: "latest", type: def.type, params: [idp], result: "object", envelope: objectEnvelope(style, def), fields, metric: s.key }
    return {
      op, method: "GET", entry: false, path: `/${slug(def.plural)}/{id}/${slug(s.key)}`,
      words: T.phrase(rng, [`current ${s.label}`, `${def.noun} ${s.label}`, `latest ${s.key.replace(/_/g, " ")}`, `real-time ${s.label}`]),
      description: T.phrase(rng, [`Current ${s.label} of a ${noun(ctx, def)}.`, `Latest ${s.label} for the given ${def.id.label}.`, `Real-time ${s.label} of a ${def.noun}.`])
    }
  }
  const stat = (o: string, st: "min" | "max" | "mean" | "days" | "change_pct", label: string): Field => ({ out: caseOf(style, o), source: { kind: "stat", stat: st }, schema: { type: st === "days" ? "integer" : "number", description: label } })
  const fields: Array<Field> = [
    stat("min", "min", `lowest ${s.label}`), stat("max", "max", `highest ${s.label}`), stat(rng.pick(["average", "mean", "avg"]), "mean", `average ${s.label}`),
    stat("days", "days", "days covered"), stat("change_pct", "change_pct", `change of ${s.label} over the period (%)`)
  ]
  const op: Op = { kind: "stats", type: def.type, params: [idp, ...dateRangeParams(style, true)], result: "object", envelope: objectEnvelope(style, undefined), fields, metric: s.key }
  return {
    op, method: "GET", entry: false, path: `/${slug(def.plural)}/{id}/${slug(s.key)}/stats`,
    words: T.phrase(rng, [`${s.label} statistics`, `${def.noun} ${s.key.replace(/_/g, " ")} summary`, `${s.label} min max average`]),
    description: T.phrase(rng, [`Minimum, maximum and average ${s.label} of a ${noun(ctx, def)} over a date range.`, `Summary statistics of ${s.label} between two dates (max 31 days).`])
  }
}

/** The top entities ranked by a numeric attribute: an entry point. */
export const topEndpoint = (ctx: Ctx, def: EntityDef, by: Attr): Endpoint => {
  const { rng, style } = ctx
  const others = someAttrs(rng, factAttrs(def).filter((a) => a.key !== by.key && a.type !== "string[]"), 0, 2)
  const fields: Array<Field> = [
    { out: "rank", source: { kind: "rank" }, schema: { type: "integer", description: "position in the ranking" } },
    ...entityFields(style, def, [by, ...others])
  ]
  const defaultLimit = rng.pick([5, 10, 10, 25])
  const params: Array<Param> = [limitParam(style, def, defaultLimit)]
  const eqAttrs = def.attrs.filter((a) => a.filter === "eq" && a.ref === undefined && a.values !== undefined)
  if (eqAttrs.length > 0 && rng.next() < 0.4) params.push(filterParam(style, def, rng.pick(eqAttrs), false, rng))
  const op: Op = { kind: "top", type: def.type, params, result: "list", envelope: listEnvelope(style, def), fields, metric: by.key, defaultLimit }
  const p = plural(ctx, def)
  return {
    op, method: "GET", entry: true, path: `/${slug(def.plural)}/top`,
    words: T.phrase(rng, [`top ${def.plural}`, `${def.plural} ranking`, `top ${def.plural} by ${by.key.replace(/_/g, " ")}`, `trending ${def.plural}`]),
    description: T.phrase(rng, [`Top ${p} ranked by ${by.label}.`, `Ranking of ${p} by ${by.label}, highest first.`, `The ${p} with the highest ${by.label}.`]) + describeFields(ctx, fields, labelsOf(def, fields))
  }
}

/** A featured entity of the day: an entry point. */
export const featuredEndpoint = (ctx: Ctx, def: EntityDef): Endpoint => {
  const { rng, style } = ctx
  const attrs = someAttrs(rng, factAttrs(def), 2, 4)
  const fields = entityFields(style, def, attrs)
  const params = [param("date", "date", { type: "string", format: "date", description: "Day to get the pick for (default today)" }, false)]
  const op: Op = { kind: "featured", type: def.type, params, result: "object", envelope: objectEnvelope(style, def), fields }
  return {
    op, method: "GET", entry: true, path: `/${slug(def.plural)}/featured`,
    words: T.phrase(rng, [`${def.noun} of the day`, `featured ${def.noun}`, `random ${def.noun}`, `daily ${def.noun} pick`]),
    description: T.phrase(rng, [`A featured ${noun(ctx, def)}, changing every day.`, `Get today's ${def.noun} pick (or the pick of another day).`, `Random ${def.noun} of the day.`]) + describeFields(ctx, fields, labelsOf(def, fields))
  }
}

const recordFields = (ctx: Ctx, a: ActionDef, all: boolean): Array<Field> => {
  const rec = defOf(a.creates)
  const attrs = rec === undefined ? [] : all ? [...rec.attrs] : someAttrs(ctx.rng, rec.attrs, 2, 4)
  return rec === undefined ? [] : entityFields(ctx.style, rec, attrs, false)
}

/** An action that creates a record, on an entity or standalone (then an entry point). */
export const actionEndpoint = (ctx: Ctx, a: ActionDef, target: EntityDef | undefined): Endpoint => {
  const { rng, style } = ctx
  const rec = defOf(a.creates)
  const params: Array<Param> = []
  if (target !== undefined) params.push(idParam(style, target, rng, target.id.label))
  for (const input of a.inputs) params.push(inputParam(style, input))
  const fields = recordFields(ctx, a, false)
  const op: Op = { kind: "action", type: a.creates, params, result: "object", envelope: objectEnvelope(style, rec), fields, action: a.key }
  const verb = a.key.replace(/_/g, " ")
  return {
    op, method: "POST", entry: target === undefined, path: target === undefined ? `/${slug(rec?.plural ?? a.creates)}` : `/${slug(target.plural)}/{id}/${slug(a.key)}`,
    words: target === undefined ? T.phrase(rng, [verb, `create ${rec?.noun ?? a.creates}`]) : T.phrase(rng, [`${verb} ${target.noun}`, `create ${rec?.noun ?? a.creates}`, `${target.noun} ${verb}`]),
    description: `${capitalize(a.label)}. ${T.phrase(rng, [`Returns the new ${rec?.noun ?? "record"} and its ${rec?.id.label ?? "id"}.`, `Responds with a ${rec?.id.label ?? "reference"} you can use to check the status later.`, "Creates the record and returns its reference."])}`
  }
}

/** The status of a record an action created. */
export const recordEndpoint = (ctx: Ctx, a: ActionDef): Endpoint => {
  const { rng, style } = ctx
  const rec = defOf(a.creates)
  const fields = recordFields(ctx, a, rng.next() < 0.5)
  const params = rec === undefined ? [] : [idParam(style, rec, rng, rec.id.label)]
  const op: Op = { kind: "record", type: a.creates, params, result: "object", envelope: objectEnvelope(style, rec), fields, action: a.key }
  const n = rec?.noun ?? a.creates
  return {
    op, method: "GET", entry: false, path: `/${slug(rec?.plural ?? a.creates)}/{id}`,
    words: T.phrase(rng, [`get ${n} status`, `${n} details`, `check ${n}`, `retrieve ${n}`]),
    description: T.phrase(rng, [`Check the status of a ${n} by its ${rec?.id.label ?? "id"}.`, `Retrieve a ${n} created earlier.`, `Get ${n} details using the reference returned at creation.`])
  }
}

/** Currency conversion: an entry point. */
export const convertEndpoint = (ctx: Ctx): Endpoint => {
  const { rng, style } = ctx
  const base = rng.pick(["from", "base", "from_currency", "source"])
  const quote = rng.pick(["to", "target", "to_currency", "symbols"])
  const cur: JsonSchema = { type: "string", "x-entity": "currency.id" }
  const params: Array<Param> = [
    param(caseOf(style, "amount"), "amount", { type: "number", minimum: 0, description: "Amount to convert" }, true),
    param(caseOf(style, base), "base", { ...cur, description: "ISO 4217 code of the source currency (e.g. USD)" }, true),
    param(caseOf(style, quote), "quote", { ...cur, description: "ISO 4217 code of the target currency (e.g. EUR)" }, true)
  ]
  const fields: Array<Field> = [
    { out: caseOf(style, rng.pick(["result", "converted_amount", "converted"])), source: { kind: "out", key: "result" }, schema: { type: "number", description: "converted amount" } },
    { out: "rate", source: { kind: "out", key: "rate" }, schema: { type: "number", description: "exchange rate" } },
    { out: caseOf(style, "from"), source: { kind: "arg", param: params[1]?.name ?? "from" }, schema: { type: "string", description: "source currency", "x-entity": "currency.id" } },
    { out: caseOf(style, "to"), source: { kind: "arg", param: params[2]?.name ?? "to" }, schema: { type: "string", description: "target currency", "x-entity": "currency.id" } }
  ]
  const op: Op = { kind: "convert", type: "", params, result: "object", envelope: objectEnvelope(style, undefined), fields }
  return {
    op, method: "GET", entry: true, path: "/convert",
    words: T.phrase(rng, ["convert currency", "currency converter", "exchange amount", "fx convert"]),
    description: T.phrase(rng, ["Convert an amount from one currency to another at today's rate.", "Currency conversion using live exchange rates.", "Exchange an amount between two ISO currencies."])
  }
}

/** A stateless utility (text, math, ...): an entry point. */
export const utilityEndpoint = (ctx: Ctx, u: UtilityDef): Endpoint => {
  const { rng, style } = ctx
  const rename = rng.next() < 0.3
  const params = u.inputs.map((i) => inputParam(style, i, rename))
  const outs = u.outputs.filter((o, k) => k === 0 || rng.next() < 0.8)
  const fields: Array<Field> = outs.map((o) => ({
    out: caseOf(style, o.key),
    source: { kind: "out", key: o.key },
    schema: o.type === "string[]" ? { type: "array", items: { type: "string" }, description: o.label } : { type: o.type, description: o.label }
  }))
  const op: Op = { kind: "utility", type: "", params, result: "object", envelope: objectEnvelope(style, undefined), fields, utility: u.key }
  const topic = T.nounVariant(rng, u.topic, u.synonyms, 0.5)
  return {
    op, method: rng.next() < 0.5 ? "POST" : "GET", entry: true, path: `/${slug(u.key)}`,
    words: T.phrase(rng, [u.label.split(" ").slice(0, 2).join(" "), u.topic, u.key.replace(/_/g, " ")]),
    description: `${capitalize(u.label)}. ${T.phrase(rng, [`Fast ${topic} endpoint.`, `${capitalize(topic)} API.`, `Simple ${topic}.`, ""])}`.trim() + describeFields(ctx, fields, new Map(outs.map((o) => [caseOf(style, o.key), o.label])))
  }
}
