/**
 * fast-check arbitraries for ParaAct turns: valid turns (with tag-like free text, nested JSON and `$ref`s),
 * protocol-fragment soup for the parser's totality tests, and mutations of printed turns.
 */
import fc from "fast-check"
import type { ToolCall } from "../../src/domain/Call.ts"
import type { CallId, ToolName } from "../../src/domain/Ids.ts"
import type { Json, JsonObject } from "../../src/domain/Json.ts"
import type { Plan } from "../../src/domain/Plan.ts"
import type { SearchQuery, Turn } from "../../src/domain/Turn.ts"
import { closeTag, openTag, tagNames } from "../../src/protocol/ParaAct.ts"

/** Call ids: mostly `c<n>`, sometimes any identifier the grammar allows. */
export const callIdArb: fc.Arbitrary<CallId> = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 40 }).map((n) => `c${n}`), weight: 3 },
  { arbitrary: fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/), weight: 1 }
).map((s) => s as CallId)

const toolNameArb: fc.Arbitrary<ToolName> = fc.oneof(
  fc.constantFrom("team_search", "team_roster", "forecast", "get-weather", "search_tools_v2"),
  fc.string({ minLength: 1, maxLength: 12, unit: "grapheme" })
).map((s) => s as ToolName)

/** Pieces of text that look like protocol syntax, to put inside free text and to build soup from. */
export const fragments: ReadonlyArray<string> = [
  ...tagNames.flatMap((t) => [openTag(t), closeTag(t)]),
  "<", ">", "</", "< think>", "<THINK>", "<tool_call>", "</ans", "<answer", "a < b", "x<y>z",
  "{", "}", "[", "]", "\"", ":", ",", "\\", "\\u00e9", "\\n", "null", "true", "-0", "1e999", "0.5", "-", "01",
  "{\"nodes\":[", "{\"id\":\"c1\",\"deps\":[]}", "{\"id\":\"c1\",\"name\":\"t\",\"arguments\":{}}",
  "{\"$ref\":\"c1.a.0\"}", "{\"$ref\":\"c1..x\"}", "{\"slot\":\"s1\",\"query\":\"q\"}", "\"q\"",
  "```", "```json\n", "\n", " ", "\t", "\u00a0", "\u2028", "é", "😀", "\ud800"
]

/** Free text that may contain `<` and tag-like text (never the closing tag of its own tag), trimmed. */
export const freeTextArb = (tag: "think" | "answer", minLength = 0): fc.Arbitrary<string> =>
  fc.array(
    fc.oneof(
      { arbitrary: fc.string({ unit: "binary", maxLength: 12 }), weight: 3 },
      { arbitrary: fc.constantFrom(...fragments), weight: 2 }
    ),
    { maxLength: 8 }
  ).map((parts) => {
    let text = parts.join("")
    const close = closeTag(tag)
    while (text.includes(close)) text = text.split(close).join(`</ ${tag}>`)
    return text.trim()
  }).filter((t) => t.length >= minLength)

/** -0 prints as 0, so valid turns hold 0. */
const noNegativeZero = (v: Json): Json => {
  if (typeof v === "number") return Object.is(v, -0) ? 0 : v
  if (Array.isArray(v)) return v.map(noNegativeZero)
  if (v !== null && typeof v === "object") {
    const o = v as JsonObject
    return Object.fromEntries(Object.keys(o).map((k) => [k, noNegativeZero(o[k] ?? null)]))
  }
  return v
}

const segmentArb = fc.oneof(
  fc.integer({ min: 0, max: 5 }).map(String),
  fc.stringMatching(/^[A-Za-z_ -]{1,8}$/)
)

/** A well-formed `$ref` placeholder. */
export const refArb: fc.Arbitrary<JsonObject> = fc.tuple(callIdArb, fc.array(segmentArb, { maxLength: 4 }))
  .map(([id, path]) => ({ $ref: [id, ...path].join(".") }))

/** Argument values: JSON (with `__proto__` keys and unicode), with `$ref`s at any depth. */
export const argumentValueArb: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }).map((v) => noNegativeZero(v as Json)),
    refArb,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 6 }).filter((k) => k !== "$ref"), tie("value"), { maxKeys: 3 })
  )
})).value

/** An arguments object (never a placeholder itself). */
export const argumentsArb: fc.Arbitrary<JsonObject> = fc.dictionary(
  fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("city", "team_id", "__proto__", "<call>")).filter((k) => k !== "$ref"),
  argumentValueArb,
  { maxKeys: 4 }
)

/** A list of calls with distinct ids. */
export const callsArb: fc.Arbitrary<ReadonlyArray<ToolCall>> = fc.uniqueArray(
  fc.record({ id: callIdArb, tool: toolNameArb, arguments: argumentsArb }),
  { minLength: 1, maxLength: 4, selector: (c) => c.id }
)

/** A list of searches with distinct, non-empty slots and non-blank queries. */
export const searchesArb: fc.Arbitrary<ReadonlyArray<SearchQuery>> = fc.uniqueArray(
  fc.record({
    slot: fc.oneof(callIdArb.map(String), fc.string({ minLength: 1, maxLength: 10, unit: "binary" })),
    query: fc.string({ minLength: 1, maxLength: 30, unit: "binary" }).filter((q) => q.trim() !== "")
  }),
  { minLength: 1, maxLength: 4, selector: (s) => s.slot }
)

