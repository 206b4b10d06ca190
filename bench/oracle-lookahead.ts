/**
 * What the memo of the student-space oracle's look-ahead saves (`StudentOracle.lookaheadCache`): the shipped policy
 * rolled out on training tasks of the default world (ParaAct), then every visited state labelled by the oracle three
 * ways, side by side in one process — each state's look-ahead searched afresh, with one memo for the pass (as a DAgger
 * round does), and a second pass over the warm memo (the next round's repeated queries) — and the labels compared.
 * Prints CPU milliseconds (user) per way and whether the labels are equal.
 * Run: `npx tsx bench/oracle-lookahead.ts [--tasks 40]`.
 */
import { Effect } from "effect"
import { Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as App from "../layers/App.ts"
import * as LearnedPolicy from "../src/agent/LearnedPolicy.ts"
import * as StudentOracle from "../src/agent/StudentOracle.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { hashParts } from "../src/math/Random.ts"
import * as Rollout from "../src/runtime/Rollout.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import { ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import { GeneratedWorld } from "../src/toolenv/world/World.ts"
import * as Dagger from "../src/training/Dagger.ts"

const flags = await BenchFlags.parse("oracle-lookahead", "the oracle's labelling with and without its look-ahead memo", {
  tasks: Flag.Int("tasks").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 1000 })), Flag.withDescription("training tasks rolled out"), Flag.withDefault(40))
})

const program = Effect.gen(function*() {
  const tasks = yield* (yield* TaskSource).sample({ split: "train", count: flags.tasks, levels: ["I1", "I2", "I3"], seed: 1 })
  const rollout = yield* Rollout.Rollout
  const student = yield* rollout.runAll(tasks.map((task) => ({ task, options: { paradigm: "ParaAct" as const, seed: hashParts(1, task.id) & 0x3fffffff } })), { concurrency: 8 })
  const byId = new Map(tasks.map((t) => [t.id as string, t]))
  const equivalent = StudentOracle.worldEquivalence((yield* GeneratedWorld).ops)
  const library = yield* ToolLibrary
  const world: StudentOracle.OracleWorld = { lookup: (n) => library.get(n), equivalent }
  const maxRounds = Rollout.defaultConfig.maxRounds
  const cpu = () => process.cpuUsage().user / 1000
  let t0 = cpu()
  const plain: Array<Dagger.Labelled["choice"]> = []
  for (const t of student) {
    const task = byId.get(t.taskId)
    if (task === undefined) continue
    for (let i = 0; i < t.steps.length; i++) {
      plain.push((yield* StudentOracle.label(LearnedPolicy.contextAt(t, i, task.request, maxRounds, world.lookup), task, world)).choice)
    }
  }
  const plainMs = cpu() - t0
  const cache = StudentOracle.lookaheadCache()
  t0 = cpu()
  const memo = yield* Dagger.labelTrajectories(student, byId, maxRounds, equivalent, cache)
  const memoMs = cpu() - t0
  t0 = cpu()
  const again = yield* Dagger.labelTrajectories(student, byId, maxRounds, equivalent, cache)
  const warmMs = cpu() - t0
  const same = memo.length === plain.length && memo.every((l, k) => Dagger.sameChoice(l.choice, plain[k] as Dagger.Labelled["choice"]) && Dagger.sameChoice(l.choice, (again[k] as Dagger.Labelled).choice))
  console.log(`${memo.length} states of ${student.length} rollouts: no memo ${plainMs.toFixed(0)} ms CPU, one memo for the pass ${memoMs.toFixed(0)} ms (${(memoMs / plainMs).toFixed(2)}×), ` +
    `a second pass over the warm memo ${warmMs.toFixed(0)} ms (${(warmMs / plainMs).toFixed(2)}×); labels equal: ${same}`)
})

await Effect.runPromise(program.pipe(Effect.provide(App.layer({ tasks: { holdoutTools: true }, policy: { kind: "paraagent" } })), Effect.orDie) as Effect.Effect<void>)
