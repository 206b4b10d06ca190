/**
 * Composing a custom pipeline from ParaAgent's public API: a hand-written Policy, a different Retriever
 * (the plain-BM25 baseline), changed phase-reward weights, a small generated world — then a few scored rollouts.
 * Run it: `npx tsx examples/custom-pipeline.ts`.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { pathToFileURL } from "node:url"
import {
  Bm25,
  Domain,
  Evaluation,
  ParaAct,
  Policy,
  Retriever,
  Reward,
  Rollout,
  RuleJudge,
  Scoring,
  Simulator,
  TaskSource,
  ToolLibrary
} from "paraagent"

/**
 * A greedy keyword agent, written in a few lines: search with the request, call the best tool whose required
 * arguments it can fill from quoted values in the request, then answer with what the call returned.
 */
const greedyPolicy = Layer.succeed(
  Policy.Policy,
  Policy.Policy.of({
    name: "greedy-example",
    privileged: false,
    act: (context) =>
      Effect.sync(() => {
        const quoted = [...context.request.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? "")
        const called = context.history.flatMap((s) => s.observations)
        const ok = called.find((o) => o.outcome._tag === "ok")
        const turn = ok !== undefined && ok.outcome._tag === "ok"
          ? { searches: [], calls: [], answer: `The tool returned: ${JSON.stringify(ok.outcome.payload).slice(0, 400)}` }
          : context.tools.length === 0 || context.round === 0
          ? { searches: [{ slot: "s1", query: context.request }], calls: [] }
          : called.length > 0 || context.controller === "Answer"
          ? { searches: [], calls: [], answer: "I could not get an answer from the tools." }
          : (() => {
            const tool = context.tools.find((t) => t.parameters.required.length <= quoted.length) ?? context.tools[0]!
            const args = Object.fromEntries(tool.parameters.required.map((name, i) => [name, quoted[i] ?? ""]))
            return { searches: [], calls: [{ id: Domain.callId("c1"), tool: tool.name, arguments: args }] }
          })()
        return { text: ParaAct.printTurn(turn), turn, usage: { promptTokens: 0, completionTokens: 0 } }
      })
  })
)

/** Phase rewards weighted evenly instead of the paper's 0.1 / 0.2 / 0.2 / 0.5. */
export const evenPhaseWeights = Reward.configure({ phase: { w1: 0.25, w2: 0.25, w3: 0.25, w4: 0.25 } })

/** The example: 3 tasks (one per level) on a 5,000-tool world, 2 rollouts each, scored with the even weights. */
export const program = Effect.gen(function*() {
  if (evenPhaseWeights._tag !== "Ok") return yield* Effect.die(new Error("invalid reward config"))
  const reward = evenPhaseWeights.config
  const source = yield* TaskSource.TaskSource
  const tasks = yield* source.sample({ split: "test", count: 3 })
  const rollout = yield* Rollout.Rollout
  const results = yield* Effect.forEach(tasks, (task) =>
    Effect.gen(function*() {
      const group = yield* rollout.runGroup(task, { paradigm: "ParaAct", seed: 11, size: 2 })
      const scored = yield* Scoring.scoreGroup(task, group, { reward, estimator: "paraagent" })
      return { task, scored, outcomes: scored.map((t) => Evaluation.outcomeOf(task, t)) }
    }))
  for (const r of results) {
    yield* Console.log(`${r.task.level} ${r.task.id}: rounds ${r.outcomes.map((o) => o.rounds).join("/")}, R_ans ${r.scored.map((t) => t.answerReward?.rAns).join("/")}`)
  }
  return results
})

/** The pipeline's layer: world → simulator, tasks, plain BM25, the greedy policy, the rule judge, the runtime. */
export const layer = (() => {
  const env = ToolLibrary.layerGenerated({ seed: 3, size: 5_000 })
  const parts = Layer.mergeAll(
    Simulator.layer({ faultRate: 0.05 }),
    TaskSource.layerGenerated({ seed: 5 }),
    Retriever.Retriever.layerBm25With(Bm25.plainConfig, "bm25-plain"),
    greedyPolicy,
    RuleJudge.layer
  ).pipe(Layer.provideMerge(env))
  return Rollout.layer({ maxRounds: 6 }).pipe(Layer.provideMerge(parts))
})()

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  NodeRuntime.runMain(program.pipe(Effect.provide(layer)))
}
