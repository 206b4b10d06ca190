import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Policy } from "../../src/agent/Policy.ts"
import type { PolicyOutput } from "../../src/agent/Policy.ts"
import * as Session from "../../src/runtime/Session.ts"
import { Rollout } from "../../src/runtime/Rollout.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import { TaskSource } from "../../src/toolenv/TaskSource.ts"
import * as App from "../../layers/App.ts"
import { canonicalJson } from "../../src/math/CanonicalJson.ts"
import * as Facts from "../../src/math/TrajectoryFacts.ts"
import { callId, toolName } from "../../src/domain/Ids.ts"
// a trajectory without its clock readings (the only thing a replay may change)
import { timeless } from "../support/ServedEpisode.ts"

const app = App.layer({ world: { size: 2000 }, tasks: { holdoutTools: true }, policy: { kind: "teacher", options: { mistakeRate: 0.3 } } })


describe("Session", () => {
  it.effect("stepping a session by hand with the policy's turns gives the rollout's trajectory; a replay of the outputs gives it again", () =>
    Effect.gen(function*() {
      const source = yield* TaskSource
      const rollout = yield* Rollout
      const policy = yield* Policy
      const tasks = yield* source.sample({ split: "test", count: 6, levels: ["I2", "I3"], seed: 5 })
      for (const paradigm of ["ParaAct", "DFSDT"] as const) {
        for (const task of tasks) {
          const expected = yield* rollout.run(task, { paradigm, seed: 9 })
          const spec: Session.SessionSpec = { task, paradigm, seed: 9, policy: policy.name, privileged: policy.privileged }
          const session = yield* Session.open(spec)
          const outputs: Array<PolicyOutput> = []
          for (let context = session.context(); context !== undefined; context = session.context()) {
            const output = yield* policy.act(context)
            outputs.push(output)
            yield* session.step(output)
          }
          const byHand = yield* session.trajectory
          assert.strictEqual(timeless(byHand), timeless(expected))
          // the teacher's structured turns rebuild the same episode; so does the text it printed (a parsed turn lists
          // its fields in the parser's order, hence the canonical comparison)
          const replayed = yield* Session.replay(spec, outputs)
          assert.strictEqual(timeless(yield* replayed.trajectory), timeless(expected))
          const fromText = yield* Session.replay(spec, outputs.map((o) => ({ text: o.text, usage: o.usage })))
          assert.isTrue(canonicalJson(JSON.parse(timeless(yield* fromText.trajectory))) === canonicalJson(JSON.parse(timeless(expected))))
          assert.isTrue(replayed.status().done)
          assert.strictEqual(replayed.status().stop, expected.stop)
        }
      }
    }).pipe(Effect.provide(app)))

  it.effect("stepScore of every step equals what TrajectoryFacts folds from the whole trajectory, in all four paradigms", () =>
    Effect.gen(function*() {
      const source = yield* TaskSource
      const policy = yield* Policy
      const tasks = yield* source.sample({ split: "test", count: 5, levels: ["I1", "I2", "I3"], seed: 8 })
      let scored = 0
      for (const paradigm of ["ParaAct", "ReAct", "ExploreThenExecute", "DFSDT"] as const) {
        for (const task of tasks) {
          const session = yield* Session.open({ task, paradigm, seed: 4, policy: policy.name, privileged: policy.privileged })
          for (let context = session.context(); context !== undefined; context = session.context()) {
            yield* session.step(yield* policy.act(context))
            // scored as each step lands (what the server returns), then compared with the fold of the finished episode
          }
          const facts = Facts.fromTrajectory(yield* session.trajectory)
          facts.steps.forEach((expected, i) => {
            const { decision, state, parsed, answered, plan, violations } = expected
            assert.deepStrictEqual(session.stepScore(i), { decision, state, parsed, answered, plan, violations }, `${paradigm} ${task.id} step ${i}`)
            scored++
          })
          assert.isUndefined(session.stepScore(facts.steps.length))
        }
      }
      assert.isAbove(scored, 60)
      // a DFSDT dead end: the step after it extends the root's child, so it is scored against that path, not the dead end
      const [task] = tasks
      const usage = { promptTokens: 0, completionTokens: 0 }
      const tree = yield* Session.open({ task: task!, paradigm: "DFSDT", seed: 4, policy: "remote" })
      const plan = { nodes: [{ id: callId("c1"), deps: [] }] }
      yield* tree.step({ text: "", usage, turn: { plan, searches: [{ slot: "s1", query: "weather forecast" }], calls: [] } })
      const bad = (id: string) => ({ text: "", usage, turn: { searches: [], calls: [{ id: callId(id), tool: toolName("no_such_tool"), arguments: {} }] } })
      yield* tree.step(bad("c1"))
      const third = yield* tree.step(bad("c2"))
      assert.strictEqual(third.parent, 0)
      const facts = Facts.fromTrajectory(yield* tree.trajectory)
      assert.strictEqual(tree.stepScore(2)?.decision.reason, "new_observation")
      assert.deepStrictEqual(tree.stepScore(2)?.decision, facts.steps[2]?.decision)
    }).pipe(Effect.provide(app)))

  it.effect("a step after the end fails with SessionEnded; end() records the reason once", () =>
    Effect.gen(function*() {
      const source = yield* TaskSource
      const [task] = yield* source.sample({ split: "test", count: 1, seed: 1 })
      const session = yield* Session.open({ task: task!, paradigm: "ParaAct", seed: 1, policy: "remote" }, { maxRounds: 2 })
      const noop = { text: "<search>[]</search>", usage: { promptTokens: 0, completionTokens: 0 } }
      const first = yield* session.step({ text: "<answer>nothing</answer>", usage: { promptTokens: 0, completionTokens: 0 } })
      assert.strictEqual(first.turn?.answer, "nothing")
      assert.isTrue(session.status().done)
      assert.isUndefined(session.context())
      const refused = yield* Effect.flip(session.step(noop))
      assert.strictEqual(refused._tag, "SessionEnded")
      assert.include(refused.message, "answer after 1 rounds")
      session.end("interrupted", "late")
      const t = yield* session.trajectory
      assert.strictEqual(t.stop, "answer")
      assert.isUndefined(t.error)

      const other = yield* Session.open({ task: task!, paradigm: "ParaAct", seed: 1, policy: "remote" }, { maxRounds: 2 })
      yield* other.step({ text: "not a turn", usage: { promptTokens: 0, completionTokens: 0 } })
      yield* other.step({ text: "still not a turn", usage: { promptTokens: 0, completionTokens: 0 } })
      const full = yield* other.trajectory
      assert.strictEqual(full.stop, "max_rounds")
      assert.strictEqual(full.steps.length, 2)
      assert.isDefined(full.steps[0]!.protocolError)
    }).pipe(Effect.provide(app)))

  it.effect("a query searched again returns its next page [ours]: ranks k+1 … 2k, then 2k+1 …, also twice in one turn; a replay pages the same", () =>
    Effect.gen(function*() {
      const source = yield* TaskSource
      const retriever = yield* Retriever
      const [task] = yield* source.sample({ split: "test", count: 1, seed: 3 })
      const spec: Session.SessionSpec = { task: task!, paradigm: "ParaAct", seed: 2, policy: "remote" }
      const session = yield* Session.open(spec)
      const usage = { promptTokens: 0, completionTokens: 0 }
      const search = (...qs: Array<string>) => ({ text: `<search>${JSON.stringify(qs.map((query, i) => ({ slot: `s${i + 1}`, query })))}</search>`, usage })
      const query = "sentiment analysis of a text"
      const outputs = [search(query), search(query, "weather stations in a city"), search(query, query)]
      for (const output of outputs) yield* session.step(output)
      const t = yield* session.trajectory
      const deep = (yield* retriever.search([query], 15))[0]!.map((h) => h.tool)
      const shown = t.steps.flatMap((s) => s.searches.filter((r) => r.query === query))
      assert.deepStrictEqual(shown.map((r) => r.page), [undefined, 2, 3, 4])
      assert.deepStrictEqual(shown.map((r) => r.hits.map((h) => h.tool)), [deep.slice(0, 3), deep.slice(3, 6), deep.slice(6, 9), deep.slice(9, 12)])
      // another query keeps its own first page
      const other = t.steps[1]!.searches[1]!
      assert.isUndefined(other.page)
      assert.deepStrictEqual(other.hits, (yield* retriever.search([other.query], 3))[0])
      const replayed = yield* Session.replay(spec, outputs)
      assert.strictEqual(timeless(yield* replayed.trajectory), timeless(t))
    }).pipe(Effect.provide(app)))
})
