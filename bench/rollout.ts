/**
 * Parallel acting, measured: the same held-out I2/I3 tasks, the same teacher and the same simulated tool latency,
 * rolled out under ParaAct and under ReAct in one run — wall time per task, rounds, and the ratio — plus the pool's
 * throughput when many rollouts run at once. `--trace-overhead` adds the cost of tracing: the pool without a tracer
 * and with the OTLP tracer (every span exported to a loopback collector this bench starts, or to `--otlp <url>`),
 * alternated, as rollouts/s and CPU per rollout side by side.
 * Run: `npx tsx bench/rollout.ts [tasks] [latency-ms] [--trace-overhead [--otlp <url>]]` (defaults 24 tasks, 40 ms per call).
 */
import { Effect, Option } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { Argument, Flag } from "effect/cli"

import * as App from "../layers/App.ts"
import * as Otlp from "../layers/Otlp.ts"
import type { Paradigm } from "../src/domain/Trajectory.ts"
import { mean } from "../src/math/Stats.ts"
import { Rollout } from "../src/runtime/Rollout.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"

const { tasks: taskCount, latency: latencyMs, traceOverhead, otlp } = await BenchFlags.parse("rollout", "ParaAct against ReAct on the same tasks with simulated tool latency", {
  tasks: Argument.Int("tasks").pipe(Argument.withSchema(RunConfig.IntIn({ minimum: 2, maximum: 10_000 })), Argument.withDescription("held-out I2/I3 tasks (2–10000)"), Argument.withDefault(24)),
  latency: Argument.Finite("latency-ms").pipe(Argument.withSchema(RunConfig.FiniteIn({ minimum: 1, maximum: 60_000 })), Argument.withDescription("simulated ms per call (1–60000)"), Argument.withDefault(40)),
  traceOverhead: Flag.Boolean("trace-overhead").pipe(Flag.withDescription("also measure the pool with and without the OTLP tracer"), Flag.withDefault(false)),
  otlp: Otlp.urlFlag.pipe(Flag.withDescription("with --trace-overhead: export to this collector instead of the bench's loopback one"))
})

/** A collector that answers every export with 200 and counts what it received (bytes and spans, without decoding). */
const startSink = () =>
  new Promise<{ readonly url: string; readonly counts: { requests: number; bytes: number; spans: number }; readonly close: () => void }>((resolve) => {
    const counts = { requests: 0, bytes: 0, spans: 0 }
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8")
        counts.requests++
        counts.bytes += body.length
        for (let at = body.indexOf(`"spanId"`); at !== -1; at = body.indexOf(`"spanId"`, at + 8)) counts.spans++
        res.writeHead(200, { "content-type": "application/json" })
        res.end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, counts, close: () => server.close() })
    })
  })

const app = App.layer({
  tasks: { holdoutTools: true },
  simulator: { latency: { minMs: latencyMs * 0.75, maxMs: latencyMs * 1.25, jitter: 0.2, timeoutMs: latencyMs * 10 } },
  rollout: { faults: true }
})

