import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Step, Trajectory } from "../../src/domain/Trajectory.ts"
import { Policy } from "../../src/agent/Policy.ts"
import type { PolicyContext } from "../../src/agent/Policy.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import * as Controller from "../../src/math/Controller.ts"
import * as History from "../../src/math/History.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import * as SimulatorModule from "../../src/toolenv/Simulator.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../../src/toolenv/world/Tasks.ts"
import * as World from "../../src/toolenv/world/World.ts"

let built: World.World | undefined
const smallWorld = (): World.World => (built ??= World.make({ seed: 7, size: 8_000 }))

/** Teacher rollouts on a small generated world, with every context the policy was shown recorded by round. */
const rollouts = (paradigm: "ParaAct" | "DFSDT", faultRate: number) =>
  Effect.gen(function*() {
    const world = smallWorld()
    const tasks = Tasks.make(world).take({ split: "train", count: 10 })
    const worldLayer = Layer.mergeAll(Layer.succeed(ToolLibrary, world.library), Layer.succeed(World.GeneratedWorld, world))
    const seen: Array<PolicyContext> = []
    const recording = Layer.effect(
      Policy,
      Effect.gen(function*() {
        const inner = yield* Policy
        return Policy.of({ ...inner, act: (context) =>
            Effect.suspend(() => {
              seen.push(context)
              return inner.act(context)
            }) })
      })
    ).pipe(Layer.provide(Teacher.layer({ mistakeRate: 0.3 })))
    const services = Layer.mergeAll(recording, Retriever.layerBm25, SimulatorModule.layer({ faultRate })).pipe(Layer.provideMerge(worldLayer))
    const rollout = yield* Effect.provide(Effect.gen(function*() {
      return yield* Rollout.Rollout
    }), Rollout.layer().pipe(Layer.provide(services)))
    const out: Array<{ readonly trajectory: Trajectory; readonly contexts: ReadonlyArray<PolicyContext> }> = []
    for (const task of tasks) {
      seen.length = 0
      const trajectory = yield* rollout.run(task, { paradigm, seed: 5 })
      out.push({ trajectory, contexts: [...seen] })
    }
    return out
  })

const indices = (steps: ReadonlyArray<Step>) => steps.map((s) => s.index)

describe("History", () => {
  it.effect("DFSDT: the policy was shown exactly the root-to-parent path History.pathTo rebuilds from the steps", () =>
    Effect.gen(function*() {
      let backtracked = 0
      for (const { trajectory, contexts } of yield* rollouts("DFSDT", 0.3)) {
        assert.strictEqual(contexts.length, trajectory.steps.length)
        trajectory.steps.forEach((step, i) => {
          const shown = contexts[i]?.history ?? []
          assert.deepStrictEqual(indices(shown), indices(History.pathTo(trajectory.steps, step.parent)))
          if (shown.length < i) backtracked++
        })
      }
      // the check is only worth something if some rollout left a branch behind
      assert.isAbove(backtracked, 0)
    }))

  it.effect("linear paradigms: the policy sees every earlier step; the fold agrees with the one-pass readers", () =>
    Effect.gen(function*() {
      for (const { trajectory, contexts } of yield* rollouts("ParaAct", 0.05)) {
        trajectory.steps.forEach((step, i) => {
          const shown = contexts[i]?.history ?? []
          assert.deepStrictEqual(indices(shown), indices(trajectory.steps.slice(0, i)))
          const before = History.of(shown)
          assert.deepStrictEqual([...before.retrieved], [...History.retrievedTools(shown)])
          assert.deepStrictEqual(before.callIds, History.callIds(shown))
          for (const tool of before.retrieved) assert.isTrue(before.known.has(tool))
          // the controller's memory is the same fold, plus its news
          const memory = Controller.remember(shown)
          assert.deepStrictEqual([...memory.known], [...before.known])
          assert.strictEqual(memory.latestPlan?.emittedAt, before.latestPlan?.emittedAt)
          // what the policy was told it may call is what it retrieved
          assert.deepStrictEqual(contexts[i]?.tools.map((t) => t.name).sort(), [...before.retrieved].sort())
          // every successful output is there to resolve a $ref against, under its call id
          for (const s of shown) for (const o of s.observations) if (o.outcome._tag === "ok") assert.isTrue(before.outputs.has(o.callId))
          void step
        })
      }
    }))

  it("pathTo follows parent links from a node to the root and stops at the root", () => {
    const step = (index: number, parent?: number): Step =>
      ({ index, ...(parent !== undefined ? { parent } : {}), searches: [], observations: [] }) as unknown as Step
    const steps = [step(0), step(1, 0), step(2, 0), step(3, 2), step(4)]
    assert.deepStrictEqual(indices(History.pathTo(steps, 3)), [0, 2, 3])
    assert.deepStrictEqual(indices(History.pathTo(steps, 1)), [0, 1])
    assert.deepStrictEqual(indices(History.pathTo(steps, undefined)), [])
    assert.deepStrictEqual(indices(History.pathTo(steps, 4)), [4])
  })
})
