/**
 * The Rollout service: runs one task to a Trajectory. Each round asks the Policy for a turn, validates it, and runs
 * all of the round's searches and calls concurrently as child fibers of the round (ParaAct's parallel actions).
 */
import { Cause, Clock, Context, Duration, Effect, Exit, Layer, Result } from "effect"
import { errorOutcome, transientErrorKinds } from "../domain/Call.ts"
import type { CallOutcome, Observation, ToolCall } from "../domain/Call.ts"
import { trajectoryId } from "../domain/Ids.ts"
import type { CallId, ToolName } from "../domain/Ids.ts"
import type { Json, JsonObject } from "../domain/Json.ts"
import type { Task } from "../domain/Task.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import type {
  SearchHit,
  Paradigm,
  ProtocolIssue,
  SearchResult,
  Step,
  StepValidation,
  StopReason,
  Trajectory
} from "../domain/Trajectory.ts"
import { validStep } from "../domain/Trajectory.ts"
import type { Turn } from "../domain/Turn.ts"
import * as JsonSchemaValidate from "../toolenv/JsonSchemaValidate.ts"
import { callKey } from "../math/CanonicalJson.ts"
import * as Controller from "../math/Controller.ts"
import * as Facts from "../math/TrajectoryFacts.ts"
import * as History from "../math/History.ts"
import * as PlanMath from "../math/PlanDag.ts"
import * as Paradigms from "../protocol/Paradigm.ts"
import * as ParaAct from "../protocol/ParaAct.ts"
import { Policy } from "../agent/Policy.ts"
import type { PolicyContext, PolicyOutput } from "../agent/Policy.ts"
import * as Refs from "../protocol/Refs.ts"
import { defaultTopK, Retriever } from "../retrieval/Retriever.ts"
import { Simulator } from "../toolenv/Simulator.ts"
import type { Episode } from "../toolenv/Simulator.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import * as Telemetry from "../io/Telemetry.ts"

/** How rollouts run. */
export interface RolloutConfig {
  /** T_max: the round limit (spec Table 6: 12). */
  readonly maxRounds: number
  /** Retrieval top-k per capability slot (spec Table 6: 3). */
  readonly topK: number
  /** Actions (searches + calls) of one round in flight at once. */
  readonly concurrency: number
  /** Per-call timeout: a call that takes longer observes a `timeout` error; its siblings are unaffected. */
  readonly callTimeout: Duration.Input
  /** Per-turn timeout of the policy. */
  readonly policyTimeout: Duration.Input
  /** A rollout still running after this long ends with stop reason `interrupted`, keeping its finished rounds. */
  readonly rolloutTimeout: Duration.Input
  /** Inject the simulator's transient faults. */
  readonly faults: boolean
  /** Parse turns leniently (prose outside tags, code fences): for LLM policies that are not trained on the format. */
  readonly lenient: boolean
}

/** The defaults of spec Table 6 plus runtime bounds. */
export const defaultConfig: RolloutConfig = {
  maxRounds: 12,
  topK: defaultTopK,
  concurrency: 16,
  callTimeout: "30 seconds",
  policyTimeout: "5 minutes",
  rolloutTimeout: "30 minutes",
  faults: true,
  lenient: false
}

/** One rollout to run. */
export interface RunOptions {
  readonly paradigm: Paradigm
  readonly seed: number
  /** Index within a GRPO group. */
  readonly groupIndex?: number
}

/** A (task, options) pair for {@link RolloutService.runAll}: one rollout to run. */
export interface RolloutRequest {
  readonly task: Task
  readonly options: RunOptions
}

/** The rollout runtime. */
export interface RolloutService {
  readonly config: RolloutConfig
  /** Runs one task to a trajectory. Never fails: policy failures end the rollout with stop reason `policy_error`. */
  readonly run: (task: Task, options: RunOptions) => Effect.Effect<Trajectory>
  /** G rollouts of one task that differ by seed (`seed`, `seed + 1`, ...), run concurrently. */
  readonly runGroup: (task: Task, options: { readonly paradigm: Paradigm; readonly seed: number; readonly size: number }) => Effect.Effect<ReadonlyArray<Trajectory>>
  /**
   * Many rollouts through a bounded pool of `concurrency` fibers; `onDone` sees each trajectory as it finishes
   * (to persist it at once). Results come back in request order.
   */
  readonly runAll: <E = never, R = never>(
    requests: ReadonlyArray<RolloutRequest>,
    options: { readonly concurrency: number; readonly onDone?: (trajectory: Trajectory, request: RolloutRequest) => Effect.Effect<void, E, R> }
  ) => Effect.Effect<ReadonlyArray<Trajectory>, E, R>
}

