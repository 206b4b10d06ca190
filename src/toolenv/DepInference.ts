/**
 * G_dep inferred for real tools: which API's response feeds which API's parameter, from names, descriptions
 * and response schemas (templates and example payloads already turned into schemas by the importers), plus
 * the `x-entity` marks the simulator uses to refuse ids no earlier call produced. Near-linear: outputs are
 * indexed by (scope, entity); nothing compares all pairs of APIs.
 */
import type { JsonSchema } from "../domain/Json.ts"
import type { DepEdge, DepKind, ToolSpec } from "../domain/Tool.ts"
import { setOwn } from "./importers/JsonSchemaImport.ts"
import { compareIds } from "./importers/Naming.ts"

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
// Names → tokens → entity references

const irregular: ReadonlyMap<string, string> = new Map([
  ["people", "person"],
  ["children", "child"],
  ["men", "man"],
  ["women", "woman"],
  ["indices", "index"],
  ["matrices", "matrix"],
  ["data", "data"],
  ["media", "media"],
  ["criteria", "criterion"],
  ["ids", "id"],
  ["uids", "uid"]
])

const keepS: ReadonlySet<string> = new Set([
  "news", "series", "species", "status", "alias", "bus", "gas", "canvas", "atlas", "chaos", "lens", "plus", "bonus",
  "campus", "census", "corpus", "radius", "virus", "genus", "axis", "basis", "crisis", "analysis", "thesis", "ios",
  "sms", "https", "http", "aws", "gps", "dns", "rss", "css", "js", "ms", "stats", "sports", "class", "address",
  "business", "process", "access", "success", "progress", "express", "wireless", "previous", "is", "has", "was", "its"
])

/** English singular of a lowercase token (enough for field and parameter names). */
export const singular = (w: string): string => {
  const irr = irregular.get(w)
  if (irr !== undefined) return irr
  if (w.length < 4 || keepS.has(w) || !w.endsWith("s")) return w
  if (w.endsWith("ies") && w.length > 4) return `${w.slice(0, -3)}y`
  if (/(ss|x|ch|sh)es$/.test(w)) return w.slice(0, -2)
  if (w.endsWith("ss") || w.endsWith("us") || w.endsWith("is")) return w
  return w.slice(0, -1)
}

/** Splits an identifier into lowercase singular tokens: camelCase, snake_case, kebab, spaces, trailing digits. */
export const tokens = (name: string): ReadonlyArray<string> =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .map((t) => t.replace(/\d+$/, ""))
    .filter((t) => t.length > 0 && !/^\d/.test(t))
    .map(singular)

/** Attributes an entity reference can name; `id` is the one the simulator enforces. */
const idAttrs: ReadonlySet<string> = new Set(["id", "token", "slug"])
const keyAttrs: ReadonlySet<string> = new Set(["id", "token", "slug", "name", "username", "code", "symbol", "ticker", "email", "handle"])

/** Whole tokens that stand for an entity attribute on their own. */
const aliases: ReadonlyMap<string, readonly [string | undefined, string]> = new Map([
  ["uuid", [undefined, "id"]],
  ["guid", [undefined, "id"]],
  ["uid", ["user", "id"]],
  ["userid", ["user", "id"]],
  ["username", ["user", "name"]],
  ["tconst", ["imdb", "id"]],
  ["imdbid", ["imdb", "id"]],
  ["asin", ["product", "asin"]],
  ["isbn", ["book", "isbn"]],
  ["ticker", ["stock", "symbol"]]
])

/** Suffixes glued to a noun without a separator (`videoid`, `teamname`), split when the noun is a real token. */
const gluedSuffixes = ["id", "name", "code", "slug", "token"] as const
const notGlued: ReadonlySet<string> = new Set([
  "valid", "invalid", "paid", "unpaid", "prepaid", "android", "void", "avoid", "squid", "hybrid", "period", "fluid",
  "liquid", "rapid", "humid", "solid", "vivid", "acid", "david", "madrid", "druid", "pyramid", "orchid", "said",
  "raid", "braid", "grid", "forbid", "surname", "rename", "nickname", "unicode", "barcode", "qrcode", "decode",
  "encode", "opcode", "passcode", "geocode", "postcode", "zipcode", "keycode", "hashcode", "covid", "ovid", "lucid"
])

