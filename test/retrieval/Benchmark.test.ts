import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { toolId, toolName } from "../../src/domain/Ids.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import * as Benchmark from "../../src/retrieval/Benchmark.ts"
import * as Bm25 from "../../src/retrieval/Bm25.ts"
import * as Text from "../../src/retrieval/Tokenize.ts"

const api = (group: string, apiName: string, description: string): ToolSpec => ({
  id: toolId(`test:${group}/${apiName}`),
  name: toolName(`${apiName}_for_${group}`.toLowerCase().replace(/[^a-z0-9_]+/g, "_")),
  group,
  apiName,
  category: "Data",
  description,
  parameters: { type: "object", properties: {}, required: [] },
  source: { kind: "user", ref: `${group}/${apiName}` }
})

const tools = [
  api("Golf", "World Ranking", "world rankings of a year"),
  api("Golf", "Scorecards", "scorecards of a round"),
  api("Jokes", "Random Joke", "a random joke"),
  api("Jokes", "Joke Categories", "list the categories of jokes"),
  api("Crypto", "Coin Price", "price of a coin"),
  api("Crypto", "Coin List", "all coins")
]
const names = tools.map((t) => t.name as string)
const query = (id: string, text: string, relevant: ReadonlyArray<number>): Benchmark.JudgedQuery => ({
  id,
  query: text,
  matched: { relevant: relevant.map((i) => new Set([names[i] as string])), unmatched: [] }
})
const set: Benchmark.QuerySet = {
  name: "G9.json",
  path: "G9.json",
  report: { source: "test", loaded: 0, skipped: 0, issues: [], issueCount: 0 },
  queries: [
    query("golf", "I follow golf closely. Show me the world rankings for 2022. Also, get the scorecards of the last round.", [0, 1]),
    query("jokes", "Tell me a random joke! Then list the joke categories.", [2, 3]),
    query("crypto", "Additionally, what is the price of bitcoin and the list of all coins?", [4, 5])
  ]
}
const tokenizer = Text.makeTokenizer(Bm25.apiConfig.text)

describe("Benchmark.multiIntent", () => {
  it("joins requests of different providers with a connective and unites their relevant APIs", () => {
    const pairs = Benchmark.multiIntent(set, tools, 2, 11)
    expect(pairs.name).toBe("G9.json×2")
    expect(pairs.queries.length).toBe(3)
    for (const q of pairs.queries) {
      const parts = q.id.split("+")
      expect(parts.length).toBe(2)
      expect(new Set(parts).size).toBe(2)
      const originals = parts.map((id) => set.queries.find((s) => s.id === id) as Benchmark.JudgedQuery)
      expect(q.matched.relevant).toEqual(originals.flatMap((o) => o.matched.relevant))
      // the second request follows a connective, its own leading connective dropped and first letter lowered
      expect(q.query).toMatch(/^[A-Z].*\. (Additionally|Also|Furthermore|Besides that), [a-z]/u)
      expect(q.query).not.toMatch(/^Additionally, /u)
    }
    // the crypto request loses its own leading "Additionally," wherever it stands
    const withCrypto = pairs.queries.find((q) => q.id.startsWith("crypto")) as Benchmark.JudgedQuery
    expect(withCrypto.query.startsWith("What is the price of bitcoin")).toBe(true)
  })

  it("never joins two requests of one provider, and is deterministic in its seed (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 4 }), (seed, arity) => {
        const joined = Benchmark.multiIntent(set, tools, arity, seed)
        expect(Benchmark.multiIntent(set, tools, arity, seed)).toEqual(joined)
        for (const q of joined.queries) {
          const ids = q.id.split("+")
          // three providers: every request can take up to two partners
          expect(ids.length).toBe(Math.min(arity, 3))
          const providers = q.matched.relevant.map((r) => tools.find((t) => r.has(t.name))?.group)
          const perQuery = ids.map((id) => set.queries.find((s) => s.id === id)?.matched.relevant.length ?? 0)
          expect(new Set(providers).size).toBe(ids.length)
          expect(providers.length).toBe(perQuery.reduce((a, b) => a + b, 0))
        }
      }),
      { numRuns: 50 }
    )
  })
})

