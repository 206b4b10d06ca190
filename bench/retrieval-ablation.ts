/**
 * What each part of the tuned BM25 is worth: NDCG@5 per file with one feature changed at a time, plus the
 * plain baseline, in one run on the same library. Run: `npx tsx bench/retrieval-ablation.ts` (about a minute).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { dataPath } from "../src/DataPath.ts"
import * as Stats from "../src/math/Stats.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Document from "../src/retrieval/Document.ts"

const tuned = Bm25.defaultConfig

/** The rows: the baseline, the tuned default, then the default with one thing changed. */
const variants: ReadonlyArray<readonly [string, Bm25.Config]> = [
  ["plain BM25 (issue 4 baseline)", Bm25.plainConfig],
  ["tuned (default)", tuned],
  ["- stop words", { ...tuned, text: { ...tuned.text, stopWords: false } }],
  ["- stemming", { ...tuned, text: { ...tuned.text, stem: false } }],
  ["- identifier splitting", { ...tuned, text: { ...tuned.text, splitIdentifiers: false, keepCompounds: false } }],
  ["- kept compounds", { ...tuned, text: { ...tuned.text, keepCompounds: false } }],
  ["+ numbers dropped", { ...tuned, text: { ...tuned.text, dropNumbers: true } }],
  ["- field weights (all 1, b 0.75)", { ...tuned, fields: tuned.fields.map((f) => ({ ...f, weight: 1, b: 0.75 })) }],
  ["- parameters field", { ...tuned, fields: tuned.fields.filter((f) => f.name !== "parameters") }],
  ["one merged field, tuned text", { ...tuned, fields: [{ name: "all", parts: Document.fieldNames, weight: 1, b: 0.75 }] }],
  ["+ query idf^0.5", { ...tuned, query: { ...tuned.query, idfExponent: 0.5 } }],
  ["+ clause fusion (whole 1, rrf 5)", { ...tuned, query: { ...tuned.query, clauses: true, wholeWeight: 1, rrfK: 5 } }],
  ["+ clause fusion (whole 2, rrf 20)", { ...tuned, query: { ...tuned.query, clauses: true, wholeWeight: 2, rrfK: 20 } }]
]

const program = Effect.gen(function*() {
  const files = ["G1_instruction", "G1_category", "G2_instruction", "G3_instruction"].map((name) =>
    dataPath("stabletoolbench", "solvable_queries", "test_instruction", `${name}.json`)
  )
  const setup = yield* Benchmark.load(dataPath("toolenv2404", "toolenv2404_filtered"), files)
  const sets = setup.sets
  const short = (name: string) => name.replace("_instruction.json", "I").replace("_category.json", "C")
  const heldOut = (q: Benchmark.JudgedQuery) => !Benchmark.isTuningQuery(q.id)
  const header = ["configuration", ...sets.map((s) => `${short(s.name)} NDCG@5`), "G1C[held-out] NDCG@5", "p50 ms"]
  const rows: Array<ReadonlyArray<string>> = []
  const built = new Map<string, Bm25.Index>()
  for (const [label, config] of variants) {
    // reuse a tokenised index when only numbers or query options differ
    const shapeKey = JSON.stringify([config.text, config.fields.map((f) => f.parts)])
    const existing = built.get(shapeKey)
    const index = existing !== undefined ? Bm25.reweight(existing, config) : Bm25.build(setup.tools, config)
    if (existing === undefined) built.set(shapeKey, index)
    const rankings = sets.map((set) => Benchmark.rankSync(set, (q) => Bm25.search(index, q, 10).map((h) => h.tool)))
    const results = sets.map((set, i) => Benchmark.summarize(set, rankings[i] ?? []))
    const g1c = sets.findIndex((s) => s.name === Benchmark.tuningSplit.file)
    const held = g1c < 0 ? undefined : Benchmark.summarizeSubset(sets[g1c] as Benchmark.QuerySet, rankings[g1c] ?? [], "held-out", heldOut)
    const p50 = Stats.p50(rankings.flat().map((r) => r.ms))
    rows.push([label, ...results.map((r) => r.ndcg5.toFixed(1)), held === undefined ? "-" : held.ndcg5.toFixed(1), p50.toFixed(3)])
  }
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] as string).length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] as number) : cell.padStart(widths[c] as number))).join("  ")
  yield* Console.log(`library: ${setup.tools.length} APIs; NDCG@5 in percent; G1C[held-out] = the G1_category queries not used for tuning`)
  yield* Console.log([line(header), ...rows.map(line)].join("\n"))
})

NodeRuntime.runMain(program)
