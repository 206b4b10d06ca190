import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import * as App from "../../layers/App.ts"
import * as PolicyScorerOnnx from "../../layers/onnx/PolicyScorerOnnx.ts"
import type { Task } from "../../src/domain/Task.ts"
import type { Step, Trajectory } from "../../src/domain/Trajectory.ts"
import * as ActionSpace from "../../src/agent/ActionSpace.ts"
import * as LearnedPolicy from "../../src/agent/LearnedPolicy.ts"
import { PolicyError } from "../../src/agent/Policy.ts"
import * as PolicyOnnxGraph from "../../src/agent/PolicyOnnxGraph.ts"
import * as SetScorer from "../../src/math/SetScorer.ts"
import * as TurnDistribution from "../../src/math/TurnDistribution.ts"
import { appLayer, contextOf, rollouts, sampleTasks, worldOptions } from "../support/LearnedWorld.ts"

/** The seeded initialisation (near-uniform choices), and a sharper network (output layer at full scale). */
const initialWeights: LearnedPolicy.Weights = { ...LearnedPolicy.initial(1), version: 4 }
const sharpWeights: LearnedPolicy.Weights = { params: SetScorer.init(LearnedPolicy.shape, 5, 1.0), version: 9 }
const otherWeights: LearnedPolicy.Weights = { params: SetScorer.init(LearnedPolicy.shape, 77, 1.0), version: 10 }

interface Run {
  readonly weights: LearnedPolicy.Weights
  readonly trajectories: ReadonlyArray<Trajectory>
}

interface Collected {
  readonly tasks: ReadonlyArray<Task>
  readonly runs: ReadonlyArray<Run>
}

let collected: Promise<Collected> | undefined
/** Rollouts of the learned policy on 8 held-out tasks, once with each set of weights. */
const data = Effect.promise(() =>
  (collected ??= Effect.runPromise(Effect.gen(function*() {
    const cell = yield* Ref.make(initialWeights)
    return yield* Effect.gen(function*() {
      const tasks = yield* sampleTasks("test", 8)
      const runs: Array<Run> = []
      for (const weights of [initialWeights, sharpWeights]) {
        yield* Ref.set(cell, weights)
        runs.push({ weights, trajectories: yield* rollouts(tasks, 500) })
      }
      return { tasks, runs }
    }).pipe(Effect.provide(appLayer(LearnedPolicy.layer(cell))))
  }))))

/** Every recorded step with its task, trajectory and the rebuilt space. */
const stepsOf = (d: Collected, run: Run) =>
  run.trajectories.flatMap((trajectory, t) => {
    const task = d.tasks[t] as Task
    return trajectory.steps.map((step) => {
      const context = contextOf(trajectory, step.index, task)
      return { trajectory, step, task, context, space: ActionSpace.build(context) }
    })
  })

const logSumExp = (xs: ReadonlyArray<number>): number => {
  const m = Math.max(...xs)
  return m + Math.log(xs.reduce((s, x) => s + Math.exp(x - m), 0))
}
const sigma = (z: number): number => 1 / (1 + Math.exp(-z))

/**
 * The log-probability of a recorded choice written out from the factors: the kind's log-softmax, then for a subset
 * kind one Bernoulli term per candidate minus log(1 − Π(1 − p)), for a one-of kind its log-softmax, and the plan bit.
 * Computed naively (products, not the module's stable prefix sums), so it only serves well-conditioned steps.
 */
const byHand = (layout: TurnDistribution.Layout, z: Float64Array, choice: TurnDistribution.Choice) => {
  const slot = layout.kinds[choice.kind] as TurnDistribution.KindSlot
  let lp = z[slot.row]! - logSumExp(layout.kinds.map((k) => z[k.row]!))
  const candidates = Array.from({ length: slot.end - slot.start }, (_, i) => slot.start + i)
  let emptyProbability = 0
  if (slot.mode === "subset") {
    emptyProbability = 1
    for (const r of candidates) {
      const p = sigma(z[r]!)
      lp += choice.selected.includes(r) ? Math.log(p) : Math.log(1 - p)
      emptyProbability *= 1 - p
    }
    lp -= Math.log(1 - emptyProbability)
  } else if (slot.mode === "one") {
    lp += z[choice.selected[0]!]! - logSumExp(candidates.map((r) => z[r]!))
  }
  if (slot.plan) {
    const p = sigma(z[layout.planRow!]!)
    lp += choice.plan ? Math.log(p) : Math.log(1 - p)
  }
  return { logprob: lp, emptyProbability }
}

