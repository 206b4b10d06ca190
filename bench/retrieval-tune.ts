/**
 * Tunes the BM25 configuration on a held-out part of G1_category (never on the queries reported), by coordinate
 * ascent. `--round 1`: tokeniser variants and per-API fields (what `Bm25.apiConfig` came from); `--round 2` (default):
 * provider evidence, API fields again, and query handling, on the tuning queries plus multi-intent requests made from
 * them (`Benchmark.multiIntent`, `Benchmark.singleIntents`); objective ½ · single-provider + ½ · mean of the multi-intent sets. Run: `npx tsx bench/retrieval-tune.ts [--round 2] [--fraction 0.667] [--seed 4]`.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import { dataPath } from "../src/io/DataPath.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Document from "../src/retrieval/Document.ts"
import * as Text from "../src/retrieval/Tokenize.ts"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { Flag } from "effect/cli"

const flags = await BenchFlags.parse("retrieval-tune", "Tune the BM25 configuration on a held-out part of G1_category by coordinate ascent", {
  fraction: RunConfig.numberFlag("fraction", { minimum: 0, maximum: 1, exclusiveMinimum: true }, "fraction of G1_category queries used for tuning").pipe(
    Flag.withDefault(Benchmark.tuningSplit.fraction)
  ),
  seed: RunConfig.flags.seed.pipe(Flag.withDescription("seed of the tuning split's hash"), Flag.withDefault(Benchmark.tuningSplit.seed)),
  round: Flag.Literals("round", ["1", "2"]).pipe(Flag.withDescription("1: tokeniser variants and per-API fields; 2: provider evidence and query handling"), Flag.withDefault("2")),
  start: RunConfig.intFlag("start", { minimum: 0, maximum: 2 }, "round 2: run only start 1 or 2 (0: both)").pipe(Flag.withDefault(0))
})
/** Fraction of G1_category queries (by a seeded hash of the query id) used for tuning; the rest is reported. */
const fraction = flags.fraction
const seed = flags.seed
const round = Number(flags.round)
const isTuning = (queryId: string): boolean => Benchmark.isTuningQuery(queryId, fraction, seed)

/** The grid of each coordinate. */
const grid = {
  k1: [0.6, 0.9, 1.2, 1.6, 2, 3],
  weight: [0, 0.25, 0.5, 1, 2, 4],
  b: [0.25, 0.5, 0.75, 1],
  idfExponent: [0, 0.25, 0.5, 1],
  wholeWeight: [0.5, 1, 2],
  rrfK: [5, 20, 60],
  groupWeight: [0, 0.5, 1, 2, 3, 4, 6, 8, 12],
  members: [1, 2, 3, 5],
  clauseRrfK: [1, 2, 5, 10, 20],
  feedback: [
    ...[3, 10].flatMap((docs) => [5, 20].flatMap((terms) => [0.25, 0.5, 1].map((weight) => ({ docs, terms, weight }))))
  ]
}
/** A change is kept only when it improves the objective by more than this (points), so noise does not drive it. */
const minGain = 0.25

/** Tokeniser variants tried in round 1 (stop words always on: they are the largest single gain). */
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

/** The objective of one query set: mean of NDCG@5 and Recall@10 (percent). */
const objectiveOf = (index: Bm25.Index, set: Benchmark.QuerySet): number =>
  Benchmark.objectiveOf(Benchmark.evaluateSync(set, (q) => Bm25.search(index, q, 10).map((h) => h.tool)))

/** The objective of several sets (`Benchmark.combinedObjective`: ½ · the first + ½ · the mean of the others). */
const objective = (index: Bm25.Index, sets: ReadonlyArray<Benchmark.QuerySet>): number =>
  Benchmark.combinedObjective(sets.map((set) => objectiveOf(index, set)))

const describeFields = (fields: ReadonlyArray<Bm25.FieldSpec>): Array<string> => fields.map((f) => `${f.name} w=${f.weight} b=${f.b}`)
const describeConfig = (config: Bm25.Config): string =>
  JSON.stringify({
    k1: config.k1,
    text: config.text,
    query: config.query,
    fields: describeFields(config.fields),
    ...(config.group === undefined ? {} : { group: { weight: config.group.weight, k1: config.group.k1, fields: describeFields(config.group.fields) } })
  })

const setField = (fields: ReadonlyArray<Bm25.FieldSpec>, i: number, patch: Partial<Bm25.FieldSpec>): ReadonlyArray<Bm25.FieldSpec> =>
  fields.map((f, j) => (j === i ? { ...f, ...patch } : f))

