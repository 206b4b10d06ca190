import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import type { Task } from "../../src/domain/Task.ts"
import * as ActionSpace from "../../src/agent/ActionSpace.ts"
import * as LearnedPolicy from "../../src/agent/LearnedPolicy.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import * as Scoring from "../../src/eval/Scoring.ts"
import * as Mlp from "../../src/math/Mlp.ts"
import * as TurnDistribution from "../../src/math/TurnDistribution.ts"
import * as Trainer from "../../src/training/Trainer.ts"
import { appLayer, contextOf, rollouts, sampleTasks } from "../support/LearnedWorld.ts"

const start = LearnedPolicy.initial(1)
const cell = Ref.makeUnsafe(start)
/** The trainer over the learned policy's rollouts on the small world, acting with `cell`. */
const trainerLayer = Trainer.Trainer.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(appLayer(LearnedPolicy.layer(cell)), Layer.succeed(Trainer.WeightsCell, cell)))
)

let demos: Promise<ReadonlyArray<Trainer.Demonstration>> | undefined
/** The teacher's judged trajectories on 12 training tasks. */
const demonstrations = Effect.promise(() =>
  (demos ??= Effect.runPromise(Effect.gen(function*() {
    const tasks = yield* sampleTasks("train", 12)
    const trajectories = yield* rollouts(tasks, 700)
    return yield* Effect.forEach(tasks, (task, i) =>
      Effect.map(Scoring.scoreGroup(task, [trajectories[i]!]), ([trajectory]) => ({ task, trajectory: trajectory! })))
  }).pipe(Effect.provide(appLayer(Teacher.layer()))))))

/** Mean negative log-likelihood of the demonstrations' projected choices under some parameters. */
const nll = (samples: ReadonlyArray<{ readonly space: ActionSpace.Space; readonly choice: TurnDistribution.Choice }>, params: Mlp.Params) =>
  samples.reduce((s, x) => s - TurnDistribution.logProb(x.space.layout, Mlp.logits(params, x.space.features, x.space.layout.rows), x.choice), 0) /
  samples.length

describe("Trainer.sft", () => {
  it.effect("lowers the NLL of judge-kept teacher demonstrations, and its coverage counts add up", () =>
    Effect.gen(function*() {
      const demos = yield* demonstrations
      yield* Ref.set(cell, start)
      const trainer = yield* Trainer.Trainer
      const report = yield* trainer.sft(demos, { epochs: 8, minibatch: 16 })

      const kept = demos.filter((d) => Trainer.keeps("pass", d.trajectory))
      assert.strictEqual(report.demonstrations, demos.length)
      assert.strictEqual(report.kept, kept.length)
      assert.isAbove(report.kept, 3)
      // recounted here: every step of a kept demonstration is projected whole, in part, or not at all
      const counts = { whole: 0, partly: 0, none: 0, dropped: 0, actions: 0 }
      const samples: Array<{ space: ActionSpace.Space; choice: TurnDistribution.Choice }> = []
      for (const d of kept) {
        for (const step of d.trajectory.steps) {
          if (step.turn === undefined) {
            counts.none++
            continue
          }
          const space = ActionSpace.build(contextOf(d.trajectory, step.index, d.task as Task))
          const p = ActionSpace.project(space, step.turn)
          counts.dropped += p.dropped.length
          counts.actions += p.actions
          if (p.choice === undefined) counts.none++
          else {
            counts[p.dropped.length === 0 ? "whole" : "partly"]++
            samples.push({ space, choice: p.choice })
          }
        }
      }
      assert.strictEqual(report.steps, kept.reduce((n, d) => n + d.trajectory.steps.length, 0))
      assert.strictEqual(report.projectedWhole + report.projectedPartly + report.unprojected, report.steps)
      assert.deepStrictEqual(
        [report.projectedWhole, report.projectedPartly, report.unprojected, report.droppedActions, report.totalActions],
        [counts.whole, counts.partly, counts.none, counts.dropped, counts.actions]
      )
      assert.isAtMost(report.droppedActions, report.totalActions)

      assert.isTrue(Number.isFinite(report.lossFirst) && Number.isFinite(report.lossLast))
      assert.isBelow(report.lossLast, report.lossFirst)
      const after = yield* Ref.get(cell)
      assert.strictEqual(after.version, start.version + 1)
      // the stored weights, not only the running loss, fit the demonstrations better
      assert.isBelow(nll(samples, after.params), nll(samples, start.params))
      console.log(
        `SFT: ${report.kept}/${report.demonstrations} demonstrations kept, ${report.steps} steps (whole ${report.projectedWhole}, partly ${report.projectedPartly}, ` +
          `none ${report.unprojected}); NLL ${report.lossFirst.toFixed(3)} → ${report.lossLast.toFixed(3)}`
      )

      // the stricter filter keeps a subset; no demonstration at all is a typed error
      const strict = yield* trainer.sft(demos, { epochs: 1, filter: "pattern111" })
      assert.isAtMost(strict.kept, report.kept)
      const none = yield* Effect.flip(trainer.sft([], { epochs: 1 }))
      assert.strictEqual(none._tag, "TrainerError")
      assert.strictEqual(none.stage, "sft")
    }).pipe(Effect.provide(trainerLayer)))
})

