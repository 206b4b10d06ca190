/**
 * Generates the tool library: providers (RapidAPI-style tool groups) per category until each category's quota is
 * met, each provider offering several endpoints over one or two entity types, utilities or actions. Every endpoint
 * is an Op (what it does) plus a ToolSpec (how it is documented), both derived from the same choices. This module
 * assembles providers; the endpoint kinds are built in Endpoints.ts from the parts in EndpointParts.ts.
 */
import type { ParametersSchema } from "../../domain/Json.ts"
import { toolId, toolName } from "../../domain/Ids.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { hashParts, rng as makeRng, type Rng } from "../../math/Random.ts"
import { type Category, categories, categoryQuotas } from "./Catalog.ts"
import { allActions, entityDefs } from "./Entities.ts"
import { defOf, drawStyle, responseSchema } from "./EndpointParts.ts"
import {
  actionEndpoint,
  childrenEndpoint,
  convertEndpoint,
  countEndpoint,
  type Ctx,
  detailsEndpoint,
  type Endpoint,
  featuredEndpoint,
  listEndpoint,
  lookupEndpoint,
  recordEndpoint,
  searchEndpoint,
  seriesEndpoint,
  topEndpoint,
  utilityEndpoint
} from "./Endpoints.ts"
import type { EntityDef } from "./Model.ts"
import type { Op } from "./Ops.ts"
import * as T from "./Wording.ts"
import { utility } from "./Utilities.ts"
import { slug } from "./Values.ts"

/** The response schema of an op (re-exported from EndpointParts). */
export { responseSchema } from "./EndpointParts.ts"

/** A generated endpoint: its documentation and its behaviour. */
export interface GeneratedTool {
  readonly spec: ToolSpec
  readonly op: Op
}

// ---------------------------------------------------------------------------------------------------------------
// Providers.

type Relation = { readonly child: EntityDef; readonly via: "parent" | "inverse"; readonly name: string; readonly label: string }

const allRelations = new Map<string, ReadonlyArray<Relation>>()

/** Relations seen from a type: its block children and the types whose references name it (computed once per type). */
const relationsOf = (def: EntityDef, allowed: ReadonlySet<string>): Array<Relation> => {
  let all = allRelations.get(def.type)
  if (all === undefined) {
    const found: Array<Relation> = []
    for (const other of entityDefs.values()) {
      if (other.createdOnly === true) continue
      if (other.parent?.type === def.type) found.push({ child: other, via: "parent", name: other.parent.relation, label: other.plural })
      const seen = new Set<string>()
      for (const a of other.attrs) {
        const r = a.ref
        if (r?.type !== def.type || r.inverse === undefined || seen.has(r.inverse)) continue
        seen.add(r.inverse)
        found.push({ child: other, via: "inverse", name: r.inverse, label: r.inverseLabel ?? other.plural })
      }
    }
    all = found
    allRelations.set(def.type, all)
  }
  return all.filter((r) => r.via === "parent" || allowed.has(r.child.type))
}

/** Candidate endpoints of a provider serving `def` in category `cat`; entry endpoints first. */
const candidates = (ctx: Ctx, def: EntityDef, cat: Category): { entries: Array<() => Endpoint>; others: Array<() => Endpoint> } => {
  const { rng } = ctx
  const entries: Array<() => Endpoint> = []
  const others: Array<() => Endpoint> = []
  const allowed = new Set([...cat.types, def.type])
  if (def.searchable !== false) {
    entries.push(() => searchEndpoint(ctx, def))
    if (rng.next() < 0.3) entries.push(() => lookupEndpoint(ctx, def))
  }
  const eqAttrs = def.attrs.filter((a) => a.filter === "eq" && (a.values !== undefined || a.ref !== undefined))
  for (const a of rng.shuffle(eqAttrs).slice(0, 2)) {
    const byName = a.ref !== undefined && defOf(a.ref.type)?.searchable !== false && rng.next() < 0.4
    ;(a.ref === undefined || byName ? entries : others).push(() => listEndpoint(ctx, def, a, byName))
  }
  const ranked = def.attrs.filter((a) => a.filter === "range" && (a.type === "integer" || a.type === "number"))
  if (ranked.length > 0 && rng.next() < 0.5) {
    const by = rng.pick(ranked)
    entries.push(() => topEndpoint(ctx, def, by))
  }
  if (rng.next() < 0.12) entries.push(() => featuredEndpoint(ctx, def))
  others.push(() => detailsEndpoint(ctx, def, rng.next() < 0.3 ? "full" : "some"))
  if (rng.next() < 0.3) others.push(() => detailsEndpoint(ctx, def, "lite"))
  for (const rel of rng.shuffle(relationsOf(def, allowed)).slice(0, 3)) {
    others.push(() => childrenEndpoint(ctx, def, rel.child, rel.via, rel.name, rel.label))
    const countAttr = rel.via === "parent" ? def.attrs.find((a) => a.counts === rel.child.type) : undefined
    if (countAttr !== undefined && rng.next() < 0.5) others.push(() => countEndpoint(ctx, def, countAttr, rel.child))
  }
  for (const s of def.series ?? []) others.push(() => seriesEndpoint(ctx, def, s))
  for (const a of def.actions ?? []) {
    const withStatus = rng.next() < 0.75
    others.push(() => actionEndpoint(ctx, a, def))
    if (withStatus) others.push(() => recordEndpoint(ctx, a))
  }
  if (def.type === "currency") entries.push(() => convertEndpoint(ctx))
  return { entries, others }
}

