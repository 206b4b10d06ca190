import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import * as DepGraph from "../../src/toolenv/DepGraph.ts"
import { toolId, toolName } from "../../src/domain/Ids.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import * as Bm25 from "../../src/retrieval/Bm25.ts"
import * as Document from "../../src/retrieval/Document.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import { makeLibrary, ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"

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

/** The tokens of each index field of each tool under a configuration's field specs. */
const fieldTokens = (tools: ReadonlyArray<ToolSpec>, fields: ReadonlyArray<Bm25.FieldSpec>, tokenize: (s: string) => Array<string>) =>
  tools.map((t) => {
    const doc = Document.fromTool(t).fields
    return fields.map((spec) => spec.parts.flatMap((part) => tokenize(doc[part])))
  })

/** BM25F written straight from the formula, with maps, for weighted query terms: the oracle of the optimised index. */
const bm25fScores = (
  docs: ReadonlyArray<ReadonlyArray<ReadonlyArray<string>>>,
  fields: ReadonlyArray<Bm25.FieldSpec>,
  k1: number,
  queryWeights: ReadonlyMap<string, number>
): Array<number> => {
  const n = docs.length
  const average = fields.map((_, f) => docs.reduce((sum, d) => sum + (d[f] as ReadonlyArray<string>).length, 0) / n)
  const df = new Map<string, number>()
  for (const d of docs) for (const term of new Set(d.flat())) df.set(term, (df.get(term) ?? 0) + 1)
  return docs.map((d) => {
    let score = 0
    for (const [term, weight] of queryWeights) {
      const documentFrequency = df.get(term)
      if (documentFrequency === undefined) continue
      const idf = Math.log(1 + (n - documentFrequency + 0.5) / (documentFrequency + 0.5))
      let tf = 0
      fields.forEach((spec, f) => {
        const tokens = d[f] as ReadonlyArray<string>
        const occurrences = tokens.filter((t) => t === term).length
        if (occurrences > 0) tf += (spec.weight * occurrences) / (1 - spec.b + spec.b * (tokens.length / (average[f] as number)))
      })
      if (tf > 0) score += weight * ((idf * tf) / (k1 + tf))
    }
    return score
  })
}

/** Query words counted (only words of the corpus), weighted by idf^e over the API documents. */
const queryWeights = (
  docs: ReadonlyArray<ReadonlyArray<ReadonlyArray<string>>>,
  tokens: ReadonlyArray<string>,
  idfExponent: number
): Map<string, number> => {
  const n = docs.length
  const df = new Map<string, number>()
  for (const d of docs) for (const term of new Set(d.flat())) df.set(term, (df.get(term) ?? 0) + 1)
  const counts = new Map<string, number>()
  for (const term of tokens) if (df.has(term)) counts.set(term, (counts.get(term) ?? 0) + 1)
  return new Map([...counts].map(([term, count]) => {
    const d = df.get(term) as number
    return [term, count * Math.pow(Math.log(1 + (n - d + 0.5) / (d + 0.5)), idfExponent)]
  }))
}

/**
 * The group evidence from its definition: a provider's document has its shared fields once (from its first API) and
 * the other fields' tokens of all its APIs in order; score(api) = s_api + λ · s_group.
 */
const withGroupScores = (
  tools: ReadonlyArray<ToolSpec>,
  config: Bm25.Config,
  apiScores: ReadonlyArray<number>,
  weights: ReadonlyMap<string, number>,
  tokenize: (s: string) => Array<string>
): Array<number> => {
  const group = config.group
  if (group === undefined) return [...apiScores]
  const keys = [...new Set(tools.map((t) => `${t.category}\u0000${t.group}`))]
  const members = keys.map((key) => tools.filter((t) => `${t.category}\u0000${t.group}` === key).map((t) => Document.fromTool(t).fields))
  const groupDocs = members.map((docs) =>
    group.fields.map((spec) =>
      spec.parts.flatMap((part) =>
        (Document.sharedFields.includes(part) ? docs.slice(0, 1) : docs).flatMap((d) => tokenize(d[part]))
      )
    )
  )
  const groupScores = bm25fScores(groupDocs, group.fields, group.k1, weights)
  const keyOf = (i: number) => `${(tools[i] as ToolSpec).category}\u0000${(tools[i] as ToolSpec).group}`
  // the provider's best `members` APIs by own score (ties: lower index) get the share
  const sharing = (i: number): boolean => {
    if (group.members === undefined) return true
    const siblings = tools.map((_, j) => j).filter((j) => keyOf(j) === keyOf(i))
    const ranked = siblings.sort((a, b) => (apiScores[b] as number) - (apiScores[a] as number) || a - b)
    return ranked.slice(0, Math.floor(group.members)).includes(i)
  }
  return apiScores.map((score, i) =>
    score + (sharing(i) ? group.weight * (groupScores[keys.indexOf(keyOf(i))] as number) : 0)
  )
}

