import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import * as DepGraph from "../../src/DepGraph.ts"
import { toolId, toolName } from "../../src/domain/Ids.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import * as Bm25 from "../../src/retrieval/Bm25.ts"
import * as Document from "../../src/retrieval/Document.ts"
import { Retriever } from "../../src/Retriever.ts"
import { makeLibrary, ToolLibrary } from "../../src/ToolLibrary.ts"

const tool = (
  name: string,
  fields: { group?: string; api?: string; description?: string; groupDescription?: string; category?: string; params?: ReadonlyArray<string> }
): ToolSpec => ({
  id: toolId(`test:${name}`),
  name: toolName(name),
  group: fields.group ?? name,
  apiName: fields.api ?? name,
  category: fields.category ?? "Misc",
  description: fields.description ?? "",
  ...(fields.groupDescription === undefined ? {} : { groupDescription: fields.groupDescription }),
  parameters: {
    type: "object",
    properties: Object.fromEntries((fields.params ?? []).map((p) => [p, { type: "string" as const }])),
    required: []
  },
  source: { kind: "user", ref: name }
})

/** BM25F written straight from the formula, with maps, for one query: the oracle of the optimised index. */
const referenceScores = (tools: ReadonlyArray<ToolSpec>, config: Bm25.Config, query: string): Array<number> => {
  const index = Bm25.build([], config) // only for its tokenizer options
  const tokenize = index.tokenizer.tokens
  const docs = tools.map((t) => {
    const fields = Document.fromTool(t).fields
    return config.fields.map((spec) => spec.parts.flatMap((part) => tokenize(fields[part])))
  })
  const n = tools.length
  const average = config.fields.map((_, f) => docs.reduce((sum, d) => sum + (d[f] as Array<string>).length, 0) / n)
  const df = new Map<string, number>()
  for (const d of docs) for (const term of new Set(d.flat())) df.set(term, (df.get(term) ?? 0) + 1)
  const queryCounts = new Map<string, number>()
  for (const term of tokenize(query)) if (df.has(term)) queryCounts.set(term, (queryCounts.get(term) ?? 0) + 1)
  return docs.map((d) => {
    let score = 0
    for (const [term, count] of queryCounts) {
      const idf = Math.log(1 + (n - (df.get(term) as number) + 0.5) / ((df.get(term) as number) + 0.5))
      let tf = 0
      config.fields.forEach((spec, f) => {
        const tokens = d[f] as Array<string>
        const avg = average[f] as number
        const occurrences = tokens.filter((t) => t === term).length
        if (occurrences > 0) tf += (spec.weight * occurrences) / (1 - spec.b + spec.b * (tokens.length / avg))
      })
      if (tf > 0) score += count * Math.pow(idf, config.query.idfExponent) * ((idf * tf) / (config.k1 + tf))
    }
    return score
  })
}

const words = ["weather", "forecast", "city", "stock", "price", "crypto", "coin", "joke", "random", "word", "movie", "email", "validate", "zip", "code"]
const phrase = fc.array(fc.constantFrom(...words), { minLength: 0, maxLength: 6 }).map((ws) => ws.join(" "))
const arbTools = fc.array(
  fc.record({ group: phrase, api: phrase, description: phrase, groupDescription: phrase, category: fc.constantFrom("Data", "Finance", "Sports") }),
  { minLength: 1, maxLength: 25 }
).map((rows) => rows.map((r, i) => tool(`t${i}`, r)))
const arbConfig = fc.record({
  k1: fc.double({ min: 0.1, max: 3, noNaN: true }),
  weights: fc.array(fc.double({ min: 0.1, max: 5, noNaN: true }), { minLength: 5, maxLength: 5 }),
  bs: fc.array(fc.oneof(fc.constantFrom(0, 1), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 5, maxLength: 5 }),
  idfExponent: fc.constantFrom(0, 0.5, 1),
  merged: fc.boolean()
}).map(({ k1, weights, bs, idfExponent, merged }): Bm25.Config => ({
  k1,
  fields: merged
    ? [{ name: "all", parts: Document.plainFields, weight: weights[0] as number, b: bs[0] as number }]
    : Document.plainFields.map((part, i) => ({ name: part, parts: [part], weight: weights[i] as number, b: bs[i] as number })),
  text: { splitIdentifiers: false, keepCompounds: false, stopWords: false, stem: false },
  query: { ...Bm25.plainQuery, idfExponent }
}))

