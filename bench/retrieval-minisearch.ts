/**
 * minisearch (defaults, one document per API with our document fields) against our BM25, plain and tuned, on the
 * same library and queries in one run: NDCG@5 per file and the latency ratio.
 * Run: `npx tsx bench/retrieval-minisearch.ts [--limit N]` (minisearch takes about a second per query).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import MiniSearch from "minisearch"
import { dataPath } from "../src/io/DataPath.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Document from "../src/retrieval/Document.ts"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { Flag } from "effect/cli"

const flags = await BenchFlags.parse("retrieval-minisearch", "minisearch against our BM25 (plain and tuned) on the same library and queries", {
  limit: RunConfig.intFlag("limit", { minimum: 1, maximum: 1_000_000 }, "at most this many queries per file, evenly spaced (default all)").pipe(Flag.optional)
})
/** At most this many queries per file (evenly spaced), for a quicker run; default all. */
const limit = flags.limit._tag === "Some" ? flags.limit.value : Infinity

const files = Benchmark.testQueryFiles.map((parts) => dataPath(...parts))

const sample = (set: Benchmark.QuerySet): Benchmark.QuerySet => {
  if (set.queries.length <= limit) return set
  const step = set.queries.length / limit
  return { ...set, queries: Array.from({ length: limit }, (_, i) => set.queries[Math.floor(i * step)] as Benchmark.JudgedQuery) }
}

const timedMs = <A>(f: () => A): [A, number] => {
  const start = performance.now()
  const value = f()
  return [value, performance.now() - start]
}

const program = Effect.gen(function*() {
  const setup = yield* Benchmark.load(dataPath("toolenv2404", "toolenv2404_filtered"), files)
  const sets = setup.sets.map(sample)
  yield* Console.log(`library: ${setup.tools.length} APIs; queries per file: ${sets.map((s) => `${s.name} ${s.queries.length}`).join(", ")}`)

  const [mini, miniBuildMs] = timedMs(() => {
    const engine = new MiniSearch<{ id: number } & Document.ToolDocument["fields"]>({ fields: [...Document.fieldNames] })
    engine.addAll(setup.tools.map((tool, id) => ({ id, ...Document.fromTool(tool).fields })))
    return engine
  })
  const [plain, plainBuildMs] = timedMs(() => Bm25.build(setup.tools, Bm25.plainConfig))
  const [tuned, tunedBuildMs] = timedMs(() => Bm25.build(setup.tools, Bm25.defaultConfig))
  yield* Console.log(
    `build ms: minisearch ${miniBuildMs.toFixed(0)}, bm25-plain ${plainBuildMs.toFixed(0)}, bm25 ${tunedBuildMs.toFixed(0)}`
  )
  const names = setup.tools.map((t) => t.name as string)
  const rankers: ReadonlyArray<readonly [string, (q: string) => ReadonlyArray<string>]> = [
    ["minisearch", (q) => mini.search(q).slice(0, 10).map((r) => names[r.id as number] as string)],
    ["bm25-plain", (q) => Bm25.search(plain, q, 10).map((h) => h.tool)],
    ["bm25", (q) => Bm25.search(tuned, q, 10).map((h) => h.tool)]
  ]
  const rows: Array<ReadonlyArray<string>> = []
  const header = ["file", "engine", "NDCG@1", "NDCG@5", "R@5", "R@10", "p50 ms", "mean ms", "p95 ms"]
  const ratios: Array<string> = []
  const report = (label: string, results: ReadonlyArray<readonly [string, Benchmark.FileResult]>): void => {
    for (const [name, r] of results) {
      rows.push([label, name, r.ndcg1.toFixed(1), r.ndcg5.toFixed(1), r.recall5.toFixed(1), r.recall10.toFixed(1), r.p50_ms.toFixed(3), r.mean_ms.toFixed(3), r.p95_ms.toFixed(3)])
    }
    const m = results[0]?.[1]
    const ours = results[2]?.[1]
    if (m !== undefined && ours !== undefined) {
      ratios.push(
        `${label}: NDCG@5 bm25 ${ours.ndcg5.toFixed(1)} vs minisearch ${m.ndcg5.toFixed(1)}; latency minisearch/bm25 = ${(m.p50_ms / ours.p50_ms).toFixed(0)}x (p50), ${(m.mean_ms / ours.mean_ms).toFixed(0)}x (mean)`
      )
    }
  }
  for (const set of sets) {
    const rankings = rankers.map(([name, rank]) => [name, Benchmark.rankSync(set, rank)] as const)
    yield* Console.error(`${set.name}: done`)
    report(set.name, rankings.map(([name, r]) => [name, Benchmark.summarize(set, r)] as const))
    if (set.name === Benchmark.tuningSplit.file) {
      // the G1_category queries the tuner never saw, from the same rankings
      const heldOut = (q: Benchmark.JudgedQuery) => !Benchmark.isTuningQuery(q.id)
      report("G1_category[held-out]", rankings.map(([name, r]) => [name, Benchmark.summarizeSubset(set, r, "held-out", heldOut)] as const))
    }
  }
  yield* Console.log(Benchmark.formatTable(header, rows, 2))
  yield* Console.log(`\n${ratios.join("\n")}`)
  yield* Console.log("(latency: one query at a time, the three engines in the same process and harness; p50 / mean / p95 over each file's queries)")
})

NodeRuntime.runMain(program)
