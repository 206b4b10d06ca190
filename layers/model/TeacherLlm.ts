/**
 * The LLM multi-agent teacher: the planner, searcher, executor and answerer of src/agent/Teacher.ts as separate chat
 * calls over an OpenAI-compatible endpoint (the consultation here; prompts in TeacherLlmPrompts.ts, reply readers in
 * TeacherLlmReplies.ts). A reply that cannot be used gets one repair request, then the scripted role acts.
 */
import { Context, Effect, Layer, Ref, Result } from "effect"
import type { Redacted } from "effect"
import { ConfigError } from "../../src/domain/Errors.ts"
import type { PlanNode } from "../../src/domain/Plan.ts"
import { hashParts } from "../../src/math/Random.ts"
import { Policy, type PolicyContext, PolicyError } from "../../src/agent/Policy.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import type { BoundNode, Piece, RoleInput, RoleName } from "../../src/agent/Teacher.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import {
type ChatResult,
checkMaxTokens,
checkTemperature,
configFromEnv,
layer as clientLayer,
OpenAiClient,
type OpenAiConfigInput,
scrubSecret,
type WireMessage
} from "./OpenAiClient.ts"
import { clip } from "./PolicyOpenAi.ts"
import { type Budgets, defaultBudgets, executorMessage, answererMessage, plannerMessage, repairPrompt, searcherMessage, systemPrompts, type View } from "./TeacherLlmPrompts.ts"
import { readAnswer, readExecute, readPlan, readSearch, type Reader } from "./TeacherLlmReplies.ts"

export * from "./TeacherLlmPrompts.ts"
export * from "./TeacherLlmReplies.ts"

// ---------------------------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------------------------

/** Options of the LLM teacher. */
export interface TeacherLlmOptions {
  /** A model per role; a role without one uses the client's model. */
  readonly models?: Partial<Record<RoleName, string>>
  /** Sampling temperature and completion budget of every role call; default the client's (0.7 and 2048, spec Table 6). */
  readonly temperature?: number
  readonly maxTokens?: number
  /**
   * The roles that see the task's privileged hints (default `["plan", "search"]`): the planner the gold tools' names
   * and descriptions and the keys of the facts the answer must state; the searcher the descriptions of the gold tools
   * not found yet; the executor the literal argument values of the gold calls of its tools; the answerer the fact
   * keys. No role ever sees a gold fact's value.
   */
  readonly hints?: ReadonlyArray<RoleName>
  /** Also send `response_format: {"type": "json_object"}` (most servers support it). Default false. */
  readonly jsonMode?: boolean
  /** Send a per-call seed derived from the rollout's seed, round and role. Default true. */
  readonly seeded?: boolean
  /**
   * The orchestrator's search and call attempts, and the mistake rate of the scripted roles that stand in for a
   * role whose reply could not be used (default 0: a stand-in makes no deliberate mistakes).
   */
  readonly teacher?: Partial<Teacher.TeacherOptions>
  readonly budgets?: Partial<Budgets>
  /** A label for reports; default `teacher-llm:<model>` (plus the per-role models). */
  readonly name?: string
  /** The endpoint's key, only to scrub it from logs and errors should a server echo it (the client sends it). */
  readonly apiKey?: Redacted.Redacted
}

/** The roles that see hints by default. */
export const defaultHints: ReadonlyArray<RoleName> = ["plan", "search"]

/** The defaults of the orchestrator and of the stand-in scripted roles. */
export const defaultTeacherOptions: Teacher.TeacherOptions = { ...Teacher.defaultOptions, mistakeRate: 0 }

// ---------------------------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------------------------

/** What one role did across all rounds. */
export interface RoleCounts {
  /** Chat requests made (repairs included). */
  readonly calls: number
  /** Replies that could not be used on the first try (a repair request followed). */
  readonly repairs: number
  /** Rounds in which the repaired reply could not be used either, so the scripted role acted. */
  readonly fallbacks: number
  readonly promptTokens: number
  readonly completionTokens: number
}

/** The teacher's counters since the layer was built. */
export interface Stats {
  /** Turns produced. */
  readonly turns: number
  readonly roles: Readonly<Record<RoleName, RoleCounts>>
}

const zeroCounts: RoleCounts = { calls: 0, repairs: 0, fallbacks: 0, promptTokens: 0, completionTokens: 0 }

/** Counters at zero. */
export const emptyStats: Stats = { turns: 0, roles: { plan: zeroCounts, search: zeroCounts, execute: zeroCounts, answer: zeroCounts } }

/** The LLM teacher's counters (role calls, repairs, scripted fallbacks, tokens). */
export class TeacherLlmStats extends Context.Service<TeacherLlmStats, {
  readonly snapshot: Effect.Effect<Stats>
}>()("paraagent/TeacherLlmStats") {}

