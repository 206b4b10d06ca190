/**
 * Parallel acting, measured: the same held-out I2/I3 tasks, the same teacher and the same simulated tool latency,
 * rolled out under ParaAct and under ReAct in one run — wall time per task, rounds, and the ratio — plus the pool's
 * throughput when many rollouts run at once.
 * Run: `npx tsx bench/rollout.ts [tasks] [latency-ms]` (defaults 24 tasks, 40 ms per call).
 */
import { Effect } from "effect"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { Argument } from "effect/cli"

import * as App from "../layers/App.ts"
import type { Paradigm } from "../src/domain/Trajectory.ts"
import { mean } from "../src/math/Stats.ts"
import { Rollout } from "../src/runtime/Rollout.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"

const { tasks: taskCount, latency: latencyMs } = await BenchFlags.parse("rollout", "ParaAct against ReAct on the same tasks with simulated tool latency", {
  tasks: Argument.Int("tasks").pipe(Argument.withSchema(RunConfig.IntIn({ minimum: 2, maximum: 10_000 })), Argument.withDescription("held-out I2/I3 tasks (2–10000)"), Argument.withDefault(24)),
  latency: Argument.Finite("latency-ms").pipe(Argument.withSchema(RunConfig.FiniteIn({ minimum: 1, maximum: 60_000 })), Argument.withDescription("simulated ms per call (1–60000)"), Argument.withDefault(40))
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
})

Effect.runPromise(program.pipe(Effect.provide(app), Effect.orDie)).catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