const brandSuffixes: ReadonlyArray<string> = ["Hub", "API", "ly", "ify", "io", "Pro", "Plus", "Now", "Base", "Stack", "Wise", "Labs", "Cloud", "Data", "Live", "Zone", "Point", "Flow", "Kit", "X", "Go", "Sense", "Scope", "Feed"]

const brandName = (rng: Rng, cat: Category, taken: Set<string>): string => {
  for (let attempt = 0; attempt < 40; attempt++) {
    const stem = rng.pick(cat.stems)
    const style = rng.int(5)
    const name = style === 0 ? `${stem}${rng.pick(brandSuffixes)}`
      : style === 1 ? `${stem} ${rng.pick(["Central", "Insights", "Connect", "Direct", "Engine", "Works", "Tracker", "Finder", "Radar", "Pulse", "Genie"])}`
      : style === 2 ? `${rng.pick(["Open", "Smart", "Rapid", "True", "Global", "Easy", "Ultra", "Instant", "Neo", "Meta"])}${stem}`
      : style === 3 ? `${stem}${rng.pick(brandSuffixes)} ${rng.pick(["API", "v2", "Pro", "Lite", "Free"])}`
      : `${stem}${rng.pick(["ly", "io", "ify", "r", "ster", "ora"])}`
    if (!taken.has(name)) {
      taken.add(name)
      return name
    }
  }
  let k = 2
  const base = `${rng.pick(cat.stems)}${rng.pick(brandSuffixes)}`
  while (taken.has(`${base} ${k}`)) k++
  taken.add(`${base} ${k}`)
  return `${base} ${k}`
}

/** Endpoints per provider: long-tailed, 1..20, mean ≈ 4 (ToolEnv2404 has ≈ 3.8 APIs per tool). */
const groupSize = (rng: Rng): number => Math.min(20, 1 + Math.floor(Math.exp(0.9 + 0.8 * rng.normal())))

const callableName = (api: string, group: string, taken: Set<string>): string => {
  const a = T.snake(api).slice(0, 40) || "endpoint"
  const g = T.snake(group).slice(0, 63 - 5 - a.length) || "api"
  let name = `${a}_for_${g}`.slice(0, 64)
  for (let k = 2; taken.has(name); k++) name = `${`${a}_for_${g}`.slice(0, 60)}_${k}`
  taken.add(name)
  return name
}

/** Options of {@link generate}. */
export interface GenerateOptions {
  readonly seed: number
  /** Number of interfaces (default 50,011, the paper's library). */
  readonly size?: number
}

