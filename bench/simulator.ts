/**
 * Simulated calls per second, in process, deterministic L3, one core: the gold calls of 300 sampled tasks (a realistic
 * mix of searches, details, lists, series, actions, conversions, utilities) replayed episode by episode with 5% faults,
 * through the synchronous core and through the Effect `Episode.execute` path, side by side, against the 100k/s target.
 * Run: `npx tsx bench/simulator.ts [seconds-per-measurement]`.
 */
import { Effect } from "effect"
import * as os from "node:os"
import type { ToolCall } from "../src/domain/Call.ts"
import type { TaskId } from "../src/domain/Ids.ts"
import type { Json } from "../src/domain/Json.ts"
import * as Refs from "../src/protocol/Refs.ts"
import { Engine } from "../src/toolenv/simulator/Engine.ts"
import * as Simulator from "../src/toolenv/Simulator.ts"
import * as Tasks from "../src/toolenv/world/Tasks.ts"
import * as World from "../src/toolenv/world/World.ts"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { Argument } from "effect/cli"

const { seconds } = await BenchFlags.parse("simulator", "Simulated calls per second: the synchronous core and Episode.execute", {
  seconds: Argument.Finite("seconds").pipe(Argument.withSchema(RunConfig.FiniteIn({ minimum: 0.5, maximum: 600 })), Argument.withDescription("seconds per measurement (0.5–600)"), Argument.withDefault(3))
})
const target = 100_000
/** Process CPU time in seconds: on a shared machine, calls per CPU-second is the per-core rate wall time hides. */
const cpu = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

/** A rate measured both ways. */
interface Rate {
  readonly wall: number
  readonly cpu: number
}

const world = World.make({ seed: World.defaultSeed })
const tasks = Tasks.make(world).take({ split: "train", count: 300 })

// Resolve each task's gold calls once (refs → values), so the timed loop only simulates; the same fault-free run
// gives the mix of one pass (calls per operation kind, payload bytes): a change of throughput across commits is a
// workload change when that line changes too, a hot-path change when it does not.
const prepared: Array<{ readonly id: TaskId; readonly request: string; readonly calls: ReadonlyArray<ToolCall> }> = []
const kinds = new Map<string, number>()
let bytes = 0
{
  const engine = new Engine(world.library, world, { seed: 0, faultRate: 0, latency: undefined })
  for (const t of tasks) {
    const state = engine.open({ taskId: t.id, seed: 0, request: t.request, faults: false })
    const outputs = new Map<string, Json>()
    const calls: Array<ToolCall> = []
    for (const c of t.gold) {
      const call: ToolCall = { id: c.id, tool: c.tool, arguments: Refs.resolveRefs(c.arguments, (id) => outputs.get(id)).arguments }
      const kind = world.ops.get(call.tool)?.kind ?? "imported"
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
      const r = engine.run(state, call)
      if (r.outcome._tag === "ok") {
        outputs.set(c.id, r.outcome.payload)
        bytes += JSON.stringify(r.outcome.payload).length
      }
      calls.push(call)
    }
    prepared.push({ id: t.id, request: t.request, calls })
  }
}
const totalCalls = prepared.reduce((a, p) => a + p.calls.length, 0)
console.log(`${tasks.length} tasks, ${totalCalls} gold calls per pass; ${seconds} s per measurement; faults 5%`)
const mix = [...kinds].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k, n]) => `${n} ${k}`).join(", ")
console.log(`mix per pass: ${mix}; ${(bytes / 1000).toFixed(0)} kB of payloads`)
const load = (): string => os.loadavg().map((x) => x.toFixed(2)).join(" ")
console.log(`load average before: ${load()}`)

const engine = new Engine(world.library, world, { seed: 0, faultRate: 0.05, latency: undefined })

/** Calls per second of the synchronous core, replaying passes until `seconds` elapse. */
const core = (): Rate => {
  let calls = 0
  let pass = 0
  const t0 = performance.now()
  const c0 = cpu()
  while (performance.now() - t0 < seconds * 1000) {
    for (const p of prepared) {
      const state = engine.open({ taskId: p.id, seed: pass, request: p.request, faults: true })
      for (const c of p.calls) engine.run(state, c)
      calls += p.calls.length
    }
    pass++
  }
  return { wall: calls / ((performance.now() - t0) / 1000), cpu: calls / (cpu() - c0) }
}

/** Calls per second through the service (`Simulator.open` + `Episode.execute`), one Effect program per measurement. */
const service = Simulator.fromEngine(engine)
const viaEffect = (): Rate =>
  Effect.runSync(Effect.gen(function*() {
    let calls = 0
    let pass = 0
    const t0 = performance.now()
    const c0 = cpu()
    while (performance.now() - t0 < seconds * 1000) {
      for (const p of prepared) {
        const episode = yield* service.open({ taskId: p.id, seed: pass, request: p.request, faults: true })
        for (const c of p.calls) yield* episode.execute(c)
        calls += p.calls.length
      }
      pass++
    }
    return { wall: calls / ((performance.now() - t0) / 1000), cpu: calls / (cpu() - c0) }
  }))

core()
viaEffect()
const results: Array<readonly [Rate, Rate]> = []
for (let r = 0; r < 3; r++) results.push([core(), viaEffect()])
const f = (x: number): string => x.toFixed(0).padStart(7)
for (const [i, [a, b]] of results.entries()) {
  console.log(`run ${i + 1}: core ${f(a.cpu)} calls/CPU-s (${f(a.wall)} wall) | Episode.execute ${f(b.cpu)} calls/CPU-s (${f(b.wall)} wall) | core/effect ${(a.cpu / b.cpu).toFixed(2)}`)
}
const bestCore = Math.max(...results.map((x) => x[0].cpu))
const bestEffect = Math.max(...results.map((x) => x[1].cpu))
console.log(`load average after: ${load()}`)
console.log(`best per core: core ${bestCore.toFixed(0)} calls/s = ${(bestCore / target).toFixed(2)}× the ${target / 1000}k/s target; Episode.execute ${bestEffect.toFixed(0)} calls/s = ${(bestEffect / target).toFixed(2)}× target; core/effect = ${(bestCore / bestEffect).toFixed(2)}`)
