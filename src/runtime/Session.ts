/**
 * A Session is one episode driven from outside, round by round: `context()` gives what a policy sees before the next
 * round, `step(output)` validates that round's turn and runs its searches and calls concurrently as child fibers
 * (ParaAct's parallel actions), and `trajectory()` is the episode so far. The Rollout runtime is a loop over a
 * Session with a Policy in it; the ToolEnv server steps the same Session with turns that arrive over the wire, so a
 * served episode and an in-process rollout of the same turns are the same trajectory.
 *
 * A Session is a deterministic function of (library, simulator seed, task, seed, paradigm, config, the outputs
 * stepped so far): {@link replay} rebuilds one from its outputs (timings aside), which is what lets any server replica
 * serve any step of an episode.
 */
import { Cause, Clock, Duration, Effect, Exit, Result, Schema } from "effect"
import { errorOutcome } from "../domain/Call.ts"
import type { CallOutcome, Observation, ToolCall } from "../domain/Call.ts"
import { trajectoryId } from "../domain/Ids.ts"
import type { CallId } from "../domain/Ids.ts"
import type { Task } from "../domain/Task.ts"
import type { Paradigm, ProtocolIssue, SearchHit, SearchResult, Step, StepValidation, StopReason, Trajectory } from "../domain/Trajectory.ts"
import { validStep } from "../domain/Trajectory.ts"
import type { Turn } from "../domain/Turn.ts"
import type { PolicyContext, PolicyOutput } from "../agent/Policy.ts"
import * as Controller from "../math/Controller.ts"
import * as History from "../math/History.ts"
import * as PlanMath from "../math/PlanDag.ts"
import * as Facts from "../math/TrajectoryFacts.ts"
import * as Paradigms from "../protocol/Paradigm.ts"
import * as ParaAct from "../protocol/ParaAct.ts"
import { defaultTopK, pageOf, Retriever, searchPage } from "../retrieval/Retriever.ts"
import { Simulator } from "../toolenv/Simulator.ts"
import type { Episode, Execution } from "../toolenv/Simulator.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import * as Telemetry from "../io/Telemetry.ts"
import { checkCalls, noneSettled, observationOf, settle, type CallPlan } from "./CallChecks.ts"
export { checkCalls, settle, type CallPlan, type CheckedCalls } from "./CallChecks.ts"

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

/** What one episode is: the task, how it is acted (paradigm, seed), and who acts in it. */
export interface SessionSpec {
  readonly task: Task
  readonly paradigm: Paradigm
  readonly seed: number
  /** Index within a GRPO group. */
  readonly groupIndex?: number
  /** Recorded as the trajectory's `policy`. */
  readonly policy: string
  /** The policy sees the gold task (the scripted teacher); never true for a policy that is trained or evaluated. */
  readonly privileged?: boolean
}

/** When a round's policy turn started and how long the policy took (ms since the session opened). */
export interface StepTiming {
  readonly startMs: number
  readonly policyMs: number
}

/** A step was asked of a session that has ended. */
export class SessionEnded extends Schema.TaggedError<SessionEnded>()("SessionEnded", {
  stop: Schema.String,
  rounds: Schema.Number
}) {
  override get message(): string {
    return `the episode has ended (${this.stop} after ${this.rounds} rounds): it takes no more turns`
  }
}

/** Where an episode is. */
export interface SessionStatus {
  /** Rounds taken so far (= the next round's index while not done). */
  readonly rounds: number
  readonly done: boolean
  /** Why it ended; undefined while it runs. */
  readonly stop: StopReason | undefined
  /** The answer, once given. */
  readonly answer: string | undefined
}

/** One episode, stepped from outside. Not safe for two concurrent `step`s: a caller steps it one round at a time. */
export interface Session {
  readonly spec: SessionSpec
  readonly config: RolloutConfig
  /** The policy context of the next round; undefined once the episode has ended. */
  readonly context: () => PolicyContext | undefined
  /**
   * Runs one round with the given turn (text as a model wrote it, or a structured `turn`): validation, the
   * paradigm's rules, every search and call of the turn concurrently. The step is appended and returned; the
   * episode ends at an answer or at T_max. Fails only when the episode has already ended.
   */
  readonly step: (output: PolicyOutput, timing?: StepTiming) => Effect.Effect<Step, SessionEnded>
  /** Ends the episode without a turn (the policy failed, or it ran out of time); a no-op once ended. */
  readonly end: (stop: "policy_error" | "interrupted", error: string) => void
  readonly status: () => SessionStatus
  /**
   * What the step reward reads of step `index`, scored against the history its policy was shown (the same as
   * `TrajectoryFacts.fromTrajectory(trajectory).steps[index]` has it, without refolding the episode); undefined when
   * there is no such step.
   */
  readonly stepScore: (index: number) => Facts.StepScoreFacts | undefined
  /** Milliseconds since the session opened, by the Clock. */
  readonly elapsed: Effect.Effect<number>
  /** The episode so far (stop reason `max_rounds` while it is still running), its duration by the Clock. */
  readonly trajectory: Effect.Effect<Trajectory>
}

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

