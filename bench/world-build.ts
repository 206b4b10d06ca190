/**
 * Time and memory to build the generated 50k-interface world with G_dep, against the ≤ 10 s target, plus the
 * per-stage split (endpoints, G_dep, adjacency) and the first entity-table builds. Each repetition is a fresh
 * build in the same process (module caches warm after the first).
 * Run: `node --expose-gc --import tsx bench/world-build.ts [reps]` (or `npx tsx bench/world-build.ts`, without the retained size).
 */
import * as DepGraph from "../src/toolenv/DepGraph.ts"
import { generate } from "../src/toolenv/world/Generate.ts"
import * as Graph from "../src/toolenv/world/Graph.ts"
import * as World from "../src/toolenv/world/World.ts"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { Argument } from "effect/cli"

const { reps } = await BenchFlags.parse("world-build", "Time and memory to build the generated 50k-interface world with G_dep", {
  reps: Argument.Int("reps").pipe(Argument.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 100 })), Argument.withDescription("repetitions (1–100)"), Argument.withDefault(3))
})
const targetMs = 10_000
const cpuMs = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`

const gc = (globalThis as { gc?: () => void }).gc
const rssBefore = process.memoryUsage().rss
const walls: Array<number> = []
let world: World.World | undefined
let retained = ""
for (let r = 0; r < reps; r++) {
  world = undefined
  gc?.()
  const t0 = performance.now()
  const c0 = cpuMs()
  world = World.make({ seed: World.defaultSeed })
  walls.push(performance.now() - t0)
  console.log(`build ${r + 1}: ${walls[r]?.toFixed(0)} ms wall, ${(cpuMs() - c0).toFixed(0)} ms CPU (all threads, GC included)`)
  if (r === 0) {
    const peak = process.memoryUsage().rss
    gc?.()
    const m = process.memoryUsage()
    retained = `RSS ${mb(peak)} right after the first build (${mb(rssBefore)} before), ${gc === undefined ? "" : `${mb(m.rss)} RSS / ${mb(m.heapUsed)} heap retained after a full GC`}`
  }
}
const best = Math.min(...walls)
console.log(`\nbest of ${reps}: ${best.toFixed(0)} ms for ${world?.library.tools.length} interfaces; target ${targetMs} ms → ratio best/target = ${(best / targetMs).toFixed(2)} (≤ 1 meets it)`)
console.log(`memory: ${retained}${gc === undefined ? " (run with node --expose-gc --import tsx for the retained size)" : ""}`)

// Stages, timed separately on one more build.
let t = performance.now()
const tools = generate({ seed: World.defaultSeed })
const genMs = performance.now() - t
t = performance.now()
const edges = Graph.build(tools, World.defaultSeed)
const graphMs = performance.now() - t
t = performance.now()
const graph = DepGraph.make(edges)
const adjMs = performance.now() - t
console.log(`stages: endpoints ${genMs.toFixed(0)} ms, G_dep edges ${graphMs.toFixed(0)} ms (${edges.length} edges), adjacency ${adjMs.toFixed(0)} ms (${graph.edges.length} kept)`)

// Entity tables build lazily on first use; the biggest ones, timed.
if (world !== undefined) {
  const u = world.universe
  for (const type of ["team", "player", "song", "comment", "product"]) {
    const t1 = performance.now()
    const n = u.size(type)
    u.search(type, u.name(type, 0), 5)
    console.log(`entity table ${type}: ${n} entities + name index in ${(performance.now() - t1).toFixed(0)} ms`)
  }
  console.log(`RSS with those tables: ${mb(process.memoryUsage().rss)}`)
}
