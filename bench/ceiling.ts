/**
 * The ceiling of the learned policy's action space, measured on the **validation** split: the student-space oracle
 * (`src/agent/StudentOracle.ts`, privileged) chooses among the learned policy's own candidates with the gold task,
 * under ParaAct (`--paradigm` another), two rollout seeds per task. Prints its Pass@1 and rounds per level and where its failures fall: a gold tool no
 * search candidate retrieves, a gold call retrieved but with no matching filling, a gold call made without success,
 * a gold fact never among the fact candidates, or every fact stated and the judge still saying no.
 * Run: `npx tsx bench/ceiling.ts [--tasks 90] [--seeds 2] [--split validation] [--paradigm ParaAct|ReAct|ExploreThenExecute|DFSDT]`.
 */
import { Effect, Layer } from "effect"
import { Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as App from "../layers/App.ts"
import type { Task } from "../src/domain/Task.ts"
import { Paradigm, type Trajectory } from "../src/domain/Trajectory.ts"
import * as StudentOracle from "../src/agent/StudentOracle.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Scoring from "../src/eval/Scoring.ts"
import * as Evaluation from "../src/math/Evaluation.ts"
import { hashParts } from "../src/math/Random.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"
import * as Rollout from "../src/runtime/Rollout.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import { ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import { GeneratedWorld } from "../src/toolenv/world/World.ts"
import * as Pipeline from "../src/training/Pipeline.ts"

const flags = await BenchFlags.parse("ceiling", "the student-space oracle's Pass@1 (the action space's ceiling) on the validation split", {
  tasks: Flag.Int("tasks").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 3, maximum: 3000 })), Flag.withDescription("tasks (levels round-robin)"), Flag.withDefault(90)),
  seeds: Flag.Int("seeds").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 8 })), Flag.withDescription("rollout seeds per task"), Flag.withDefault(2)),
  equivalents: Flag.Boolean("equivalents").pipe(Flag.withDescription("count an equivalent provider's tool (same operation, same entity type) as serving a gold call"), Flag.withDefault(true)),
  split: Flag.Literals("split", ["validation", "train"]).pipe(Flag.withDescription("the split (never test: settings are chosen here)"), Flag.withDefault("validation")),
  paradigm: Flag.Literals("paradigm", Paradigm.literals).pipe(Flag.withDescription("the runtime's paradigm (ReAct and DFSDT: one action a round)"), Flag.withDefault("ParaAct"))
})

const options = Pipeline.defaults
const app = App.layer({ tasks: { holdoutTools: true } })

/** Why a failed oracle rollout failed, first cause first: the first gold call no call served (the oracle's own progress), else the answer. */
const causeOf = (task: Task, t: Trajectory, world: StudentOracle.OracleWorld): string => {
  const serves = (gold: string, tool: string) => {
    const a = world.lookup(gold)
    const b = world.lookup(tool)
    return a !== undefined && b !== undefined && world.equivalent(a, b) !== undefined
  }
  const retrieved = new Set(t.steps.flatMap((s) => s.searches.flatMap((q) => q.hits.map((h) => h.tool as string))))
  const called = new Set(t.steps.flatMap((s) => s.observations.filter((o) => o.attempts > 0).map((o) => o.tool as string)))
  const state = StudentOracle.progress(task, t.steps, world)
  const first = state.open[0]
  if (first !== undefined) {
    const hop = first.deps.length > 0 ? "a second-hop" : "an anchor"
    if (!state.ready.includes(first)) return `${hop} gold call: its input's call not served`
    if (![...retrieved].some((tool) => serves(first.tool, tool))) return `${hop} gold call: no serving tool retrieved`
    if (![...called].some((tool) => serves(first.tool, tool))) return `${hop} gold call: a serving tool retrieved, no serving filling`
    return `${hop} gold call: a serving tool called, no call served it (arguments or a failure)`
  }
  const answer = (t.answer ?? "").toLowerCase()
  if (task.facts.some((f) => !answer.includes(f.value.toLowerCase()))) return "every gold call served; a gold fact not stated (not among the candidates)"
  return `every fact stated, judged ${t.verdict?.quality ?? "-"}/${t.verdict?.faithfulness ?? "-"}/${t.verdict?.utility ?? "-"}`
}