// ---------------------------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------------------------

/** Token usage of one round, summed over its role calls. */
interface Tally {
  promptTokens: number
  completionTokens: number
}

/** The per-call sampling seed: a 31-bit hash of the rollout's seed, the round, the role and the attempt. */
export const roleSeed = (seed: number, round: number, role: RoleName, attempt: number): number =>
  hashParts(seed, "teacher", round, role, attempt) & 0x7fffffff

/** The policy's label: `teacher-llm:<model>`, plus `(role=model, ...)` for roles on another model. */
export const policyName = (model: string, models: Partial<Record<RoleName, string>> = {}): string => {
  const others = Teacher.roleNames.flatMap((r) => {
    const m = models[r]
    return m === undefined || m === model ? [] : [`${r}=${m}`]
  })
  return others.length === 0 ? `teacher-llm:${model}` : `teacher-llm:${model}(${others.join(",")})`
}

const validate = (options: TeacherLlmOptions, teacher: Teacher.TeacherOptions) =>
  Effect.gen(function*() {
    const bad = (field: string, value: unknown, message: string) => new ConfigError({ field, value: String(value), message })
    // the same checks (and messages) as the client's own defaults
    if (options.temperature !== undefined) yield* checkTemperature(options.temperature)
    if (options.maxTokens !== undefined) yield* checkMaxTokens(options.maxTokens)
    for (const [role, model] of Object.entries(options.models ?? {})) {
      if (model.trim() === "") return yield* bad(`models.${role}`, model, "a role's model must not be empty")
    }
    const budgets: Budgets = { ...defaultBudgets, ...options.budgets }
    for (const [field, value] of Object.entries(budgets)) {
      if (!(Number.isInteger(value) && value > 0)) return yield* bad(`budgets.${field}`, value, "budgets are positive integers (characters)")
    }
    return { budgets, teacher: yield* Teacher.validateOptions(teacher) }
  })

