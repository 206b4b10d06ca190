/**
 * How close to the machine the learning loops run, side by side in one process: rollouts (and rounds) per second of
 * the learned policy against the scripted teacher on the same training tasks, and training examples per second of
 * SFT and of PPO against the bare MLP forward + backward pass over the same matrices (the ceiling of the loop).
 * Run: `npx tsx bench/learning.ts [tasks]` (default 96 training tasks).
 */
import { Effect, Layer, Ref } from "effect"
import { Argument } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as App from "../layers/App.ts"
import * as LearnedPolicy from "../src/agent/LearnedPolicy.ts"
import * as Teacher from "../src/agent/Teacher.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Scoring from "../src/eval/Scoring.ts"
import * as PolicyGradient from "../src/math/PolicyGradient.ts"
import * as SetScorer from "../src/math/SetScorer.ts"
import { Rollout } from "../src/runtime/Rollout.ts"
import * as RolloutModule from "../src/runtime/Rollout.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import { ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as Trainer from "../src/training/Trainer.ts"

const { tasks: taskCount } = await BenchFlags.parse("learning", "rollout and training throughput of the learned policy", {
  tasks: Argument.Int("tasks").pipe(Argument.withSchema(RunConfig.IntIn({ minimum: 8, maximum: 10_000 })), Argument.withDescription("training tasks (8–10000)"), Argument.withDefault(96))
})

const cell = Ref.makeUnsafe(LearnedPolicy.initial(1))
const app = App.layer({ tasks: { holdoutTools: true }, policy: { kind: "learned", weights: cell } })

const program = Effect.gen(function*() {
  const source = yield* TaskSource
  const library = yield* ToolLibrary
  const learned = yield* Rollout
  const tasks = yield* source.sample({ split: "train", count: taskCount, seed: 11 })
  const teacher = yield* RolloutModule.make({}).pipe(Effect.provide(Layer.merge(Layer.succeed(ToolLibrary, library), Teacher.layer({ mistakeRate: 0.1 }))))

  const timeRollouts = (rollout: RolloutModule.RolloutService) =>
    Effect.gen(function*() {
      const started = performance.now()
      const out = yield* rollout.runAll(tasks.map((task) => ({ task, options: { paradigm: "ParaAct" as const, seed: 3 } })), { concurrency: 8 })
      const seconds = (performance.now() - started) / 1000
      const rounds = out.reduce((n, t) => n + t.steps.length, 0)
      return { out, perSec: out.length / seconds, roundsPerSec: rounds / seconds }
    })

  // demonstrations → SFT once, so the learned policy acts like a trained one (the untrained one answers at once)
  const demos = yield* timeRollouts(teacher)
  const scored = yield* Effect.forEach(demos.out, (t, i) => Effect.map(Scoring.scoreGroup(tasks[i]!, [t]), (s) => ({ task: tasks[i]!, trajectory: s[0]! })))
  const trainer = yield* Trainer.make.pipe(Effect.provide(Layer.succeed(Trainer.WeightsCell, cell)))
  const sftStarted = performance.now()
  const sft = yield* trainer.sft(scored, { epochs: 4 })
  const sftSeconds = (performance.now() - sftStarted) / 1000
  const sftExamples = (sft.projectedWhole + sft.projectedPartly) * 4
  const policyRun = yield* timeRollouts(learned)

  // the PPO loop against the bare forward + backward over the same matrices
  const weights = yield* Ref.get(cell)
  const samples: Array<Trainer.Sample> = []
  for (const t of policyRun.out) {
    const task = tasks.find((x) => x.id === t.taskId)!
    for (const step of t.steps) {
      if (step.decision === undefined || step.logprob === undefined) continue
      const space = LearnedPolicy.spaceOf(LearnedPolicy.contextAt(t, step.index, task.request, 12, (n) => library.get(n)))
      samples.push({ x: space.features, layout: space.layout, choice: LearnedPolicy.choiceOf(step.decision), behaviour: step.logprob, advantage: 0.5 })
    }
  }
  const ppoStarted = performance.now()
  Trainer.updatePolicy(weights.params, PolicyGradient.adamInit(weights.params.data.length), samples, { ppo: { ...PolicyGradient.defaultPpo, epochs: 4, minibatch: 128 }, adam: PolicyGradient.defaultAdam, seed: 1 }, 0)
  const ppoSeconds = (performance.now() - ppoStarted) / 1000
  const rawStarted = performance.now()
  for (let epoch = 0; epoch < 4; epoch++) {
    for (const s of samples) {
      const { trace } = SetScorer.forward(weights.params, s.x, s.layout.rows, s.layout.sets)
      SetScorer.backward(weights.params, trace, new Float64Array(s.layout.rows).fill(1e-3))
    }
  }
  const rawSeconds = (performance.now() - rawStarted) / 1000
  const ppoPerSec = (samples.length * 4) / ppoSeconds
  const rawPerSec = (samples.length * 4) / rawSeconds

  console.log(`${tasks.length} training tasks, ParaAct, 5% faults, concurrency 8; ${SetScorer.size(LearnedPolicy.shape)} parameters`)
  console.log(`rollouts/s  teacher ${demos.perSec.toFixed(1)}  learned (after SFT) ${policyRun.perSec.toFixed(1)}  ratio ${(policyRun.perSec / demos.perSec).toFixed(2)}x`)
  console.log(`rounds/s    teacher ${demos.roundsPerSec.toFixed(0)}  learned ${policyRun.roundsPerSec.toFixed(0)}  ratio ${(policyRun.roundsPerSec / demos.roundsPerSec).toFixed(2)}x`)
  console.log(`SFT examples/s ${(sftExamples / sftSeconds).toFixed(0)} (${sftExamples} example-epochs in ${sftSeconds.toFixed(1)} s)`)
  console.log(`PPO examples/s ${ppoPerSec.toFixed(0)}  bare forward+backward ${rawPerSec.toFixed(0)}  ratio ${(ppoPerSec / rawPerSec).toFixed(2)}x (${samples.length} steps × 4 epochs)`)
})

await Effect.runPromise(program.pipe(Effect.provide(app), Effect.orDie) as Effect.Effect<void>)
