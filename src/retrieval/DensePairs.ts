/**
 * Training pairs for the static encoder, generated from a tool library and WordNet: pseudo-queries that paraphrase a
 * tool's description in request frames, swap words for WordNet synonyms, keep only keywords, or ask for several tools.
 */
import type { ToolSpec } from "../domain/Tool.ts"
import type { Rng } from "../math/Random.ts"
import * as Text from "./Tokenize.ts"
import type { WordNet } from "./DenseWordNet.ts"
import { synonyms } from "./DenseWordNet.ts"

/** One training example: a query and the documents that answer it (indices into the document list). */
export interface Pair {
  readonly query: string
  readonly positives: ReadonlyArray<number>
}

/** How many pseudo-queries of which kind to generate. */
export interface PairConfig {
  /** Single-tool queries per tool. */
  readonly queriesPerTool: number
  /** Multi-intent queries, as a fraction of the number of tools. */
  readonly multiIntentRate: number
  /**
   * Where a multi-intent query draws its other tools: with chance `group` from the anchor's provider, with chance
   * `category` from its category, otherwise from anywhere (ToolBench's I1 / I2–I3 / mixed shapes).
   */
  readonly multiIntentScope: { readonly group: number; readonly category: number }
  /** Chance that a query gets a persona / context sentence in front. */
  readonly personaRate: number
  /** Chance that a query is rewritten with WordNet synonyms, and the per-word swap rate when it is. */
  readonly synonymRate: number
  readonly synonymWordRate: number
  /** Chance that a query mentions a parameter with a made-up value. */
  readonly parameterRate: number
}

/** The default mix. */
export const defaultPairConfig: PairConfig = {
  queriesPerTool: 4,
  multiIntentRate: 1,
  multiIntentScope: { group: 0.34, category: 0.33 },
  personaRate: 0.5,
  synonymRate: 0.5,
  synonymWordRate: 0.35,
  parameterRate: 0.35
}

// ---------------------------------------------------------------------------------------------------------------
// Words of the frames (written for this project; generic English request phrasing)

const requestVerbs = [
  "get", "fetch", "retrieve", "find", "look up", "check", "show", "list", "obtain", "pull", "give me", "search for"
]

const verbFrames: ReadonlyArray<(verb: string, object: string) => string> = [
  (v, o) => `${v} ${o}.`,
  (v, o) => `Can you ${v} ${o}?`,
  (v, o) => `Could you ${v} ${o} for me?`,
  (v, o) => `Please ${v} ${o}.`,
  (v, o) => `I need to ${v} ${o}.`,
  (v, o) => `I want to ${v} ${o}.`,
  (v, o) => `Help me ${v} ${o}.`,
  (v, o) => `I would like to ${v} ${o}.`,
  (v, o) => `Is there a way to ${v} ${o}?`,
  (v, o) => `How can I ${v} ${o}?`,
  (v, o) => `Can you help me ${v} ${o}?`,
  (v, o) => `I'm trying to ${v} ${o}.`
]

const nounFrames: ReadonlyArray<(object: string) => string> = [
  (o) => `I'm looking for ${o}.`,
  (o) => `Show me ${o}.`,
  (o) => `Provide ${o}.`,
  (o) => `What is ${o}?`,
  (o) => `Give me ${o}.`,
  (o) => `I need ${o}.`,
  (o) => `Tell me about ${o}.`,
  (o) => `Can you provide ${o}?`,
  (o) => `I'd like some information on ${o}.`,
  (o) => `Find ${o}.`
]