/** A plan with at least one node (not necessarily a valid DAG: that is the plan math's business). */
export const planArb: fc.Arbitrary<Plan> = fc.array(
  fc.record(
    {
      id: callIdArb,
      tool: toolNameArb,
      slot: fc.string({ maxLength: 20, unit: "binary" }),
      deps: fc.array(callIdArb, { maxLength: 3 })
    },
    { requiredKeys: ["id", "deps"] }
  ),
  { minLength: 1, maxLength: 5 }
).map((nodes) => ({ nodes }))

/** Any valid turn: optional think and plan, and exactly one kind of action. */
export const validTurnArb: fc.Arbitrary<Turn> = fc.record({
  think: fc.option(freeTextArb("think"), { nil: undefined }),
  plan: fc.option(planArb, { nil: undefined }),
  action: fc.oneof(
    searchesArb.map((searches) => ({ searches, calls: [] as ReadonlyArray<ToolCall> })),
    callsArb.map((calls) => ({ searches: [] as ReadonlyArray<SearchQuery>, calls })),
    freeTextArb("answer", 1).map((answer) => ({ searches: [] as ReadonlyArray<SearchQuery>, calls: [] as ReadonlyArray<ToolCall>, answer }))
  )
}).map(({ action, plan, think }): Turn => ({
  ...(think !== undefined ? { think } : {}),
  ...(plan !== undefined ? { plan } : {}),
  ...action
}))

/** Strings built from protocol fragments and random text: what a confused model might write. */
export const soupArb: fc.Arbitrary<string> = fc.array(
  fc.oneof(
    { arbitrary: fc.constantFrom(...fragments), weight: 4 },
    { arbitrary: fc.string({ unit: "binary", maxLength: 6 }), weight: 1 }
  ),
  { maxLength: 30 }
).map((parts) => parts.join(""))

/** The tag blocks of a printed turn: `[start, end)` of each `<tag>...</tag>`. */
export const blocksOf = (text: string): ReadonlyArray<readonly [number, number]> => {
  const blocks: Array<readonly [number, number]> = []
  for (const t of tagNames) {
    const start = text.indexOf(`\n${openTag(t)}`) >= 0 ? text.indexOf(`\n${openTag(t)}`) + 1 : text.startsWith(openTag(t)) ? 0 : -1
    if (start < 0) continue
    const end = text.indexOf(`${closeTag(t)}`, start)
    if (end >= 0) blocks.push([start, end + closeTag(t).length])
  }
  return blocks.sort((a, b) => a[0] - b[0])
}

/** One edit of a text: a character deleted, inserted or duplicated, a tag block dropped, duplicated or swapped, a cut. */
export type Mutation =
  | { readonly kind: "delete"; readonly at: number }
  | { readonly kind: "insert"; readonly at: number; readonly text: string }
  | { readonly kind: "duplicate"; readonly at: number }
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "dropBlock"; readonly block: number }
  | { readonly kind: "duplicateBlock"; readonly block: number }
  | { readonly kind: "swapBlocks"; readonly a: number; readonly b: number }

/** Mutations with positions as fractions of the text, so they apply to any text. */
export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat().map((at) => ({ kind: "delete" as const, at })),
  fc.tuple(fc.nat(), fc.oneof(fc.constantFrom(...fragments), fc.string({ unit: "binary", minLength: 1, maxLength: 2 })))
    .map(([at, text]) => ({ kind: "insert" as const, at, text })),
  fc.nat().map((at) => ({ kind: "duplicate" as const, at })),
  fc.nat().map((at) => ({ kind: "truncate" as const, at })),
  fc.nat().map((block) => ({ kind: "dropBlock" as const, block })),
  fc.nat().map((block) => ({ kind: "duplicateBlock" as const, block })),
  fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => ({ kind: "swapBlocks" as const, a, b }))
)

/** Applies a mutation (positions taken modulo the text length). */
export const mutate = (text: string, m: Mutation): string => {
  const n = text.length
  const pos = (x: number, size: number) => size === 0 ? 0 : x % size
  const blocks = blocksOf(text)
  const block = (i: number) => blocks[pos(i, blocks.length)]
  switch (m.kind) {
    case "delete": {
      const at = pos(m.at, n)
      return text.slice(0, at) + text.slice(at + 1)
    }
    case "insert": {
      const at = pos(m.at, n + 1)
      return text.slice(0, at) + m.text + text.slice(at)
    }
    case "duplicate": {
      const at = pos(m.at, n)
      return text.slice(0, at) + text.slice(at, at + 1) + text.slice(at)
    }
    case "truncate":
      return text.slice(0, pos(m.at, n + 1))
    case "dropBlock": {
      const b = block(m.block)
      return b === undefined ? text : text.slice(0, b[0]) + text.slice(b[1])
    }
    case "duplicateBlock": {
      const b = block(m.block)
      return b === undefined ? text : text.slice(0, b[1]) + "\n" + text.slice(b[0], b[1]) + text.slice(b[1])
    }
    case "swapBlocks": {
      const a = block(m.a)
      const b = block(m.b)
      if (a === undefined || b === undefined || a === b) return text
      const [first, second] = a[0] < b[0] ? [a, b] : [b, a]
      return text.slice(0, first[0]) + text.slice(second[0], second[1]) + text.slice(first[1], second[0]) +
        text.slice(first[0], first[1]) + text.slice(second[1])
    }
  }
}

/** Deep equality of plain data, ignoring key order; numbers by `===`, so -0 equals 0 (it prints as 0). */
export const sameData = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length && ka.every((k) =>
    Object.hasOwn(b, k) && sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])
  )
}

/** Equality of turns as data, for comparing parser output. */
export const sameTurn = (a: Turn, b: Turn): boolean => sameData(a, b)
