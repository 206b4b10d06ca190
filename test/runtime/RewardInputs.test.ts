import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import * as Reward from "../../src/math/Reward.ts"
import * as Facts from "../../src/math/TrajectoryFacts.ts"
import { Retriever, RetrieverError } from "../../src/retrieval/Retriever.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import { makeStep } from "../math/fixtures.ts"
import { libraryLayer, makeLog, retrieverLayer, scriptedPolicy, simulatorLayer, task } from "../support/RolloutKit.ts"
import type { Behaviour } from "../support/RolloutKit.ts"

/** What the runtime records and the reward reads: dropped actions, machinery faults, truncation, DFSDT paths. */
const names = ["alpha", "beta", "gamma"]
const search = (...slots: ReadonlyArray<string>) =>
  `<search>[${slots.map((s, i) => `{"slot":"s${i + 1}","query":"${s}"}`).join(",")}]</search>`
const calls = (tools: ReadonlyArray<string>) =>
  `<call>[${tools.map((t, i) => `{"id":"c${i + 1}","name":"${t}","arguments":{"q":"x"}}`).join(",")}]</call>`
const answer = "<answer>done</answer>"

const run = (
  turns: ReadonlyArray<string>,
  paradigm: "ParaAct" | "ReAct" | "ExploreThenExecute" | "DFSDT",
  options: { readonly behaviours?: Readonly<Record<string, Behaviour>>; readonly retriever?: Layer.Layer<Retriever>; readonly maxRounds?: number } = {}
) =>
  Effect.gen(function*() {
    const log = yield* makeLog()
    const layer = Rollout.layer({ faults: false, topK: 5, ...(options.maxRounds !== undefined ? { maxRounds: options.maxRounds } : {}) }).pipe(
      Layer.provide(Layer.mergeAll(
        libraryLayer(names),
        options.retriever ?? retrieverLayer(names),
        scriptedPolicy(turns),
        simulatorLayer(options.behaviours ?? {}, log)
      ))
    )
    const rollout = yield* Effect.provide(Rollout.Rollout, layer)
    return yield* rollout.run(task, { paradigm, seed: 1 })
  })

const scoreOf = (t: Trajectory) => Reward.score(Facts.fromTrajectory(t))
const executePhase = (t: Trajectory) => {
  const facts = Facts.fromTrajectory(t)
  const p = facts.phases.findIndex((phase) => phase.kind === "execute")
  return { facts: facts.phases[p], reward: scoreOf(t).phases[p] }
}

describe("dropped actions are recorded as dropped, never as failures", () => {
  it.effect("a ReAct turn with two calls (one dropped) scores its phase like the same single call under ParaAct", () =>
    Effect.gen(function*() {
      const react = yield* run([search("alpha beta"), calls(["alpha", "beta"]), answer], "ReAct")
      const para = yield* run([search("alpha beta"), calls(["alpha"]), answer], "ParaAct")
      assert.deepStrictEqual(react.steps[1]?.validation.dropped, ["call:c2"])
      const r = executePhase(react)
      const p = executePhase(para)
      assert.deepStrictEqual(r.facts?.calls.map((c) => [c.tool, c.result]), [["alpha", "ok"]])
      assert.strictEqual(r.reward?.l4, 1)
      assert.strictEqual(r.reward?.rPhase, p.reward?.rPhase)
      assert.strictEqual(Facts.fromTrajectory(react).steps[1]?.dropped, 1)
    }))

  it.effect("a dropped search is treated the same way: not charged, counted as dropped", () =>
    Effect.gen(function*() {
      const react = yield* run([search("alpha", "beta"), calls(["alpha"]), answer], "ReAct")
      const para = yield* run([search("alpha"), calls(["alpha"]), answer], "ParaAct")
      assert.deepStrictEqual(react.steps[0]?.validation.dropped, ["search:s2"])
      const facts = Facts.fromTrajectory(react)
      assert.strictEqual(facts.steps[0]?.dropped, 1)
      assert.strictEqual(facts.phases[0]?.searches.length, 1)
      assert.strictEqual(scoreOf(react).phases[0]?.rPhase, scoreOf(para).phases[0]?.rPhase)
    }))

  it.effect("a turn whose only actions were dropped opens no phase of its own", () =>
    Effect.gen(function*() {
      // Explore-then-Execute drops searches once execution began: nothing explored in that round
      const t = yield* run([search("alpha"), calls(["alpha"]), search("beta"), answer], "ExploreThenExecute")
      assert.deepStrictEqual(t.steps[2]?.validation.dropped, ["search:s1"])
      assert.deepStrictEqual(Facts.fromTrajectory(t).phases.map((p) => p.kind), ["explore", "execute"])
    }))
})

