/**
 * The multi-agent teacher as a Policy: planner, searcher, executor and answerer roles composed into ordinary turns
 * by an orchestrator with one strategy per paradigm. The scripted roles read the task's privileged gold DAG (with a
 * mistake rate, so demonstrations are diverse and show recovery); layers/model/TeacherLlm.ts makes each role an LLM call.
 * Its parts: teacher/Options, Board, Roles, ScriptedRoles, Strategies, Orchestrator (re-exported here).
 */
import { Effect, Layer } from "effect"
import type { ConfigError } from "../domain/Errors.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { Policy, PolicyError } from "./Policy.ts"
import type { PolicyContext } from "./Policy.ts"
import { nextTurn, toOutput } from "./teacher/Orchestrator.ts"
import { defaultOptions, type TeacherOptions, validateOptions } from "./teacher/Options.ts"
import { scriptedRoles } from "./teacher/ScriptedRoles.ts"

export * from "./teacher/Board.ts"
export * from "./teacher/Options.ts"
export * from "./teacher/Orchestrator.ts"
export * from "./teacher/Roles.ts"
export * from "./teacher/ScriptedRoles.ts"
export * from "./teacher/Strategies.ts"

/** The scripted teacher as a Policy layer (privileged: it reads the gold DAG). */
export const layer = (overrides: Partial<TeacherOptions> = {}): Layer.Layer<Policy, ConfigError, ToolLibrary> =>
  Layer.effect(
    Policy,
    Effect.gen(function*() {
      const library = yield* ToolLibrary
      const options = yield* validateOptions({ ...defaultOptions, ...overrides })
      const roles = scriptedRoles(library, options)
      const act = Effect.fn("Teacher.act")(function*(context: PolicyContext) {
        const task = context.task
        if (task === undefined) return yield* new PolicyError({ message: "the teacher needs the task's gold DAG (privileged context)" })
        const turn = yield* nextTurn(context, task, roles, options)
        return toOutput(turn, { promptTokens: 0, completionTokens: 0 })
      })
      return Policy.of({ name: "teacher", privileged: true, act })
    })
  )