/** Builds the teacher (Policy) and its counters over the OpenAiClient and ToolLibrary in context. */
export const make = Effect.fnUntraced(function*(options: TeacherLlmOptions = {}) {
  const client = yield* OpenAiClient
  const library = yield* ToolLibrary
  const { budgets, teacher } = yield* validate(options, { ...defaultTeacherOptions, ...options.teacher })
  const models = options.models ?? {}
  const name = options.name ?? policyName(client.model, models)
  const view: View = { library, hints: new Set(options.hints ?? defaultHints), budgets, options: teacher }
  const scripted = Teacher.scriptedRoles(library, teacher)
  const stats = yield* Ref.make(emptyStats)
  const scrub = (text: string): string => scrubSecret(text, options.apiKey)

  const count = (role: RoleName, f: (c: RoleCounts) => RoleCounts) =>
    Ref.update(stats, (s) => ({ ...s, roles: { ...s.roles, [role]: f(s.roles[role]) } }))

  const ask = (role: RoleName, messages: ReadonlyArray<WireMessage>, context: PolicyContext, attempt: number, tally: Tally) =>
    client.chat({
      messages,
      ...(models[role] === undefined ? {} : { model: models[role] }),
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
      ...(options.jsonMode === true ? { responseFormat: { type: "json_object" as const } } : {}),
      ...(options.seeded === false ? {} : { seed: roleSeed(context.seed, context.round, role, attempt) })
    }).pipe(
      Effect.mapError((error) =>
        new PolicyError({ message: scrub(`${name} (${role}): ${error.message}`), ...(error.status === undefined ? {} : { status: error.status }) })
      ),
      Effect.tap((result: ChatResult) => {
        const usage = result.usage ?? { promptTokens: 0, completionTokens: 0 }
        tally.promptTokens += usage.promptTokens
        tally.completionTokens += usage.completionTokens
        return count(role, (c) => ({
          ...c,
          calls: c.calls + 1,
          promptTokens: c.promptTokens + usage.promptTokens,
          completionTokens: c.completionTokens + usage.completionTokens
        }))
      })
    )

  /** One role: a call, a repair call quoting the problem, then the scripted role. */
  const consult = <A>(
    role: RoleName,
    user: string,
    read: Reader<A>,
    input: RoleInput,
    tally: Tally,
    fallback: Effect.Effect<Piece<A>>
  ): Effect.Effect<Piece<A>, PolicyError> =>
    Effect.gen(function*() {
      const messages: ReadonlyArray<WireMessage> = [{ role: "system", content: systemPrompts[role] }, { role: "user", content: user }]
      const first = yield* ask(role, messages, input.context, 0, tally)
      const firstRead = read(first.content)
      if (Result.isSuccess(firstRead)) return firstRead.success
      yield* count(role, (c) => ({ ...c, repairs: c.repairs + 1 }))
      yield* Effect.logDebug(`TeacherLlm: the ${role} reply could not be used; asking for a repair`).pipe(
        Effect.annotateLogs({ role, round: input.context.round, problem: scrub(clip(firstRead.failure, 300)) })
      )
      const second = yield* ask(role, [
        ...messages,
        { role: "assistant", content: first.content },
        { role: "user", content: repairPrompt(role, firstRead.failure) }
      ], input.context, 1, tally)
      const secondRead = read(second.content)
      if (Result.isSuccess(secondRead)) return secondRead.success
      yield* count(role, (c) => ({ ...c, fallbacks: c.fallbacks + 1 }))
      yield* Effect.logWarning(`TeacherLlm: the ${role} reply could not be used after a repair; the scripted ${role} acts this round`).pipe(
        Effect.annotateLogs({ role, round: input.context.round, task: input.task.id, problem: scrub(clip(secondRead.failure, 300)) })
      )
      return yield* fallback
    })

  const plan = Effect.fn("TeacherLlm.plan")(function*(input: RoleInput, tally: Tally) {
    yield* Effect.annotateCurrentSpan({ round: input.context.round, revising: input.board.nodes.length > 0 })
    return yield* consult("plan", plannerMessage(input, view), readPlan(library, input.context.history), input, tally, scripted.plan(input))
  })
  const search = Effect.fn("TeacherLlm.search")(function*(input: RoleInput, slots: ReadonlyArray<PlanNode>, tally: Tally) {
    yield* Effect.annotateCurrentSpan({ round: input.context.round, slots: slots.length })
    return yield* consult("search", searcherMessage(input, slots, view), readSearch(slots), input, tally, scripted.search(input, slots))
  })
  const execute = Effect.fn("TeacherLlm.execute")(function*(input: RoleInput, ready: ReadonlyArray<BoundNode>, tally: Tally) {
    yield* Effect.annotateCurrentSpan({ round: input.context.round, ready: ready.length })
    return yield* consult("execute", executorMessage(input, ready, view), readExecute(ready, input.board.done), input, tally, scripted.execute(input, ready))
  })
  const answer = Effect.fn("TeacherLlm.answer")(function*(input: RoleInput, tally: Tally) {
    yield* Effect.annotateCurrentSpan({ round: input.context.round })
    return yield* consult("answer", answererMessage(input, view), readAnswer, input, tally, scripted.answer(input))
  })

  const act = Effect.fn("TeacherLlm.act")(function*(context: PolicyContext) {
    const task = context.task
    if (task === undefined) return yield* new PolicyError({ message: `${name} needs the task's gold DAG (privileged context)` })
    yield* Effect.annotateCurrentSpan({ round: context.round, paradigm: context.paradigm, task: task.id })
    const tally: Tally = { promptTokens: 0, completionTokens: 0 }
    const roles: Teacher.Roles<PolicyError> = {
      follows: "emitted",
      plan: (input) => plan(input, tally),
      search: (input, slots) => search(input, slots, tally),
      execute: (input, ready) => execute(input, ready, tally),
      answer: (input) => answer(input, tally)
    }
    const turn = yield* Teacher.nextTurn(context, task, roles, teacher)
    yield* Ref.update(stats, (s) => ({ ...s, turns: s.turns + 1 }))
    return Teacher.toOutput(turn, { promptTokens: tally.promptTokens, completionTokens: tally.completionTokens })
  })

  return {
    policy: Policy.of({ name, privileged: true, act }),
    stats: TeacherLlmStats.of({ snapshot: Ref.get(stats) })
  }
})

/** The LLM teacher (Policy) and its counters (TeacherLlmStats) over an OpenAiClient and a ToolLibrary provided elsewhere. */
export const layer = (options: TeacherLlmOptions = {}): Layer.Layer<Policy | TeacherLlmStats, ConfigError, OpenAiClient | ToolLibrary> =>
  Layer.effectContext(
    Effect.map(make(options), ({ policy, stats }) => Context.make(Policy, policy).pipe(Context.add(TeacherLlmStats, stats)))
  )

/** The LLM teacher with its client configured from the environment (`PARAAGENT_*`) and flag overrides. */
export const layerConfig = (
  options: TeacherLlmOptions = {},
  overrides: Partial<OpenAiConfigInput> = {}
): Layer.Layer<Policy | TeacherLlmStats, ConfigError, ToolLibrary> =>
  Layer.unwrap(
    Effect.map(configFromEnv(overrides), (config) =>
      layer({ ...options, ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }) }).pipe(Layer.provide(clientLayer(config))))
  )