const roles = [
  "student", "journalist", "software developer", "travel blogger", "small business owner", "researcher", "teacher",
  "data analyst", "sports fan", "music lover", "investor", "marketing manager", "chef", "nurse", "event planner",
  "photographer", "real estate agent", "fitness coach", "gamer", "movie buff", "freelance designer", "startup founder",
  "parent", "retiree", "history enthusiast", "crypto trader", "product manager", "shop owner", "podcaster", "farmer"
]
const occasions = [
  "a trip abroad", "a family vacation", "a birthday party", "a business meeting", "a road trip", "a conference",
  "a weekend getaway", "a charity event", "a product launch", "a wedding", "a school project", "a team dinner",
  "a marketing campaign", "a research report", "a new website", "a mobile app"
]
const personaFrames: ReadonlyArray<(rng: Rng) => string> = [
  (r) => `I'm a ${r.pick(roles)}.`,
  (r) => `As a ${r.pick(roles)}, I have a request.`,
  (r) => `I'm planning ${r.pick(occasions)}.`,
  (r) => `My friend and I are preparing ${r.pick(occasions)}.`,
  (r) => `I'm working on ${r.pick(occasions)} and need some data.`,
  (r) => `For ${r.pick(occasions)}, I need your help.`,
  (r) => `My company is building ${r.pick(occasions)}.`,
  (r) => `I'm a ${r.pick(roles)} working on ${r.pick(occasions)}.`
]
const purposeFrames = [
  "This will help me make a decision.", "Thanks in advance!", "It's quite urgent.", "I want to share it with my team.",
  "That would be really useful.", "I'd appreciate a quick answer."
]
const connectors = ["Also,", "Additionally,", "Furthermore,", "Moreover,", "Then", "After that,", "And", "Besides that,"]

const valueShapes: ReadonlyArray<(rng: Rng) => string> = [
  (r) => String(1 + r.int(9999)),
  (r) => `${String.fromCharCode(65 + r.int(26))}${String.fromCharCode(65 + r.int(26))}${100 + r.int(900)}`,
  (r) => r.pick(["London", "Tokyo", "Paris", "New York", "Berlin", "Sydney", "Toronto", "Mumbai", "Cairo", "Lima"]),
  (r) => r.pick(["en", "fr", "US", "GB", "EUR", "USD", "2023-05-01", "latest", "json"]),
  (r) => r.pick(roles).split(" ")[0] ?? "item"
]

// ---------------------------------------------------------------------------------------------------------------
// Reading a tool

const leadingBoilerplate = new RegExp(
  "^(?:this|the|our)?\\s*(?:api|endpoint|tool|service|method|function|route|call)?\\s*" +
    "(?:will|can|lets you|allows you to|allows users to|is used to|is to|helps you|enables you to|to|that)?\\s*",
  "i"
)