describe("faults of the machinery are kept apart from the agent's errors", () => {
  it.effect("a failing retriever is recorded on the search, and not charged as 'found nothing'", () =>
    Effect.gen(function*() {
      const broken = Layer.succeed(Retriever, Retriever.of({ name: "broken", search: () => Effect.fail(new RetrieverError({ message: "index offline" })) }))
      const t = yield* run([search("alpha"), answer], "ParaAct", { retriever: broken })
      const s = t.steps[0]?.searches[0]
      assert.deepStrictEqual(s?.hits, [])
      assert.include(s?.error ?? "", "index offline")
      const facts = Facts.fromTrajectory(t)
      assert.strictEqual(facts.steps[0]?.machineryFaults, 1)
      assert.strictEqual(facts.phases[0]?.searches.length, 0)
    }))

  it.effect("a crashing tool is a tool_defect, left out of the phase's calls", () =>
    Effect.gen(function*() {
      const t = yield* run([search("alpha beta"), calls(["alpha", "beta"]), answer], "ParaAct", { behaviours: { beta: { _tag: "die" } } })
      const beta = t.steps[1]?.observations.find((o) => o.tool === "beta")?.outcome
      assert.isTrue(beta?._tag === "error" && beta.error.kind === "tool_defect")
      const e = executePhase(t)
      assert.deepStrictEqual(e.facts?.calls.map((c) => c.tool), ["alpha"])
      assert.strictEqual(e.reward?.l4, 1)
      assert.strictEqual(Facts.fromTrajectory(t).steps[1]?.machineryFaults, 1)
    }))
})

describe("truncation is visible", () => {
  it.effect("an answer at the forced last round stops with max_rounds and keeps the answer", () =>
    Effect.gen(function*() {
      const t = yield* run([search("alpha"), search("beta"), search("gamma"), answer], "ParaAct", { maxRounds: 4 })
      assert.strictEqual(t.steps.length, 4)
      assert.strictEqual(t.stop, "max_rounds")
      assert.strictEqual(t.answer, "done")
      const early = yield* run([search("alpha"), answer], "ParaAct", { maxRounds: 4 })
      assert.strictEqual(early.stop, "answer")
    }))
})

describe("DFSDT is scored on the path the policy saw", () => {
  it("a step after an abandoned branch is scored against its root-to-parent path, not the branch", () => {
    // step 0 plans and searches; step 1 (child of 0) is a dead end that found a new tool; the runtime backtracks, so
    // step 2 is a second child of step 0: the policy saw only step 0, where nothing new happened since the plan.
    const steps = [
      makeStep(0, { plan: [{ id: "c1", tool: "alpha" }], searches: [{ slot: "a", hits: ["alpha"] }] }),
      { ...makeStep(1, { searches: [{ slot: "b", hits: ["beta"] }], calls: [{ id: "c1", tool: "alpha", result: "server_error" }] }), parent: 0 },
      { ...makeStep(2, { calls: [{ id: "c1", tool: "alpha", result: "ok", payload: { v: 1 } }] }), parent: 0 }
    ]
    const tree = Facts.fromSteps(steps, undefined, { tree: true })
    const linear = Facts.fromSteps(steps, undefined)
    // on the path [0], step 2 comes right after the search that found alpha: new information (May)
    assert.strictEqual(tree.steps[2]?.decision.state, "May")
    assert.deepStrictEqual(tree.steps[2]?.seenBefore, ["alpha"])
    // scored linearly it would also see the abandoned branch's beta and its failure
    assert.deepStrictEqual(linear.steps[2]?.seenBefore, ["alpha", "beta"])
    // the call id c1 reused on the second branch binds to that branch's call, and is not a repeat of the abandoned one
    assert.deepStrictEqual(tree.steps[2]?.calls.map((c) => [c.id, c.result]), [["c1", "ok"]])
  })

  it.effect("fromTrajectory scores DFSDT trajectories as trees", () =>
    Effect.gen(function*() {
      // step 1 (a call of beta, which crashes) is a dead end the runtime abandons; step 2 is its sibling under step 0
      const plan = `<plan>[{"id":"c1","tool":"alpha","deps":[]},{"id":"c2","tool":"gamma","deps":["c1"]}]</plan>`
      const t = yield* run([plan + search("alpha beta"), calls(["beta"]), calls(["alpha"]), answer], "DFSDT", { behaviours: { beta: { _tag: "die" } } })
      assert.deepStrictEqual(t.steps.map((s) => s.parent), [undefined, 0, 0, 2])
      const facts = Facts.fromTrajectory(t)
      assert.deepStrictEqual(facts.steps.map((s) => s.seenBefore), Facts.fromSteps(t.steps, t.verdict, { tree: true }).steps.map((s) => s.seenBefore))
      // the policy saw step 0's search as the last news before step 2, not the abandoned failure of step 1
      assert.strictEqual(facts.steps[2]?.decision.reason, "new_observation")
      assert.strictEqual(Facts.fromSteps(t.steps, t.verdict).steps[2]?.decision.reason, "recoverable_failure")
    }))
})