/** Reference scores of every tool for a query under a configuration (without clauses and feedback). */
const referenceScores = (tools: ReadonlyArray<ToolSpec>, config: Bm25.Config, query: string): Array<number> => {
  const tokenize = Bm25.build([], config).tokenizer.tokens // only for its tokenizer options
  const docs = fieldTokens(tools, config.fields, tokenize)
  const weights = queryWeights(docs, tokenize(query), config.query.idfExponent)
  return withGroupScores(tools, config, bm25fScores(docs, config.fields, config.k1, weights), weights, tokenize)
}

/** The expected top k of reference scores: positive scores, best first, ties to the lower index. */
const expectedTop = (reference: ReadonlyArray<number>, k: number) =>
  reference
    .map((score, doc) => ({ doc, score }))
    .filter((h) => h.score > 0)
    .sort((a, b) => b.score - a.score || a.doc - b.doc)
    .slice(0, k)

/** Hits agree with a reference: same scores within 1e-9 and, unless two reference scores tie within rounding, same documents. */
const expectMatchesReference = (
  hits: ReadonlyArray<Bm25.Hit>,
  reference: ReadonlyArray<number>,
  k: number,
  tools: ReadonlyArray<ToolSpec>
): void => {
  const expected = expectedTop(reference, k)
  expect(hits.length).toBe(expected.length)
  hits.forEach((hit, i) => {
    const want = expected[i] as { doc: number; score: number }
    expect(Math.abs(hit.score - want.score)).toBeLessThan(1e-9)
    expect(Math.abs((reference[hit.doc] as number) - hit.score)).toBeLessThan(1e-9)
    const nearTie = reference.some((s, d) => d !== want.doc && Math.abs(s - want.score) < 1e-9)
    if (!nearTie) expect(hit.doc).toBe(want.doc)
    expect(hit.tool).toBe(tools[hit.doc]?.name)
  })
}

const words = ["weather", "forecast", "city", "stock", "price", "crypto", "coin", "joke", "random", "word", "movie", "email", "validate", "zip", "code"]
const phrase = fc.array(fc.constantFrom(...words), { minLength: 0, maxLength: 6 }).map((ws) => ws.join(" "))
const arbTools = fc.array(
  fc.record({
    group: fc.oneof(phrase, fc.constantFrom("Weather Hub", "Coin Desk", "Joke Box")),
    api: phrase,
    description: phrase,
    groupDescription: phrase,
    category: fc.constantFrom("Data", "Finance", "Sports")
  }),
  { minLength: 1, maxLength: 25 }
).map((rows) => rows.map((r, i) => tool(`t${i}`, r)))
const arbFields = (weights: ReadonlyArray<number>, bs: ReadonlyArray<number>, merged: boolean): Array<Bm25.FieldSpec> =>
  merged
    ? [{ name: "all", parts: Document.plainFields, weight: weights[0] as number, b: bs[0] as number }]
    : Document.plainFields.map((part, i) => ({ name: part, parts: [part], weight: weights[i] as number, b: bs[i] as number }))
const arbNumbers = fc.record({
  k1: fc.double({ min: 0.1, max: 3, noNaN: true }),
  weights: fc.array(fc.double({ min: 0.1, max: 5, noNaN: true }), { minLength: 5, maxLength: 5 }),
  bs: fc.array(fc.oneof(fc.constantFrom(0, 1), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 5, maxLength: 5 }),
  merged: fc.boolean()
})
const arbConfig = fc.record({
  api: arbNumbers,
  idfExponent: fc.constantFrom(0, 0.5, 1),
  group: fc.option(
    fc.record({
      numbers: arbNumbers,
      lambda: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 8, noNaN: true })),
      members: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined })
    }),
    { nil: undefined }
  )
}).map(({ api, idfExponent, group }): Bm25.Config => ({
  k1: api.k1,
  fields: arbFields(api.weights, api.bs, api.merged),
  text: { splitIdentifiers: false, keepCompounds: false, stopWords: false, stem: false },
  query: { ...Bm25.plainQuery, idfExponent },
  ...(group === undefined
    ? {}
    : {
      group: {
        weight: group.lambda,
        k1: group.numbers.k1,
        fields: arbFields(group.numbers.weights, group.numbers.bs, group.numbers.merged),
        ...(group.members === undefined ? {} : { members: group.members })
      }
    })
}))