const firstSentences = (text: string, maxWords: number): string => {
  const cleaned = text
    .replace(/<[^>]+>/g, " ")
    .replace(/https?:\/\/\S+/g, " ")
    .replace(/[`*#>\[\]{}|]+/g, " ")
    .replace(/\s+/g, " ")
    .trim()
  const sentence = cleaned.split(/(?<=[.!?])\s+/)[0] ?? cleaned
  const words = sentence.split(" ").filter((w) => w.length > 0)
  return words.slice(0, maxWords).join(" ").replace(/[.!?:;,]+$/, "")
}

const identifierWords = (name: string): string =>
  name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/[_\-/.]+/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase()

/** A tool's request: the verb it starts with (if any) and the object phrase. */
interface Intent {
  readonly verb: string | undefined
  readonly object: string
}

const verbLike = /^(?:get|gets|return|returns|retrieve|retrieves|fetch|fetches|list|lists|search|searches|find|finds|provide|provides|give|gives|show|shows|check|checks|create|creates|generate|generates|convert|converts|calculate|calculates|send|sends|update|updates|delete|deletes|add|adds|lookup|look|validate|validates|verify|verifies|translate|translates|download|downloads|upload|uploads|track|tracks|predict|predicts|analyze|analyzes|detect|detects|extract|extracts|compare|compares|book|books|post|posts|set|sets|remove|removes|scrape|scrapes|parse|parses|query|queries|estimate|estimates|compute|computes|count|counts|display|displays)$/i

const baseVerb = (w: string): string => {
  const lower = w.toLowerCase()
  if (/(?:ches|shes|sses|xes)$/.test(lower)) return lower.slice(0, -2)
  if (/ies$/.test(lower)) return `${lower.slice(0, -3)}y`
  if (/[^s]s$/.test(lower)) return lower.slice(0, -1)
  return lower
}

const intentOf = (tool: ToolSpec): Intent => {
  const sentence = firstSentences(tool.description, 28).replace(leadingBoilerplate, "")
  const words = sentence.split(" ").filter((w) => w.length > 0)
  const first = words[0]
  if (first !== undefined && verbLike.test(first) && words.length > 1) {
    return { verb: baseVerb(first), object: words.slice(1).join(" ") }
  }
  if (words.length >= 2) return { verb: undefined, object: sentence.charAt(0).toLowerCase() + sentence.slice(1) }
  const api = identifierWords(tool.apiName)
  const parts = api.split(" ")
  const head = parts[0]
  if (head !== undefined && verbLike.test(head) && parts.length > 1) {
    return { verb: baseVerb(head), object: parts.slice(1).join(" ") }
  }
  return { verb: undefined, object: `${api} from ${tool.group}` }
}

const parameterPhrases = (tool: ToolSpec): Array<string> =>
  Object.entries(tool.parameters.properties).map(([name, schema]) => {
    const words = identifierWords(name)
    const described = schema.description !== undefined && schema.description.length > 0 && schema.description.length < 60
    return described ? identifierWords(schema.description ?? "") : words
  })

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1)

const contentWords = (text: string): Array<string> =>
  (text.toLowerCase().match(/[\p{L}][\p{L}\p{N}]*/gu) ?? []).filter((w) => w.length > 2 && !Text.stopWords.has(w))

// ---------------------------------------------------------------------------------------------------------------
// Query makers

/** Rewrites some content words of a text with WordNet synonyms of their most frequent sense. */
export const synonymSwap = (text: string, wordnet: WordNet, rate: number, rng: Rng): string =>
  text.replace(/[\p{L}]+/gu, (word) => {
    const lower = word.toLowerCase()
    if (lower.length < 3 || Text.stopWords.has(lower) || rng.next() >= rate) return word
    const options = synonyms(wordnet, lower)
    return options.length === 0 ? word : rng.pick(options)
  })

const requestSentence = (tool: ToolSpec, rng: Rng, config: PairConfig, wordnet: WordNet | undefined): string => {
  const intent = intentOf(tool)
  // synonyms replace words of the tool's own phrase only (the frame words are already varied)
  let object = wordnet !== undefined && rng.next() < config.synonymRate
    ? synonymSwap(intent.object, wordnet, config.synonymWordRate, rng)
    : intent.object
  if (rng.next() < config.parameterRate) {
    const phrases = parameterPhrases(tool)
    if (phrases.length > 0) object = `${object} for ${rng.pick(phrases)} ${rng.pick(valueShapes)(rng)}`
  }
  const style = rng.next()
  if (style < 0.15) {
    // keyword query: a few content words of the tool's names and description
    const pool = [...contentWords(tool.apiName.replace(/([a-z])([A-Z])/g, "$1 $2")), ...contentWords(intent.object)]
    const n = Math.min(pool.length, 2 + rng.int(3))
    return rng.shuffle(pool).slice(0, n).join(" ")
  }
  if (style < 0.25) {
    // partial: the object phrase cut short
    const words = object.split(" ")
    return words.slice(0, Math.max(2, Math.ceil(words.length * (0.4 + 0.4 * rng.next())))).join(" ")
  }
  if (intent.verb !== undefined && style < 0.7) {
    const verb = rng.next() < 0.5 ? intent.verb : rng.pick(requestVerbs)
    return capitalise(rng.pick(verbFrames)(verb, object))
  }
  if (style < 0.8) {
    const api = identifierWords(tool.apiName)
    return capitalise(rng.pick(verbFrames)(rng.pick(requestVerbs), `${api} ${rng.next() < 0.5 ? `using ${tool.group}` : ""}`.trim()))
  }
  return capitalise(rng.pick(nounFrames)(object))
}

const dress = (core: string, rng: Rng, config: PairConfig): string => {
  const persona = rng.next() < config.personaRate ? `${rng.pick(personaFrames)(rng)} ` : ""
  const purpose = rng.next() < 0.2 ? ` ${rng.pick(purposeFrames)}` : ""
  return `${persona}${core}${purpose}`
}

/** Single-tool pseudo-queries of one tool. */
export const toolQueries = (
  tool: ToolSpec,
  count: number,
  rng: Rng,
  config: PairConfig,
  wordnet: WordNet | undefined
): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < count; i++) {
    out.push(dress(requestSentence(tool, rng, config, wordnet), rng, config))
  }
  return out
}

/**
 * Pairs over a library: `queriesPerTool` single-tool queries per tool, and multi-intent queries that ask for
 * 2–3 tools of one group, one category, or several categories (as ToolBench's I1/I2/I3 instructions do).
 */
export const libraryPairs = (
  tools: ReadonlyArray<ToolSpec>,
  rng: Rng,
  config: PairConfig = defaultPairConfig,
  wordnet?: WordNet
): Array<Pair> => {
  const pairs: Array<Pair> = []
  tools.forEach((tool, i) => {
    for (const q of toolQueries(tool, config.queriesPerTool, rng, config, wordnet)) pairs.push({ query: q, positives: [i] })
  })
  const byGroup = new Map<string, Array<number>>()
  const byCategory = new Map<string, Array<number>>()
  tools.forEach((tool, i) => {
    const g = byGroup.get(tool.group)
    if (g === undefined) byGroup.set(tool.group, [i])
    else g.push(i)
    const c = byCategory.get(tool.category)
    if (c === undefined) byCategory.set(tool.category, [i])
    else c.push(i)
  })
  const multi = Math.round(tools.length * config.multiIntentRate)
  for (let m = 0; m < multi && tools.length > 1; m++) {
    const anchor = rng.int(tools.length)
    const tool = tools[anchor]
    if (tool === undefined) continue
    const n = 2 + rng.int(2)
    const scope = rng.next()
    const { group: groupShare, category: categoryShare } = config.multiIntentScope
    const pool = scope < groupShare
      ? byGroup.get(tool.group) ?? []
      : scope < groupShare + categoryShare
      ? byCategory.get(tool.category) ?? []
      : undefined
    const chosen = new Set<number>([anchor])
    for (let tries = 0; chosen.size < n && tries < 10; tries++) {
      chosen.add(pool !== undefined && pool.length > 1 ? rng.pick(pool) : rng.int(tools.length))
    }
    const members = [...chosen]
    const sentences = members.map((idx, k) => {
      const t = tools[idx]
      if (t === undefined) return ""
      const core = requestSentence(t, rng, config, wordnet)
      return k === 0 ? core : `${rng.pick(connectors)} ${core.charAt(0).toLowerCase()}${core.slice(1)}`
    })
    pairs.push({ query: dress(sentences.join(" "), rng, config), positives: members })
  }
  return pairs
}

/** A (query, document) pair of texts outside the library (WordNet). */
export interface TextPair {
  readonly query: string
  readonly doc: string
}

/**
 * Dictionary pairs from WordNet: a lemma (sometimes with a hypernym or topic word) as the query, and its definition
 * with the other lemmas of the synset as the document. Teaches words the meaning of their definitions and synonyms.
 */
export const wordnetPairs = (wordnet: WordNet, rng: Rng, maxPairs: number): Array<TextPair> => {
  const out: Array<TextPair> = []
  const keys = rng.shuffle([...wordnet.synsets.keys()])
  for (const key of keys) {
    if (out.length >= maxPairs) break
    const synset = wordnet.synsets.get(key)
    if (synset === undefined || synset.definition.length === 0) continue
    const lemma = rng.pick(synset.words)
    const others = synset.words.filter((w) => w !== lemma)
    const context = [...synset.topics, ...synset.hypernyms]
      .map((k) => wordnet.synsets.get(k)?.words[0])
      .filter((w): w is string => w !== undefined)
    const query = context.length > 0 && rng.next() < 0.3 ? `${lemma} ${rng.pick(context)}` : lemma
    const example = synset.examples.length > 0 && rng.next() < 0.3 ? ` ${rng.pick(synset.examples)}` : ""
    const doc = `${others.length > 0 ? `${others.join(", ")}: ` : ""}${synset.definition}.${example}`
    out.push({ query, doc })
  }
  return out
}