/** The Rollout service. */
export class Rollout extends Context.Service<Rollout, RolloutService>()("paraagent/Rollout") {
  /** The default layer over Policy, Retriever, Simulator and ToolLibrary (see {@link layer}). */
  static readonly layer = (overrides: Partial<RolloutConfig> = {}) => layer(overrides)
}

/** A round's outcome before it becomes a Step. */
interface RoundRecord {
  readonly step: Step
  readonly answered: boolean
}

const truncate = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max)}…`)

/**
 * The policy's numbers as a trajectory can store them: a non-finite (or negative) token count becomes 0 and a
 * non-finite log-probability is dropped, each recorded as an issue (JSON would turn them into null and the
 * trajectory would no longer decode).
 */
const finiteOutput = (output: PolicyOutput): {
  readonly usage: PolicyOutput["usage"]
  readonly logprob: number | undefined
  readonly tokenLogprobs: ReadonlyArray<number> | undefined
  readonly issues: ReadonlyArray<string>
} => {
  const issues: Array<string> = []
  const count = (field: "promptTokens" | "completionTokens"): number => {
    const value = output.usage[field]
    if (Number.isFinite(value) && value >= 0) return value
    issues.push(`usage.${field} was ${String(value)}; recorded as 0`)
    return 0
  }
  const usage = { promptTokens: count("promptTokens"), completionTokens: count("completionTokens") }
  const logprob = output.logprob
  if (logprob !== undefined && !Number.isFinite(logprob)) issues.push(`logprob was ${String(logprob)}; dropped`)
  const tokens = output.tokenLogprobs
  const tokensOk = tokens === undefined || tokens.every(Number.isFinite)
  if (!tokensOk) issues.push("tokenLogprobs held a non-finite value; dropped")
  return {
    usage,
    logprob: logprob !== undefined && Number.isFinite(logprob) ? logprob : undefined,
    tokenLogprobs: tokensOk ? tokens : undefined,
    issues
  }
}

/** One line for a failure of the machinery (no stack trace: it is stored in trajectories that become training data). */
const defectMessage = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const text = error instanceof Error ? `${error.name}: ${error.message}` : typeof error === "string" ? error : JSON.stringify(error) ?? String(error)
  return truncate(text.replace(/\s*\n\s*/g, " "), 300)
}

/** A round is a dead end (DFSDT backtracks) when it was malformed, or every action it ran failed or found nothing. */
const isDeadEnd = (step: Step): boolean => {
  if (step.turn === undefined) return true
  if (step.turn.answer !== undefined) return false
  const anyCall = step.observations.some((o) => o.outcome._tag === "ok")
  const anyHit = step.searches.some((s) => s.hits.length > 0)
  return !anyCall && !anyHit
}

/** The outcome of a policy turn as span attributes (token counts, or the failure, redacted). */
const policyAttributes = (output: Result.Result<PolicyOutput, string>): Telemetry.Attributes =>
  Result.isSuccess(output)
    ? {
      "policy.outcome": "ok",
      "policy.prompt_tokens": output.success.usage.promptTokens,
      "policy.completion_tokens": output.success.usage.completionTokens
    }
    : { "policy.outcome": "error", error: true, "policy.error": Telemetry.text(output.failure, 300) }

/** A search's outcome as span attributes. */
const searchAttributes = (result: SearchResult | Observation): Telemetry.Attributes =>
  "hits" in result
    ? {
      "search.hits": result.hits.length,
      "search.top_tool": result.hits[0]?.tool ?? "",
      ...(result.error !== undefined ? { "search.error": Telemetry.text(result.error) } : {})
    }
    : {}

/** A call's outcome as span attributes: `ok` or the error kind, the HTTP-like status, attempts. */
const callAttributes = (result: SearchResult | Observation): Telemetry.Attributes =>
  "outcome" in result
    ? {
      "call.outcome": result.outcome._tag === "ok" ? "ok" : result.outcome.error.kind,
      "call.status": result.outcome._tag === "ok" ? 200 : result.outcome.error.status,
      "call.attempts": result.attempts,
      "call.refs": result.refs.length
    }
    : {}

/** A round's outcome as span attributes. */
const roundAttributes = (outcome: { readonly _tag: "PolicyFailed"; readonly message: string } | { readonly _tag: "Step"; readonly record: RoundRecord }): Telemetry.Attributes => {
  if (outcome._tag === "PolicyFailed") return { "round.outcome": "policy_error" }
  const { step, answered } = outcome.record
  return {
    "round.outcome": step.protocolError !== undefined ? "protocol_error" : answered ? "answer" : "actions",
    "round.phase": step.phase,
    "round.searches": step.searches.length,
    "round.calls": step.observations.filter((o) => o.attempts > 0).length,
    "round.rejected": step.observations.filter((o) => o.attempts === 0).length,
    ...(step.protocolError !== undefined ? { "round.protocol_error": step.protocolError.tag } : {})
  }
}

/** A finished rollout as span attributes: how it stopped, its rounds and executed calls. */
const rolloutAttributes = (trajectory: Trajectory): Telemetry.Attributes => ({
  "trajectory.id": trajectory.id,
  "rollout.stop": trajectory.stop,
  "rollout.rounds": trajectory.steps.length,
  "rollout.calls": trajectory.steps.reduce((n, s) => n + s.observations.filter((o) => o.attempts > 0).length, 0),
  "rollout.answered": trajectory.answer !== undefined,
  ...(trajectory.stop === "policy_error" || trajectory.stop === "interrupted" ? { error: true } : {}),
  ...(trajectory.error !== undefined ? { "rollout.error": Telemetry.text(trajectory.error, 300) } : {})
})

/** What {@link contextAt} needs besides the trajectory: the task's request, T_max and the library's lookup. */
export interface ContextAtOptions {
  readonly request: string
  readonly maxRounds: number
  readonly lookup: (name: string) => ToolSpec | undefined
}

/**
 * The context the policy was given before step `index` of a recorded trajectory, rebuilt from the trajectory alone
 * the way {@link make}'s round builds it: the history (DFSDT: the path to the step's parent), the tools retrieved on
 * it, the expansions abandoned before it (DFSDT), the round, T_max, the controller state. The privileged `task` is
 * left out (an exporter shows it to a model in the policy's place). Undefined when no step sits at `index`.
 */
export const contextAt = (trajectory: Trajectory, index: number, options: ContextAtOptions): PolicyContext | undefined => {
  const step = trajectory.steps[index]
  if (step === undefined || step.index !== index) return undefined
  const before = trajectory.steps.slice(0, index)
  const backtrack = Paradigms.rules[trajectory.paradigm].backtrack
  const history = backtrack ? History.pathTo(before, step.parent) : before
  const abandoned = backtrack ? before.filter(isDeadEnd) : []
  return {
    request: options.request,
    paradigm: trajectory.paradigm,
    round: index,
    maxRounds: options.maxRounds,
    controller: step.controller,
    history,
    tools: [...History.of(history).retrieved].flatMap((name) => {
      const spec = options.lookup(name)
      return spec === undefined ? [] : [spec]
    }),
    seed: trajectory.seed,
    ...(abandoned.length > 0 ? { abandoned } : {})
  }
}

/** Builds the service from its dependencies. */
export const make = (overrides: Partial<RolloutConfig> = {}) =>
  Effect.gen(function*() {
    const config: RolloutConfig = { ...defaultConfig, ...overrides }
    const policy = yield* Policy
    const retriever = yield* Retriever
    const simulator = yield* Simulator
    const library = yield* ToolLibrary

    const runSearch = (slot: string, query: string, elapsed: Effect.Effect<number>) =>
      Effect.gen(function*() {
        const startMs = yield* elapsed
        // a failed or timed-out retriever is a fault of the machinery: recorded on the search, not "found nothing"
        const found = yield* retriever.search([query], config.topK).pipe(
          Effect.map((lists): { readonly hits: ReadonlyArray<SearchHit>; readonly error?: string } => ({ hits: lists[0] ?? [] })),
          Effect.timeoutOrElse({
            duration: config.callTimeout,
            orElse: () => Effect.succeed({ hits: [], error: `the retriever gave no answer within ${Duration.format(Duration.fromInputUnsafe(config.callTimeout))}` })
          }),
          Effect.catchCause((cause) =>
            Effect.logWarning(`search ${JSON.stringify(query)} failed`, Cause.pretty(cause)).pipe(
              Effect.as({ hits: [], error: `the retriever failed: ${defectMessage(cause)}` })
            ))
        )
        const endMs = yield* elapsed
        const result: SearchResult = { slot, query, hits: found.hits, ...(found.error !== undefined ? { error: found.error } : {}), startMs, endMs }
        return result
      })

    const runCall = (episode: Episode, call: ToolCall, refs: ReadonlyArray<CallId>, elapsed: Effect.Effect<number>) =>
      Effect.gen(function*() {
        const startMs = yield* elapsed
        const exit = yield* episode.execute(call).pipe(
          Effect.timeoutOrElse({
            duration: config.callTimeout,
            orElse: () => Effect.succeed({ outcome: errorOutcome("timeout", `no answer within ${Duration.format(Duration.fromInputUnsafe(config.callTimeout))}`), attempt: 1 })
          }),
          Effect.exit
        )
        const endMs = yield* elapsed
        const { outcome, attempt } = Exit.isSuccess(exit)
          ? exit.value
          : { outcome: errorOutcome("tool_defect", `the tool's implementation crashed: ${defectMessage(exit.cause)}`), attempt: 1 }
        const observation: Observation = {
          callId: call.id,
          tool: call.tool,
          arguments: call.arguments,
          outcome,
          refs,
          attempts: attempt,
          startMs,
          endMs
        }
        return observation
      })

    const rejected = (call: ToolCall, outcome: CallOutcome, elapsed: Effect.Effect<number>) =>
      Effect.map(elapsed, (ms): Observation => ({
        callId: call.id,
        tool: call.tool,
        arguments: call.arguments,
        outcome,
        refs: [],
        attempts: 0,
        startMs: ms,
        endMs: ms
      }))

    const runTraced = Effect.fnUntraced(function*(task: Task, options: RunOptions, spans: boolean) {
      const startedAt = yield* Clock.currentTimeMillis
      const elapsed = Effect.map(Clock.currentTimeMillis, (t) => t - startedAt)
      const episode = yield* simulator.open({ taskId: task.id, seed: options.seed, request: task.request, faults: config.faults })
      const rules = Paradigms.rules[options.paradigm]
      const steps: Array<Step> = []
      // DFSDT: the node of the search tree the next expansion grows from (undefined: the root); the policy sees the
      // path from the root to it. Linear paradigms see every step.
      let at: number | undefined
      const abandonedAt = new Map<number, Array<number>>()
      let stop: StopReason = "max_rounds"
      let answer: string | undefined
      let error: string | undefined

      const round = (roundIndex: number) =>
        Effect.gen(function*() {
          const history = rules.backtrack ? History.pathTo(steps, at) : [...steps]
          const memory = Controller.remember(history)
          const decision = Controller.decide(memory, { finalRound: roundIndex === config.maxRounds - 1 })
          const seen = memory.retrieved
          const parent = at
          // DFSDT: every expansion abandoned so far, so the policy knows what failed anywhere in the tree
          const abandoned = [...abandonedAt.values()].flat().sort((a, b) => a - b).map((i) => steps[i] as Step)
          const context: PolicyContext = {
            request: task.request,
            paradigm: options.paradigm,
            round: roundIndex,
            maxRounds: config.maxRounds,
            controller: decision.state,
            history,
            tools: [...seen].flatMap((name) => {
              const spec = library.get(name)
              return spec === undefined ? [] : [spec]
            }),
            seed: options.seed,
            ...(policy.privileged ? { task } : {}),
            ...(abandoned.length > 0 ? { abandoned } : {})
          }
          const startMs = yield* elapsed
          // a policy that throws (or dies) ends this rollout with policy_error, its rounds kept; siblings go on
          const turn = Effect.suspend(() => policy.act(context)).pipe(
            Effect.catchDefect((defect) => Effect.fail(`the policy crashed: ${defectMessage(Cause.die(defect))}`)),
            Effect.timeoutOrElse({
              duration: config.policyTimeout,
              orElse: () => Effect.fail(`the policy gave no turn within ${Duration.format(Duration.fromInputUnsafe(config.policyTimeout))}`)
            }),
            Effect.mapError((e) => (typeof e === "string" ? e : e.message)),
            Effect.result
          )
          const output = yield* Telemetry.span(spans, "Policy.act", { "policy.name": policy.name, "round.index": roundIndex, "rollout.paradigm": options.paradigm }, turn, policyAttributes)
          const policyEnd = yield* elapsed
          if (Result.isFailure(output)) return { _tag: "PolicyFailed" as const, message: output.failure }
          const record = yield* execute({
            output: output.success,
            history,
            memory,
            index: steps.length,
            controller: decision.state,
            executedBefore: history.some((s) => s.observations.some((o) => o.attempts > 0)),
            startMs,
            policyMs: policyEnd - startMs,
            ...(rules.backtrack && parent !== undefined ? { parent } : {})
          })
          return { _tag: "Step" as const, record }
        })

      const execute = (input: {
        readonly output: PolicyOutput
        readonly history: ReadonlyArray<Step>
        readonly memory: History.History
        readonly index: number
        readonly controller: Step["controller"]
        readonly executedBefore: boolean
        readonly startMs: number
        readonly policyMs: number
        readonly parent?: number
      }) =>
        Effect.gen(function*() {
          const { output, history } = input
          const usedCallIds = input.memory.callIds
          const parsed: Result.Result<Turn, { readonly tag: string; readonly offset: number; readonly message: string }> =
            output.turn !== undefined
              ? ParaAct.validateTurn(output.turn, { usedCallIds })
              : ParaAct.parseTurn(output.text, { lenient: config.lenient, usedCallIds, nextCallIndex: usedCallIds.length + 1 })
          const checkedOutput = finiteOutput(output)
          const base = {
            index: input.index,
            raw: output.text,
            controller: input.controller,
            startMs: input.startMs,
            policyMs: input.policyMs,
            usage: checkedOutput.usage,
            ...(checkedOutput.logprob !== undefined ? { logprob: checkedOutput.logprob } : {}),
            ...(checkedOutput.tokenLogprobs !== undefined ? { tokenLogprobs: checkedOutput.tokenLogprobs } : {}),
            ...(output.prompt !== undefined ? { prompt: output.prompt } : {}),
            ...(output.decision !== undefined ? { decision: output.decision } : {}),
            ...(checkedOutput.issues.length > 0 ? { outputIssues: checkedOutput.issues } : {}),
            ...(input.parent !== undefined ? { parent: input.parent } : {})
          }
          const previousPhase = history.length > 0 ? (history[history.length - 1] as Step).phase : undefined
          if (Result.isFailure(parsed)) {
            const issue: ProtocolIssue = { tag: parsed.failure.tag, offset: parsed.failure.offset, message: parsed.failure.message }
            const endMs = yield* elapsed
            const step: Step = {
              ...base,
              protocolError: issue,
              validation: validStep,
              phase: Facts.phaseOf(undefined, previousPhase),
              searches: [],
              observations: [],
              endMs
            }
            return { step, answered: false } satisfies RoundRecord
          }
          const enforced = Paradigms.enforce(options.paradigm, parsed.success, input.executedBefore)
          const turn = enforced.turn
          const checked = checkCalls(turn.calls, history, input.memory, library.get)
          const planCheck = turn.plan === undefined ? undefined : PlanMath.validate(turn.plan)
          const validation: StepValidation = {
            unseenTools: checked.unseen,
            invalidArguments: checked.invalid,
            repeatedCalls: checked.repeated,
            unresolvedRefs: checked.unresolved,
            ...(planCheck !== undefined && planCheck._tag === "Invalid" ? { planError: PlanMath.describeIssues(planCheck.issues) } : {}),
            ...(enforced.dropped.length > 0 ? { dropped: enforced.dropped } : {})
          }
          const actions: Array<Effect.Effect<SearchResult | Observation>> = [
            ...turn.searches.map((s) =>
              Telemetry.span(spans, "Rollout.search", { "search.slot": s.slot, "search.query": Telemetry.text(s.query) }, runSearch(s.slot, s.query, elapsed), searchAttributes)
            ),
            ...checked.plans.map((p) =>
              Telemetry.span(
                spans,
                "Rollout.call",
                { "tool.name": p.call.tool, "call.id": p.call.id, "call.executed": p._tag === "Run" },
                p._tag === "Run" ? runCall(episode, p.call, p.refs, elapsed) : rejected(p.call, p.outcome, elapsed),
                callAttributes
              )
            )
          ]
          const results = yield* Effect.forEach(actions, (a) => a, { concurrency: config.concurrency })
          const searches = results.slice(0, turn.searches.length) as Array<SearchResult>
          const observations = results.slice(turn.searches.length) as Array<Observation>
          const endMs = yield* elapsed
          const step: Step = {
            ...base,
            turn: parsed.success,
            validation,
            phase: Facts.phaseOf(turn, previousPhase),
            searches,
            observations,
            endMs
          }
          return { step, answered: turn.answer !== undefined } satisfies RoundRecord
        })

      const loop = Effect.gen(function*() {
        for (let r = 0; r < config.maxRounds; r++) {
          const outcome = yield* Telemetry.span(spans, "Rollout.round", { "round.index": r, ...(rules.backtrack && at !== undefined ? { "round.parent": at } : {}) }, round(r), roundAttributes)
          if (outcome._tag === "PolicyFailed") {
            stop = "policy_error"
            error = outcome.message
            return
          }
          const { step, answered } = outcome.record
          steps.push(step)
          if (answered) {
            // an answer at the last round was forced by T_max (the controller's Answer state): the rollout is truncated
            stop = r === config.maxRounds - 1 ? "max_rounds" : "answer"
            answer = step.turn?.answer
            return
          }
          if (rules.backtrack && isDeadEnd(step)) {
            // Abandon the expansion; re-expand its parent, or move one level up once the parent used its branching.
            const parentKey = step.parent ?? -1
            const siblings = abandonedAt.get(parentKey) ?? []
            siblings.push(step.index)
            abandonedAt.set(parentKey, siblings)
            if (siblings.length >= rules.branching && at !== undefined) at = steps[at]?.parent
          } else if (rules.backtrack) {
            at = step.index
          }
        }
      })

      const finished = yield* loop.pipe(Effect.timeoutOption(config.rolloutTimeout))
      if (finished._tag === "None") {
        stop = "interrupted"
        error = `rollout exceeded ${Duration.format(Duration.fromInputUnsafe(config.rolloutTimeout))}`
      }
      const durationMs = yield* elapsed
      const trajectory: Trajectory = {
        id: trajectoryId(`${task.id}/${options.paradigm}/${options.seed}`),
        taskId: task.id,
        paradigm: options.paradigm,
        policy: policy.name,
        seed: options.seed,
        ...(options.groupIndex !== undefined ? { groupIndex: options.groupIndex } : {}),
        steps,
        phases: Facts.segment(steps).map((s) => ({ kind: s.kind, start: s.start, end: s.end })),
        ...(answer !== undefined ? { answer } : {}),
        stop,
        ...(error !== undefined ? { error } : {}),
        startedAt,
        durationMs
      }
      return trajectory
    })

    const run = (task: Task, options: RunOptions): Effect.Effect<Trajectory> =>
      Effect.flatMap(Telemetry.exporting, (on) =>
        on
          ? Telemetry.rootSpan("Rollout.run", {
            "task.id": task.id,
            "task.level": task.level,
            "rollout.paradigm": options.paradigm,
            "rollout.seed": options.seed,
            ...(options.groupIndex !== undefined ? { "rollout.group_index": options.groupIndex } : {}),
            "policy.name": policy.name
          }, runTraced(task, options, true), rolloutAttributes)
          : runTraced(task, options, false))

    const runGroup: RolloutService["runGroup"] = (task, options) =>
      Effect.forEach(
        Array.from({ length: options.size }, (_, i) => i),
        (i) => run(task, { paradigm: options.paradigm, seed: options.seed + i, groupIndex: i }),
        { concurrency: "unbounded" }
      )

    const runAll: RolloutService["runAll"] = (jobs, options) =>
      Effect.forEach(
        jobs,
        (job) =>
          Effect.flatMap(run(job.task, job.options), (trajectory) =>
            options.onDone === undefined ? Effect.succeed(trajectory) : Effect.as(options.onDone(trajectory, job), trajectory)),
        { concurrency: options.concurrency }
      )

    return Rollout.of({ config, run, runGroup, runAll })
  })