/** Modifiers and generic words that never name an entity type. */
const notAType: ReadonlySet<string> = new Set([
  "the", "a", "an", "my", "your", "its", "this", "that", "api", "rapidapi", "unique", "external", "internal", "primary",
  "secondary", "main", "ref", "reference", "new", "old", "current", "prev", "previous", "next", "last", "first", "other",
  "target", "source", "from", "to", "in", "out", "of", "for", "by", "with", "and", "or", "object", "entity", "record",
  "item", "result", "data", "info", "detail", "value", "get", "fetch", "list", "search", "x", "short", "long", "full",
  "display", "common", "official", "local", "global", "public", "private", "default", "custom", "given", "specific",
  "access", "auth", "secret", "bearer", "refresh", "apikey", "key", "parent", "child"
])

/** Words naming a role of a more general entity: a film's `cast` are persons, a playlist's `owner` is a user. */
const typeSynonyms: ReadonlyMap<string, string> = new Map([
  ["cast", "person"],
  ["crew", "person"],
  ["actor", "person"],
  ["actress", "person"],
  ["director", "person"],
  ["people", "person"],
  ["owner", "user"],
  ["creator", "user"],
  ["follower", "user"],
  ["friend", "user"],
  ["member", "user"],
  ["profile", "user"],
  ["me", "user"],
  ["film", "movie"]
])

/** An entity type in its canonical form. */
const canonicalType = (t: string): string => typeSynonyms.get(t) ?? t

/** Two-letter words that are not entity nouns (`tv`, `ip`, `me` are). */
const shortFillers: ReadonlySet<string> = new Set(["to", "by", "of", "in", "on", "at", "an", "up", "my", "is", "it", "or", "as", "do", "go", "no", "so", "we", "v", "id", "js", "ok"])

/** Container keys that say nothing about what they hold (`data`, `results`, `items`). */
const genericContainers: ReadonlySet<string> = new Set([
  "data", "result", "item", "hit", "record", "row", "list", "entry", "edge", "node", "object", "doc", "document",
  "response", "body", "content", "payload", "value", "element", "collection", "page", "meta", "metadata", "info",
  "detail", "attribute", "property", "field", "output", "return", "root", "message", "response_data", "message_body",
  "included", "relationship", "_embedded", "embedded", "feed", "entity", "link", "raw", "json", "answer", "info_data"
])

/** Verbs and fillers dropped from API names when looking for the noun an API is about. */
const apiFillers: ReadonlySet<string> = new Set([
  "get", "fetch", "retrieve", "list", "search", "find", "show", "lookup", "look", "up", "query", "read", "view",
  "the", "a", "an", "all", "single", "one", "detail", "info", "information", "data", "id", "v", "api", "endpoint",
  "latest", "top", "random", "specific", "full", "basic", "advanced", "free", "paginated", "create", "add", "update",
  "delete", "remove", "post", "put", "patch", "set", "check", "validate", "verify", "convert", "calculate", "generate",
  "send", "download", "upload", "my", "new", "recent", "current", "popular", "trending", "autocomplete", "suggest",
  "suggestion", "browse", "explore", "return", "returns", "simple", "complete", "extended", "with", "and", "or",
  "status", "stats", "statistic", "count", "total", "number", "name", "about", "item", "result", "given", "using",
  "via", "endpoint", "request", "response", "html", "json", "xml", "csv", "rapidapi", "default", "test", "demo"
])

const prepositions: ReadonlySet<string> = new Set(["by", "for", "of", "from", "in", "on", "per", "to", "at", "within", "inside"])

/** Verbs marking an API that lists or searches (it originates the ids of what it lists). */
const listVerbs: ReadonlySet<string> = new Set([
  "list", "search", "find", "browse", "explore", "autocomplete", "suggest", "suggestion", "lookup", "query", "all",
  "discover", "trending", "popular", "latest", "top", "recent", "feed", "index"
])

/**
 * An entity reference guessed from a name: `type` may be unknown; `own` when the name itself says the type;
 * `bare` when the name is the attribute alone (`id`, `uuid`), so the type can only come from context.
 */
interface EntityRef {
  readonly type: string | undefined
  readonly attr: string
  readonly own: boolean
  readonly bare: boolean
}

/**
 * The words of names for one inference run: tokens memoised (names repeat a lot), with glued suffixes
 * split (`videoid` → video id) when the head is a word the library uses on its own at least three times.
 */
interface Lexicon {
  readonly words: (name: string) => ReadonlyArray<string>
  /** {@link refOfName}, memoised. */
  readonly ref: (name: string) => EntityRef | undefined
  /**
   * Entity types that some parameter or response field names on its own (`movie_id`, `videoId`): an API
   * name's noun is looked for among these first (`GET movie top_rated` is about movies, not "rated").
   */
  readonly types: Set<string>
}

