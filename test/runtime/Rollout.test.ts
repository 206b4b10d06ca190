import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import type { Observation, ToolCall } from "../../src/domain/Call.ts"
import { Simulator } from "../../src/toolenv/Simulator.ts"
import type { Execution } from "../../src/toolenv/Simulator.ts"
import { timeless } from "../support/ServedEpisode.ts"
import * as Facts from "../../src/math/TrajectoryFacts.ts"
import * as Reward from "../../src/math/Reward.ts"
import * as Paradigm from "../../src/protocol/Paradigm.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import type { PolicyContext } from "../../src/agent/Policy.ts"
import { libraryLayer, makeLog, retrieverLayer, scriptedPolicy, simulatorLayer, task } from "../support/RolloutKit.ts"
import type { Behaviour, CallLog } from "../support/RolloutKit.ts"

const names = ["alpha", "beta", "gamma", "delta", "eps"]
const search = `<search>[{"slot":"s1","query":"${names.join(" ")}"}]</search>`
const calls = (tools: ReadonlyArray<string>) =>
  `<call>[${tools.map((t, i) => `{"id":"c${i + 1}","name":"${t}","arguments":{"q":"x"}}`).join(",")}]</call>`
const answer = "<answer>done</answer>"

const rolloutLayer = (
  turns: ReadonlyArray<string>,
  behaviours: Readonly<Record<string, Behaviour>>,
  log: CallLog,
  config: Partial<Rollout.RolloutConfig> = {},
  expectStarted?: number,
  seen?: Array<PolicyContext>
) =>
  Rollout.layer({ faults: false, ...config }).pipe(
    Layer.provide(Layer.mergeAll(
      libraryLayer(names),
      retrieverLayer(names),
      scriptedPolicy(turns, seen),
      simulatorLayer(behaviours, log, expectStarted)
    ))
  )

const callsOf = (obs: ReadonlyArray<Observation>) => Object.fromEntries(obs.map((o) => [o.tool, o]))