describe("Bm25", () => {
  it("scores every document like the reference BM25F and ranks identically (property)", () => {
    fc.assert(
      fc.property(arbTools, arbConfig, phrase, fc.integer({ min: 1, max: 30 }), (tools, config, query, k) => {
        const index = Bm25.build(tools, config)
        const reference = referenceScores(tools, config, query)
        const hits = Bm25.search(index, query, k)
        const expected = reference
          .map((score, doc) => ({ doc, score }))
          .filter((h) => h.score > 0)
          .sort((a, b) => b.score - a.score || a.doc - b.doc)
          .slice(0, k)
        expect(hits.length).toBe(expected.length)
        hits.forEach((hit, i) => {
          const want = expected[i] as { doc: number; score: number }
          expect(Math.abs(hit.score - want.score)).toBeLessThan(1e-9)
          // the hit really has that score, and unless two scores tie within rounding, it is the same document
          expect(Math.abs((reference[hit.doc] as number) - hit.score)).toBeLessThan(1e-9)
          const nearTie = reference.some((s, d) => d !== want.doc && Math.abs(s - want.score) < 1e-9)
          if (!nearTie) expect(hit.doc).toBe(want.doc)
          expect(hit.tool).toBe(tools[hit.doc]?.name)
        })
      }),
      { numRuns: 150 }
    )
  })

  it("topK equals a full sort, ties broken by lower index (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 0, maxLength: 60 }),
        fc.integer({ min: 0, max: 70 }),
        (values, k) => {
          const scores = Float64Array.from(values)
          // candidates in a scrambled order: the heap must not depend on it
          const candidates = Int32Array.from(values.map((_, i) => i).sort((a, b) => ((a * 7919) % 61) - ((b * 7919) % 61)))
          const got = Bm25.topK(candidates, candidates.length, scores, k)
          const want = values.map((score, doc) => ({ doc, score })).sort((a, b) => b.score - a.score || a.doc - b.doc).slice(0, k)
          expect(got).toEqual(want)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("topK only looks at the first `count` candidates", () => {
    const scores = Float64Array.from([1, 9, 5, 7])
    expect(Bm25.topK(Int32Array.from([0, 2, 1, 3]), 2, scores, 3)).toEqual([{ doc: 2, score: 5 }, { doc: 0, score: 1 }])
  })

  it("reweighting equals rebuilding with the new numbers (property)", () => {
    const numbers = fc.record({
      k1: fc.double({ min: 0.1, max: 3, noNaN: true }),
      weight: fc.double({ min: 0, max: 5, noNaN: true }),
      b: fc.double({ min: 0, max: 1, noNaN: true })
    })
    fc.assert(
      fc.property(arbTools, arbConfig, numbers, (tools, first, { k1, weight, b }) => {
        const second: Bm25.Config = { ...first, k1, fields: first.fields.map((f, i) => (i === 0 ? { ...f, weight, b } : f)) }
        const built = Bm25.build(tools, first)
        expect(Bm25.canReweight(built, second)).toBe(true)
        expect(Array.from(Bm25.reweight(built, second).impacts)).toEqual(Array.from(Bm25.build(tools, second).impacts))
      }),
      { numRuns: 60 }
    )
    expect(Bm25.canReweight(Bm25.build([], Bm25.defaultConfig), Bm25.plainConfig)).toBe(false)
  })

  it("field weights move a document up or down as expected", () => {
    const tools = [
      tool("by_name", { api: "Weather Now", description: "current conditions" }),
      tool("by_description", { api: "Conditions", description: "the weather today" }),
      tool("other", { api: "Stock Price", description: "quotes" })
    ]
    const weighted = (api: number, description: number): Bm25.Config => ({
      ...Bm25.defaultConfig,
      fields: [
        { name: "api", parts: ["api"], weight: api, b: 0.75 },
        { name: "description", parts: ["description"], weight: description, b: 0.75 }
      ]
    })
    const top = (config: Bm25.Config) => Bm25.search(Bm25.build(tools, config), "weather", 3).map((h) => h.tool)
    expect(top(weighted(4, 1))).toEqual(["by_name", "by_description"])
    expect(top(weighted(1, 4))).toEqual(["by_description", "by_name"])
    // a zero weight makes the field invisible
    expect(top(weighted(0, 1))).toEqual(["by_description"])
  })

  it("a common word weighs less than a rare one (idf), and repeats saturate (k1)", () => {
    const tools = [
      tool("a", { description: "data data data data data" }),
      tool("b", { description: "data crypto" }),
      tool("c", { description: "data" }),
      tool("d", { description: "data movies" })
    ]
    const index = Bm25.build(tools, Bm25.plainConfig)
    const hits = Bm25.search(index, "crypto data", 4)
    expect(hits[0]?.tool).toBe("b")
    expect(Bm25.idf(4, 1)).toBeGreaterThan(Bm25.idf(4, 4))
    expect(Bm25.idf(4, 4)).toBeGreaterThan(0)
    // tf 5 vs tf 1 in same-length-normalised terms: more, but far from 5 times more
    const single = Bm25.search(index, "data", 4)
    const byTool = new Map(single.map((h) => [h.tool as string, h.score]))
    expect(byTool.get("a")).toBeGreaterThan(byTool.get("c") as number)
    expect(byTool.get("a")).toBeLessThan(2.2 * Bm25.idf(4, 4))
  })

  it("unknown words, empty queries and k = 0 give no hits", () => {
    const index = Bm25.build([tool("a", { description: "weather" })], Bm25.defaultConfig)
    expect(Bm25.search(index, "zebra", 5)).toEqual([])
    expect(Bm25.search(index, "", 5)).toEqual([])
    expect(Bm25.search(index, "weather", 0)).toEqual([])
    expect(Bm25.search(Bm25.build([], Bm25.defaultConfig), "weather", 5)).toEqual([])
  })

  it("the accumulator is reset between queries", () => {
    const index = Bm25.build([tool("a", { description: "weather" }), tool("b", { description: "stock" })], Bm25.plainConfig)
    const first = Bm25.search(index, "weather", 2)
    Bm25.search(index, "stock weather", 2)
    expect(Bm25.search(index, "weather", 2)).toEqual(first)
  })

  it("clause fusion brings each request of a multi-request query into the top k", () => {
    const tools = [
      ...["one", "two", "three", "four"].map((n) => tool(`weather_${n}`, { group: "Weather Hub", api: `Weather ${n}`, description: "weather forecast weather alerts" })),
      tool("joke", { group: "Jokes", api: "Random Joke", description: "a joke" }),
      ...words.map((w) => tool(`filler_${w}`, { description: `${w} service` }))
    ]
    const query = "Give me the weather forecast and weather alerts for Paris. Also tell me a joke."
    const bag = Bm25.search(Bm25.build(tools, Bm25.defaultConfig), query, 2).map((h) => h.tool)
    const fused = Bm25.search(
      Bm25.build(tools, { ...Bm25.defaultConfig, query: { ...Bm25.defaultConfig.query, clauses: true, wholeWeight: 0.5, rrfK: 1 } }),
      query,
      2
    ).map((h) => h.tool)
    expect(bag).not.toContain("joke")
    expect(fused).toContain("joke")
    expect(Bm25.clauses(query)).toEqual(["Give me the weather forecast and weather alerts for Paris.", "Also tell me a joke."])
  })
})

describe("Retriever.layerBm25", () => {
  const library = makeLibrary("test", [
    tool("weather", { group: "Weather API", api: "Forecast", description: "weather forecast for a city", params: ["city"] }),
    tool("stock", { group: "Stocks", api: "Quote", description: "stock price" }),
    tool("joke", { group: "Jokes", api: "Random Joke", description: "tells a joke" })
  ], DepGraph.make([]))
  const layer = Retriever.layerBm25.pipe(Layer.provide(Layer.succeed(ToolLibrary, library)))

  it.effect("answers one ranked list per query from the ToolLibrary", () =>
    Effect.gen(function*() {
      const retriever = yield* Retriever
      const lists = yield* retriever.search(["city weather forecast", "a stock price", "nothing matches zzz"], 2)
      expect(retriever.name).toBe("bm25")
      expect(lists.map((l) => l.map((h) => h.tool))).toEqual([["weather"], ["stock"], []])
      expect(lists[0]?.[0]?.score).toBeGreaterThan(0)
    }).pipe(Effect.provide(layer)))

  it.effect("rejects a k that is not a positive integer", () =>
    Effect.gen(function*() {
      const retriever = yield* Retriever
      const error = yield* Effect.flip(retriever.search(["weather"], 0))
      expect(error._tag).toBe("RetrieverError")
      expect(error.message).toContain("k must be a positive integer, got 0")
      const fractional = yield* Effect.flip(retriever.search(["weather"], 2.5))
      expect(fractional.message).toContain("2.5")
    }).pipe(Effect.provide(layer)))
})
