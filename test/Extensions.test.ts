/**
 * A user's own Policy, Judge and Retriever, written against the package's public entry point ("paraagent", as a
 * consumer imports it) and plugged into the paradigm comparison job: each one is the one used — its name recorded in
 * config.json and on every trajectory, its hits the ones the policy saw, its verdicts the ones scored.
 * docs/getting-started.md shows the same shapes; the packed package runs them under plain node (Package.test.ts).
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ComparisonJob, Domain, Judge, ParaAct, Policy, Retriever, Rollout, RunFolder, Simulator, TaskSource, ToolLibrary } from "paraagent"

/** A retriever that ranks tools by how many of the query's words their name holds; scores are 100 − rank. */
const byName = (calls: Array<number>) =>
  Layer.effect(Retriever.Retriever, Effect.gen(function*() {
    const library = yield* ToolLibrary.ToolLibrary
    return Retriever.Retriever.of({
      name: "by-name",
      search: (queries, k) =>
        Effect.sync(() => {
          calls.push(queries.length)
          return queries.map((query) => {
            const words = new Set(query.toLowerCase().split(/\W+/).filter((w) => w.length > 3))
            return library.tools
              .map((tool) => ({ tool: tool.name, hits: tool.name.split("_").filter((part) => words.has(part)).length }))
              .filter((x) => x.hits > 0)
              .sort((a, b) => b.hits - a.hits || a.tool.localeCompare(b.tool))
              .slice(0, k)
              .map((x, rank) => ({ tool: x.tool, score: 100 - rank }))
          })
        })
    })
  }))

/** A policy that searches with the request, calls the first tool it was shown, then answers with what came back. */
const searchCallAnswer = Policy.Policy.of({
  name: "search-call-answer",
  privileged: false,
  act: (context) =>
    Effect.sync(() => {
      const ok = context.history.flatMap((s) => s.observations).find((o) => o.outcome._tag === "ok")
      const tool = context.tools[0]
      const turn = ok !== undefined || context.history.some((s) => s.observations.length > 0)
        ? { searches: [], calls: [], answer: ok?.outcome._tag === "ok" ? `It returned ${JSON.stringify(ok.outcome.payload).slice(0, 300)}` : "The tools failed." }
        : tool === undefined
        ? { searches: [{ slot: "s1", query: context.request }], calls: [] }
        : { searches: [], calls: [{ id: Domain.callId("c1"), tool: tool.name, arguments: Object.fromEntries(tool.parameters.required.map((p) => [p, "x"])) }] }
      return { text: ParaAct.printTurn(turn), turn, usage: { promptTokens: 0, completionTokens: turn.answer?.length ?? 0 } }
    })
})

/** A judge that passes an answer longer than 20 characters, and records what it was asked. */
const lengthJudge = (judged: Array<string>) =>
  Layer.succeed(Judge.Judge, Judge.Judge.of({
    name: "length",
    judge: (task, trajectory) =>
      Effect.sync(() => {
        judged.push(`${task.id}/${trajectory.id}`)
        const long = (trajectory.answer ?? "").length > 20
        return { quality: long ? "YES" : "NO", faithfulness: "YES", utility: long ? "YES" : "NO", judge: "length" } as const
      })
  }))

describe("a user's own Policy, Judge and Retriever through the public entry point", () => {
  it.effect("the comparison job runs them: each one's name, hits and verdicts are the ones recorded and scored", () =>
    Effect.gen(function*() {
      const searches: Array<number> = []
      const judged: Array<string> = []
      const world = ToolLibrary.layerGenerated({ seed: 7, size: 2_000 })
      const services = Layer.mergeAll(
        Simulator.layer({ faultRate: 0 }),
        TaskSource.layerGenerated(),
        byName(searches),
        Layer.succeed(Policy.Policy, searchCallAnswer),
        lengthJudge(judged)
      ).pipe(Layer.provideMerge(world))
      const app = Layer.mergeAll(Rollout.layer({ maxRounds: 4 }).pipe(Layer.provideMerge(services)), NodeServices.layer)
      const out = join(mkdtempSync(join(tmpdir(), "paraagent-extensions-")), "run")
      const result = yield* ComparisonJob.run({
        tasksPerLevel: 2, levels: ["I1", "I2"], seed: 1, paradigms: ["ParaAct"], group: 2, concurrency: 2, estimator: "paraagent", out, progress: false
      }).pipe(Effect.provide(app))

      const config = JSON.parse(readFileSync(join(out, "config.json"), "utf8")) as { readonly policy: string; readonly retriever: string }
      assert.deepStrictEqual([config.policy, config.retriever], ["search-call-answer", "by-name"])
      const read = yield* RunFolder.readJsonl(join(out, "trajectories.jsonl"), Domain.Trajectory).pipe(Effect.provide(NodeServices.layer))
      assert.strictEqual(read.errors.length, 0)
      const trajectories = read.values
      assert.strictEqual(trajectories.length, 2 * 2 * 2)
      // the policy: its name on every trajectory, its search-then-call-then-answer shape
      assert.isTrue(trajectories.every((t) => t.policy === "search-call-answer"))
      assert.isTrue(trajectories.every((t) => t.steps[0]?.searches.length === 1))
      // the retriever: called once per search round, its 100 − rank scores on every hit the policy saw
      assert.strictEqual(searches.length, trajectories.length)
      const hits = trajectories.flatMap((t) => t.steps.flatMap((s) => s.searches.flatMap((r) => r.hits)))
      assert.isAbove(hits.length, 0)
      assert.isTrue(hits.every((h) => h.score <= 100 && h.score > 90 && Number.isInteger(h.score)))
      // the judge: asked once per trajectory, its verdicts are the ones stored and turned into R_ans (Table 9)
      assert.sameMembers(judged, trajectories.map((t) => `${t.taskId}/${t.id}`))
      for (const t of trajectories) {
        assert.strictEqual(t.verdict?.judge, "length")
        const long = (t.answer ?? "").length > 20
        assert.strictEqual(t.answerReward?.rAns, long ? 1.5 : -0.5)
      }
      assert.strictEqual(result.summary.run.policy, "search-call-answer")
      rmSync(out, { recursive: true, force: true })
    }))
})