const program = Effect.gen(function*() {
  const source = yield* TaskSource
  const library = yield* ToolLibrary
  const retriever = yield* Retriever
  const world = yield* GeneratedWorld
  const tasks = yield* source.sample({ split: flags.split, count: flags.tasks, levels: options.levels, seed: options.taskSeed })
  const equivalence = flags.equivalents ? StudentOracle.worldEquivalence(world.ops) : StudentOracle.sameToolOnly
  const oracleWorld: StudentOracle.OracleWorld = { lookup: (name) => library.get(name), equivalent: equivalence }
  const oracle = yield* Rollout.make({}).pipe(
    Effect.provide(Layer.merge(Layer.succeed(ToolLibrary, library), StudentOracle.layer(equivalence).pipe(
      Layer.provide(Layer.merge(Layer.succeed(Retriever, retriever), Layer.succeed(ToolLibrary, library)))
    )))
  )
  const t0 = Date.now()
  const jobs = Array.from({ length: flags.seeds }, (_, s) => tasks.map((task) => ({ task, options: { paradigm: flags.paradigm, seed: hashParts(s, "ceiling", task.id) & 0x3fffffff } }))).flat()
  const out = yield* oracle.runAll(jobs, { concurrency: 8 })
  const scored = yield* Effect.forEach(out, (t, i) => Effect.map(Scoring.scoreGroup(jobs[i]!.task, [t]), (s) => s[0] as Trajectory))
  const byLevel = new Map<string, [number, number, number]>()
  const causes = new Map<string, number>()
  let pass = 0
  let rounds = 0
  const turns = { call: 0, calls: 0, search: 0, searches: 0 }
  scored.forEach((t, i) => {
    for (const step of t.steps) {
      if (step.observations.length > 0) (turns.call++, turns.calls += step.observations.length)
      if (step.searches.length > 0) (turns.search++, turns.searches += step.searches.length)
    }
    const task = jobs[i]!.task
    const o = Evaluation.outcomeOf(task, t)
    rounds += o.rounds
    const cell = byLevel.get(task.level) ?? [0, 0, 0]
    byLevel.set(task.level, [cell[0] + (o.success ? 1 : 0), cell[1] + 1, cell[2] + o.rounds])
    if (o.success) pass++
    else {
      const c = causeOf(task, t, oracleWorld)
      causes.set(c, (causes.get(c) ?? 0) + 1)
    }
  })
  const n = scored.length
  const levels = [...byLevel].sort().map(([l, [a, b, r]]) => `${l} ${(100 * a / b).toFixed(1)}% (${a}/${b}, rounds ${(r / b).toFixed(2)})`).join(", ")
  const avg = [...byLevel.values()].reduce((s, [a, b]) => s + a / b, 0) / byLevel.size
  console.log(`ceiling (student-space oracle), ${flags.split} split, ${tasks.length} tasks × ${flags.seeds} seeds, ${flags.paradigm}:`)
  console.log(`Pass@1 ${(100 * pass / n).toFixed(1)}% (${pass}/${n}); per level ${levels}; Avg over levels ${(100 * avg).toFixed(1)}%; rounds ${(rounds / n).toFixed(2)}; ` +
    `calls a call turn ${(turns.calls / Math.max(1, turns.call)).toFixed(2)}, queries a search turn ${(turns.searches / Math.max(1, turns.search)).toFixed(2)}`)
  console.log("failures by first cause:")
  for (const [c, k] of [...causes].sort((a, b) => b[1] - a[1])) console.log(`  ${String(k).padStart(4)}  ${c}`)
  console.log(`(${((Date.now() - t0) / 1000).toFixed(1)} s for the rollouts and the judge)`)
})

await Effect.runPromise(program.pipe(Effect.provide(app), Effect.orDie) as Effect.Effect<void>)