const makeLexicon = (tools: ReadonlyArray<ToolSpec>): Lexicon => {
  const counts = new Map<string, number>()
  const raw = new Map<string, ReadonlyArray<string>>()
  const split = (name: string): ReadonlyArray<string> => {
    let t = raw.get(name)
    if (t === undefined) raw.set(name, t = tokens(name))
    return t
  }
  const count = (name: string): void => {
    for (const t of split(name)) counts.set(t, (counts.get(t) ?? 0) + 1)
  }
  for (const t of tools) {
    for (const p of Object.keys(t.parameters.properties)) count(p)
    count(t.apiName)
  }
  const unglue = (t: string): ReadonlyArray<string> => {
    if (notGlued.has(t)) return [t]
    for (const suffix of gluedSuffixes) {
      if (t.length > suffix.length + 2 && t.endsWith(suffix)) {
        const head = t.slice(0, -suffix.length)
        if (head.length >= 3 && (counts.get(head) ?? 0) >= 3) return [singular(head), suffix]
      }
    }
    return [t]
  }
  const words = new Map<string, ReadonlyArray<string>>()
  const refs = new Map<string, EntityRef | null>()
  const lex: Lexicon = {
    words: (name) => {
      let w = words.get(name)
      if (w === undefined) words.set(name, w = split(name).flatMap(unglue))
      return w
    },
    ref: (name) => {
      let r = refs.get(name)
      if (r === undefined) refs.set(name, r = refOfName(name, lex) ?? null)
      return r ?? undefined
    },
    types: new Set()
  }
  const note = (name: string): void => {
    const ref = lex.ref(name)
    if (ref?.own === true && ref.type !== undefined) lex.types.add(ref.type)
  }
  // a container whose objects carry a bare `id` (`track: {id, ...}`, `videos: [{id, ...}]`) names a type too
  const walk = (s: JsonSchema, container: string | undefined, depth: number): void => {
    if (depth > maxOutputDepth) return
    if (s.items !== undefined) walk(s.items, container, depth + 1)
    for (const [key, child] of Object.entries(s.properties ?? {})) {
      note(key)
      if (container !== undefined && lex.ref(key)?.bare === true) {
        const noun = containerNoun(container, lex)
        if (noun !== undefined) lex.types.add(noun)
      }
      walk(child, key, depth + 1)
    }
  }
  for (const t of tools) {
    for (const p of Object.keys(t.parameters.properties)) note(p)
    if (t.response !== undefined) walk(t.response, undefined, 0)
  }
  return lex
}

/** The entity reference a parameter or field name carries, when it ends in an entity attribute. */
const refOfName = (name: string, lex: Lexicon): EntityRef | undefined => {
  const raw = lex.words(name)
  if (raw.length === 0) return undefined
  const alias = aliases.get(raw.join(""))
  if (alias !== undefined) return { type: alias[0], attr: alias[1], own: alias[0] !== undefined, bare: alias[0] === undefined }
  const first = raw[0] ?? ""
  const last = raw[raw.length - 1] ?? ""
  let attr: string
  let typeTokens: ReadonlyArray<string>
  if (keyAttrs.has(last)) {
    attr = last
    typeTokens = raw.slice(0, -1)
  } else if (first === "id" && raw.length > 1) {
    // `id_team`, `idTeam`: the attribute first
    attr = "id"
    typeTokens = raw.slice(1)
  } else {
    const lastAlias = aliases.get(last)
    if (lastAlias === undefined) return undefined
    attr = lastAlias[1]
    // `taskUid` is a task's id: the alias's own type (`uid` → user) only when nothing precedes it
    const before = raw.slice(0, -1).filter((t) => t.length >= 2 && !notAType.has(t) && !shortFillers.has(t))
    typeTokens = before.length > 0 ? before : lastAlias[0] !== undefined ? [lastAlias[0]] : []
  }
  for (let i = typeTokens.length - 1; i >= 0; i--) {
    const t = typeTokens[i] ?? ""
    if (t.length >= 2 && !notAType.has(t) && !shortFillers.has(t)) return { type: canonicalType(t), attr, own: true, bare: false }
  }
  return { type: undefined, attr, own: false, bare: typeTokens.length === 0 }
}

const isContent = (t: string): boolean =>
  t.length >= 2 && !shortFillers.has(t) && !apiFillers.has(t) && !notAType.has(t) && !prepositions.has(t) && !keyAttrs.has(t)

