/**
 * The learning pipeline measured on the **validation** split — where its settings are chosen, never on the test
 * split: the teacher's demonstrations on training tasks, SFT from the seeded Backbone, RL from that checkpoint with
 * each estimator (the pipeline's budget), and every model evaluated on held-out validation tasks (providers of the
 * validation split) with two rollout seeds each. Prints, per seed and model: Pass@1 per level and where the failures
 * fall (no successful call / not every gold fact observed / observed but not all stated), rounds and calls.
 * Also the teacher-forced exact-turn accuracy (greedy turn = the label) on the training demonstrations and on the
 * teacher's demonstrations of the validation tasks, after SFT and after DAgger.
 * Run: `npx tsx bench/learning-validation.ts [--seeds 1,2] [--tasks 90] [--dagger 3] [--rl false] [--first-query request|documentation]`.
 */
import { Effect, Layer, Ref } from "effect"
import { Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as App from "../layers/App.ts"
import type { Task } from "../src/domain/Task.ts"
import type { Trajectory } from "../src/domain/Trajectory.ts"
import * as LearnedPolicy from "../src/agent/LearnedPolicy.ts"
import * as Teacher from "../src/agent/Teacher.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Scoring from "../src/eval/Scoring.ts"
import * as Evaluation from "../src/math/Evaluation.ts"
import { hashParts } from "../src/math/Random.ts"
import * as Rollout from "../src/runtime/Rollout.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import { ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as Pipeline from "../src/training/Pipeline.ts"
import * as Trainer from "../src/training/Trainer.ts"
import * as Dagger from "../src/training/Dagger.ts"
import * as StudentOracle from "../src/agent/StudentOracle.ts"
import { GeneratedWorld } from "../src/toolenv/world/World.ts"

const flags = await BenchFlags.parse("learning-validation", "SFT and RL (each estimator) evaluated on the validation split", {
  seeds: Flag.String("seeds").pipe(Flag.withDescription("training seeds, comma-separated"), Flag.withDefault("1,2")),
  tasks: Flag.Int("tasks").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 3, maximum: 3000 })), Flag.withDescription("validation tasks (levels round-robin)"), Flag.withDefault(90)),
  dagger: Flag.Int("dagger").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 0, maximum: 20 })), Flag.withDescription("DAgger rounds after SFT (0: SFT on the teacher only)"), Flag.withDefault(Pipeline.defaults.daggerRounds)),
  rl: Flag.Boolean("rl").pipe(Flag.withDescription("run RL after SFT (each estimator)"), Flag.withDefault(true)),
  firstQuery: Flag.Literals("first-query", ["request", "documentation"]).pipe(Flag.withDescription("how the teacher phrases a slot's first search"), Flag.withDefault(Pipeline.defaults.teacherFirstQuery))
})
const seeds = (RunConfig.commaItems(flags.seeds) ?? [""]).map((s) => (/^\d+$/.test(s) ? Number(s) : Number.NaN))
if (!seeds.every((s) => Number.isInteger(s) && s >= 0)) {
  console.error(`bench/learning-validation: --seeds ${flags.seeds}: expected non-negative integers, comma-separated`)
  process.exit(1)
}

const options = Pipeline.defaults
const cell = Ref.makeUnsafe(LearnedPolicy.initial(seeds[0] ?? 1))
const app = App.layer({ tasks: { holdoutTools: true }, policy: { kind: "learned", weights: cell } })

/** One line per model: Pass@1 per level and overall, and where the failures fall. */
const line = (label: string, tasks: ReadonlyArray<Task>, trajectories: ReadonlyArray<Trajectory>): string => {
  const byLevel = new Map<string, [number, number]>()
  let pass = 0
  let noSuccess = 0
  let notObserved = 0
  let notStated = 0
  let rounds = 0
  let calls = 0
  trajectories.forEach((t, i) => {
    const task = tasks[i] as Task
    // the pipeline's own outcome: Pass@1 is Quality and Faithfulness YES, calls are the calls that ran
    const outcome = Evaluation.outcomeOf(task, t)
    rounds += outcome.rounds
    calls += outcome.calls
    const cell = byLevel.get(task.level) ?? [0, 0]
    byLevel.set(task.level, [cell[0] + (outcome.success ? 1 : 0), cell[1] + 1])
    if (outcome.success) pass++
    else if (!t.steps.some((s) => s.observations.some((o) => o.outcome._tag === "ok"))) noSuccess++
    else if (t.verdict?.utility !== "YES") notObserved++
    else notStated++
  })
  const n = trajectories.length
  const levels = [...byLevel].sort().map(([l, [a, b]]) => `${l} ${a}/${b}`).join(" ")
  return `${label.padEnd(10)} Pass@1 ${(100 * pass / n).toFixed(1).padStart(5)}% (${levels}); failed: no successful call ${noSuccess}, ` +
    `a gold fact not observed ${notObserved}, observed but not stated ${notStated}; rounds ${(rounds / n).toFixed(2)}, calls ${(calls / n).toFixed(2)}`
}

