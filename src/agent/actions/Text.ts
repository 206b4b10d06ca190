/**
 * Text and payload helpers of the action space: stemmed content words (memoised), word cover, the clause a text
 * covers best, payload leaves and the response schema at a path, key shapes, fact labels. Pure.
 */
import type { Json, JsonSchema } from "../../domain/Json.ts"
import { defaultOptions, makeTokenizer } from "../../retrieval/Tokenize.ts"

const tokenizer = makeTokenizer(defaultOptions)
const tokenMemo = new Map<string, ReadonlySet<string>>()
/** The stemmed content words of a text, memoised (tool descriptions and payload keys repeat across rounds). */
export const tokens = (text: string): ReadonlySet<string> => {
  const hit = tokenMemo.get(text)
  if (hit !== undefined) return hit
  const out = new Set(tokenizer.tokens(text))
  if (tokenMemo.size >= 200_000) tokenMemo.clear()
  tokenMemo.set(text, out)
  return out
}

/** The words of a payload leaf's own key (the last step of its path: `home_score` → home, score). */
export const keyWordsOf = (path: ReadonlyArray<string | number>): ReadonlySet<string> => tokens(String(path.at(-1) ?? ""))

/** The clause whose words `text` covers best (-1 when it shares no word with any). */
export const bestClause = (clauseTokens: ReadonlyArray<ReadonlySet<string>>, text: ReadonlySet<string>): number => {
  let best = -1
  let score = 0
  clauseTokens.forEach((c, i) => {
    const s = cover(c, text)
    if (s > score) {
      best = i
      score = s
    }
  })
  return best
}

/** Share of `a`'s tokens found in `b` (0 when `a` is empty). */
export const cover = (a: ReadonlySet<string>, b: ReadonlySet<string>): number => {
  if (a.size === 0) return 0
  let n = 0
  for (const t of a) if (b.has(t)) n++
  return n / a.size
}

export const clip01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x)

/** Leaves of a payload (bounded): path and value. */
export const leaves = (payload: Json, itemsPerArray: number, maxDepth = 5): ReadonlyArray<{ readonly path: ReadonlyArray<string | number>; readonly value: Json }> => {
  const out: Array<{ path: Array<string | number>; value: Json }> = []
  const walk = (value: Json, path: Array<string | number>, depth: number): void => {
    if (out.length >= 400) return
    if (Array.isArray(value)) {
      if (depth >= maxDepth) return
      value.slice(0, itemsPerArray).forEach((item, i) => walk(item, [...path, i], depth + 1))
    } else if (value !== null && typeof value === "object") {
      if (depth >= maxDepth) return
      for (const [k, v] of Object.entries(value)) walk(v as Json, [...path, k], depth + 1)
    } else if (value !== null) {
      out.push({ path, value })
    }
  }
  walk(payload, [], 0)
  return out
}

/** The response schema at a payload path (array indices step into `items`). */
export const schemaAt = (schema: JsonSchema | undefined, path: ReadonlyArray<string | number>): JsonSchema | undefined => {
  let at = schema
  for (const part of path) {
    if (at === undefined) return undefined
    at = typeof part === "number" ? at.items : at.properties?.[part]
  }
  return at
}

export const idLike = (key: string): boolean => /(^|_)id$|Id$|^id$|uuid|_code$/.test(key)
export const nameLike = (key: string): boolean => /name|title|headline|label/i.test(key)

export const renderLabel = (path: ReadonlyArray<string | number>): string =>
  path.filter((p): p is string => typeof p === "string").slice(-2).join(" ").replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ").toLowerCase()