/** Generates the library's endpoints, deterministically from the seed. */
export const generate = (options: GenerateOptions): ReadonlyArray<GeneratedTool> => {
  const { seed } = options
  const quotas = categoryQuotas(options.size)
  const brands = new Set<string>()
  const names = new Set<string>()
  const out: Array<GeneratedTool> = []
  for (const [catName, quota] of quotas) {
    const cat = categories.find((c) => c.name === catName)
    if (cat === undefined) continue
    let made = 0
    for (let k = 0; made < quota; k++) {
      const rng = makeRng(hashParts(seed, "provider", cat.name, k))
      const style = drawStyle(rng)
      const ctx: Ctx = { rng, style }
      const group = brandName(rng, cat, brands)
      const size = Math.min(quota - made, groupSize(rng))
      const endpoints = providerEndpoints(ctx, cat, size)
      if (endpoints.length === 0) continue
      const kindWord = T.phrase(rng, cat.domain.endsWith("data") ? ["API", "service", "feed", "platform"] : ["API", "service", "data feed", "platform", "toolkit"])
      const groupDescription = `${group} ${T.phrase(rng, ["offers", "provides", "is", "delivers", "gives developers"])} ${T.article(cat.domain)} ${cat.domain} ${kindWord}${endpoints.length > 1 ? ` with ${endpoints.length} endpoints` : ""}.${rng.next() < style.noise ? ` ${rng.pick(T.noiseSentences)}` : ""}`
      const seenApis = new Set<string>()
      for (const e of endpoints) {
        let apiName = T.endpointName(style.naming, e.words, e.path)
        if (seenApis.has(apiName)) apiName = `${apiName} ${seenApis.size + 1}`
        seenApis.add(apiName)
        const name = callableName(apiName, group, names)
        const parameters: ParametersSchema = {
          type: "object",
          properties: Object.fromEntries(e.op.params.map((p) => [p.name, p.schema])),
          required: e.op.params.filter((p) => p.required).map((p) => p.name)
        }
        const description = e.description + (rng.next() < style.noise ? ` ${rng.pick(T.noiseSentences)}` : "")
        const spec: ToolSpec = {
          id: toolId(`generated:${cat.name}/${slug(group)}/${slug(apiName) || "endpoint"}`),
          name: toolName(name),
          group,
          apiName,
          category: cat.name,
          description,
          groupDescription,
          parameters,
          response: responseSchema(e.op),
          method: e.method,
          source: { kind: "generated", ref: `world:${seed}#${out.length}` }
        }
        out.push({ spec, op: e.op })
        made++
      }
    }
  }
  return out
}

/** Chooses a provider's endpoints: one or two entity types, or utilities / standalone actions. */
const providerEndpoints = (ctx: Ctx, cat: Category, size: number): Array<Endpoint> => {
  const { rng } = ctx
  const utilityOnly = cat.types.length === 0 || (cat.utilities.length > 0 && rng.next() < 0.22)
  const actionOnly = !utilityOnly && cat.actions.length > 0 && rng.next() < 0.25
  if (actionOnly) {
    const a = allActions.find((x) => x.action.key === rng.pick(cat.actions) && x.target === undefined)
    if (a !== undefined) return [actionEndpoint(ctx, a.action, undefined), recordEndpoint(ctx, a.action)].slice(0, Math.max(1, size))
  }
  if (utilityOnly) {
    // Each utility once, then (room permitting) a standalone action with its status endpoint, then variants.
    const keys = rng.shuffle(cat.utilities.length > 0 ? cat.utilities : ["text_stats"])
    const eps: Array<Endpoint> = []
    for (const k of keys) {
      const u = utility(k)
      if (u !== undefined && eps.length < size) eps.push(utilityEndpoint(ctx, u))
    }
    const a = cat.actions.length === 0 ? undefined : allActions.find((x) => x.action.key === rng.pick(cat.actions) && x.target === undefined)
    if (a !== undefined && size - eps.length >= 2) eps.push(actionEndpoint(ctx, a.action, undefined), recordEndpoint(ctx, a.action))
    for (let i = 0; eps.length < size && i < size; i++) {
      const u = utility(keys[i % keys.length] ?? "")
      if (u !== undefined) eps.push(utilityEndpoint(ctx, u))
    }
    return eps
  }
  // Primary type skewed to the category's first types; a second type sometimes.
  const typeAt = (): string => cat.types[Math.floor(rng.next() ** 1.6 * cat.types.length)] ?? cat.types[0] ?? ""
  const primary = defOf(typeAt())
  if (primary === undefined) return []
  const types = [primary]
  if (size >= 4 && cat.types.length > 1 && rng.next() < 0.45) {
    const second = defOf(typeAt())
    if (second !== undefined && second.type !== primary.type) types.push(second)
  }
  const entries: Array<() => Endpoint> = []
  const others: Array<() => Endpoint> = []
  for (const d of types) {
    const c = candidates(ctx, d, cat)
    entries.push(...rng.shuffle(c.entries))
    others.push(...rng.shuffle(c.others))
  }
  if (cat.utilities.length > 0 && rng.next() < 0.2) {
    const u = utility(rng.pick(cat.utilities))
    if (u !== undefined) others.push(() => utilityEndpoint(ctx, u))
  }
  // A single-endpoint provider is any endpoint; larger ones start with an entry point so their ids are reachable.
  const head = 1 + rng.int(2)
  const ordered = size === 1 ? rng.shuffle([...entries, ...others]) : [...entries.slice(0, head), ...rng.shuffle([...entries.slice(head), ...others])]
  const picked = ordered.slice(0, size).map((f) => f())
  return picked
}
