/**
 * The words of generated tools: API names in several naming conventions and descriptions in several registers,
 * with synonyms, provider wording and noise, so that retrieval over the library is not a keyword lookup.
 */
import type { Rng } from "../../math/Random.ts"

/** How a provider names its endpoints. */
export type Naming = "title" | "camel" | "path" | "snake" | "short"

/** Upper-cases the first letter of each word. */
export const titleCase = (s: string): string => s.replace(/(^|[\s_-])([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase())

// Names repeat across thousands of endpoints: both conversions are memoised.
const camelCache = new Map<string, string>()
const snakeCache = new Map<string, string>()

/** `team players` → `teamPlayers`. */
export const camel = (s: string): string => {
  let out = camelCache.get(s)
  if (out === undefined) {
    const parts = s.replace(/[^A-Za-z0-9]+/g, " ").trim().split(" ").filter((p) => p.length > 0)
    out = parts.map((p, i) => (i === 0 ? p.toLowerCase() : (p[0] ?? "").toUpperCase() + p.slice(1).toLowerCase())).join("")
    camelCache.set(s, out)
  }
  return out
}

/** `Team Players` → `team_players`. */
export const snake = (s: string): string => {
  let out = snakeCache.get(s)
  if (out === undefined) {
    out = s.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "")
    snakeCache.set(s, out)
  }
  return out
}

/** `Team Players` → `team-players`. */
export const kebab = (s: string): string => snake(s).replace(/_/g, "-")

/** Renders an endpoint name (given as lower-case words, e.g. `get team details`) in a provider's convention. */
export const endpointName = (naming: Naming, words: string, path: string): string => {
  switch (naming) {
    case "title": return titleCase(words)
    case "camel": return camel(words)
    case "snake": return snake(words)
    case "path": return path
    case "short": return titleCase(words.replace(/^(get|fetch|retrieve|list|search|find) /, ""))
  }
}

/** Joins labels as an English list (`a, b and c`). */
export const listing = (items: ReadonlyArray<string>, conj = "and"): string =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} ${conj} ${items[items.length - 1]}`

/** `a` or `an` before a word. */
export const article = (word: string): string => (/^[aeiou]/i.test(word) && !/^(uni|use|eu)/i.test(word) ? "an" : "a")

/** Sentences providers add to their docs that say nothing about the ability (realistic noise for retrieval). */
export const noiseSentences: ReadonlyArray<string> = [
  "Requires a valid API key in the X-API-Key header.",
  "Data is refreshed every 15 minutes.",
  "Free plan: 500 requests per month.",
  "Responses are cached for 60 seconds.",
  "Part of the v2 endpoints; v1 is deprecated.",
  "All timestamps are UTC.",
  "Rate limited to 10 requests per second.",
  "Returns JSON.",
  "Contact support for enterprise quotas.",
  "Used by thousands of developers.",
  "Low latency, high availability.",
  "See the docs for pagination details.",
  "Results may be truncated on the free tier.",
  "Beta: the response format may change.",
  "Uses HTTPS only."
]

/** A synonym of a noun (the noun itself most of the time). */
export const nounVariant = (rng: Rng, noun: string, synonyms: ReadonlyArray<string>, p = 0.4): string =>
  synonyms.length > 0 && rng.next() < p ? rng.pick(synonyms) : noun

/** Picks one phrasing out of several. */
export const phrase = (rng: Rng, options: ReadonlyArray<string>): string => rng.pick(options)