describe("Rollout", () => {
  it.live("runs a round's k independent calls concurrently: every call is in flight before any of them answers", () =>
    Effect.gen(function*() {
      const log = yield* makeLog()
      // each tool answers only once all k calls have started: run one after another, the first would wait for the
      // others until the call timeout and end as a timeout — an event decides, not the clock
      const behaviours = Object.fromEntries(names.map((n) => [n, { _tag: "rendezvous" } as const]))
      const rollout = yield* Effect.provide(Rollout.Rollout, rolloutLayer([search, calls(names), answer], behaviours, log, { topK: 5 }, names.length))
      const t = yield* rollout.run(task, { paradigm: "ParaAct", seed: 1 })
      const round = t.steps[1]
      assert.isDefined(round)
      const obs = round!.observations
      assert.strictEqual(obs.length, names.length)
      assert.deepStrictEqual(obs.map((o) => o.outcome._tag), names.map(() => "ok"))
      assert.sameMembers(log.started, obs.map((o) => o.callId))
      // the recorded times agree: the latest start precedes the earliest end
      const latestStart = Math.max(...obs.map((o) => o.startMs))
      const earliestEnd = Math.min(...obs.map((o) => o.endMs))
      assert.isAtMost(latestStart, earliestEnd)
      assert.strictEqual(t.stop, "answer")
    }))

  it.live("a failing or timing-out call leaves its siblings' results intact", () =>
    Effect.gen(function*() {
      const log = yield* makeLog()
      const behaviours: Record<string, Behaviour> = { beta: { _tag: "die" }, gamma: { _tag: "hang" } }
      const rollout = yield* Effect.provide(
        Rollout.Rollout,
        rolloutLayer([search, calls(["alpha", "beta", "gamma", "delta"]), answer], behaviours, log, { callTimeout: "200 millis", topK: 5 })
      )
      const t = yield* rollout.run(task, { paradigm: "ParaAct", seed: 1 })
      const byTool = callsOf(t.steps[1]!.observations)
      assert.strictEqual(byTool["alpha"]?.outcome._tag, "ok")
      assert.strictEqual(byTool["delta"]?.outcome._tag, "ok")
      const beta = byTool["beta"]?.outcome
      const gamma = byTool["gamma"]?.outcome
      // a crashing implementation is a fault of the machinery, not a retryable 500, and its message has no stack
      assert.isTrue(beta?._tag === "error" && beta.error.kind === "tool_defect")
      assert.isTrue(beta?._tag === "error" && beta.error.message.includes("beta exploded") && !beta.error.message.includes("    at "))
      assert.isTrue(gamma?._tag === "error" && gamma.error.kind === "timeout")
      assert.deepStrictEqual(log.interrupted, ["c3"])
      assert.strictEqual(t.stop, "answer")
    }))

  it.effect("a synchronous simulator's round runs inline and records what the fiber path records, a crash included", () =>
    Effect.gen(function*() {
      const answerOf = (call: ToolCall): Execution => {
        if (call.tool === "beta") throw new Error("beta exploded")
        return { outcome: { _tag: "ok", payload: { echo: call.arguments, tool: call.tool } }, attempt: 1 }
      }
      const simulator = (sync: boolean) =>
        Layer.succeed(Simulator, Simulator.of({
          open: () => Effect.succeed({
            execute: (call: ToolCall) => Effect.sync(() => answerOf(call)),
            ...(sync ? { executeSync: answerOf } : {})
          })
        }))
      const run = (sync: boolean) =>
        Effect.flatMap(
          Effect.provide(Rollout.Rollout, Rollout.layer({ faults: false, topK: 5 }).pipe(Layer.provide(Layer.mergeAll(
            libraryLayer(names),
            retrieverLayer(names),
            scriptedPolicy([search, calls(["alpha", "beta", "unknown_tool", "delta"]), answer]),
            simulator(sync)
          )))),
          (rollout) => rollout.run(task, { paradigm: "ParaAct", seed: 1 })
        )
      const inline = yield* run(true)
      const fibers = yield* run(false)
      const byTool = callsOf(inline.steps[1]!.observations)
      const beta = byTool["beta"]?.outcome
      assert.isTrue(beta?._tag === "error" && beta.error.kind === "tool_defect" && beta.error.message.includes("beta exploded"))
      assert.strictEqual(byTool["alpha"]?.outcome._tag, "ok")
      assert.strictEqual(byTool["unknown_tool"]?.attempts, 0)
      assert.strictEqual(timeless(inline), timeless(fibers))
    }))

  it.live("interrupting a rollout interrupts its in-flight calls", () =>
    Effect.gen(function*() {
      const log = yield* makeLog()
      const behaviours = Object.fromEntries(names.map((n) => [n, { _tag: "hang" } as const]))
      const rollout = yield* Effect.provide(
        Rollout.Rollout,
        rolloutLayer([search, calls(["alpha", "beta", "gamma"]), answer], behaviours, log, {}, 3)
      )
      const fiber = yield* Effect.forkChild(rollout.run(task, { paradigm: "ParaAct", seed: 1 }))
      yield* Deferred.await(log.allStarted)
      yield* Fiber.interrupt(fiber)
      assert.sameMembers(log.interrupted, ["c1", "c2", "c3"])
      assert.deepStrictEqual(log.finished, [])
    }))

  it.effect("enforces T_max: a policy that never answers stops after maxRounds", () =>
    Effect.gen(function*() {
      const log = yield* makeLog()
      const seen: Array<PolicyContext> = []
      const rollout = yield* Effect.provide(Rollout.Rollout, rolloutLayer([search], {}, log, { maxRounds: 4 }, undefined, seen))
      const t = yield* rollout.run(task, { paradigm: "ParaAct", seed: 1 })
      assert.strictEqual(t.steps.length, 4)
      assert.strictEqual(t.stop, "max_rounds")
      // the final round is announced to the policy as the Answer state
      assert.strictEqual(seen[3]?.controller, "Answer")
    }))

  it.effect("a malformed turn is recorded with its protocol error, scores r_base = 0, and the rollout continues", () =>
    Effect.gen(function*() {
      const log = yield* makeLog()
      const rollout = yield* Effect.provide(Rollout.Rollout, rolloutLayer(["<search>[oops</search>", search, answer], {}, log))
      const t = yield* rollout.run(task, { paradigm: "ParaAct", seed: 1 })
      assert.strictEqual(t.steps.length, 3)
      assert.strictEqual(t.steps[0]?.protocolError?.tag, "search")
      assert.isUndefined(t.steps[0]?.turn)
      assert.strictEqual(t.steps[1]?.searches.length, 1)
      assert.strictEqual(t.stop, "answer")
      assert.strictEqual(t.answer, "done")
      const scored = Reward.score(Facts.fromTrajectory(t))
      assert.deepStrictEqual(scored.steps.map((s) => s.rBase), [0, 1, 1])
    }))

  it.effect("refuses calls to tools the agent has not retrieved, and `$ref`s to calls of the same round", () =>
    Effect.gen(function*() {
      const log = yield* makeLog()
      const sameRound = `<call>[{"id":"c1","name":"alpha","arguments":{"q":"x"}},{"id":"c2","name":"beta","arguments":{"q":{"$ref":"c1.tool"}}}]</call>`
      const nextRound = `<call>[{"id":"c3","name":"beta","arguments":{"q":{"$ref":"c1.tool"}}}]</call>`
      const rollout = yield* Effect.provide(
        Rollout.Rollout,
        rolloutLayer([`<call>[{"id":"c9","name":"alpha","arguments":{"q":"x"}}]</call>`, `<search>[{"slot":"s1","query":"alpha beta"}]</search>`, sameRound, nextRound, answer], {}, log)
      )
      const t = yield* rollout.run(task, { paradigm: "ParaAct", seed: 1 })
      const first = t.steps[0]!
      assert.deepStrictEqual(first.validation.unseenTools.map(String), ["c9"])
      assert.strictEqual(first.observations[0]?.attempts, 0)
      const third = t.steps[2]!
      assert.deepStrictEqual(third.validation.unresolvedRefs.map((u) => u.callId as string), ["c2"])
      const fourth = t.steps[3]!.observations[0]!
      assert.deepStrictEqual(fourth.arguments, { q: "alpha" })
      assert.deepStrictEqual(fourth.refs.map(String), ["c1"])
      assert.deepStrictEqual(log.started, ["c1", "c3"])
    }))

  it.effect("ReAct runs one action per round and records what it dropped", () =>
    Effect.gen(function*() {
      const log = yield* makeLog()
      const rollout = yield* Effect.provide(Rollout.Rollout, rolloutLayer([search, calls(["alpha", "beta"]), answer], {}, log))
      const t = yield* rollout.run(task, { paradigm: "ReAct", seed: 1 })
      assert.strictEqual(t.steps[1]?.observations.length, 1)
      assert.deepStrictEqual(t.steps[1]?.validation.dropped, ["call:c2"])
    }))
})

describe("Paradigm.enforce", () => {
  const turn = {
    searches: [{ slot: "a", query: "x" }, { slot: "b", query: "y" }],
    calls: []
  }
  it("keeps everything under ParaAct", () => {
    assert.deepStrictEqual(Paradigm.enforce("ParaAct", turn, true).dropped, [])
  })
  it("refuses exploring after execution began under Explore-then-Execute", () => {
    assert.deepStrictEqual(Paradigm.enforce("ExploreThenExecute", turn, true).dropped, ["search:a", "search:b"])
    assert.deepStrictEqual(Paradigm.enforce("ExploreThenExecute", turn, false).dropped, [])
  })
  it("keeps the first search under ReAct and DFSDT", () => {
    for (const p of ["ReAct", "DFSDT"] as const) {
      const e = Paradigm.enforce(p, turn, false)
      assert.deepStrictEqual(e.turn.searches.map((s) => s.slot), ["a"])
      assert.deepStrictEqual(e.dropped, ["search:b"])
    }
  })
})
