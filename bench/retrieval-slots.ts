/**
 * The agent's own use of the retriever: one short query per capability slot over the generated world (the scripted
 * teacher's three phrasings of each gold tool of validation tasks), top-k = 3. Checks that what helps on long
 * ToolBench requests does not hurt slot search. Run: `npx tsx bench/retrieval-slots.ts [--tasks 200]`.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import type { ToolName } from "../src/domain/Ids.ts"
import type { ToolSpec } from "../src/domain/Tool.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import { defaultTopK } from "../src/retrieval/Retriever.ts"
import { firstSentence } from "../src/agent/Teacher.ts"
import * as Tasks from "../src/toolenv/world/Tasks.ts"
import * as World from "../src/toolenv/world/World.ts"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { Flag } from "effect/cli"

const { tasks: taskCount } = await BenchFlags.parse("retrieval-slots", "The agent's slot searches over the generated world, top-k = 3", {
  tasks: RunConfig.flags.tasks.pipe(Flag.withDescription("validation tasks whose gold tools are searched for"), Flag.withDefault(200))
})

/** The teacher's phrasings of a slot bound to a tool (src/agent/Teacher.ts `searcher`). */
const phrasings = (spec: ToolSpec): ReadonlyArray<string> => [
  firstSentence(spec.description),
  `${spec.apiName.replace(/[_-]+/g, " ")} ${spec.group}`,
  `${spec.group} ${spec.category} ${firstSentence(spec.description)}`
]

const program = Effect.gen(function*() {
  const world = World.make({})
  const tasks = Tasks.make(world).take({ split: "validation", count: taskCount })
  const queries: Array<Benchmark.JudgedQuery> = []
  for (const task of tasks) {
    for (const tool of new Set(task.gold.map((g) => g.tool as string))) {
      const spec = world.library.get(tool as ToolName)
      if (spec === undefined) continue
      phrasings(spec).forEach((query, i) => queries.push({ id: `${task.id}:${tool}:${i}`, query, matched: { relevant: [new Set([tool])], unmatched: [] } }))
    }
  }
  const set: Benchmark.QuerySet = {
    name: "generated slots",
    path: "",
    queries,
    report: { source: "generated", loaded: world.library.tools.length, skipped: 0, issues: [], issueCount: 0 }
  }
  yield* Console.log(`generated world: ${world.library.tools.length} tools; ${tasks.length} validation tasks; ${queries.length} slot queries`)
  const rows: Array<string> = []
  for (const [label, config] of [["round 1 (Bm25.apiConfig)", Bm25.apiConfig], ["default (Bm25.defaultConfig)", Bm25.defaultConfig]] as const) {
    const index = Bm25.build(world.library.tools, config)
    const rankings = Benchmark.rankSync(set, (q) => Bm25.search(index, q, 10).map((h) => h.tool))
    const result = Benchmark.summarize(set, rankings)
    const recallK = 100 * rankings.filter((r, i) => r.ranked.slice(0, defaultTopK).some((t) => set.queries[i]?.matched.relevant[0]?.has(t))).length / rankings.length
    rows.push(`${label.padEnd(30)} hit@1 ${result.ndcg1.toFixed(1)}  recall@${defaultTopK} ${recallK.toFixed(1)}  recall@5 ${result.recall5.toFixed(1)}  p50 ${result.p50_ms.toFixed(3)} ms`)
  }
  yield* Console.log(rows.join("\n"))
})

NodeRuntime.runMain(program)
