import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Rollout from "../../src/runtime/Rollout.ts"
import { contextKey, recordedRollouts } from "../support/RecordedRollouts.ts"

describe("Rollout.contextAt", () => {
  it.effect("rebuilds, from the trajectory alone, the context the runtime gave the policy at every step, in every paradigm", () =>
    Effect.gen(function*() {
      const maxRounds = 9
      // a high mistake rate: malformed turns, failed calls, DFSDT dead ends and re-expansions
      const run = yield* recordedRollouts({
        worldSize: 3_000,
        tasks: 3,
        paradigms: ["ParaAct", "ReAct", "ExploreThenExecute", "DFSDT"],
        group: 2,
        maxRounds,
        mistakeRate: 0.35
      })
      const requests = new Map(run.tasks.map((t) => [t.id as string, t.request]))
      let steps = 0
      let withAbandoned = 0
      let offPath = 0
      for (const trajectory of run.unscored) {
        const request = requests.get(trajectory.taskId)!
        for (const step of trajectory.steps) {
          const given = run.contexts.get(contextKey(trajectory.paradigm, trajectory.seed, step.index, request))
          assert.isDefined(given, `${trajectory.id} step ${step.index}`)
          const { task: _task, ...unprivileged } = given!
          const rebuilt = Rollout.contextAt(trajectory, step.index, { request, maxRounds, lookup: run.lookup })
          assert.deepStrictEqual(rebuilt, unprivileged, `${trajectory.id} step ${step.index}`)
          steps++
          if ((rebuilt?.abandoned ?? []).length > 0) withAbandoned++
          if (rebuilt !== undefined && rebuilt.history.length < step.index) offPath++
        }
      }
      assert.isAbove(steps, 100)
      // the DFSDT cases were exercised: abandoned expansions shown, and histories that are a path, not a prefix
      assert.isAbove(withAbandoned, 0)
      assert.isAbove(offPath, 0)
      assert.isUndefined(Rollout.contextAt(run.unscored[0]!, run.unscored[0]!.steps.length, { request: "", maxRounds, lookup: run.lookup }))
    }))
})
