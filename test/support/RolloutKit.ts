/**
 * Small, controllable collaborators for rollout tests: a hand-made library, a substring retriever, a scripted
 * policy and a simulator whose tools sleep, die or hang on demand and record what happened to each call.
 */
import { Deferred, Effect, Layer } from "effect"
import type { ToolCall } from "../../src/domain/Call.ts"
import { taskId, toolId, toolName } from "../../src/domain/Ids.ts"
import type { Task } from "../../src/domain/Task.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import * as DepGraph from "../../src/toolenv/DepGraph.ts"
import { Policy } from "../../src/agent/Policy.ts"
import type { PolicyContext } from "../../src/agent/Policy.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import { Simulator } from "../../src/toolenv/Simulator.ts"
import { makeLibrary, ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"

/** A tool taking one required string `q`. */
export const tool = (name: string, description = `The ${name} tool.`): ToolSpec => ({
  id: toolId(`test:${name}`),
  name: toolName(name),
  group: name,
  apiName: name,
  category: "Testing",
  description,
  parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  source: { kind: "user", ref: "test" }
})

/** A library of the named tools. */
export const libraryLayer = (names: ReadonlyArray<string>) =>
  Layer.succeed(ToolLibrary, ToolLibrary.of(makeLibrary("test", names.map((n) => tool(n)), DepGraph.empty)))

/** A retriever that returns every tool whose name occurs in the query. */
export const retrieverLayer = (names: ReadonlyArray<string>) =>
  Layer.succeed(
    Retriever,
    Retriever.of({
      name: "substring",
      search: (queries, k) =>
        Effect.succeed(queries.map((q) => names.filter((n) => q.includes(n)).slice(0, k).map((n) => ({ tool: toolName(n), score: 1 }))))
    })
  )

/** A policy that answers round i with `turns[i]` (the last one repeats), and records the contexts it saw. */
export const scriptedPolicy = (turns: ReadonlyArray<string>, seen: Array<PolicyContext> = []) =>
  Layer.succeed(
    Policy,
    Policy.of({
      name: "scripted",
      privileged: false,
      act: (context) =>
        Effect.sync(() => {
          seen.push(context)
          const text = turns[Math.min(context.round, turns.length - 1)] ?? ""
          return { text, usage: { promptTokens: 10, completionTokens: text.length } }
        })
    })
  )

/** How the test simulator treats a tool. `rendezvous` answers only once `expectStarted` calls have started. */
export type Behaviour =
  | { readonly _tag: "sleep"; readonly ms: number }
  | { readonly _tag: "rendezvous" }
  | { readonly _tag: "die" }
  | { readonly _tag: "hang" }

/** What happened to the calls of the test simulator. */
export interface CallLog {
  readonly started: Array<string>
  readonly finished: Array<string>
  readonly interrupted: Array<string>
  /** Completed once `expectStarted` calls have started. */
  readonly allStarted: Deferred.Deferred<void>
}

/** A simulator whose tools behave as `behaviours` says (default: answer at once with the arguments echoed). */
export const simulatorLayer = (behaviours: Readonly<Record<string, Behaviour>>, log: CallLog, expectStarted = Number.POSITIVE_INFINITY) =>
  Layer.succeed(
    Simulator,
    Simulator.of({
      open: () =>
        Effect.succeed({
          execute: (call: ToolCall) => {
            const behaviour = behaviours[call.tool]
            const body = Effect.gen(function*() {
              log.started.push(call.id)
              if (log.started.length >= expectStarted) yield* Deferred.succeed(log.allStarted, undefined)
              if (behaviour?._tag === "die") return yield* Effect.die(new Error(`${call.tool} exploded`))
              if (behaviour?._tag === "hang") yield* Effect.never
              if (behaviour?._tag === "sleep") yield* Effect.sleep(behaviour.ms)
              if (behaviour?._tag === "rendezvous") yield* Deferred.await(log.allStarted)
              log.finished.push(call.id)
              return { outcome: { _tag: "ok" as const, payload: { echo: call.arguments, tool: call.tool } }, attempt: 1 }
            })
            return body.pipe(Effect.onInterrupt(() => Effect.sync(() => log.interrupted.push(call.id))))
          }
        })
    })
  )

/** A fresh call log. */
export const makeLog = () =>
  Effect.map(Deferred.make<void>(), (allStarted): CallLog => ({ started: [], finished: [], interrupted: [], allStarted }))

/** A task with no gold (the scripted policy does not need one). */
export const task: Task = {
  id: taskId("t1"),
  request: "test request",
  level: "I2",
  categories: ["Testing"],
  gold: [],
  facts: [],
  split: "test",
  seed: 1,
  source: "test"
}
