/**
 * What the LLM teacher sends per round, side by side with the single-agent LLM policy at the same points. The scripted
 * teacher's trajectories on generated tasks are replayed; at each round the prompts of the roles the orchestrator
 * consults are built (layers/model/TeacherLlm.ts) and measured in characters, against PolicyOpenAi.buildMessages.
 * Run: npx tsx bench/teacher-prompts.ts [tasks=30] [paradigm=ParaAct]
 */
import { Effect, Layer } from "effect"
import type { Paradigm, Step } from "../src/domain/Trajectory.ts"
import { Paradigm as ParadigmSchema } from "../src/domain/Trajectory.ts"
import type { PolicyContext } from "../src/agent/Policy.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"
import * as History from "../src/math/History.ts"
import * as Rollout from "../src/runtime/Rollout.ts"
import * as Simulator from "../src/toolenv/Simulator.ts"
import * as Teacher from "../src/agent/Teacher.ts"
import type { RoleName } from "../src/agent/Teacher.ts"
import { ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../src/toolenv/world/Tasks.ts"
import * as World from "../src/toolenv/world/World.ts"
import * as PolicyOpenAi from "../layers/model/PolicyOpenAi.ts"
import * as TeacherLlm from "../layers/model/TeacherLlm.ts"
import { Argument } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"

const args = await BenchFlags.parse("teacher-prompts", "What the LLM teacher sends per round against the single-agent LLM policy", {
  tasks: Argument.Int("tasks").pipe(Argument.withSchema(RunConfig.IntIn(RunConfig.caps.tasks)), Argument.withDescription("generated test tasks (1–10000)"), Argument.withDefault(30)),
  paradigm: Argument.Literals("paradigm", ParadigmSchema.literals).pipe(Argument.withDescription("paradigm replayed"), Argument.withDefault("ParaAct"))
})

const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number)
}

const program = Effect.gen(function*() {
  const count = args.tasks
  const paradigm: Paradigm = args.paradigm
  const started = performance.now()
  const world = World.make({ seed: 7 })
  const tasks = Tasks.make(world).take({ split: "test", count })
  const worldLayer = Layer.mergeAll(Layer.succeed(ToolLibrary, world.library), Layer.succeed(World.GeneratedWorld, world))
  const services = Layer.mergeAll(Teacher.layer(), Retriever.layerBm25, Simulator.layer({ faultRate: 0.05 })).pipe(Layer.provideMerge(worldLayer))
  const rollout = yield* Effect.provide(Effect.gen(function*() {
    return yield* Rollout.Rollout
  }), Rollout.layer().pipe(Layer.provide(services)))
  console.log(`world of ${world.library.tools.length} tools and ${count} test tasks ready in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  const view: TeacherLlm.View = {
    library: world.library,
    hints: new Set(TeacherLlm.defaultHints),
    budgets: TeacherLlm.defaultBudgets,
    options: TeacherLlm.defaultTeacherOptions
  }
  const scripted = Teacher.scriptedRoles(world.library, Teacher.defaultOptions)
  const perRole = new Map<RoleName, Array<number>>()
  const teacherRounds: Array<number> = []
  const agentRounds: Array<number> = []
  const callsPerRound: Array<number> = []
  for (const task of tasks) {
    const t = yield* rollout.run(task, { paradigm, seed: 1 })
    const path = t.steps
    for (let i = 0; i < path.length; i++) {
      const history: ReadonlyArray<Step> = path.slice(0, i)
      const seen = History.retrievedTools(history)
      const context: PolicyContext = {
        request: task.request,
        paradigm,
        round: i,
        maxRounds: 12,
        controller: (path[i] as Step).controller,
        history,
        tools: [...seen].flatMap((n) => world.library.get(n) ?? []),
        seed: 1,
        task
      }
      let chars = 0
      let consulted = 0
      const record = (role: RoleName, user: string) => {
        const size = TeacherLlm.systemPrompts[role].length + user.length
        const list = perRole.get(role) ?? []
        list.push(size)
        perRole.set(role, list)
        chars += size
        consulted++
      }
      const recording: Teacher.Roles = {
        follows: "gold",
        plan: (input) => Effect.sync(() => record("plan", TeacherLlm.plannerMessage(input, view))).pipe(Effect.andThen(scripted.plan(input))),
        search: (input, slots) =>
          Effect.sync(() => record("search", TeacherLlm.searcherMessage(input, slots, view))).pipe(Effect.andThen(scripted.search(input, slots))),
        execute: (input, ready) =>
          Effect.sync(() => record("execute", TeacherLlm.executorMessage(input, ready, view))).pipe(Effect.andThen(scripted.execute(input, ready))),
        answer: (input) => Effect.sync(() => record("answer", TeacherLlm.answererMessage(input, view))).pipe(Effect.andThen(scripted.answer(input)))
      }
      yield* Teacher.nextTurn(context, task, recording, Teacher.defaultOptions)
      teacherRounds.push(chars)
      callsPerRound.push(consulted)
      agentRounds.push(PolicyOpenAi.buildMessages(context, "text").reduce((s, m) => s + (m.content?.length ?? 0), 0))
    }
  }
  const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
  console.log(`\n${paradigm}: ${teacherRounds.length} rounds over ${count} tasks (scripted teacher, 10% mistakes, 5% faults, BM25)\n`)
  console.log("| role | consultations | median chars | p90 chars |")
  console.log("|---|---|---|---|")
  for (const role of Teacher.roleNames) {
    const xs = perRole.get(role) ?? []
    console.log(`| ${role} | ${xs.length} | ${percentile(xs, 0.5)} | ${percentile(xs, 0.9)} |`)
  }
  console.log(`\nrole calls per round: mean ${(sum(callsPerRound) / callsPerRound.length).toFixed(2)} (without repairs)`)
  console.log("| prompt per round | median chars | p90 chars | total chars |")
  console.log("|---|---|---|---|")
  console.log(`| LLM teacher (all role calls) | ${percentile(teacherRounds, 0.5)} | ${percentile(teacherRounds, 0.9)} | ${sum(teacherRounds)} |`)
  console.log(`| single-agent policy (text mode) | ${percentile(agentRounds, 0.5)} | ${percentile(agentRounds, 0.9)} | ${sum(agentRounds)} |`)
  console.log(`\nratio teacher / single agent, total prompt characters: ${(sum(teacherRounds) / sum(agentRounds)).toFixed(2)}×`)
})

Effect.runPromise(program).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