/** A round's outcome before it becomes a Step. */
interface RoundRecord {
  readonly step: Step
  readonly answered: boolean
}

const truncate = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max)}…`)

/** The most tokens a usage field may count; beyond it (1e300, say) the number is not a count a model produced. */
export const maxTokenCount = 10_000_000

/**
 * The policy's numbers as a trajectory can store them: a non-finite, negative, fractional or absurd (over
 * {@link maxTokenCount}) token count becomes 0 and a non-finite log-probability is dropped, each recorded as an issue
 * (JSON would turn non-finite numbers into null and the trajectory would no longer decode).
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
    if (Number.isInteger(value) && value >= 0 && value <= maxTokenCount) return value
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
export const defectMessage = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const text = error instanceof Error ? `${error.name}: ${error.message}` : typeof error === "string" ? error : JSON.stringify(error) ?? String(error)
  return truncate(text.replace(/\s*\n\s*/g, " "), 300)
}

/** A round is a dead end (DFSDT backtracks) when it was malformed, or every action it ran failed or found nothing. */
export const isDeadEnd = (step: Step): boolean => {
  if (step.turn === undefined) return true
  if (step.turn.answer !== undefined) return false
  const anyCall = step.observations.some((o) => o.outcome._tag === "ok")
  const anyHit = step.searches.some((s) => s.hits.length > 0)
  return !anyCall && !anyHit
}

/**
 * Opens an episode over the Retriever, Simulator and ToolLibrary in context. The simulator episode (world state,
 * seeded faults) is a function of (task id, seed); nothing else is drawn at random.
 */
export const open = (spec: SessionSpec, overrides: Partial<RolloutConfig> = {}): Effect.Effect<Session, never, Retriever | Simulator | ToolLibrary> =>
  Effect.gen(function*() {
    const config: RolloutConfig = { ...defaultConfig, ...overrides }
    const retriever = yield* Retriever
    const simulator = yield* Simulator
    const library = yield* ToolLibrary
    // the per-call and per-search spans exist only when a tracer exports (read once per episode)
    const spans = yield* Telemetry.exporting
    const { task, paradigm } = spec
    const startedAt = yield* Clock.currentTimeMillis
    const elapsed = Effect.map(Clock.currentTimeMillis, (t) => t - startedAt)
    const episode = yield* simulator.open({ taskId: task.id, seed: spec.seed, request: task.request, faults: config.faults })
    const rules = Paradigms.rules[paradigm]
    const steps: Array<Step> = []
    // DFSDT: the node of the search tree the next expansion grows from (undefined: the root); the policy sees the
    // path from the root to it. Linear paradigms see every step.
    let at: number | undefined
    const abandonedAt = new Map<number, Array<number>>()
    let stop: StopReason | undefined
    let answer: string | undefined
    let error: string | undefined

      const runSearch = (slot: string, query: string, page: number, elapsed: Effect.Effect<number>) =>
        Effect.gen(function*() {
          const startMs = yield* elapsed
          // a failed or timed-out retriever is a fault of the machinery: recorded on the search, not "found nothing"
          const found = yield* searchPage(retriever.search, query, config.topK, page).pipe(
            Effect.map((hits): { readonly hits: ReadonlyArray<SearchHit>; readonly error?: string } => ({ hits })),
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
          const result: SearchResult = {
            slot,
            query,
            hits: found.hits,
            ...(found.error !== undefined ? { error: found.error } : {}),
            ...(page > 0 ? { page: page + 1 } : {}),
            startMs,
            endMs
          }
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
          return observationOf(call, outcome, refs, attempt, startMs, endMs)
        })

      /** {@link runCall} or {@link rejected} for a synchronous simulator, without a fiber or a timer. */
      const runInstant = (run: (call: ToolCall) => Execution, plan: CallPlan, now: () => number): Observation => {
        const { call } = plan
        const startMs = now()
        if (plan._tag === "Reject") return observationOf(call, plan.outcome, [], 0, startMs, startMs)
        let execution: Execution
        try {
          execution = run(call)
        } catch (defect) {
          execution = { outcome: errorOutcome("tool_defect", `the tool's implementation crashed: ${defectMessage(Cause.die(defect))}`), attempt: 1 }
        }
        return observationOf(call, execution.outcome, plan.refs, execution.attempt, startMs, now())
      }

      const rejected = (call: ToolCall, outcome: CallOutcome, elapsed: Effect.Effect<number>) =>
        Effect.map(elapsed, (ms) => observationOf(call, outcome, [], 0, ms, ms))

    // The controller's memory and the settled call keys after each step, folded along the history that step
    // extends (its root-to-node path for DFSDT, every earlier step otherwise): each step is folded in once, so a
    // round costs the same at round 12 as at round 1.
    const memoryAfter: Array<Controller.Memory> = []
    const settledAfter: Array<ReadonlySet<string>> = []
    /** The step the next round extends (undefined: none yet). */
    const base = (): number | undefined => (rules.backtrack ? at : steps.length > 0 ? steps.length - 1 : undefined)

    /** What the next round is built from: the visible history, its memory, the controller's decision. */
    const prepare = () => {
      const roundIndex = steps.length
      const last = base()
      const history = rules.backtrack ? History.pathTo(steps, at) : [...steps]
      const memory = last === undefined ? Controller.initial : (memoryAfter[last] as Controller.Memory)
      const settled = last === undefined ? noneSettled : (settledAfter[last] as ReadonlySet<string>)
      const decision = Controller.decide(memory, { finalRound: roundIndex === config.maxRounds - 1 })
      return { roundIndex, history, memory, settled, decision, parent: at }
    }
    let prepared: { readonly rounds: number; readonly value: ReturnType<typeof prepare> } | undefined
    const next = () => {
      if (prepared === undefined || prepared.rounds !== steps.length) prepared = { rounds: steps.length, value: prepare() }
      return prepared.value
    }

    const context = (): PolicyContext | undefined => {
      if (stop !== undefined) return undefined
      const { roundIndex, history, memory, decision } = next()
      // DFSDT: every expansion abandoned so far, so the policy knows what failed anywhere in the tree
      const abandoned = [...abandonedAt.values()].flat().sort((a, b) => a - b).map((i) => steps[i] as Step)
      return {
        request: task.request,
        paradigm,
        round: roundIndex,
        maxRounds: config.maxRounds,
        controller: decision.state,
        history,
        tools: [...memory.retrieved].flatMap((name) => {
          const spec = library.get(name)
          return spec === undefined ? [] : [spec]
        }),
        seed: spec.seed,
        ...(spec.privileged === true ? { task } : {}),
        ...(abandoned.length > 0 ? { abandoned } : {})
      }
    }

    const execute = (input: {
      readonly output: PolicyOutput
      readonly history: ReadonlyArray<Step>
      readonly memory: History.History
      readonly settled: ReadonlySet<string>
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
        const enforced = Paradigms.enforce(paradigm, parsed.success, input.executedBefore)
        const turn = enforced.turn
        const checked = checkCalls(turn.calls, input.settled, input.memory, library.get)
        const planCheck = turn.plan === undefined ? undefined : PlanMath.validate(turn.plan)
        const validation: StepValidation = {
          unseenTools: checked.unseen,
          invalidArguments: checked.invalid,
          repeatedCalls: checked.repeated,
          unresolvedRefs: checked.unresolved,
          ...(planCheck !== undefined && planCheck._tag === "Invalid" ? { planError: PlanMath.describeIssues(planCheck.issues) } : {}),
          ...(enforced.dropped.length > 0 ? { dropped: enforced.dropped } : {})
        }
        // a query the agent already searched (on its path, or earlier in this turn) returns its next page
        const pages = turn.searches.map((s, i) => pageOf(history, s.query, turn.searches.slice(0, i).filter((t) => t.query === s.query).length))
        const actions = (): Array<Effect.Effect<SearchResult | Observation>> => [
          ...turn.searches.map((s, i) =>
            Telemetry.span(
              spans,
              "Rollout.search",
              { "search.slot": s.slot, "search.query": Telemetry.text(s.query) },
              runSearch(s.slot, s.query, pages[i] as number, elapsed),
              searchAttributes
            )
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
        const instant = episode.executeSync
        let searches: Array<SearchResult>
        let observations: Array<Observation>
        if (instant !== undefined && !spans && turn.searches.length === 0) {
          // every action is a synchronous call: run them inline, in order, as the concurrent fibers would have
          searches = []
          observations = yield* Effect.clockWith((clock) => Effect.sync(() => checked.plans.map((p) => runInstant(instant, p, () => clock.currentTimeMillisUnsafe() - startedAt))))
        } else {
          const results = yield* Effect.forEach(actions(), (a) => a, { concurrency: config.concurrency })
          searches = results.slice(0, turn.searches.length) as Array<SearchResult>
          observations = results.slice(turn.searches.length) as Array<Observation>
        }
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

    const step = (output: PolicyOutput, timing?: StepTiming): Effect.Effect<Step, SessionEnded> =>
      Effect.gen(function*() {
        if (stop !== undefined) return yield* new SessionEnded({ stop, rounds: steps.length })
        const { roundIndex, history, memory, settled, decision, parent } = next()
        const startMs = timing?.startMs ?? (yield* elapsed)
        const record = yield* execute({
          output,
          history,
          memory,
          settled,
          index: steps.length,
          controller: decision.state,
          executedBefore: history.some((s) => s.observations.some((o) => o.attempts > 0)),
          startMs,
          policyMs: timing?.policyMs ?? 0,
          ...(rules.backtrack && parent !== undefined ? { parent } : {})
        })
        const { step, answered } = record
        steps.push(step)
        memoryAfter.push(Controller.advance(memory, step))
        settledAfter.push(settle(settled, step))
        if (answered) {
          // an answer at the last round was forced by T_max (the controller's Answer state): the rollout is truncated
          stop = roundIndex === config.maxRounds - 1 ? "max_rounds" : "answer"
          answer = step.turn?.answer
        } else if (steps.length >= config.maxRounds) {
          stop = "max_rounds"
        } else if (rules.backtrack && isDeadEnd(step)) {
          // Abandon the expansion; re-expand its parent, or move one level up once the parent used its branching.
          const parentKey = step.parent ?? -1
          const siblings = abandonedAt.get(parentKey) ?? []
          siblings.push(step.index)
          abandonedAt.set(parentKey, siblings)
          if (siblings.length >= rules.branching && at !== undefined) at = steps[at]?.parent
        } else if (rules.backtrack) {
          at = step.index
        }
        return step
      })

    const end = (reason: "policy_error" | "interrupted", message: string): void => {
      if (stop !== undefined) return
      stop = reason
      error = message
    }

    const trajectory = Effect.map(elapsed, (durationMs): Trajectory => ({
      id: trajectoryId(`${task.id}/${paradigm}/${spec.seed}`),
      taskId: task.id,
      paradigm,
      policy: spec.policy,
      seed: spec.seed,
      ...(spec.groupIndex !== undefined ? { groupIndex: spec.groupIndex } : {}),
      steps: [...steps],
      phases: Facts.segment(steps).map((s) => ({ kind: s.kind, start: s.start, end: s.end })),
      ...(answer !== undefined ? { answer } : {}),
      stop: stop ?? "max_rounds",
      ...(error !== undefined ? { error } : {}),
      startedAt,
      durationMs
    }))

    return {
      spec,
      config,
      context,
      step,
      end,
      status: () => ({ rounds: steps.length, done: stop !== undefined, stop, answer }),
      stepScore: (index) => {
        const scored = steps[index]
        if (scored === undefined) return undefined
        const before = rules.backtrack ? scored.parent : index > 0 ? index - 1 : undefined
        return Facts.stepScoreFacts(before === undefined ? Controller.initial : (memoryAfter[before] as Controller.Memory), scored)
      },
      elapsed,
      trajectory
    } satisfies Session
  })

/**
 * Rebuilds an episode from the outputs stepped into it so far (in order): the same steps, observations, world state
 * and controller state as the original (timings aside). Outputs past the episode's end are ignored.
 */
export const replay = (
  spec: SessionSpec,
  outputs: ReadonlyArray<PolicyOutput>,
  overrides: Partial<RolloutConfig> = {}
): Effect.Effect<Session, never, Retriever | Simulator | ToolLibrary> =>
  Effect.gen(function*() {
    const session = yield* open(spec, overrides)
    for (const output of outputs) {
      if (session.status().done) break
      yield* session.step(output).pipe(Effect.orDie)
    }
    return session
  })