describe("Bm25", () => {
  it("scores every document like the reference BM25F (with and without provider evidence) and ranks identically (property)", () => {
    fc.assert(
      fc.property(arbTools, arbConfig, phrase, fc.integer({ min: 1, max: 30 }), (tools, config, query, k) => {
        const index = Bm25.build(tools, config)
        expectMatchesReference(Bm25.search(index, query, k), referenceScores(tools, config, query), k, tools)
      }),
      { numRuns: 200 }
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

  it("reweighting equals rebuilding with the new numbers, for the API and the provider index (property)", () => {
    const numbers = fc.record({
      k1: fc.double({ min: 0.1, max: 3, noNaN: true }),
      weight: fc.double({ min: 0, max: 5, noNaN: true }),
      b: fc.double({ min: 0, max: 1, noNaN: true }),
      apiSide: fc.boolean()
    })
    fc.assert(
      fc.property(arbTools, arbConfig, numbers, phrase, (tools, first, { k1, weight, b, apiSide }, query) => {
        const group = first.group
        const second: Bm25.Config = apiSide || group === undefined
          ? { ...first, k1, fields: first.fields.map((f, i) => (i === 0 ? { ...f, weight, b } : f)) }
          : { ...first, group: { ...group, k1, weight: weight * 2, fields: group.fields.map((f, i) => (i === 0 ? { ...f, weight, b } : f)) } }
        const built = Bm25.build(tools, first)
        expect(Bm25.canReweight(built, second)).toBe(true)
        const reweighted = Bm25.reweight(built, second)
        const rebuilt = Bm25.build(tools, second)
        expect(Array.from(reweighted.impacts)).toEqual(Array.from(rebuilt.impacts))
        expect(Array.from(reweighted.group?.impacts ?? [])).toEqual(Array.from(rebuilt.group?.impacts ?? []))
        expect(Bm25.search(reweighted, query, 10)).toEqual(Bm25.search(rebuilt, query, 10))
      }),
      { numRuns: 80 }
    )
    expect(Bm25.canReweight(Bm25.build([], Bm25.defaultConfig), Bm25.plainConfig)).toBe(false)
    // provider evidence and feedback need the postings they read
    const plainGroup: Bm25.Config = { ...Bm25.plainConfig, group: { weight: 1, k1: 1.2, fields: Bm25.plainConfig.fields } }
    expect(Bm25.canReweight(Bm25.build([], Bm25.plainConfig), plainGroup)).toBe(false)
    expect(Bm25.canReweight(Bm25.build([], plainGroup), Bm25.plainConfig)).toBe(true)
    const feedback: Bm25.Config = { ...Bm25.plainConfig, query: { ...Bm25.plainQuery, feedback: { docs: 2, terms: 2, weight: 0.5 } } }
    expect(Bm25.canReweight(Bm25.build([], Bm25.plainConfig), feedback)).toBe(false)
    expect(Bm25.canReweight(Bm25.build([], feedback), Bm25.plainConfig)).toBe(true)
  })

  it("pseudo-relevance feedback adds the terms the reference votes for and scores like the reference (property)", () => {
    const arbFeedback = fc.record({
      docs: fc.integer({ min: 1, max: 4 }),
      terms: fc.integer({ min: 1, max: 4 }),
      weight: fc.double({ min: 0.05, max: 2, noNaN: true })
    })
    fc.assert(
      fc.property(arbTools, arbConfig, arbFeedback, phrase, fc.integer({ min: 1, max: 30 }), (tools, base, feedback, query, k) => {
        const config: Bm25.Config = { ...base, query: { ...base.query, feedback } }
        const index = Bm25.build(tools, config)
        const tokenize = index.tokenizer.tokens
        const docs = fieldTokens(tools, config.fields, tokenize)
        // term ids in order of first appearance: documents in order, fields in order (the tie-break of the votes)
        const firstSeen = new Map<string, number>()
        for (const d of docs) for (const term of d.flat()) if (!firstSeen.has(term)) firstSeen.set(term, firstSeen.size)
        const weights = queryWeights(docs, tokenize(query), config.query.idfExponent)
        const first = withGroupScores(tools, config, bm25fScores(docs, config.fields, config.k1, weights), weights, tokenize)
        const top = expectedTop(first, feedback.docs)
        const n = tools.length
        const df = new Map<string, number>()
        for (const d of docs) for (const term of new Set(d.flat())) df.set(term, (df.get(term) ?? 0) + 1)
        const votes = new Map<string, number>()
        for (const hit of top) {
          const tokens = (docs[hit.doc] as ReadonlyArray<ReadonlyArray<string>>).flat()
          for (const term of new Set(tokens)) {
            if (weights.has(term)) continue
            const d = df.get(term) as number
            const tf = tokens.filter((t) => t === term).length
            const vote = ((hit.score / (top[0] as { score: number }).score) * tf / tokens.length) * Math.log(1 + (n - d + 0.5) / (d + 0.5))
            votes.set(term, (votes.get(term) ?? 0) + vote)
          }
        }
        const ranked = [...votes].sort((a, b) => b[1] - a[1] || (firstSeen.get(a[0]) as number) - (firstSeen.get(b[0]) as number))
        // ties within float rounding at a cut-off (the last document read, the last term taken) may fall either way
        // when the two sides round differently: only cases the formulas decide are compared
        const near = (x: number, y: number) => Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x))
        const firstPass = expectedTop(first, feedback.docs + 1)
        const lastRead = firstPass[feedback.docs - 1]
        const nextRead = firstPass[feedback.docs]
        fc.pre(lastRead === undefined || nextRead === undefined || !near(lastRead.score, nextRead.score))
        const lastTaken = ranked[feedback.terms - 1]
        const nextTaken = ranked[feedback.terms]
        fc.pre(lastTaken === undefined || nextTaken === undefined || !near(lastTaken[1], nextTaken[1]))
        const chosen = ranked.slice(0, feedback.terms)
        const expanded = new Map(weights)
        const strongest = chosen[0]?.[1] ?? 0
        if (strongest > 0) for (const [term, vote] of chosen) expanded.set(term, (feedback.weight * vote) / strongest)
        const reference = withGroupScores(tools, config, bm25fScores(docs, config.fields, config.k1, expanded), expanded, tokenize)
        expectMatchesReference(Bm25.search(index, query, k), reference, k, tools)
      }),
      { numRuns: 150 }
    )
  })

  it("feedback brings in a document that shares no word with the query but shares words with the best hits", () => {
    const tools = [
      tool("forecast", { api: "Weather Forecast", description: "weather forecast temperature humidity" }),
      tool("humidity", { api: "Humidity Now", description: "humidity temperature readings" }),
      tool("joke", { api: "Random Joke", description: "a joke" })
    ]
    const plain = Bm25.build(tools, Bm25.plainConfig)
    const expanded = Bm25.build(tools, { ...Bm25.plainConfig, query: { ...Bm25.plainQuery, feedback: { docs: 1, terms: 2, weight: 1 } } })
    expect(Bm25.search(plain, "weather forecast", 3).map((h) => h.tool)).toEqual(["forecast"])
    expect(Bm25.search(expanded, "weather forecast", 3).map((h) => h.tool)).toEqual(["forecast", "humidity"])
    // off when the weight is 0: the query's own terms only
    const off = Bm25.build(tools, { ...Bm25.plainConfig, query: { ...Bm25.plainQuery, feedback: { docs: 1, terms: 2, weight: 0 } } })
    expect(Bm25.search(off, "weather forecast", 3).map((h) => h.tool)).toEqual(["forecast"])
  })

  it("provider evidence lifts the API of the provider that covers the whole request", () => {
    const tools = [
      tool("golf_rankings", { group: "Live Golf", api: "World Ranking", description: "world rankings of a year", category: "Sports" }),
      tool("golf_points", { group: "Live Golf", api: "Points", description: "fedexcup points per player", category: "Sports" }),
      tool("golf_scorecards", { group: "Live Golf", api: "Scorecards", description: "scorecards of a round", category: "Sports" }),
      tool("tennis_rankings", { group: "Tennis Live", api: "World Rankings", description: "world rankings tennis rankings", category: "Sports" })
    ]
    const query = "the world rankings and the scorecards"
    const apiOnly = Bm25.search(Bm25.build(tools, Bm25.plainConfig), query, 4).map((h) => h.tool)
    const withGroup = Bm25.search(
      Bm25.build(tools, { ...Bm25.plainConfig, group: { weight: 2, k1: 1.2, fields: Bm25.plainConfig.fields } }),
      query,
      4
    ).map((h) => h.tool)
    // alone, the tennis API matches "rankings" twice and wins; the golf provider's document matches the whole request,
    // which lifts both golf APIs the request names above it (and the provider's third API into the list)
    expect(apiOnly).toEqual(["tennis_rankings", "golf_scorecards", "golf_rankings"])
    expect(withGroup).toEqual(["golf_scorecards", "golf_rankings", "tennis_rankings", "golf_points"])
  })

  it("field weights move a document up or down as expected", () => {
    const tools = [
      tool("by_name", { api: "Weather Now", description: "current conditions" }),
      tool("by_description", { api: "Conditions", description: "the weather today" }),
      tool("other", { api: "Stock Price", description: "quotes" })
    ]
    const weighted = (api: number, description: number): Bm25.Config => ({
      ...Bm25.apiConfig,
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
    const bag = Bm25.search(Bm25.build(tools, Bm25.apiConfig), query, 2).map((h) => h.tool)
    const fused = Bm25.search(Bm25.build(tools, { ...Bm25.apiConfig, query: { ...Bm25.apiConfig.query, clauses: true, wholeWeight: 0.5, rrfK: 1 } }), query, 2)
      .map((h) => h.tool)
    // the defaults fuse sentences too (whole request weighted 1), with provider evidence lifting the weather provider:
    // the joke comes third, after the two weather APIs both rankings put first
    const byDefault = Bm25.search(Bm25.build(tools, Bm25.defaultConfig), query, 3).map((h) => h.tool)
    expect(Bm25.apiConfig.query.clauses).toBe(false)
    expect(bag).not.toContain("joke")
    expect(fused).toContain("joke")
    expect(byDefault).toEqual(["weather_one", "weather_two", "joke"])
    expect(Bm25.clauses(query)).toEqual(["Give me the weather forecast and weather alerts for Paris.", "Also tell me a joke."])
  })

  it("searchWith fuses the given whole-query terms with the sentence rankings as search does", () => {
    const tools = [
      tool("weather", { group: "Weather Hub", api: "Forecast", description: "weather forecast weather alerts" }),
      tool("joke", { group: "Jokes", api: "Random Joke", description: "a joke" }),
      ...words.map((w) => tool(`filler_${w}`, { description: `${w} service` }))
    ]
    const index = Bm25.build(tools, Bm25.defaultConfig)
    const query = "Give me the weather forecast for Paris. Also tell me a joke."
    expect(Bm25.searchWith(index, query, Bm25.queryTerms(index, query), 5)).toEqual(Bm25.search(index, query, 5))
    // other whole-query terms change the whole query's ranking only: the sentences still bring the joke in
    const onlyWeather = Bm25.queryTerms(index, "weather forecast")
    const hits = Bm25.searchWith(index, query, onlyWeather, 3).map((h) => h.tool)
    expect(hits[0]).toBe("weather")
    expect(hits).toContain("joke")
    expect(Bm25.searchTerms(index, onlyWeather, 3).map((h) => h.tool)).not.toContain("joke")
    expect(Bm25.searchWith(index, "weather forecast", onlyWeather, 3)).toEqual(Bm25.searchTerms(index, onlyWeather, 3))
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

  it.effect("a repeated query gets the memoised answer: equal to a fresh ranking, per k, and frozen", () =>
    Effect.gen(function*() {
      const retriever = yield* Retriever
      const index = Bm25.build(library.tools, Bm25.defaultConfig)
      const fresh = (query: string, k: number) => Bm25.search(index, query, k).map((h) => ({ tool: h.tool, score: h.score }))
      const first = yield* retriever.search(["city weather forecast", "a joke or a stock"], 2)
      const again = yield* retriever.search(["a joke or a stock", "city weather forecast"], 2)
      expect(again[0]).toBe(first[1])
      expect(again[1]).toBe(first[0])
      expect(first).toEqual([fresh("city weather forecast", 2), fresh("a joke or a stock", 2)])
      // another k is another answer, never a cut or a stretch of the memoised one
      const one = yield* retriever.search(["a joke or a stock"], 1)
      expect(one).toEqual([fresh("a joke or a stock", 1)])
      expect(Object.isFrozen(first[0])).toBe(true)
      expect(Object.isFrozen(first[0]?.[0])).toBe(true)
    }).pipe(Effect.provide(layer)))
})
