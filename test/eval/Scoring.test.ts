import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { callId, trajectoryId } from "../../src/domain/Ids.ts"
import type { Trajectory, Verdict } from "../../src/domain/Trajectory.ts"
import * as StudentOracle from "../../src/agent/StudentOracle.ts"
import * as Scoring from "../../src/eval/Scoring.ts"
import { Judge, JudgeError } from "../../src/judge/Judge.ts"
import * as Reward from "../../src/math/Reward.ts"
import * as DepGraph from "../../src/toolenv/DepGraph.ts"
import { makeLibrary, ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import { GeneratedWorld } from "../../src/toolenv/world/World.ts"
import * as Trainer from "../../src/training/Trainer.ts"
import { makeTask } from "../judge/fixtures.ts"
import { makeTrajectory } from "../math/fixtures.ts"
import type { StepSpec } from "../math/fixtures.ts"
import { world } from "../support/LearnedWorld.ts"

const task = makeTask("task1", "Who is the top scorer of team T-42?", [["top_scorer", "Ann Lee"]])

const trajectory = (id: string, specs: ReadonlyArray<StepSpec>): Trajectory => ({ ...makeTrajectory(specs), id: trajectoryId(id) })

const search = { slot: "team", hits: ["top_scorer"] }
const good = trajectory("good", [{ searches: [search] }, { calls: [{ id: "c1", tool: "top_scorer" }] }, { answer: "Ann Lee" }])
const partial = trajectory("partial", [{ searches: [search] }, { answer: "I could not find it" }])
const failing = trajectory("judge-fails", [{ calls: [{ id: "c1", tool: "nope" }], validation: { unseenTools: [callId("c1")] } }, { answer: "?" }])

const verdicts: Readonly<Record<string, Omit<Verdict, "judge">>> = {
  good: { quality: "YES", faithfulness: "YES", utility: "YES" },
  partial: { quality: "NO", faithfulness: "YES", utility: "YES" }
}

/** A judge that fails on the trajectory with no verdict in `verdicts`. */
const judgeLayer = Layer.succeed(Judge, {
  name: "stub",
  judge: (_task, t) => {
    const v = verdicts[t.id]
    return v === undefined ? Effect.fail(new JudgeError({ message: `no verdict for ${t.id}` })) : Effect.succeed({ ...v, judge: "stub" })
  }
})

const layer = Layer.mergeAll(judgeLayer, Layer.succeed(ToolLibrary, makeLibrary("test", [], DepGraph.empty)))

const zero = { traj: 0, phase: 0, step: 0, combined: 0 }

describe("Scoring.scoreGroup: an unjudged trajectory", () => {
  it.effect("is kept, masked (0 advantage at every level) by default, counted, and leaves the others' advantages as without it", () =>
    Effect.gen(function*() {
      const scored = yield* Scoring.scoreGroup(task, [good, failing, partial])
      assert.deepStrictEqual(scored.map((t) => t.id), [good.id, failing.id, partial.id])
      assert.strictEqual(Scoring.unjudgedCount(scored), 1)
      const unjudged = scored[1] as Trajectory
      assert.isUndefined(unjudged.verdict)
      assert.deepStrictEqual(unjudged.answerReward, { pattern: "none", rAns: 0 })
      assert.strictEqual(unjudged.steps.length, failing.steps.length)
      for (const s of unjudged.steps) assert.deepStrictEqual(s.advantage, zero)
      // its rewards are still computed and recorded
      assert.isTrue(unjudged.steps.every((s) => s.reward !== undefined))

      const without = yield* Scoring.scoreGroup(task, [good, partial])
      assert.strictEqual(Scoring.unjudgedCount(without), 0)
      assert.deepStrictEqual([scored[0], scored[2]].map((t) => t?.steps.map((s) => s.advantage)), without.map((t) => t.steps.map((s) => s.advantage)))
      // and the judged ones do get a trajectory-level signal
      assert.isAbove(scored[0]?.steps[0]?.advantage?.traj ?? 0, 0.9)
    }).pipe(Effect.provide(layer)))

  it.effect("with the opt-in penalty, it is charged R_ans = penalty and normalised with the others", () =>
    Effect.gen(function*() {
      const config = Reward.configure({ answer: { unjudged: { penalty: -0.5 } } })
      assert.strictEqual(config._tag, "Ok")
      if (config._tag !== "Ok") return
      const scored = yield* Scoring.scoreGroup(task, [good, failing, partial], { reward: config.config, estimator: "paraagent" })
      const unjudged = scored[1] as Trajectory
      assert.deepStrictEqual(unjudged.answerReward, { pattern: "none", rAns: -0.5 })
      assert.isBelow(unjudged.steps[0]?.advantage?.traj ?? 0, -1)
      assert.strictEqual(Scoring.unjudgedCount(scored), 1)
    }).pipe(Effect.provide(layer)))
})

describe("Scoring.scoreGroup: a truncated rollout (answer.truncation)", () => {
  // the same solved answer twice: once before T_max, once at the forced last round (stop max_rounds)
  const answered = good
  const truncated: Trajectory = { ...good, stop: "max_rounds" }

  it.effect("\"score\" (the default) pays both the same; { cap: -0.5 } pays the truncated one the worst verdict's R_ans, keeps its verdict, and its outcomes now differ", () =>
    Effect.gen(function*() {
      const plain = yield* Scoring.scoreGroup(task, [answered, truncated], { reward: Reward.defaultRewardConfig, estimator: "grpo" })
      assert.deepStrictEqual(plain.map((t) => t.answerReward), [{ pattern: "111", rAns: 1.5 }, { pattern: "111", rAns: 1.5 }])
      assert.isFalse(Trainer.outcomesDiffer(plain, Reward.defaultRewardConfig.advantage.tolerance))
      const config = Reward.configure({ answer: { truncation: { cap: -0.5 } } })
      assert.strictEqual(config._tag, "Ok")
      if (config._tag !== "Ok") return
      const capped = yield* Scoring.scoreGroup(task, [answered, truncated], { reward: config.config, estimator: "grpo" })
      assert.deepStrictEqual(capped.map((t) => t.answerReward), [{ pattern: "111", rAns: 1.5 }, { pattern: "111", rAns: -0.5 }])
      // the judge's verdict (and so Pass@1) is untouched
      assert.deepStrictEqual(capped.map((t) => t.verdict), plain.map((t) => t.verdict))
      assert.isTrue(Trainer.outcomesDiffer(capped, config.config.advantage.tolerance))
      assert.isAbove(capped[0]?.steps[0]?.advantage?.traj ?? 0, 0.9)
      assert.isBelow(capped[1]?.steps[0]?.advantage?.traj ?? 0, -0.9)
    }).pipe(Effect.provide(layer)))
})

describe("Scoring.equivalence: one rule for Path≈, the reward's coverage, the ceiling and DAgger", () => {
  it.effect("with the generated world it is StudentOracle.worldEquivalence by tool name; without it, the exact tool only", () =>
    Effect.gen(function*() {
      const w = world()
      const rule = StudentOracle.worldEquivalence(w.ops)
      const byName = yield* Scoring.equivalence.pipe(Effect.provideService(GeneratedWorld, w))
      // every ordered pair among tools of a few operation types (equivalent pairs included), and some unknown names
      const names = [...w.ops.keys()].slice(0, 400)
      let equivalent = 0
      for (const a of names) {
        for (const b of names) {
          const expected = a === b || rule(w.library.get(a)!, w.library.get(b)!) !== undefined
          if (byName(a, b) !== expected) assert.fail(`${a} ~ ${b}: ${byName(a, b)}, the world's rule says ${expected}`)
          if (expected && a !== b) equivalent++
        }
      }
      assert.isAbove(equivalent, 0)
      assert.isFalse(byName(names[0]!, "no-such-tool"))
      assert.isTrue(byName("no-such-tool", "no-such-tool"))
      const exact = yield* Scoring.equivalence
      assert.isTrue(exact(names[0]!, names[0]!))
      assert.isFalse(exact(names[0]!, names[1]!))
    }))
})
