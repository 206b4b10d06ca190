/**
 * G_dep inferred for real tools: which API's response feeds which API's parameter, from names, descriptions
 * and response schemas (templates and example payloads already turned into schemas by the importers), plus
 * the `x-entity` marks the simulator uses to refuse ids no earlier call produced. Near-linear: outputs are
 * indexed by (scope, entity); nothing compares all pairs of APIs. The rules live here; reading entities from names
 * is DepEntityNames, making hard edges acyclic DepHardCycles, writing `x-entity` DepEntityMarks.
 */
import type { DepEdge, DepKind, ToolSpec } from "../domain/Tool.ts"
import { markEntities } from "./DepEntityMarks.ts"
import {
  collectOutputs,
  type EntityRef,
  idAttrs,
  inputNoun,
  isListApi,
  type Lexicon,
  mainNoun,
  makeLexicon,
  type Output,
  singular
} from "./DepEntityNames.ts"
import { breakHardCycles } from "./DepHardCycles.ts"
import { compareIds } from "./importers/Naming.ts"

/** Splitting names into singular tokens (re-exported from DepEntityNames). */
export { singular, tokens } from "./DepEntityNames.ts"
/** Making the hard edges acyclic (re-exported from DepHardCycles). */
export { breakHardCycles } from "./DepHardCycles.ts"

/** Which rule produced an edge (kept beside the edge for reports and spot checks). */
export type Rule =
  /** an id-like parameter fed by a response field carrying the same entity, same provider */
  | "field"
  /** the parameter's description names another API of the provider */
  | "mention"
  /** a list/search API with no known response before an API that takes that entity's id */
  | "list-before-detail"
  /** a universal key (IMDb id, stock symbol, ASIN, ISBN) produced by another provider of the same category */
  | "cross-provider"

/** The result of {@link infer}. */
export interface Inference {
  /** The input tools with `x-entity` on id-like parameters and on the response fields that produce them. */
  readonly tools: ReadonlyArray<ToolSpec>
  readonly edges: ReadonlyArray<DepEdge>
  /** The rule behind each edge (same order as `edges`). */
  readonly rules: ReadonlyArray<Rule>
}

/** Knobs of {@link infer}; the defaults are the ones documented in docs/importers.md. */
export interface Options {
  /** Most producers kept per (consumer, parameter) within a provider. */
  readonly maxProducers?: number
  /** Most producers kept per (consumer, parameter) from other providers; 0 turns cross-provider edges off. */
  readonly maxCrossProducers?: number
  /** The provider a tool belongs to: edges other than cross-provider ones stay inside it. */
  readonly scopeOf?: (tool: ToolSpec) => string
}

/** ToolBench tools are providers per category (the same tool name in two categories is two RapidAPI tools). */
export const defaultScope = (t: ToolSpec): string =>
  t.source.kind === "toolbench" || t.source.kind === "stabletoolbench"
    ? `toolbench\u0000${t.category}\u0000${t.group}`
    : `${t.source.kind}\u0000${t.group}`


// ---------------------------------------------------------------------------------------------
// Inference

interface Param {
  readonly name: string
  readonly required: boolean
  readonly description: string
  readonly ref: EntityRef | undefined
}

interface Api {
  readonly index: number
  readonly spec: ToolSpec
  readonly scope: string
  readonly params: ReadonlyArray<Param>
  readonly outputs: ReadonlyArray<Output>
  readonly isList: boolean
  /** The API name's words, space-separated with a space at both ends (for finding it in descriptions). */
  readonly phrase: string
  /** Entities this API needs as required input (an API that needs `video.id` does not originate video ids). */
  readonly needs: ReadonlySet<string>
}

/** The last key of an output path (`data[].entityId` → entityId). */
const leafName = (path: string): string => path.replace(/\[\]/g, "").split(".").pop() ?? path

/**
 * Lowercase singular words for finding one API's name inside another's description: a lighter
 * {@link tokens} (it runs on 90k descriptions); both sides go through the same function.
 */
const plainWords = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const w of text.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().split(/[^a-z0-9]+/)) if (w.length > 0) out.push(singular(w))
  return out
}

/** Mentions of other APIs are looked for in the first characters of a description only. */
const maxDescription = 600

const entityKey = (type: string, attr: string): string => `${type}.${attr}`