describe("Benchmark.singleIntents", () => {
  it("cuts out the one sentence that names one relevant API, after the asker's context sentence", () => {
    const single = Benchmark.singleIntents(set, tools, tokenizer.tokens, Bm25.clauses)
    expect(single.queries).toEqual([
      query("golf#0", "I follow golf closely. Show me the world rankings for 2022.", [0]),
      query("golf#1", "I follow golf closely. Also, get the scorecards of the last round.", [1]),
      query("jokes#0", "Tell me a random joke!", [2]),
      // "categories" is the joke-categories API's own word; its sentence has no word of the random-joke API alone
      query("jokes#1", "Then list the joke categories.", [3])
    ])
    // the crypto request asks for both APIs in one sentence: nothing to cut
    expect(single.queries.some((q) => q.id.startsWith("crypto"))).toBe(false)
  })
})

describe("Bm25.clauses", () => {
  it("splits at sentence ends and line breaks, not after abbreviations or inside tokens", () => {
    expect(Bm25.clauses("Give me the forecast for Paris. Also tell me a joke.")).toEqual(["Give me the forecast for Paris.", "Also tell me a joke."])
    expect(Bm25.clauses("Use e.g. the API at example.com. Dr. Smith needs 3.5 kg! Then; what?\nNext line")).toEqual([
      "Use e.g. the API at example.com.",
      "Dr. Smith needs 3.5 kg!",
      "Then;",
      "what?",
      "Next line"
    ])
    expect(Bm25.clauses("U.S. stocks please.  And more")).toEqual(["U.S. stocks please.", "And more"])
    expect(Bm25.clauses("   ")).toEqual([])
  })

  it("keeps every word of the text, in order (property)", () => {
    const word = fc.constantFrom("weather", "e.g.", "Dr.", "3.5", "stock", "price", "example.com", "U.S.", "joke")
    const end = fc.constantFrom(".", "?", "!", ";", ",", "", "\n")
    const text = fc.array(fc.tuple(word, end, fc.constantFrom(" ", "  ", "\n")), { maxLength: 20 }).map((parts) =>
      parts.map(([w, e, space]) => `${w}${e}${space}`).join("")
    )
    fc.assert(
      fc.property(text, (t) => {
        const pieces = Bm25.clauses(t)
        expect(pieces.join(" ").split(/\s+/u).filter((w) => w !== "")).toEqual(t.split(/\s+/u).filter((w) => w !== ""))
        for (const piece of pieces) expect(piece).toBe(piece.trim())
      }),
      { numRuns: 200 }
    )
  })
})

describe("Benchmark.formatTable", () => {
  it("pads each column to its widest cell: the first leftColumns to the left, the rest to the right", () => {
    const header = ["file", "engine", "NDCG@5"]
    const rows = [["G1_instruction.json", "bm25", "41.2"], ["G2", "minisearch", "9.0"]]
    expect(Benchmark.formatTable(header, rows).split("\n")).toEqual([
      "file                     engine  NDCG@5",
      "G1_instruction.json        bm25    41.2",
      "G2                   minisearch     9.0"
    ])
    expect(Benchmark.formatTable(header, rows, 2).split("\n")).toEqual([
      "file                 engine      NDCG@5",
      "G1_instruction.json  bm25          41.2",
      "G2                   minisearch     9.0"
    ])
  })

  it("Benchmark.table puts one file per row under the metric headers", () => {
    const result: Benchmark.FileResult = {
      ndcg1: 50, ndcg5: 41.25, recall5: 30, recall10: 60.04, p50_ms: 0.5, p95_ms: 1.25, mean_ms: 0.75, queries: 4, scored: 3, unmatched: []
    }
    expect(Benchmark.table([["G1.json", result]]).split("\n")).toEqual([
      "file     NDCG@1  NDCG@5   R@5  R@10  p50 ms  mean ms  p95 ms  queries",
      "G1.json    50.0    41.3  30.0  60.0   0.500    0.750   1.250      3/4"
    ])
  })
})