describe("LearnedPolicy log-probabilities", () => {
  it.effect("the recorded log-prob is what rescore gives under the same weights, and the factors written out by hand", () =>
    Effect.gen(function*() {
      const d = yield* data
      let steps = 0
      let handChecked = 0
      const covered = new Set<string>()
      let maxDelta = 0
      for (const run of d.runs) {
        const policy = LearnedPolicy.make(yield* Ref.make(run.weights))
        for (const { step, context, space } of stepsOf(d, run)) {
          const decision = step.decision!
          assert.isDefined(step.logprob)
          assert.strictEqual(decision.version, run.weights.version)
          assert.strictEqual(decision.rows, space.layout.rows)
          assert.strictEqual(decision.kind, space.kinds[decision.kindIndex])
          const rescored = yield* policy.rescore!(context, step)
          maxDelta = Math.max(maxDelta, Math.abs(rescored.logprob - step.logprob!))
          assert.isAtMost(Math.abs(rescored.logprob - step.logprob!), 1e-9)
          steps++
          const z = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets)
          const hand = byHand(space.layout, z, LearnedPolicy.choiceOf(decision))
          if (hand.emptyProbability > 1 - 1e-6) continue
          assert.isAtMost(Math.abs(hand.logprob - step.logprob!), 1e-9, `step ${step.index}: ${hand.logprob} by hand, ${step.logprob} recorded`)
          handChecked++
          const slot = space.layout.kinds[decision.kindIndex]!
          covered.add(slot.mode)
          if (slot.mode === "subset" && slot.end - slot.start >= 2) covered.add("subset of several")
          if (decision.selected.length >= 2) covered.add("several chosen")
          if (slot.plan) covered.add(decision.plan ? "plan emitted" : "plan withheld")
          if (space.layout.kinds.length >= 3) covered.add("three kinds")
        }
      }
      assert.isAbove(steps, 30)
      assert.isAbove(handChecked, 20)
      for (const c of ["none", "subset", "subset of several", "several chosen", "plan emitted", "plan withheld", "three kinds"]) assert.isTrue(covered.has(c), c)
      console.log(`log-prob exactness: ${steps} steps, max |recorded − rescored| = ${maxDelta.toExponential(2)}; ${handChecked} checked by hand`)
    }))

  it.effect("sampling at a temperature records π(logits / T)'s log-prob, rescore gives it back, and T = 1 is the untempered policy", () =>
    Effect.gen(function*() {
      const d = yield* data
      const temperature = 0.5
      // the seeded initialisation: near-even kinds, so rollouts run several rounds
      const cell = yield* Ref.make(initialWeights)
      const tasks = d.tasks
      const tempered = yield* rollouts(tasks, 900).pipe(Effect.provide(appLayer(LearnedPolicy.layer(cell, { temperature }))))
      const policy = LearnedPolicy.make(cell, { temperature })
      let steps = 0
      let differs = 0
      for (const [t, trajectory] of tempered.entries()) {
        for (const step of trajectory.steps) {
          const context = contextOf(trajectory, step.index, tasks[t] as Task)
          const space = ActionSpace.build(context)
          const z = SetScorer.logits(initialWeights.params, space.features, space.layout.rows, space.layout.sets)
          const choice = LearnedPolicy.choiceOf(step.decision!)
          const atT = TurnDistribution.logProb(space.layout, TurnDistribution.temper(z, temperature), choice)
          assert.isAtMost(Math.abs(atT - step.logprob!), 1e-9, `step ${step.index}: recorded ${step.logprob}, π(z / T) gives ${atT}`)
          assert.isAtMost(Math.abs((yield* policy.rescore!(context, step)).logprob - atT), 1e-9)
          if (Math.abs(TurnDistribution.logProb(space.layout, z, choice) - atT) > 1e-6) differs++
          steps++
        }
      }
      assert.isAbove(steps, 10)
      assert.isAbove(differs, steps / 2, "the tempered log-prob is another distribution's")
      // T = 1 is the policy without a temperature: the same turns with the same log-probabilities
      const one = yield* rollouts(tasks, 900).pipe(Effect.provide(appLayer(LearnedPolicy.layer(cell, { temperature: 1 }))))
      const none = yield* rollouts(tasks, 900).pipe(Effect.provide(appLayer(LearnedPolicy.layer(cell))))
      assert.deepStrictEqual(one.map((t) => t.steps.map((s) => [s.raw, s.logprob])), none.map((t) => t.steps.map((s) => [s.raw, s.logprob])))
      assert.notDeepEqual(none.map((t) => t.steps.map((s) => s.logprob)), tempered.map((t) => t.steps.map((s) => s.logprob)))
    }))

  it.effect("decoded answers: a sampled answer turn states what greedy evaluation states, its log-prob is the kind's alone, rescore gives it back; other turns are drawn", () =>
    Effect.gen(function*() {
      const d = yield* data
      const thresholds = { answer: LearnedPolicy.evalAnswerThreshold, cover: LearnedPolicy.evalAnswerCover, quota: LearnedPolicy.evalAnswerQuota }
      const options = { sampledAnswer: "decoded", answerThreshold: thresholds.answer, answerCover: thresholds.cover, answerQuota: thresholds.quota } as const
      const cell = yield* Ref.make(sharpWeights)
      const trajectories = yield* rollouts(d.tasks, 700).pipe(Effect.provide(appLayer(LearnedPolicy.layer(cell, options))))
      const policy = LearnedPolicy.make(cell, options)
      let answers = 0
      let drawn = 0
      for (const [t, trajectory] of trajectories.entries()) {
        for (const step of trajectory.steps) {
          const decision = step.decision!
          const context = contextOf(trajectory, step.index, d.tasks[t] as Task)
          const space = ActionSpace.build(context)
          const z = SetScorer.logits(sharpWeights.params, space.features, space.layout.rows, space.layout.sets)
          const slot = space.layout.kinds[decision.kindIndex] as TurnDistribution.KindSlot
          const kindLp = z[slot.row]! - logSumExp(space.layout.kinds.map((k) => z[k.row]!))
          assert.isAtMost(Math.abs((yield* policy.rescore!(context, step)).logprob - step.logprob!), 1e-9)
          if (decision.kind === "answer" && slot.mode === "subset") {
            assert.strictEqual(decision.decoded, true)
            // the facts greedy evaluation states when it answers here
            const forced = Float64Array.from(z)
            space.layout.kinds.forEach((k, i) => (forced[k.row] = i === decision.kindIndex ? 10 : -10))
            assert.deepStrictEqual(decision.selected, LearnedPolicy.greedyChoice(space, forced, thresholds).selected)
            assert.isAtMost(Math.abs(step.logprob! - kindLp), 1e-9, "the facts are no factor")
            answers++
          } else {
            assert.isUndefined(decision.decoded)
            assert.isAtMost(Math.abs(step.logprob! - byHand(space.layout, z, LearnedPolicy.choiceOf(decision)).logprob), 1e-6)
            drawn++
          }
        }
      }
      assert.isAbove(answers, 3)
      assert.isAbove(drawn, 10)
    }))

  it.effect("new weights change rescore (not the recorded behaviour log-prob); a tampered context is a PolicyError", () =>
    Effect.gen(function*() {
      const d = yield* data
      const run = d.runs[1]!
      const cell = yield* Ref.make(run.weights)
      const policy = LearnedPolicy.make(cell)
      yield* Ref.set(cell, otherWeights)
      let uncertain = 0
      for (const { step, context, space } of stepsOf(d, run)) {
        const rescored = yield* policy.rescore!(context, step)
        const expected = TurnDistribution.logProb(space.layout, SetScorer.logits(otherWeights.params, space.features, space.layout.rows, space.layout.sets), LearnedPolicy.choiceOf(step.decision!))
        assert.isAtMost(Math.abs(rescored.logprob - expected), 1e-12)
        if (space.layout.kinds.length > 1) {
          uncertain++
          assert.isAbove(Math.abs(rescored.logprob - step.logprob!), 1e-6, `step ${step.index} scores the same under other weights`)
        }
      }
      assert.isAbove(uncertain, 10)

      const { step, context, trajectory, task } = stepsOf(d, run).find((s) => s.step.index >= 1)!
      const tampered = [
        { ...context, request: `${context.request} Also, what is the weather in "Paris"?` },
        contextOf(trajectory, step.index - 1, task),
        { ...context, tools: context.tools.slice(1) }
      ]
      for (const bad of tampered) {
        const error = yield* Effect.flip(policy.rescore!(bad, step))
        assert.instanceOf(error, PolicyError)
        assert.include(error.message, "digest")
      }
      const bare: Step = (({ decision: _, ...rest }) => rest)(step)
      const missing = yield* Effect.flip(policy.rescore!(context, bare))
      assert.strictEqual(missing._tag, "PolicyError")
      assert.include(missing.message, "no decision")
    }))
})