/** Coordinate ascent from `base.config` over the coordinates `moves` proposes; a move is kept when it gains > minGain. */
const ascend = (
  base: Bm25.Index,
  sets: ReadonlyArray<Benchmark.QuerySet>,
  moves: (config: Bm25.Config) => ReadonlyArray<readonly [string, Bm25.Config]>,
  log: (line: string) => void = () => {}
): { config: Bm25.Config; score: number } => {
  let config = base.config
  let index = base
  let best = objective(base, sets)
  log(`start ${best.toFixed(2)}`)
  for (let pass = 0; pass < 3; pass++) {
    const before = best
    // moves are proposed from the config at the start of each coordinate, so a kept move shapes the next ones
    const labels = moves(config).map(([label]) => label)
    for (const label of labels) {
      const candidate = moves(config).find(([l]) => l === label)?.[1]
      if (candidate === undefined) continue
      const trial = Bm25.reweight(index, candidate)
      const score = objective(trial, sets)
      if (score > best + minGain) {
        best = score
        config = candidate
        index = trial
        log(`  pass ${pass + 1}: ${label} → ${score.toFixed(2)}`)
      }
    }
    if (best === before) break
  }
  return { config, score: best }
}

/** Round 1's coordinates: k1, each field's weight and b, idf exponent, sentence fusion. */
const roundOneMoves = (config: Bm25.Config): Array<readonly [string, Bm25.Config]> => [
  ...grid.k1.map((k1) => [`k1=${k1}`, { ...config, k1 }] as const),
  ...config.fields.flatMap((f, i) => [
    ...grid.weight.map((weight) => [`${f.name} w=${weight}`, { ...config, fields: setField(config.fields, i, { weight }) }] as const),
    ...grid.b.map((b) => [`${f.name} b=${b}`, { ...config, fields: setField(config.fields, i, { b }) }] as const)
  ]),
  ...grid.idfExponent.map((idfExponent) => [`idf^${idfExponent}`, { ...config, query: { ...config.query, idfExponent } }] as const),
  ...grid.wholeWeight.flatMap((wholeWeight) =>
    grid.rrfK.map((rrfK) => [`clauses whole=${wholeWeight} rrf=${rrfK}`, { ...config, query: { ...config.query, clauses: true, wholeWeight, rrfK } }] as const)
  ),
  ["clauses off", { ...config, query: { ...config.query, clauses: false } }] as const
]

const allMembers = ({ members: _, ...group }: Bm25.GroupConfig): Bm25.GroupConfig => group

/** Round 2's coordinates: λ, the provider index's k1 / weights / b, the API index again, idf exponent, clauses, feedback. */
const roundTwoMoves = (config: Bm25.Config): Array<readonly [string, Bm25.Config]> => {
  const group = config.group
  if (group === undefined) return []
  const withGroup = (patch: Partial<Bm25.GroupConfig>): Bm25.Config => ({ ...config, group: { ...group, ...patch } })
  const { feedback: _, ...noFeedback } = config.query
  return [
    ...grid.groupWeight.map((weight) => [`λ=${weight}`, withGroup({ weight })] as const),
    ...grid.members.map((members) => [`members=${members}`, withGroup({ members })] as const),
    ["members=all", { ...config, group: allMembers(group) }] as const,
    ...grid.k1.map((k1) => [`group k1=${k1}`, withGroup({ k1 })] as const),
    ...group.fields.flatMap((f, i) => [
      ...grid.weight.map((weight) => [`group ${f.name} w=${weight}`, withGroup({ fields: setField(group.fields, i, { weight }) })] as const),
      ...grid.b.map((b) => [`group ${f.name} b=${b}`, withGroup({ fields: setField(group.fields, i, { b }) })] as const)
    ]),
    ...grid.k1.map((k1) => [`api k1=${k1}`, { ...config, k1 }] as const),
    ...config.fields.flatMap((f, i) => [
      ...grid.weight.map((weight) => [`api ${f.name} w=${weight}`, { ...config, fields: setField(config.fields, i, { weight }) }] as const),
      ...grid.b.map((b) => [`api ${f.name} b=${b}`, { ...config, fields: setField(config.fields, i, { b }) }] as const)
    ]),
    ...grid.idfExponent.map((idfExponent) => [`idf^${idfExponent}`, { ...config, query: { ...config.query, idfExponent } }] as const),
    ...grid.wholeWeight.flatMap((wholeWeight) =>
      grid.clauseRrfK.map((rrfK) => [`clauses whole=${wholeWeight} rrf=${rrfK}`, { ...config, query: { ...config.query, clauses: true, wholeWeight, rrfK } }] as const)
    ),
    ["clauses off", { ...config, query: { ...config.query, clauses: false } }] as const,
    ...grid.feedback.map((feedback) => [`feedback ${JSON.stringify(feedback)}`, { ...config, query: { ...config.query, feedback } }] as const),
    ["feedback off", { ...config, query: noFeedback }] as const
  ]
}