/** The Rollout layer over Policy, Retriever, Simulator and ToolLibrary. */
export const layer = (overrides: Partial<RolloutConfig> = {}) => Layer.effect(Rollout, make(overrides))

/** What the runtime does with one call: run it (with resolved arguments), or answer it without running it. */
export type CallPlan =
  | { readonly _tag: "Run"; readonly call: ToolCall; readonly refs: ReadonlyArray<CallId> }
  | { readonly _tag: "Reject"; readonly call: ToolCall; readonly outcome: CallOutcome }

/** The runtime's checks of a turn's calls against the history (these feed r_base). */
export interface CheckedCalls {
  readonly plans: ReadonlyArray<CallPlan>
  readonly unseen: ReadonlyArray<CallId>
  readonly invalid: ReadonlyArray<{ readonly callId: CallId; readonly message: string }>
  readonly repeated: ReadonlyArray<CallId>
  readonly unresolved: ReadonlyArray<{ readonly callId: CallId; readonly ref: string }>
}

/**
 * Checks calls: a tool the agent has not seen is refused (`unknown_tool`, it must search first); `$ref`s are
 * resolved against the successful outputs of earlier rounds (a ref to a call of the same round is unresolved: it
 * has not run yet); arguments are validated against the schema (an invalid call still runs: the simulator answers
 * it like a real API, with a 400); a call identical to an earlier one that did not fail transiently is a repeat
 * (re-issuing a call after a 429/500/timeout is a retry, not a repeat).
 */
