/**
 * Entity references in names, for G_dep inference: identifiers split into singular tokens, the lexicon of one run,
 * the entity a parameter or response-field name carries (`videoId` → video.id), API nouns, and a response's such fields.
 */
import type { JsonSchema } from "../domain/Json.ts"
import type { ToolSpec } from "../domain/Tool.ts"

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

/** The id-like attributes an entity reference can name (`id` is the one the simulator enforces): required ones make hard edges. */
export const idAttrs: ReadonlySet<string> = new Set(["id", "token", "slug"])
/** Attributes an entity reference can name. */
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
export interface EntityRef {
  readonly type: string | undefined
  readonly attr: string
  readonly own: boolean
  readonly bare: boolean
}

/**
 * The words of names for one inference run: tokens memoised (names repeat a lot), with glued suffixes
 * split (`videoid` → video id) when the head is a word the library uses on its own at least three times.
 */
export interface Lexicon {
  readonly words: (name: string) => ReadonlyArray<string>
  /** {@link refOfName}, memoised. */
  readonly ref: (name: string) => EntityRef | undefined
  /**
   * Entity types that some parameter or response field names on its own (`movie_id`, `videoId`): an API
   * name's noun is looked for among these first (`GET movie top_rated` is about movies, not "rated").
   */
  readonly types: Set<string>
}

/** The lexicon of one inference run over these tools (see {@link Lexicon}). */
export const makeLexicon = (tools: ReadonlyArray<ToolSpec>): Lexicon => {
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
export const mainNoun = (apiName: string, lex: Lexicon): string | undefined => {
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
export const inputNoun = (apiName: string, lex: Lexicon): string | undefined => {
  const ts = lex.words(apiName)
  const at = ts.findIndex((t) => prepositions.has(t))
  const pick = (words: ReadonlyArray<string>): string | undefined => {
    const content = words.filter((t) => isContent(t) && !keyAttrs.has(t))
    const noun = content.find((t) => lex.types.has(canonicalType(t))) ?? content[0]
    return noun === undefined ? undefined : canonicalType(noun)
  }
  return (at >= 0 ? pick(ts.slice(at + 1)) : undefined) ?? pick(ts)
}

/** Whether an API name says it lists or searches (it originates the ids of what it lists). */
export const isListApi = (apiName: string, lex: Lexicon): boolean => lex.words(apiName).some((t) => listVerbs.has(t))

// ---------------------------------------------------------------------------------------------
// Outputs of a response schema

/** A response field that carries an entity attribute: its path, the entity it carries, its depth. */
export interface Output {
  readonly path: string
  readonly ref: EntityRef
  readonly depth: number
  /** The type came only from the API's name (a bare `id` outside any telling container): weak evidence in a list API. */
  readonly guessed: boolean
}

const maxOutputDepth = 6
const maxOutputsPerTool = 200

/** The entity-carrying fields of a tool's response schema (at most 200, at most 6 levels deep). */
export const collectOutputs = (spec: ToolSpec, lex: Lexicon): ReadonlyArray<Output> => {
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