/** Every set's objective and metrics, for the log. */
const report = (label: string, index: Bm25.Index, sets: ReadonlyArray<Benchmark.QuerySet>) =>
  Console.log(`${label}: ${sets.map((s) => `${s.name} ${objectiveOf(index, s).toFixed(2)}`).join(" · ")} · objective ${objective(index, sets).toFixed(2)}`)

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
  if (round === 1) {
    let winner: { config: Bm25.Config; score: number; index: Bm25.Index } | undefined
    for (const text of textVariants) {
      const start: Bm25.Config = { k1: 1.2, fields: startFields, text, query: Bm25.plainQuery }
      const base = Bm25.build(setup.tools, start)
      const { config, score } = ascend(base, [tuning], roundOneMoves)
      const index = Bm25.reweight(base, config)
      yield* Console.log(`objective tune ${score.toFixed(2)}  held-out ${objectiveOf(index, heldOut).toFixed(2)}  ${describeConfig(config)}`)
      if (winner === undefined || score > winner.score) winner = { config, score, index }
    }
    if (winner === undefined) return
    yield* Console.log(`\nchosen (best tuning objective): ${describeConfig(winner.config)}`)
    const rows = [tuning, heldOut].map((set) => [set.name, Benchmark.evaluateSync(set, (q) => Bm25.search(winner.index, q, 10).map((h) => h.tool))] as const)
    yield* Console.log(Benchmark.table(rows))
    return
  }
  // Round 2: start from round 1's API configuration with neutral provider evidence (λ 1, every field weight 1, b 0.75).
  // Multi-intent sets: whole requests of 2 and 3 providers, and single-API sentences of 2 and 3 providers (the shape
  // of ToolBench's I2/I3 requests: one or two APIs per provider).
  const tokenizer = Text.makeTokenizer(Bm25.apiConfig.text)
  const tuningSets = Benchmark.tuningSets(tuning, setup.tools, tokenizer.tokens, Bm25.clauses)
  const heldOutSets = Benchmark.tuningSets(heldOut, setup.tools, tokenizer.tokens, Bm25.clauses)
  yield* Console.log(`tuning sets: ${tuningSets.map((s) => `${s.name} (${s.queries.length})`).join(", ")}`)
  // Two starting points (coordinate ascent stops in a local optimum): neutral provider evidence, and a strong one
  // with sentence fusion on. `--start 1` or `--start 2` runs one of them.
  const neutral: Bm25.GroupConfig = { weight: 1, k1: 1.2, fields: startFields }
  const starts: ReadonlyArray<Bm25.Config> = [
    { ...Bm25.apiConfig, query: { ...Bm25.apiConfig.query, feedback: { docs: 3, terms: 5, weight: 0 } }, group: neutral },
    {
      ...Bm25.apiConfig,
      query: { ...Bm25.apiConfig.query, clauses: true, wholeWeight: 1, rrfK: 5, feedback: { docs: 3, terms: 5, weight: 0 } },
      group: { ...neutral, weight: 3 }
    }
  ]
  const only = flags.start
  const base = Bm25.build(setup.tools, starts[0] as Bm25.Config)
  const roundOne = Bm25.reweight(base, Bm25.apiConfig)
  yield* report("round 1 (Bm25.apiConfig), tuning sets", roundOne, tuningSets)
  yield* report("round 1 (Bm25.apiConfig), held-out sets", roundOne, heldOutSets)
  let winner: { config: Bm25.Config; score: number } | undefined
  for (const [i, start] of starts.entries()) {
    if (only !== 0 && only !== i + 1) continue
    const started = performance.now()
    yield* Console.log(`\nstart ${i + 1}: ${describeConfig(start)}`)
    const result = ascend(Bm25.reweight(base, start), tuningSets, roundTwoMoves, (line) => console.log(line))
    yield* Console.log(`start ${i + 1} reached ${result.score.toFixed(2)} in ${((performance.now() - started) / 1000).toFixed(0)} s: ${describeConfig(result.config)}`)
    if (winner === undefined || result.score > winner.score) winner = result
  }
  if (winner === undefined) return
  yield* Console.log(`\nchosen (best tuning objective): ${describeConfig(winner.config)}`)
  const chosen = Bm25.reweight(base, winner.config)
  yield* report("round 2, tuning sets", chosen, tuningSets)
  yield* report("round 2, held-out sets", chosen, heldOutSets)
})

NodeRuntime.runMain(program)