/**
 * Universal keys: identifiers that mean the same thing at every provider (an IMDb title id, a stock symbol,
 * an Amazon ASIN, an ISBN). Country/currency/language codes are left out: users type those themselves.
 */
const universal: ReadonlySet<string> = new Set(["imdb.id", "stock.symbol", "product.asin", "book.isbn"])

const paramsOf = (spec: ToolSpec, lex: Lexicon): ReadonlyArray<Param> => {
  const required = new Set(spec.parameters.required)
  const fallback = inputNoun(spec.apiName, lex)
  return Object.entries(spec.parameters.properties).map(([name, schema]) => {
    const ref = lex.ref(name)
    const typed = ref === undefined ? undefined : ref.type !== undefined ? ref : { ...ref, type: fallback }
    return { name, required: required.has(name), description: schema.description ?? "", ref: typed }
  })
}

/**
 * Infers G_dep over real tools and marks entities. Rules, in order of strength:
 * 1. `field` — a parameter whose name names an entity attribute (`video_id`, `videoId`, `id` of an API about
 *    videos, `token`, `slug`, `symbol`, `name`...) is fed by a response field of another API of the same
 *    provider carrying the same entity (`videoId`, `items[].id` under a list of videos...). Required id-like
 *    (`id`, `token`, `slug`) parameters fed by an API that does not itself need that entity → hard; all
 *    other matches → soft.
 * 2. `mention` — the parameter's description names another API of the provider (`the id returned by Search
 *    Videos`) → hard when required and id-like, else soft.
 * 3. `list-before-detail` — a list/search API of the provider with no known response schema whose subject is
 *    the entity an id parameter names → soft.
 * 4. `cross-provider` — a universal key (IMDb id, stock symbol, ASIN, ISBN) produced by another provider of
 *    the same category → soft, at most `maxCrossProducers` providers per parameter.
 * No edge joins an API to itself; each (consumer, parameter) keeps at most `maxProducers` producers.
 */