/**
 * The noun an API name is about: the last content word before any preposition (`Get Comments by Video` →
 * comment), a known entity type preferred; with nothing before the preposition, the last content word.
 */
const mainNoun = (apiName: string, lex: Lexicon): string | undefined => {
  const ts = lex.words(apiName)
  const at = ts.findIndex((t) => prepositions.has(t))
  const head = (at >= 0 ? ts.slice(0, at) : ts).filter(isContent)
  const pool = head.length > 0 ? head : ts.filter(isContent)
  const known = pool.filter((t) => lex.types.has(canonicalType(t)))
  const noun = known[known.length - 1] ?? pool[pool.length - 1]
  return noun === undefined ? undefined : canonicalType(noun)
}

/**
 * The noun an API takes as input: after `by`/`for`/`of` when there is one, else the first content word
 * (`Get User Followers` → user), a known entity type preferred in both places.
 */
const inputNoun = (apiName: string, lex: Lexicon): string | undefined => {
  const ts = lex.words(apiName)
  const at = ts.findIndex((t) => prepositions.has(t))
  const pick = (words: ReadonlyArray<string>): string | undefined => {
    const content = words.filter((t) => isContent(t) && !keyAttrs.has(t))
    const noun = content.find((t) => lex.types.has(canonicalType(t))) ?? content[0]
    return noun === undefined ? undefined : canonicalType(noun)
  }
  return (at >= 0 ? pick(ts.slice(at + 1)) : undefined) ?? pick(ts)
}

const isListApi = (apiName: string, lex: Lexicon): boolean => lex.words(apiName).some((t) => listVerbs.has(t))

// ---------------------------------------------------------------------------------------------
// Outputs of a response schema

interface Output {
  readonly path: string
  readonly ref: EntityRef
  readonly depth: number
  /** The type came only from the API's name (a bare `id` outside any telling container): weak evidence in a list API. */
  readonly guessed: boolean
}

const maxOutputDepth = 6
const maxOutputsPerTool = 200

const collectOutputs = (spec: ToolSpec, lex: Lexicon): ReadonlyArray<Output> => {
  const out: Array<Output> = []
  const fallbackType = mainNoun(spec.apiName, lex)
  const visit = (s: JsonSchema, path: string, container: string | undefined, depth: number): void => {
    if (out.length >= maxOutputsPerTool || depth > maxOutputDepth) return
    if (s.type === "array" || (s.items !== undefined && s.properties === undefined)) {
      if (s.items !== undefined) visit(s.items, `${path}[]`, container, depth + 1)
      return
    }
    const props = s.properties
    if (props === undefined) return
    for (const [key, child] of Object.entries(props)) {
      const childPath = path.length === 0 ? key : `${path}.${key}`
      const isLeaf = child.properties === undefined && child.items === undefined
      if (isLeaf || (child.type === "array" && child.items !== undefined && child.items.properties === undefined)) {
        const ref = lex.ref(key)
        if (ref !== undefined) {
          const leafPath = isLeaf ? childPath : `${childPath}[]`
          const type = ref.type ?? container ?? fallbackType
          const guessed = ref.type === undefined && container === undefined
          out.push({ path: leafPath, ref: { type, attr: ref.attr, own: ref.own, bare: ref.bare }, depth, guessed })
        }
        continue
      }
      const noun = containerNoun(key, lex)
      visit(child, childPath, noun ?? container, depth + 1)
    }
  }
  if (spec.response !== undefined) visit(spec.response, "", undefined, 0)
  return out
}

const containerNoun = (key: string, lex: Lexicon): string | undefined => {
  const ts = lex.words(key)
  const last = ts[ts.length - 1]
  if (last === undefined || genericContainers.has(last) || notAType.has(last) || last.length < 2 || shortFillers.has(last)) return undefined
  return canonicalType(last)
}

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
    return mark(api.spec, paramMarks, fieldMarks)
  })
  return { tools: annotated, edges: acyclic, rules }
}

/**
 * Keeps the hard part of G_dep acyclic: hard edges inside a strongly connected component of the hard
 * graph (A needs what B makes and B needs what A makes) become soft, since neither can go first.
 */