/** PolicyScorerOnnx's scorer as the policy's: it holds one exported version and refuses others. */
const onnxScorer = (scorer: PolicyScorerOnnx.Scorer, version: number): LearnedPolicy.Scorer => (weights, x, rows, sets) =>
  weights.version !== version
    ? Effect.fail(new PolicyError({ message: `the ONNX scorer holds weights version ${version}, asked for ${weights.version}` }))
    : scorer.score(x, rows, sets).pipe(Effect.mapError((e) => new PolicyError({ message: `ONNX scorer (${e.reason}): ${e.message}` })))

describe("LearnedPolicy with the ONNX scorer", () => {
  it.effect("scores real action-space matrices as the training forward pass does, and takes the same turns", () =>
    Effect.gen(function*() {
      const d = yield* data
      const run = d.runs[1]!
      const scorer = yield* PolicyScorerOnnx.make(PolicyOnnxGraph.toOnnx(run.weights.params))
      let maxDelta = 0
      let rows = 0
      for (const { space } of stepsOf(d, run)) {
        const onnx = yield* scorer.score(space.features, space.layout.rows, space.layout.sets)
        const mlp = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets)
        assert.strictEqual(onnx.length, mlp.length)
        onnx.forEach((v, i) => (maxDelta = Math.max(maxDelta, Math.abs(v - mlp[i]!))))
        rows += space.layout.rows
      }
      assert.isAtMost(maxDelta, 1e-5)
      console.log(`ONNX vs SetScorer.logits on ${rows} real rows: max |Δ| = ${maxDelta.toExponential(2)}`)

      // the policy with the ONNX scorer, plugged in through App.layer's learned choice, on the first four tasks
      const cell = yield* Ref.make(run.weights)
      const tasks = d.tasks.slice(0, 4)
      const viaOnnx = yield* rollouts(tasks, 500).pipe(Effect.provide(App.layer({
        world: { size: worldOptions.size },
        tasks: { holdoutTools: true },
        policy: { kind: "learned", weights: cell, options: { scorer: onnxScorer(scorer, run.weights.version) } }
      })))
      viaOnnx.forEach((t, i) => {
        const mlp = run.trajectories[i]!
        assert.deepStrictEqual(t.steps.map((s) => s.raw), mlp.steps.map((s) => s.raw))
        assert.deepStrictEqual(t.steps.map((s) => s.decision), mlp.steps.map((s) => s.decision))
        t.steps.forEach((s, j) => assert.isAtMost(Math.abs(s.logprob! - mlp.steps[j]!.logprob!), 1e-9))
      })
      assert.isAbove(viaOnnx.reduce((n, t) => n + t.steps.length, 0), 4)
      // the trajectories compared hold searches, calls and answers, not only immediate answers
      const kinds = new Set(viaOnnx.flatMap((t) => t.steps.map((s) => s.decision!.kind)))
      assert.sameMembers([...kinds], ["search", "call", "answer"])
    }).pipe(Effect.scoped))
})