const program = Effect.gen(function*() {
  const source = yield* TaskSource
  const rollout = yield* Rollout
  const tasks = yield* source.sample({ split: "test", count: taskCount, levels: ["I2", "I3"], seed: 17 })
  const rows: Array<{ paradigm: Paradigm; wallMs: number; rounds: number; calls: number; poolPerSec: number }> = []
  for (const paradigm of ["ParaAct", "ReAct"] as const) {
    // one task at a time: the wall time of a rollout is what a user waits for
    const walls: Array<number> = []
    const rounds: Array<number> = []
    const calls: Array<number> = []
    for (const task of tasks) {
      const started = performance.now()
      const t = yield* rollout.run(task, { paradigm, seed: 5 })
      walls.push(performance.now() - started)
      rounds.push(t.steps.length)
      calls.push(t.steps.reduce((n, s) => n + s.observations.filter((o) => o.attempts > 0).length, 0))
    }
    // the bounded pool: every task at once (16 in flight)
    const started = performance.now()
    yield* rollout.runAll(tasks.map((task) => ({ task, options: { paradigm, seed: 6 } })), { concurrency: 16 })
    const poolSeconds = (performance.now() - started) / 1000
    rows.push({ paradigm, wallMs: mean(walls), rounds: mean(rounds), calls: mean(calls), poolPerSec: tasks.length / poolSeconds })
  }
  const [para, react] = rows as [typeof rows[number], typeof rows[number]]
  console.log(`${tasks.length} held-out I2/I3 tasks, teacher policy, simulated latency ${latencyMs} ms ± 25% per call, 5% faults`)
  console.log("paradigm   wall ms/task   rounds/task   calls/task   pool rollouts/s")
  for (const r of rows) {
    console.log(`${r.paradigm.padEnd(10)} ${r.wallMs.toFixed(0).padStart(12)} ${r.rounds.toFixed(2).padStart(13)} ${r.calls.toFixed(2).padStart(12)} ${r.poolPerSec.toFixed(1).padStart(17)}`)
  }
  console.log(`ReAct / ParaAct: wall time ${(react.wallMs / para.wallMs).toFixed(2)}x, rounds ${(react.rounds / para.rounds).toFixed(2)}x`)
  if (!traceOverhead) return

  // the same pool, alternated without and with the OTLP tracer; the tracer's layer closing (its last export) counts
  const sink = Option.isSome(otlp) ? undefined : yield* Effect.promise(startSink)
  const target = Option.isSome(otlp) ? otlp.value : yield* Effect.fromResult(Otlp.parse(sink?.url ?? ""))
  const pool = (traced: boolean) =>
    Effect.gen(function*() {
      const cpu = process.cpuUsage()
      const started = performance.now()
      const run = rollout.runAll(tasks.map((task) => ({ task, options: { paradigm: "ParaAct" as const, seed: 6 } })), { concurrency: 16 })
      const trajectories = yield* (traced ? run.pipe(Effect.provide(Otlp.layer(target, { program: "bench/rollout" }))) : run)
      const seconds = (performance.now() - started) / 1000
      const used = process.cpuUsage(cpu)
      return { perSec: trajectories.length / seconds, cpuMsPerRollout: (used.user + used.system) / 1000 / trajectories.length }
    })
  const plain: Array<{ perSec: number; cpuMsPerRollout: number }> = []
  const traced: Array<{ perSec: number; cpuMsPerRollout: number }> = []
  yield* pool(false)
  for (let rep = 0; rep < 5; rep++) {
    plain.push(yield* pool(false))
    traced.push(yield* pool(true))
  }
  sink?.close()
  const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN
  const a = { perSec: median(plain.map((x) => x.perSec)), cpu: median(plain.map((x) => x.cpuMsPerRollout)) }
  const b = { perSec: median(traced.map((x) => x.perSec)), cpu: median(traced.map((x) => x.cpuMsPerRollout)) }
  console.log(`\ntracing overhead: ParaAct pool of ${tasks.length} rollouts (16 in flight), median of 5 alternated runs`)
  console.log("tracer          pool rollouts/s   CPU ms/rollout")
  console.log(`${"none".padEnd(15)} ${a.perSec.toFixed(1).padStart(17)} ${a.cpu.toFixed(2).padStart(16)}`)
  console.log(`${"OTLP".padEnd(15)} ${b.perSec.toFixed(1).padStart(17)} ${b.cpu.toFixed(2).padStart(16)}`)
  console.log(`OTLP / none: throughput ${(b.perSec / a.perSec).toFixed(3)}x, CPU per rollout ${(b.cpu / a.cpu).toFixed(3)}x` +
    (sink !== undefined ? `; ${sink.counts.spans} spans in ${sink.counts.requests} exports (${(sink.counts.bytes / 1e6).toFixed(1)} MB), ${(sink.counts.spans / (5 * tasks.length)).toFixed(1)} spans/rollout` : ""))
})

Effect.runPromise(program.pipe(Effect.provide(app), Effect.orDie)).catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