export const checkCalls = (
  calls: ReadonlyArray<ToolCall>,
  steps: ReadonlyArray<Step>,
  history: History.History,
  lookup: (name: string) => ToolSpec | undefined
): CheckedCalls => {
  const seen = history.retrieved
  const outputs = history.outputs
  const settled = new Set<string>()
  for (const step of steps) {
    for (const o of step.observations) {
      if (o.attempts > 0 && !(o.outcome._tag === "error" && transientErrorKinds.has(o.outcome.error.kind))) {
        settled.add(callKey(o.tool, o.arguments))
      }
    }
  }
  const plans: Array<CallPlan> = []
  const unseen: Array<CallId> = []
  const invalid: Array<{ callId: CallId; message: string }> = []
  const repeated: Array<CallId> = []
  const unresolved: Array<{ callId: CallId; ref: string }> = []
  for (const call of calls) {
    const spec = lookup(call.tool)
    if (!seen.has(call.tool) || spec === undefined) {
      unseen.push(call.id)
      const why = spec === undefined
        ? `unknown tool ${JSON.stringify(call.tool)}`
        : `tool ${JSON.stringify(call.tool)} has not been retrieved yet: search for it first`
      plans.push({ _tag: "Reject", call, outcome: errorOutcome("unknown_tool", why) })
      continue
    }
    const resolution = Refs.resolveRefs(call.arguments, (id) => outputs.get(id))
    if (resolution.unresolved.length > 0) {
      for (const u of resolution.unresolved) unresolved.push({ callId: call.id, ref: u.ref })
      plans.push({
        _tag: "Reject",
        call,
        outcome: errorOutcome("invalid_arguments", resolution.unresolved.map((u) => `${u.ref}: ${u.message}`).join("; "))
      })
      continue
    }
    const args: JsonObject = resolution.arguments
    const check = JsonSchemaValidate.validateArguments(spec, args)
    if (!check.ok) invalid.push({ callId: call.id, message: JsonSchemaValidate.describe(check.errors) })
    if (settled.has(callKey(call.tool, args))) repeated.push(call.id)
    plans.push({ _tag: "Run", call: { id: call.id, tool: call.tool as ToolName, arguments: args }, refs: resolution.consumed })
  }
  return { plans, unseen, invalid, repeated, unresolved }
}