describe("Trainer.rl", () => {
  for (const estimator of ["grpo", "paraagent"]) {
    it.effect(`${estimator}: 2 iterations × 4 tasks × G=2 complete, bump the version and report finite metrics`, () =>
      Effect.gen(function*() {
        yield* Ref.set(cell, start)
        const tasks = yield* sampleTasks("train", 8)
        const trainer = yield* Trainer.Trainer
        const report = yield* trainer.rl(tasks, {
          estimator,
          iterations: 2,
          tasksPerIteration: 4,
          group: 2,
          concurrency: 2,
          ppo: { ...Trainer.defaultRl.ppo, epochs: 2 }
        })
        assert.strictEqual(report.estimator, estimator)
        assert.deepStrictEqual(report.metrics.map((m) => [m.iteration, m.version]), [[0, start.version + 1], [1, start.version + 2]])
        for (const m of report.metrics) {
          for (const [field, value] of Object.entries(m)) assert.isTrue(Number.isFinite(value), `${field} is ${value}`)
          assert.isAbove(m.steps, 0)
          assert.isTrue(m.pass1 >= 0 && m.pass1 <= 1)
          assert.isTrue(m.clipFraction >= 0 && m.clipFraction <= 1)
          assert.isAtLeast(m.rounds, 1)
        }
        const last = report.metrics[1]!
        console.log(`RL ${estimator}: ${last.steps} steps in iteration 1, R_ans ${last.rAns.toFixed(3)}, KL ${last.kl.toExponential(2)}, entropy ${last.entropy.toFixed(3)}, |g| ${last.gradNorm.toFixed(3)}`)
        const after = yield* Ref.get(cell)
        assert.strictEqual(after.version, start.version + 2)
        assert.isTrue(after.params.data.some((w, i) => w !== start.params.data[i]))
      }).pipe(Effect.provide(trainerLayer)))
  }

  it.effect("an unknown estimator, or no tasks, is a typed TrainerError before anything runs", () =>
    Effect.gen(function*() {
      yield* Ref.set(cell, start)
      const trainer = yield* Trainer.Trainer
      const tasks = yield* sampleTasks("train", 2)
      const unknown = yield* Effect.flip(trainer.rl(tasks, { estimator: "nope", iterations: 1 }))
      assert.instanceOf(unknown, Trainer.TrainerError)
      assert.strictEqual(unknown.stage, "rl")
      assert.include(unknown.message, "\"nope\"")
      assert.include(unknown.message, "grpo")
      const empty = yield* Effect.flip(trainer.rl([], { estimator: "grpo", iterations: 1 }))
      assert.strictEqual(empty._tag, "TrainerError")
      // nothing ran: the weights are untouched
      assert.strictEqual((yield* Ref.get(cell)).version, start.version)
    }).pipe(Effect.provide(trainerLayer)))
})