const program = Effect.gen(function*() {
  const source = yield* TaskSource
  const library = yield* ToolLibrary
  const learned = yield* Rollout.Rollout
  const trainTasks = yield* source.sample({ split: "train", count: options.trainTasks, levels: options.levels, seed: options.taskSeed })
  const validation = yield* source.sample({ split: "validation", count: flags.tasks, levels: options.levels, seed: options.taskSeed })
  const teacher = yield* Rollout.make({}).pipe(
    Effect.provide(Layer.merge(Layer.succeed(ToolLibrary, library), Teacher.layer({ mistakeRate: options.teacherMistakeRate, firstQuery: flags.firstQuery })))
  )
  const scored = (rollout: Rollout.RolloutService, tasks: ReadonlyArray<Task>, salt: string) =>
    Effect.gen(function*() {
      const out = yield* rollout.runAll(tasks.map((task) => ({ task, options: { paradigm: "ParaAct" as const, seed: hashParts(0, salt, task.id) & 0x3fffffff } })), { concurrency: 8 })
      return yield* Effect.forEach(out, (t, i) => Effect.map(Scoring.scoreGroup(tasks[i] as Task, [t]), (s) => s[0] as Trajectory))
    })
  const demos = yield* scored(teacher, trainTasks, "demo")
  const validationDemos = yield* scored(teacher, validation, "val-demo")
  const maxRounds = Rollout.defaultConfig.maxRounds
  const world = yield* GeneratedWorld
  const equivalent = StudentOracle.worldEquivalence(world.ops)
  const kept = (ts: ReadonlyArray<Trajectory>, tasks: ReadonlyArray<Task>) =>
    Dagger.projectedDemonstrations(ts.flatMap((trajectory, i) => (Trainer.keeps("pass", trajectory) ? [{ task: tasks[i] as Task, trajectory }] : [])), maxRounds, (n) => library.get(n))
  const trainStates = kept(demos, trainTasks)
  const validationStates = kept(validationDemos, validation)
  const accuracy = (w: LearnedPolicy.Weights) =>
    `teacher-forced exact-turn accuracy: training ${(100 * Dagger.exactTurnAccuracy(w.params, trainStates)).toFixed(1)}% of ${trainStates.length}, validation ${(100 * Dagger.exactTurnAccuracy(w.params, validationStates)).toFixed(1)}% of ${validationStates.length}`
  console.log(`${trainTasks.length} training tasks, ${validation.length} validation tasks, teacher first queries from the ${flags.firstQuery}`)
  console.log(line("teacher", trainTasks, demos) + "  (training tasks)")
  const trainer = yield* Trainer.make.pipe(Effect.provide(Layer.succeed(Trainer.WeightsCell, cell)))
  /** The validation tasks rolled out twice (two rollout seeds), as one list. */
  const evaluate = (weights: LearnedPolicy.Weights, seed: number) =>
    Effect.gen(function*() {
      yield* Ref.set(cell, weights)
      const a = yield* scored(learned, validation, `val-a-${seed}`)
      const b = yield* scored(learned, validation, `val-b-${seed}`)
      return [...a, ...b]
    })
  const twice = [...validation, ...validation]
  for (const seed of seeds) {
    const backbone = LearnedPolicy.initial(seed)
    yield* Ref.set(cell, backbone)
    const sft = yield* trainer.sft(demos.map((trajectory, i) => ({ task: trainTasks[i] as Task, trajectory })), { epochs: options.sftEpochs, seed })
    const sftWeights = yield* Ref.get(cell)
    console.log(`seed ${seed}: SFT on ${sft.steps} demonstration steps (${sft.projectedWhole} whole, ${sft.projectedPartly} in part, ${sft.unprojected} not expressible)`)
    console.log(line("Backbone", twice, yield* evaluate(backbone, seed)))
    console.log(line("SFT", twice, yield* evaluate(sftWeights, seed)) + `; ${accuracy(sftWeights)}`)
    let cloned = sftWeights
    if (flags.dagger > 0) {
      const report = yield* Dagger.run(trainTasks, demos.map((trajectory, i) => ({ task: trainTasks[i] as Task, trajectory })), { rounds: flags.dagger, seed, equivalent }).pipe(Effect.provideService(Trainer.WeightsCell, cell))
      cloned = yield* Ref.get(cell)
      console.log(`seed ${seed}: DAgger ${report.rounds.map((r) => `round ${r.round}: ${r.labelled} states labelled, aggregate ${r.aggregate}, NLL ${r.lossLast.toFixed(3)}`).join("; ")} (cold start ${report.coldStart}; ${(report.durationMs / 1000).toFixed(0)} s)`)
      console.log(line("DAgger", twice, yield* evaluate(cloned, seed)) + `; ${accuracy(cloned)}`)
    }
    for (const estimator of flags.rl ? options.estimators : []) {
      yield* Ref.set(cell, cloned)
      const report = yield* trainer.rl(trainTasks, {
        estimator,
        iterations: options.rlIterations,
        tasksPerIteration: options.rlTasksPerIteration,
        group: options.group,
        seed,
        concurrency: options.concurrency,
        reference: cloned
      })
      const final = yield* Ref.get(cell)
      const curve = report.metrics.map((m) => (100 * m.pass1).toFixed(0)).join(" ")
      console.log(line(estimator, twice, yield* evaluate(final, seed)) + `; training Pass@1 per iteration ${curve}`)
    }
  }
})

await Effect.runPromise(program.pipe(Effect.provide(app), Effect.orDie) as Effect.Effect<void>)
