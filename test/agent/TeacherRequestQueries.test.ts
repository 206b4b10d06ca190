import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Task } from "../../src/domain/Task.ts"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import * as ActionSpace from "../../src/agent/ActionSpace.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import { clauseOfCall } from "../../src/agent/teacher/ScriptedRoles.ts"
import { appLayer, contextOf, sampleTasks } from "../support/LearnedWorld.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"

/** The teacher's first searches phrased from the request (`firstQuery: "request"`), on the generated world. */
const demonstrations = (firstQuery: Teacher.TeacherOptions["firstQuery"]) =>
  Effect.gen(function*() {
    const tasks = yield* sampleTasks("train", 24)
    const rollout = yield* Rollout.Rollout
    const out = yield* rollout.runAll(tasks.map((task, i) => ({ task, options: { paradigm: "ParaAct" as const, seed: 40 + i } })), { concurrency: 4 })
    return { tasks, out }
  }).pipe(Effect.provide(appLayer(Teacher.layer({ mistakeRate: 0, firstQuery }))))

const firstSearches = (t: Trajectory) => t.steps[0]?.turn?.searches ?? []

describe("the teacher's request-grounded first searches", () => {
  it.effect("are the action space's clause queries, so the learned policy can express the first round", () =>
    Effect.gen(function*() {
      const { tasks, out } = yield* demonstrations("request")
      const documented = yield* demonstrations("documentation")
      let expressed = 0
      let documentedExpressed = 0
      out.forEach((t, i) => {
        const task = tasks[i] as Task
        const space = ActionSpace.build(contextOf(t, 0, task))
        const queries = new Set(space.searches.map((s) => s.query))
        // every first query is a clause candidate of the space — but a clause gives at most two (its capability words
        // and, when it quotes a value, the whole clause): a slot beyond those reads its tool's documentation instead
        const clauses = ActionSpace.clausesOf(task.request)
        const perClause = new Map<number, number>()
        for (const s of firstSearches(t)) {
          const at = clauseOfCall(task, s.slot, clauses)
          perClause.set(at, (perClause.get(at) ?? 0) + 1)
          const ofClause = queries.has(s.query)
          const { bare, full } = ActionSpace.clauseQueries(clauses[at] ?? "")
          const offered = bare.length > 0 && bare !== full ? 2 : 1
          if (!ofClause) assert.isAbove(perClause.get(at) as number, offered, `${task.id}: "${s.query}" is not a clause query of "${task.request}"`)
        }
        const projection = ActionSpace.project(space, t.steps[0]!.turn!)
        if (projection.choice !== undefined && projection.dropped.length === 0) expressed++
        const d = documented.out[i] as Trajectory
        const p = ActionSpace.project(ActionSpace.build(contextOf(d, 0, task)), d.steps[0]!.turn!)
        if (p.choice !== undefined && p.dropped.length === 0) documentedExpressed++
      })
      assert.isAtLeast(expressed, out.length / 2)
      assert.isBelow(documentedExpressed, expressed, "the documentation's phrasing is not what the action space writes")
      // later attempts still read the documentation: the teacher finds its tools and answers every task
      for (const t of out) assert.strictEqual(t.stop, "answer")
    }))

  it("maps a gold call to the clause quoting its argument, a dependent call to its dependency's clause", () => {
    const clauses = ["What is the home score of the match \"Ashford vs Bell\"?", "Also list the top 3 vehicles by asking price."]
    const task = {
      request: clauses.join(" "),
      gold: [
        { id: "c1", tool: "search_matches", arguments: { keyword: "Ashford vs Bell" }, deps: [] },
        { id: "c2", tool: "match_profile", arguments: { id: { $ref: "c1.results.0.id" } }, deps: ["c1"] },
        { id: "c3", tool: "top_vehicles", arguments: { limit: 4 }, deps: [] }
      ],
      facts: [{ key: "vehicle 1 of the top vehicles by asking price", value: "X", call: "c3", path: "items.0.title" }]
    } as unknown as Task
    assert.strictEqual(clauseOfCall(task, "c1", clauses), 0)
    assert.strictEqual(clauseOfCall(task, "c2", clauses), 0)
    assert.strictEqual(clauseOfCall(task, "c3", clauses), 1)
    assert.strictEqual(clauseOfCall(task, "c9", clauses), -1)
  })
})