export const breakHardCycles = (edges: ReadonlyArray<DepEdge>): Array<DepEdge> => {
  const ids = new Map<string, number>()
  const idOf = (n: string): number => {
    let i = ids.get(n)
    if (i === undefined) ids.set(n, i = ids.size)
    return i
  }
  const adj: Array<Array<number>> = []
  for (const e of edges) {
    if (e.kind !== "hard") continue
    const a = idOf(e.from)
    const b = idOf(e.to)
    while (adj.length <= Math.max(a, b)) adj.push([])
    adj[a]?.push(b)
  }
  const component = stronglyConnected(adj)
  const size = new Map<number, number>()
  for (const c of component) size.set(c, (size.get(c) ?? 0) + 1)
  return edges.map((e) => {
    if (e.kind !== "hard") return e
    const a = component[idOf(e.from)] ?? -1
    const b = component[idOf(e.to)] ?? -2
    return a === b && (size.get(a) ?? 0) > 1 ? { ...e, kind: "soft" } : e
  })
}

/** Tarjan's strongly connected components, iterative (no recursion depth limit): component index per node. */
const stronglyConnected = (adj: ReadonlyArray<ReadonlyArray<number>>): Array<number> => {
  const n = adj.length
  const index = new Array<number>(n).fill(-1)
  const low = new Array<number>(n).fill(0)
  const onStack = new Array<boolean>(n).fill(false)
  const component = new Array<number>(n).fill(-1)
  const stack: Array<number> = []
  let counter = 0
  let components = 0
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue
    const work: Array<[number, number]> = [[root, 0]]
    while (work.length > 0) {
      const top = work[work.length - 1] as [number, number]
      const [v, i] = top
      if (i === 0) {
        index[v] = low[v] = counter++
        stack.push(v)
        onStack[v] = true
      }
      const next = adj[v] ?? []
      if (i < next.length) {
        top[1] = i + 1
        const w = next[i] as number
        if (index[w] === -1) work.push([w, 0])
        else if (onStack[w]) low[v] = Math.min(low[v] as number, index[w] as number)
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent !== undefined) low[parent[0]] = Math.min(low[parent[0]] as number, low[v] as number)
      if (low[v] === index[v]) {
        let w: number
        do {
          w = stack.pop() as number
          onStack[w] = false
          component[w] = components
        } while (w !== v)
        components++
      }
    }
  }
  return component
}

const mark = (spec: ToolSpec, params: ReadonlyMap<string, string>, fields: ReadonlyMap<string, string>): ToolSpec => {
  if (params.size === 0 && fields.size === 0) return spec
  let parameters = spec.parameters
  if (params.size > 0) {
    const properties: Record<string, JsonSchema> = { ...parameters.properties }
    for (const [name, entity] of params) {
      const s = properties[name]
      if (s !== undefined) setOwn(properties, name, { ...s, "x-entity": entity })
    }
    parameters = { ...parameters, properties }
  }
  const response = spec.response === undefined || fields.size === 0 ? spec.response : markFields(spec.response, "", fields, prefixesOf(fields))
  return { ...spec, parameters, ...(response !== undefined ? { response } : {}) }
}

/** Every path that leads to a marked field (`items`, `items[]`, `items[].id` for `items[].id`). */
const prefixesOf = (fields: ReadonlyMap<string, string>): ReadonlySet<string> => {
  const out = new Set<string>()
  for (const k of fields.keys()) {
    for (let i = 0; i < k.length; i++) if (k[i] === "." || k[i] === "[") out.add(k.slice(0, i))
    out.add(k)
  }
  return out
}

/** Rebuilds only the branches of the schema that lead to a marked path. */
const markFields = (s: JsonSchema, path: string, fields: ReadonlyMap<string, string>, prefixes: ReadonlySet<string>): JsonSchema => {
  const here = fields.get(path)
  let out: JsonSchema = here !== undefined && s.properties === undefined && !(s.type === "array" && s.items?.properties !== undefined) ? { ...s, "x-entity": here } : s
  if (s.items !== undefined) {
    const itemsPath = `${path}[]`
    if (prefixes.has(itemsPath)) {
      const items = markFields(s.items, itemsPath, fields, prefixes)
      if (items !== s.items) out = { ...out, items }
    }
  }
  if (s.properties !== undefined) {
    let changed: Record<string, JsonSchema> | undefined
    for (const [key, child] of Object.entries(s.properties)) {
      const childPath = path.length === 0 ? key : `${path}.${key}`
      if (!prefixes.has(childPath)) continue
      const next = markFields(child, childPath, fields, prefixes)
      if (next !== child) setOwn((changed ??= { ...s.properties }), key, next)
    }
    if (changed !== undefined) out = { ...out, properties: changed }
  }
  return out
}
