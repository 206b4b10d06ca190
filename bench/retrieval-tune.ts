/**
 * Tunes the BM25 configuration on a held-out part of G1_category (never on the queries reported), by
 * coordinate ascent. Run: `npx tsx bench/retrieval-tune.ts [--fraction 0.667] [--seed 4]` (minutes on 2 cores).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { dataPath } from "../src/DataPath.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Document from "../src/retrieval/Document.ts"

const argument = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`)
  const value = at < 0 ? fallback : Number(process.argv[at + 1])
  return Number.isFinite(value) ? value : fallback
}

/** Fraction of G1_category queries (by a seeded hash of the query id) used for tuning; the rest is reported. */
const fraction = argument("fraction", Benchmark.tuningSplit.fraction)
const seed = argument("seed", Benchmark.tuningSplit.seed)
const isTuning = (queryId: string): boolean => Benchmark.isTuningQuery(queryId, fraction, seed)

/** The grid of each coordinate. */
const grid = {
  k1: [0.6, 0.9, 1.2, 1.6, 2, 3],
  weight: [0, 0.25, 0.5, 1, 2, 4],
  b: [0.25, 0.5, 0.75, 1],
  idfExponent: [0, 0.25, 0.5, 1],
  wholeWeight: [0.5, 1, 2],
  rrfK: [5, 20, 60]
}
/** A change is kept only when it improves the objective by more than this (points), so noise does not drive it. */
const minGain = 0.25

/** Tokeniser variants tried (stop words always on: they are the largest single gain). */
const textVariants: ReadonlyArray<Bm25.Config["text"]> = [
  { splitIdentifiers: true, keepCompounds: false, stopWords: true, stem: true },
  { splitIdentifiers: true, keepCompounds: true, stopWords: true, stem: true },
  { splitIdentifiers: true, keepCompounds: false, stopWords: true, stem: false },
  { splitIdentifiers: true, keepCompounds: true, stopWords: true, stem: false },
  { splitIdentifiers: false, keepCompounds: false, stopWords: true, stem: true },
  { splitIdentifiers: false, keepCompounds: false, stopWords: true, stem: false }
]

/** Six separate fields, weight 1 and b 0.75 each: the starting point. */
const startFields: ReadonlyArray<Bm25.FieldSpec> = Document.fieldNames.map((name) => ({ name, parts: [name], weight: 1, b: 0.75 }))

/** The objective: mean of NDCG@5 and Recall@10 (percent) on the tuning queries. */
const objective = (index: Bm25.Index, set: Benchmark.QuerySet): number => {
  const result = Benchmark.evaluateSync(set, (q) => Bm25.search(index, q, 10).map((h) => h.tool))
  return (result.ndcg5 + result.recall10) / 2
}

const describeConfig = (config: Bm25.Config): string =>
  JSON.stringify({
    k1: config.k1,
    text: config.text,
    query: config.query,
    fields: config.fields.map((f) => `${f.name} w=${f.weight} b=${f.b}`)
  })

const tune = (base: Bm25.Index, set: Benchmark.QuerySet): { config: Bm25.Config; score: number } => {
  let config = base.config
  let best = objective(base, set)
  const attempt = (candidate: Bm25.Config): void => {
    const score = objective(Bm25.reweight(base, candidate), set)
    if (score > best + minGain) {
      best = score
      config = candidate
    }
  }
  const setField = (c: Bm25.Config, i: number, patch: Partial<Bm25.FieldSpec>): Bm25.Config => ({
    ...c,
    fields: c.fields.map((f, j) => (j === i ? { ...f, ...patch } : f))
  })
  for (let round = 0; round < 3; round++) {
    const before = best
    for (const k1 of grid.k1) attempt({ ...config, k1 })
    for (let i = 0; i < config.fields.length; i++) {
      for (const weight of grid.weight) attempt(setField(config, i, { weight }))
      for (const b of grid.b) attempt(setField(config, i, { b }))
    }
    for (const idfExponent of grid.idfExponent) attempt({ ...config, query: { ...config.query, idfExponent } })
    for (const wholeWeight of grid.wholeWeight) {
      for (const rrfK of grid.rrfK) attempt({ ...config, query: { ...config.query, clauses: true, wholeWeight, rrfK } })
    }
    attempt({ ...config, query: { ...config.query, clauses: false } })
    if (best === before) break
  }
  return { config, score: best }
}

const program = Effect.gen(function*() {
  const setup = yield* Benchmark.load(dataPath("toolenv2404", "toolenv2404_filtered"), [
    dataPath("stabletoolbench", "solvable_queries", "test_instruction", "G1_category.json")
  ])
  const all = setup.sets[0] as Benchmark.QuerySet
  const tuning = Benchmark.subset(all, "G1_category[tune]", (q) => isTuning(q.id))
  const heldOut = Benchmark.subset(all, "G1_category[rest]", (q) => !isTuning(q.id))
  yield* Console.log(
    `tuning on ${tuning.queries.length} of ${all.queries.length} G1_category queries (hash seed ${seed}, fraction ${fraction}); ${heldOut.queries.length} held out; objective = (NDCG@5 + Recall@10) / 2`
  )
  let winner: { config: Bm25.Config; score: number; index: Bm25.Index } | undefined
  for (const text of textVariants) {
    const start: Bm25.Config = { k1: 1.2, fields: startFields, text, query: Bm25.plainQuery }
    const base = Bm25.build(setup.tools, start)
    const { config, score } = tune(base, tuning)
    const index = Bm25.reweight(base, config)
    const rest = objective(index, heldOut)
    yield* Console.log(`objective tune ${score.toFixed(2)}  held-out ${rest.toFixed(2)}  ${describeConfig(config)}`)
    if (winner === undefined || score > winner.score) winner = { config, score, index }
  }
  if (winner === undefined) return
  yield* Console.log(`\nchosen (best tuning objective): ${describeConfig(winner.config)}`)
  const rows = [tuning, heldOut].map((set) => [set.name, Benchmark.evaluateSync(set, (q) => Bm25.search(winner.index, q, 10).map((h) => h.tool))] as const)
  yield* Console.log(Benchmark.table(rows))
})

NodeRuntime.runMain(program)
