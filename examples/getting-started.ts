import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Domain, Evaluation, ParaAct, Policy, Retriever, Rollout, RuleJudge, Scoring, Simulator, TaskSource, ToolLibrary } from "paraagent"

// A policy: search with the request, call the best tool with the request's quoted values, answer with its payload.
const mine = Policy.Policy.of({ name: "mine", privileged: false, act: (context) => Effect.sync(() => {
  const ok = context.history.flatMap((step) => step.observations).find((o) => o.outcome._tag === "ok")
  const tool = context.tools[0]
  const quoted = [...context.request.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? "")
  const turn = ok?.outcome._tag === "ok" ? { searches: [], calls: [], answer: `It returned ${JSON.stringify(ok.outcome.payload)}` }
    : tool === undefined ? { searches: [{ slot: "s1", query: context.request }], calls: [] }
    : { searches: [], calls: [{ id: Domain.callId("c1"), tool: tool.name, arguments: Object.fromEntries(tool.parameters.required.map((p, i) => [p, quoted[i] ?? ""])) }] }
  return { text: ParaAct.printTurn(turn), turn, usage: { promptTokens: 0, completionTokens: 0 } }
}) })

const world = ToolLibrary.layerGenerated({ seed: 7, size: 2_000 })
const services = Layer.mergeAll(Simulator.layer(), TaskSource.layerGenerated(), Retriever.Retriever.layer, Layer.succeed(Policy.Policy, mine), RuleJudge.layer)
const app = Rollout.layer({ maxRounds: 6 }).pipe(Layer.provideMerge(services.pipe(Layer.provideMerge(world))))

const program = Effect.gen(function*() {
  const tasks = yield* (yield* TaskSource.TaskSource).sample({ split: "test", count: 6 })
  for (const task of tasks) {
    const group = yield* (yield* Rollout.Rollout).runGroup(task, { paradigm: "ParaAct", seed: 1, size: 2 })
    const scored = yield* Scoring.scoreGroup(task, group)
    const solved = scored.filter((t) => Evaluation.outcomeOf(task, t).success).length
    console.log(`${task.level} ${task.id}: solved ${solved}/2, R_ans ${scored.map((t) => t.answerReward?.rAns).join(" ")}, rounds ${scored.map((t) => t.steps.length).join(" ")}`)
  }
})
NodeRuntime.runMain(program.pipe(Effect.provide(app)))