export const infer = (tools: ReadonlyArray<ToolSpec>, options: Options = {}): Inference => {
  const maxProducers = options.maxProducers ?? 5
  const maxCross = options.maxCrossProducers ?? 3
  const scopeOf = options.scopeOf ?? defaultScope
  const lex = makeLexicon(tools)

  const apis: Array<Api> = tools.map((spec, index) => {
    const params = paramsOf(spec, lex)
    const needs = new Set<string>()
    for (const p of params) if (p.required && p.ref?.type !== undefined) needs.add(entityKey(p.ref.type, p.ref.attr))
    return { index, spec, scope: scopeOf(spec), params, outputs: collectOutputs(spec, lex), isList: isListApi(spec.apiName, lex), phrase: ` ${plainWords(spec.apiName).join(" ")} `, needs }
  })

  // index: scope → entity → producers (api, output); scope → list APIs by subject; scope → APIs by name tokens
  const producers = new Map<string, Map<string, Array<{ api: Api; output: Output }>>>()
  /** scope \0 attribute (`id`, `token`, `slug`) → the entity types whose attribute the scope's responses carry */
  const kindsOf = new Map<string, Set<string>>()
  const listBySubject = new Map<string, Map<string, Array<Api>>>()
  const byScope = new Map<string, Array<Api>>()
  const universalProducers = new Map<string, Array<{ api: Api; output: Output }>>()
  /** scope → first word of an API name (two words or more) → those APIs */
  const firstWord = new Map<string, Map<string, Array<Api>>>()
  for (const api of apis) {
    let list = byScope.get(api.scope)
    if (list === undefined) byScope.set(api.scope, list = [])
    list.push(api)
    const words = api.phrase.trim().split(" ")
    if (words.length >= 2) {
      let byWord = firstWord.get(api.scope)
      if (byWord === undefined) firstWord.set(api.scope, byWord = new Map())
      const w = words[0] ?? ""
      let l = byWord.get(w)
      if (l === undefined) byWord.set(w, l = [])
      l.push(api)
    }
    let scoped = producers.get(api.scope)
    if (scoped === undefined) producers.set(api.scope, scoped = new Map())
    for (const output of api.outputs) {
      if (output.ref.type === undefined) continue
      const key = entityKey(output.ref.type, output.ref.attr)
      let ps = scoped.get(key)
      if (ps === undefined) scoped.set(key, ps = [])
      ps.push({ api, output })
      if (idAttrs.has(output.ref.attr)) {
        const k = `${api.scope}\u0000${output.ref.attr}`
        let kinds = kindsOf.get(k)
        if (kinds === undefined) kindsOf.set(k, kinds = new Set())
        kinds.add(output.ref.type)
      }
      if (universal.has(key)) {
        let u = universalProducers.get(key)
        if (u === undefined) universalProducers.set(key, u = [])
        u.push({ api, output })
      }
    }
    if (api.isList && api.spec.response === undefined) {
      const subject = mainNoun(api.spec.apiName, lex)
      if (subject !== undefined) {
        let bySubject = listBySubject.get(api.scope)
        if (bySubject === undefined) listBySubject.set(api.scope, bySubject = new Map())
        let l = bySubject.get(subject)
        if (l === undefined) bySubject.set(subject, l = [])
        l.push(api)
      }
    }
  }

  const edges: Array<DepEdge> = []
  const rules: Array<Rule> = []
  /** entity chosen for a parameter (`index \0 param`) and for a produced field (`index \0 path`) */
  const paramEntity = new Map<string, string>()
  const fieldEntity = new Map<string, string>()
  const seen = new Set<string>()

  const push = (from: Api, to: Api, kind: DepKind, param: string, entity: string | undefined, field: string | undefined, rule: Rule): void => {
    if (from.index === to.index || from.spec.name === to.spec.name) return
    const key = `${from.index}\u0000${to.index}\u0000${param}`
    if (seen.has(key)) return
    seen.add(key)
    edges.push({
      from: from.spec.name,
      to: to.spec.name,
      kind,
      param,
      ...(field !== undefined ? { field } : {}),
      ...(entity !== undefined ? { entity } : {})
    })
    rules.push(rule)
    if (entity !== undefined) {
      const pk = `${to.index}\u0000${param}`
      if (!paramEntity.has(pk)) paramEntity.set(pk, entity)
      if (field !== undefined) fieldEntity.set(`${from.index}\u0000${field}`, entity)
    }
  }

  // list APIs first; in a list API, a field whose name or container says the type (`artists[].id`) before one
  // typed from the API's name only (the chart's own `id`); then shallower fields
  const weak = (c: { api: Api; output: Output }): number => Number(c.api.isList && c.output.guessed)
  const rank = (a: { api: Api; output: Output }, b: { api: Api; output: Output }): number =>
    Number(b.api.isList) - Number(a.api.isList) ||
    weak(a) - weak(b) ||
    a.output.depth - b.output.depth ||
    compareIds(a.api.spec.name, b.api.spec.name)

  /** entity → category → its producers in rank order */
  const universalCache = new Map<string, Map<string, ReadonlyArray<{ api: Api; output: Output }>>>()
  const universalSorted = (entity: string): Map<string, ReadonlyArray<{ api: Api; output: Output }>> => {
    let m = universalCache.get(entity)
    if (m !== undefined) return m
    const all = [...(universalProducers.get(entity) ?? [])].sort(rank)
    m = new Map()
    for (const c of all) {
      const l = m.get(c.api.spec.category)
      if (l === undefined) m.set(c.api.spec.category, [c])
      else (l as Array<{ api: Api; output: Output }>).push(c)
    }
    universalCache.set(entity, m)
    return m
  }

  for (const api of apis) {
    const scoped = producers.get(api.scope)
    const siblings = byScope.get(api.scope) ?? []
    for (const p of api.params) {
      const ref = p.ref
      let found = 0
      // rule 1: a response field carrying the same entity
      if (ref !== undefined && scoped !== undefined) {
        let type = ref.type
        let candidates = type === undefined ? undefined : scoped.get(entityKey(type, ref.attr))
        // a bare `id` / `token` / `slug` nothing else matched: the provider's only kind of it, if it has one kind
        if ((candidates === undefined || candidates.length === 0) && ref.bare && idAttrs.has(ref.attr)) {
          const kinds = kindsOf.get(`${api.scope}\u0000${ref.attr}`)
          if (kinds !== undefined && kinds.size === 1) {
            type = [...kinds][0]
            candidates = type === undefined ? undefined : scoped.get(entityKey(type, ref.attr))
          }
        }
        if (candidates !== undefined && type !== undefined) {
          const entity = entityKey(type, ref.attr)
          const sorted = candidates.filter((c) => c.api.index !== api.index).sort(rank)
          const kept = new Set<number>()
          for (const c of sorted) {
            if (kept.size >= maxProducers) break
            if (kept.has(c.api.index)) continue
            kept.add(c.api.index)
            const hard = p.required && idAttrs.has(ref.attr) && !c.api.needs.has(entity)
            push(c.api, api, hard ? "hard" : "soft", p.name, entity, c.output.path, "field")
            found++
          }
        }
      }
      // rule 2: the description names another API of the provider (only APIs whose first word occurs are tried)
      if (p.description.length > 0 && siblings.length > 1) {
        const words = plainWords(p.description.slice(0, maxDescription))
        const desc = ` ${words.join(" ")} `
        const tried = new Set<number>()
        for (const w of new Set(words)) {
          for (const other of firstWord.get(api.scope)?.get(w) ?? []) {
            if (other.index === api.index || tried.has(other.index)) continue
            tried.add(other.index)
            if (!desc.includes(other.phrase)) continue
            const attr = ref?.attr
            // the field: one named like the parameter (`entityId` for `fromEntityId`), else the same entity, else the same attribute
            const out =
              attr === undefined
                ? undefined
                : (other.outputs.find((o) => o.ref.attr === attr && p.name.toLowerCase().endsWith(leafName(o.path).toLowerCase()) && leafName(o.path).length > attr.length) ??
                  other.outputs.find((o) => o.ref.attr === attr && o.ref.type !== undefined && o.ref.type === ref?.type) ??
                  other.outputs.find((o) => o.ref.attr === attr))
            const entity = out?.ref.type !== undefined ? entityKey(out.ref.type, out.ref.attr) : ref?.type !== undefined ? entityKey(ref.type, ref.attr) : undefined
            const hard = p.required && attr !== undefined && idAttrs.has(attr) && (entity === undefined || !other.needs.has(entity))
            push(other, api, hard ? "hard" : "soft", p.name, entity, out?.path, "mention")
            found++
          }
        }
      }
      // rule 3: a list/search API (response unknown) about the entity this id names
      if (found === 0 && ref !== undefined && ref.attr === "id" && ref.type !== undefined) {
        const lists = listBySubject.get(api.scope)?.get(ref.type) ?? []
        let n = 0
        for (const l of lists) {
          if (l.index === api.index || n >= maxProducers) continue
          push(l, api, "soft", p.name, entityKey(ref.type, "id"), undefined, "list-before-detail")
          n++
          found++
        }
      }
      // rule 4: a universal key from another provider (producers pre-sorted once per entity and category)
      if (maxCross > 0 && ref !== undefined && ref.type !== undefined) {
        const entity = entityKey(ref.type, ref.attr)
        if (!universal.has(entity)) continue
        const byCategory = universalSorted(entity)
        const kept = new Set<string>()
        for (const c of byCategory.get(api.spec.category) ?? []) {
          if (kept.size >= maxCross) break
          if (c.api.scope === api.scope || kept.has(c.api.scope) || c.api.needs.has(entity)) continue
          kept.add(c.api.scope)
          push(c.api, api, "soft", p.name, entity, c.output.path, "cross-provider")
        }
      }
    }
  }

  const acyclic = breakHardCycles(edges)

  // x-entity: id-like parameters (typed) and the fields that feed an edge or carry a typed id
  const annotated = apis.map((api) => {
    const paramMarks = new Map<string, string>()
    for (const p of api.params) {
      const chosen = paramEntity.get(`${api.index}\u0000${p.name}`)
      if (chosen !== undefined) paramMarks.set(p.name, chosen)
      else if (p.ref !== undefined && p.ref.type !== undefined && p.ref.attr === "id") paramMarks.set(p.name, entityKey(p.ref.type, "id"))
    }
    const fieldMarks = new Map<string, string>()
    for (const o of api.outputs) {
      const chosen = fieldEntity.get(`${api.index}\u0000${o.path}`)
      if (chosen !== undefined) fieldMarks.set(o.path, chosen)
      else if (o.ref.type !== undefined && o.ref.attr === "id") fieldMarks.set(o.path, entityKey(o.ref.type, "id"))
    }
    return markEntities(api.spec, paramMarks, fieldMarks)
  })
  return { tools: annotated, edges: acyclic, rules }
}
