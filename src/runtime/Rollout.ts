/**
 * The Rollout service: runs one task to a Trajectory. It is a loop over a {@link Session.Session}: each round asks the
 * Policy for a turn (guarded: a throw, a defect or a timeout ends the rollout `policy_error`, its rounds kept) and
 * steps the session with it, which validates the turn and runs all of the round's searches and calls concurrently
 * as child fibers of the round (ParaAct's parallel actions).
 */
import { Cause, Context, Duration, Effect, Layer, Result } from "effect"
import type { Task } from "../domain/Task.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import type { Paradigm, Step, Trajectory } from "../domain/Trajectory.ts"
import * as Telemetry from "../io/Telemetry.ts"
import * as History from "../math/History.ts"
import * as Paradigms from "../protocol/Paradigm.ts"
import { Policy } from "../agent/Policy.ts"
import type { PolicyContext, PolicyOutput } from "../agent/Policy.ts"
import type { Retriever } from "../retrieval/Retriever.ts"
import type { Simulator } from "../toolenv/Simulator.ts"
import type { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import * as Session from "./Session.ts"
import type { RolloutConfig } from "./Session.ts"

export { checkCalls, defaultConfig } from "./Session.ts"
export type { CallPlan, CheckedCalls, RolloutConfig } from "./Session.ts"

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
  const abandoned = backtrack ? before.filter(Session.isDeadEnd) : []
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

/** The outcome of a policy turn as span attributes (token counts, or the failure, redacted). */
const policyAttributes = (output: Result.Result<PolicyOutput, string>): Telemetry.Attributes =>
  Result.isSuccess(output)
    ? {
      "policy.outcome": "ok",
      "policy.prompt_tokens": output.success.usage.promptTokens,
      "policy.completion_tokens": output.success.usage.completionTokens
    }
    : { "policy.outcome": "error", error: true, "policy.error": Telemetry.text(output.failure, 300) }

/** A round's outcome as span attributes. */
const roundAttributes = (outcome: { readonly _tag: "PolicyFailed"; readonly message: string } | { readonly _tag: "Step"; readonly step: Step }): Telemetry.Attributes => {
  if (outcome._tag === "PolicyFailed") return { "round.outcome": "policy_error" }
  const { step } = outcome
  return {
    "round.outcome": step.protocolError !== undefined ? "protocol_error" : step.turn?.answer !== undefined ? "answer" : "actions",
    "round.phase": step.phase,
    "round.searches": step.searches.length,
    "round.calls": step.observations.filter((o) => o.attempts > 0).length,
    "round.rejected": step.observations.filter((o) => o.attempts === 0).length,
    ...(step.parent !== undefined ? { "round.parent": step.parent } : {}),
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

/** Builds the service from its dependencies. */
export const make = (overrides: Partial<RolloutConfig> = {}): Effect.Effect<RolloutService, never, Policy | Retriever | Simulator | ToolLibrary> =>
  Effect.gen(function*() {
    const config: RolloutConfig = { ...Session.defaultConfig, ...overrides }
    const policy = yield* Policy
    const services = yield* Effect.context<Retriever | Simulator | ToolLibrary>()

    const runTraced = Effect.fnUntraced(function*(task: Task, options: RunOptions, spans: boolean) {
      const session = yield* Session.open({
        task,
        paradigm: options.paradigm,
        seed: options.seed,
        ...(options.groupIndex !== undefined ? { groupIndex: options.groupIndex } : {}),
        policy: policy.name,
        privileged: policy.privileged
      }, config).pipe(Effect.provideContext(services))

      const loop = Effect.gen(function*() {
        for (let context = session.context(); context !== undefined; context = session.context()) {
          const round = Effect.gen(function*() {
            const startMs = yield* session.elapsed
            // a policy that throws (or dies) ends this rollout with policy_error, its rounds kept; siblings go on
            const turn = Effect.suspend(() => policy.act(context)).pipe(
              Effect.catchDefect((defect) => Effect.fail(`the policy crashed: ${Session.defectMessage(Cause.die(defect))}`)),
              Effect.timeoutOrElse({
                duration: config.policyTimeout,
                orElse: () => Effect.fail(`the policy gave no turn within ${Duration.format(Duration.fromInputUnsafe(config.policyTimeout))}`)
              }),
              Effect.mapError((e) => (typeof e === "string" ? e : e.message)),
              Effect.result
            )
            const output = yield* Telemetry.span(spans, "Policy.act", { "policy.name": policy.name, "round.index": context.round, "rollout.paradigm": options.paradigm }, turn, policyAttributes)
            const policyEnd = yield* session.elapsed
            if (Result.isFailure(output)) return { _tag: "PolicyFailed" as const, message: output.failure }
            const step = yield* session.step(output.success, { startMs, policyMs: policyEnd - startMs }).pipe(Effect.orDie)
            return { _tag: "Step" as const, step }
          })
          const outcome = yield* Telemetry.span(spans, "Rollout.round", { "round.index": context.round }, round, roundAttributes)
          if (outcome._tag === "PolicyFailed") return session.end("policy_error", outcome.message)
        }
      })

      const finished = yield* loop.pipe(Effect.timeoutOption(config.rolloutTimeout))
      if (finished._tag === "None") {
        session.end("interrupted", `rollout exceeded ${Duration.format(Duration.fromInputUnsafe(config.rolloutTimeout))}`)
      }
      return yield* session.trajectory
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