describe("LearnedPolicy greedy decoding", () => {
  it.effect("the untrained policy rates every subset candidate near σ(initialOutputBias) ≈ 0.05, so its greedy subset turn takes one candidate", () =>
    Effect.gen(function*() {
      const d = yield* data
      const run = d.runs.find((r) => r.weights === initialWeights) as Run
      let subsets = 0
      for (const { space } of stepsOf(d, run)) {
        const logits = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets)
        space.layout.kinds.forEach((slot, k) => {
          if (slot.mode !== "subset" || slot.end === slot.start) return
          subsets++
          for (let r = slot.start; r < slot.end; r++) assert.isBelow(sigma(logits[r] as number), 0.15)
          // the kind forced to this one: the most probable subset is a single candidate
          const forced = Float64Array.from(logits)
          space.layout.kinds.forEach((other, i) => (forced[other.row] = i === k ? 10 : -10))
          assert.strictEqual(TurnDistribution.greedy(space.layout, forced).selected.length, 1)
        })
      }
      assert.isAbove(subsets, 10)
      assert.strictEqual(LearnedPolicy.initialOutputBias, -2.944)
    }), 300_000)

  it.effect("answer threshold ½ is the most probable turn; below ½ only the answer's facts change (greedyAbove on the answer kind)", () =>
    Effect.gen(function*() {
      const d = yield* data
      let answers = 0
      for (const run of d.runs) {
        for (const { space } of stepsOf(d, run)) {
          // the answer kind forced, so that every step exercises the facts
          const logits = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets)
          const answerK = space.kinds.indexOf("answer")
          space.layout.kinds.forEach((k, i) => (logits[k.row] = i === answerK ? 10 : -10))
          const half = LearnedPolicy.greedyChoice(space, logits, { answer: 0.5 })
          assert.deepStrictEqual(half, TurnDistribution.greedy(space.layout, logits))
          const low = LearnedPolicy.greedyChoice(space, logits, { answer: LearnedPolicy.evalAnswerThreshold })
          assert.deepStrictEqual(low, TurnDistribution.greedyAbove(space.layout, logits, LearnedPolicy.evalAnswerThreshold))
          for (const r of half.selected) assert.include(low.selected, r)
          if ((space.layout.kinds[answerK] as TurnDistribution.KindSlot).mode === "subset") answers++
          // a search or call kind is not thresholded by the answer's threshold, only by its own
          space.layout.kinds.forEach((k, i) => (logits[k.row] = i === 0 ? 10 : -10))
          if (space.kinds[0] !== "answer") {
            assert.deepStrictEqual(LearnedPolicy.greedyChoice(space, logits, { answer: 0.05 }), TurnDistribution.greedy(space.layout, logits))
            const own = { [space.kinds[0] as string]: 0.05 }
            assert.deepStrictEqual(LearnedPolicy.greedyChoice(space, logits, own), TurnDistribution.greedyAbove(space.layout, logits, 0.05, (k) => k === 0))
          }
        }
      }
      assert.isAbove(answers, 0)
    }), 300_000)

  it.effect("the clause cover adds exactly each uncovered clause's most probable fact above its floor, and nothing on other kinds", () =>
    Effect.gen(function*() {
      const d = yield* data
      let added = 0
      for (const run of d.runs) {
        for (const { space } of stepsOf(d, run)) {
          const answerK = space.kinds.indexOf("answer")
          const slot = space.layout.kinds[answerK] as TurnDistribution.KindSlot
          if (slot.mode !== "subset") continue
          for (const shift of [0, -3]) {
            // the trained logits, and the same lowered so that most facts fall below the threshold
            const logits = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets).map((z) => z + shift)
            space.layout.kinds.forEach((k, i) => (logits[k.row] = i === answerK ? 10 : -10))
            const base = LearnedPolicy.greedyChoice(space, logits, { answer: LearnedPolicy.evalAnswerThreshold })
            for (const floor of [0, 0.1]) {
              const covered = LearnedPolicy.greedyChoice(space, logits, { answer: LearnedPolicy.evalAnswerThreshold, cover: floor })
              const clauseOf = (r: number) => space.facts[r - slot.start]?.clause ?? -1
              for (const r of base.selected) assert.include(covered.selected, r)
              assert.deepStrictEqual([...covered.selected].sort((a, b) => a - b), covered.selected)
              const extra = covered.selected.filter((r) => !base.selected.includes(r))
              added += extra.length
              const before = new Set(base.selected.map(clauseOf))
              for (let c = 0; c < space.clauses.length; c++) {
                const rows = space.facts.flatMap((f, i) => ((f.clause ?? -1) === c ? [slot.start + i] : []))
                const mine = extra.filter((r) => clauseOf(r) === c)
                if (rows.length === 0 || before.has(c)) {
                  assert.lengthOf(mine, 0)
                  continue
                }
                const best = rows.reduce((a, b) => ((logits[b] as number) > (logits[a] as number) ? b : a))
                const above = TurnDistribution.sigmoid(logits[best] as number) > floor
                assert.deepStrictEqual(mine, above ? [best] : [], `clause ${c}`)
              }
              assert.isTrue(extra.every((r) => clauseOf(r) >= 0))
            }
            // another kind is not touched by the cover
            space.layout.kinds.forEach((k, i) => (logits[k.row] = i === 0 ? 10 : -10))
            if (space.kinds[0] !== "answer") assert.deepStrictEqual(LearnedPolicy.greedyChoice(space, logits, { cover: 0 }), TurnDistribution.greedy(space.layout, logits))
          }
        }
      }
      assert.isAbove(added, 0)
    }), 300_000)
  it.effect("the stop answers exactly when every clause has a fact above its floor, with the facts greedy decoding states", () =>
    Effect.gen(function*() {
      const d = yield* data
      let stopped = 0
      let kept = 0
      for (const run of d.runs) {
        for (const { space } of stepsOf(d, run)) {
          const answerK = space.kinds.indexOf("answer")
          const thresholds = { answer: LearnedPolicy.evalAnswerThreshold, cover: 0, quota: 0 }
          for (const shift of [0, 2]) {
            const logits = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets).map((z) => z + shift)
            // another kind most probable: the stop alone can make the turn an answer
            space.layout.kinds.forEach((k, i) => (logits[k.row] = i === 0 ? 10 : -10))
            for (const floor of [0.3, 0.5]) {
              const cut = Math.log(floor / (1 - floor))
              const slot = answerK < 0 ? undefined : space.layout.kinds[answerK]
              const ready = slot !== undefined && space.clauses.length > 0 &&
                space.clauses.every((_, c) => space.facts.some((f, i) => f.clause === c && (logits[slot.start + i] as number) > cut))
              assert.strictEqual(LearnedPolicy.readyToAnswer(space, logits, floor), ready)
              const withStop = LearnedPolicy.greedyChoice(space, logits, { ...thresholds, stop: floor })
              if (ready && space.kinds[0] !== "answer") {
                stopped++
                // the answer greedy decoding states when the answer is the most probable kind
                const answerLogits = Float64Array.from(logits)
                space.layout.kinds.forEach((k, i) => (answerLogits[k.row] = i === answerK ? 10 : -10))
                assert.strictEqual(withStop.kind, answerK)
                assert.deepStrictEqual(withStop.selected, LearnedPolicy.greedyChoice(space, answerLogits, thresholds).selected)
              } else {
                if (!ready) kept++
                assert.deepStrictEqual(withStop, LearnedPolicy.greedyChoice(space, logits, thresholds))
              }
            }
          }
        }
      }
      assert.isAbove(stopped, 0)
      assert.isAbove(kept, 0)
    }), 300_000)

  it.effect("the clause quota fills each clause up to the values it asks with its most probable facts of new values above the floor, on top of the cover", () =>
    Effect.gen(function*() {
      const d = yield* data
      let added = 0
      let filled = 0
      for (const run of d.runs) {
        for (const { space } of stepsOf(d, run)) {
          const answerK = space.kinds.indexOf("answer")
          const slot = space.layout.kinds[answerK] as TurnDistribution.KindSlot
          if (slot.mode !== "subset") continue
          for (const shift of [0, -3]) {
            const logits = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets).map((z) => z + shift)
            space.layout.kinds.forEach((k, i) => (logits[k.row] = i === answerK ? 10 : -10))
            const covered = LearnedPolicy.greedyChoice(space, logits, { answer: LearnedPolicy.evalAnswerThreshold, cover: 0 })
            for (const floor of [0, 0.1]) {
              const cut = floor === 0 ? -Infinity : Math.log(floor / (1 - floor))
              const quota = LearnedPolicy.greedyChoice(space, logits, { answer: LearnedPolicy.evalAnswerThreshold, cover: 0, quota: floor })
              for (const r of covered.selected) assert.include(quota.selected, r)
              assert.deepStrictEqual([...quota.selected].sort((a, b) => a - b), quota.selected)
              const extra = quota.selected.filter((r) => !covered.selected.includes(r))
              added += extra.length
              const fact = (r: number) => space.facts[r - slot.start] as ActionSpace.FactCandidate
              assert.isTrue(extra.every((r) => (fact(r).clause ?? -1) >= 0 && (logits[r] as number) > cut))
              for (let c = 0; c < space.clauses.length; c++) {
                const rows = space.facts.flatMap((f, i) => ((f.clause ?? -1) === c ? [slot.start + i] : []))
                const want = ActionSpace.requestedValues(space.clauses[c] as string)
                const before = new Set(rows.filter((r) => covered.selected.includes(r)).map((r) => fact(r).value))
                const mine = extra.filter((r) => fact(r).clause === c)
                const after = new Set([...before, ...mine.map((r) => fact(r).value)])
                // only new values, one row each, never past the quota
                assert.strictEqual(after.size, before.size + mine.length, `clause ${c}`)
                if (before.size >= want) assert.lengthOf(mine, 0)
                else assert.isAtMost(after.size, want)
                // the most probable: no row left out above the floor with a new value outranks an added one, and the
                // quota stops short only when no such row remains
                const left = rows.filter((r) => !quota.selected.includes(r) && !after.has(fact(r).value) && (logits[r] as number) > cut)
                const lowest = Math.min(...mine.map((r) => logits[r] as number))
                for (const r of left) assert.isAtMost(logits[r] as number, lowest)
                if (after.size < want) assert.lengthOf(left, 0)
                if (mine.length > 0 && after.size === want) filled++
              }
            }
            // another kind is not touched by the quota
            space.layout.kinds.forEach((k, i) => (logits[k.row] = i === 0 ? 10 : -10))
            if (space.kinds[0] !== "answer") assert.deepStrictEqual(LearnedPolicy.greedyChoice(space, logits, { quota: 0 }), TurnDistribution.greedy(space.layout, logits))
          }
        }
      }
      assert.isAbove(added, 0)
      assert.isAbove(filled, 0)
    }), 300_000)

  it.effect("the record bound keeps each list's facts to the most probable records their clause asks about, and drops nothing else", () =>
    Effect.gen(function*() {
      const d = yield* data
      let trimmed = 0
      let kept = 0
      for (const run of d.runs) {
        for (const { space } of stepsOf(d, run)) {
          const answerK = space.kinds.indexOf("answer")
          const slot = space.layout.kinds[answerK] as TurnDistribution.KindSlot
          if (slot.mode !== "subset") continue
          for (const shift of [0, -3]) {
            const logits = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets).map((z) => z + shift)
            space.layout.kinds.forEach((k, i) => (logits[k.row] = i === answerK ? 10 : -10))
            const decoding = { answer: LearnedPolicy.evalAnswerThreshold, cover: 0, quota: 0 }
            const before = LearnedPolicy.greedyChoice(space, logits, decoding)
            const after = LearnedPolicy.greedyChoice(space, logits, { ...decoding, records: true })
            assert.deepStrictEqual({ ...after, selected: [] }, { ...before, selected: [] })
            for (const r of after.selected) assert.include(before.selected, r)
            assert.isAbove(after.selected.length, 0)
            // the stated facts of each list of a call's output, by record (written out here, not with the module's grouping)
            const fact = (r: number) => space.facts[r - slot.start] as ActionSpace.FactCandidate
            const listOf = (r: number): string | undefined => {
              const f = fact(r)
              const at = f.path.findIndex((p) => typeof p === "number")
              return at < 0 || (f.clause ?? -1) < 0 ? undefined : JSON.stringify([f.callId, ...f.path.slice(0, at)])
            }
            const recordOf = (r: number) => fact(r).path.find((p) => typeof p === "number") as number
            for (const r of before.selected) if (listOf(r) === undefined) assert.include(after.selected, r)
            const lists = new Set(before.selected.flatMap((r) => listOf(r) ?? []))
            for (const list of lists) {
              const rows = before.selected.filter((r) => listOf(r) === list)
              const n = Math.max(1, ActionSpace.recordsAsked(space.clauses[fact(rows[0] as number).clause as number] as string))
              const best = new Map<number, number>()
              for (const r of rows) best.set(recordOf(r), Math.max(best.get(recordOf(r)) ?? -Infinity, logits[r] as number))
              const keptRecords = new Set(rows.filter((r) => after.selected.includes(r)).map(recordOf))
              // a record is kept whole or not at all, and as many as the clause asks (all when there are no more)
              for (const r of rows) assert.strictEqual(after.selected.includes(r), keptRecords.has(recordOf(r)))
              assert.strictEqual(keptRecords.size, Math.min(n, best.size))
              // the kept records are the most probable: none dropped is rated above one kept
              const lowestKept = Math.min(...[...keptRecords].map((k) => best.get(k) as number))
              for (const [k, b] of best) if (!keptRecords.has(k)) assert.isAtMost(b, lowestKept)
              if (best.size > n) trimmed++
              else kept++
            }
          }
        }
      }
      assert.isAbove(trimmed, 0)
      assert.isAbove(kept, 0)
    }), 300_000)

  it.effect("skipping repeats never chooses a call that repeats a successful operation, leaves other turns alone, and drops the call kind when every call repeats", () =>
    Effect.gen(function*() {
      const d = yield* data
      let skipped = 0
      let unchanged = 0
      let kindDropped = 0
      for (const run of d.runs) {
        for (const { space } of stepsOf(d, run)) {
          const callK = space.kinds.indexOf("call")
          if (callK < 0) continue
          const slot = space.layout.kinds[callK] as TurnDistribution.KindSlot
          const logits = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets)
          // the call kind made most probable, and (on a second pass) a repeating call made the best candidate
          for (const lift of [false, true]) {
            const z = Float64Array.from(logits)
            space.layout.kinds.forEach((k, i) => (z[k.row] = i === callK ? 10 : -10 + i))
            const first = space.calls.findIndex((c) => c.repeats)
            if (lift && first >= 0) z[slot.start + first] = 5
            const before = LearnedPolicy.greedyChoice(space, z, {})
            const after = LearnedPolicy.greedyChoice(space, z, { repeats: true })
            if (first < 0) {
              assert.deepStrictEqual(after, before)
              unchanged++
              continue
            }
            if (space.calls.every((c) => c.repeats)) {
              assert.notStrictEqual(after.kind, callK)
              // the next most probable kind, as greedy decoding takes it
              const rest = space.layout.kinds.map((k, i) => (i === callK ? -Infinity : z[k.row] as number))
              assert.strictEqual(after.kind, rest.indexOf(Math.max(...rest)))
              kindDropped++
              continue
            }
            assert.strictEqual(after.kind, callK)
            assert.isAbove(after.selected.length, 0)
            for (const r of after.selected) assert.isFalse((space.calls[r - slot.start] as ActionSpace.CallCandidate).repeats)
            // the calls kept are greedy decoding's over the calls that do not repeat: those above ½, else the best one
            const open = space.calls.flatMap((c, i) => (c.repeats ? [] : [slot.start + i]))
            const above = open.filter((r) => (z[r] as number) > 0)
            const best = open.reduce((a, b) => ((z[b] as number) > (z[a] as number) ? b : a))
            assert.deepStrictEqual(after.selected, above.length > 0 ? above : [best])
            if (before.selected.some((r) => (space.calls[r - slot.start] as ActionSpace.CallCandidate).repeats)) skipped++
          }
        }
      }
      assert.isAbove(skipped, 0, "some greedy call turn would have repeated an operation")
      assert.isAbove(unchanged, 0, "some call turn has nothing to skip")
      assert.isAbove(kindDropped, 0, "some call turn has only calls that repeat")
    }), 300_000)

  it.effect("the joint kind moves only the search and call kind rows, by α times their best candidates' log-probabilities, keeping their share against the answer; α = 0 is greedy decoding", () =>
    Effect.gen(function*() {
      const d = yield* data
      const logSumExp = (xs: ReadonlyArray<number>) => {
        const m = Math.max(...xs)
        return m + Math.log(xs.reduce((a, x) => a + Math.exp(x - m), 0))
      }
      let both = 0
      let moved = 0
      for (const run of d.runs) {
        for (const { space } of stepsOf(d, run)) {
          const logits = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets)
          assert.deepStrictEqual(LearnedPolicy.greedyChoice(space, logits, { jointKind: 0 }), LearnedPolicy.greedyChoice(space, logits, {}))
          for (const alpha of [0.25, 1]) {
            const z = LearnedPolicy.jointKind(space, logits, alpha)
            const goOn = space.layout.kinds.filter((_, k) => space.kinds[k] === "search" || space.kinds[k] === "call")
            // every row but the search and call kind rows unchanged
            const kindRows = new Set(goOn.map((slot) => slot.row))
            for (let r = 0; r < logits.length; r++) if (!kindRows.has(r)) assert.strictEqual(z[r], logits[r])
            if (goOn.length === 0) continue
            // going on keeps its probability against answering
            assert.closeTo(logSumExp(goOn.map((slot) => z[slot.row] as number)), logSumExp(goOn.map((slot) => logits[slot.row] as number)), 1e-9)
            if (goOn.length < 2) continue
            both++
            // between the two, the log-odds move by α times the difference of their best candidates' log-probabilities
            const best = (slot: TurnDistribution.KindSlot) => {
              const xs = Array.from(logits.subarray(slot.start, slot.end))
              return slot.mode === "one" ? Math.max(...xs) - logSumExp(xs) : TurnDistribution.logSigmoid(Math.max(...xs))
            }
            const [a, b] = goOn as [TurnDistribution.KindSlot, TurnDistribution.KindSlot]
            assert.closeTo(
              (z[a.row] as number) - (z[b.row] as number),
              (logits[a.row] as number) - (logits[b.row] as number) + alpha * (best(a) - best(b)),
              1e-9
            )
            // the turn is greedy decoding's over the moved kind rows: the same turn when the kind stays
            const plain = LearnedPolicy.greedyChoice(space, logits, {})
            const joint = LearnedPolicy.greedyChoice(space, logits, { jointKind: alpha })
            assert.deepStrictEqual(joint, LearnedPolicy.greedyChoice(space, z, {}))
            if (joint.kind !== plain.kind) moved++
            else assert.deepStrictEqual(joint, plain)
          }
        }
      }
      assert.isAbove(both, 0, "some state offers both searching and calling")
      assert.isAbove(moved, 0, "some state's kind moves")
    }), 300_000)

  it.effect("calling every open clause adds, per clause with no success, its most probable call that would open it, and keeps the rest of the turn", () =>
    Effect.gen(function*() {
      const d = yield* data
      let added = 0
      let none = 0
      for (const run of d.runs) {
        for (const { space } of stepsOf(d, run)) {
          const callK = space.kinds.indexOf("call")
          if (callK < 0) continue
          const slot = space.layout.kinds[callK] as TurnDistribution.KindSlot
          const z = SetScorer.logits(run.weights.params, space.features, space.layout.rows, space.layout.sets)
          space.layout.kinds.forEach((k, i) => (z[k.row] = i === callK ? 10 : -10))
          const before = LearnedPolicy.greedyChoice(space, z, {})
          const after = LearnedPolicy.greedyChoice(space, z, { clauses: true })
          assert.deepStrictEqual({ ...after, selected: [] }, { ...before, selected: [] })
          if (slot.mode !== "subset") {
            assert.deepStrictEqual(after, before)
            continue
          }
          for (const r of before.selected) assert.include(after.selected, r)
          const call = (r: number) => space.calls[r - slot.start] as ActionSpace.CallCandidate
          const extra = after.selected.filter((r) => !before.selected.includes(r))
          // written out here: per clause no chosen call is of, the best row among those that would open it
          const chosenClauses = new Set(before.selected.map((r) => call(r).clause))
          const want: Array<number> = []
          const clauses = new Set(space.calls.filter((c) => c.opensClause && !chosenClauses.has(c.clause)).map((c) => c.clause))
          for (const clause of clauses) {
            const rows = space.calls.flatMap((c, i) => (c.opensClause && c.clause === clause ? [slot.start + i] : []))
            want.push(rows.reduce((a, b) => ((z[b] as number) > (z[a] as number) ? b : a)))
          }
          assert.deepStrictEqual([...extra].sort((a, b) => a - b), want.sort((a, b) => a - b))
          for (const r of extra) assert.isTrue(call(r).opensClause)
          assert.strictEqual(new Set(extra.map((r) => call(r).clause)).size, extra.length)
          if (extra.length > 0) added++
          else none++
        }
      }
      assert.isAbove(added, 0, "some call turn opens another clause")
      assert.isAbove(none, 0, "some call turn has no other clause to open")
    }), 300_000)
})
