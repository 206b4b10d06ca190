/**
 * The checks a round's calls pass before they run: unseen tools, invalid or repeated calls, unresolved $refs, and which
 * earlier calls have settled (the observations a call may reference).
 */
import { errorOutcome, transientErrorKinds } from "../domain/Call.ts"
import type { CallOutcome, Observation, ToolCall } from "../domain/Call.ts"
import type { CallId, ToolName } from "../domain/Ids.ts"
import type { JsonObject } from "../domain/Json.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import type { Step } from "../domain/Trajectory.ts"
import { callKey } from "../math/CanonicalJson.ts"
import * as History from "../math/History.ts"
import * as Refs from "../protocol/Refs.ts"
import * as JsonSchemaValidate from "../toolenv/JsonSchemaValidate.ts"

export const noneSettled: ReadonlySet<string> = new Set()

/** A call's observation (one shape for calls run through a fiber, run inline, or refused without running). */
export const observationOf = (
  call: ToolCall,
  outcome: CallOutcome,
  refs: ReadonlyArray<CallId>,
  attempts: number,
  startMs: number,
  endMs: number
): Observation => ({ callId: call.id, tool: call.tool, arguments: call.arguments, outcome, refs, attempts, startMs, endMs })

/**
 * The settled calls after one more step: {@link callKey}s of the calls that ran and did not fail transiently (a
 * call equal to one of them is a repeat; re-issuing one that got a 429/500/timeout is a retry).
 */
export const settle = (before: ReadonlySet<string>, step: Step): ReadonlySet<string> => {
  let out: Set<string> | undefined
  for (const o of step.observations) {
    if (o.attempts > 0 && !(o.outcome._tag === "error" && transientErrorKinds.has(o.outcome.error.kind))) {
      out ??= new Set(before)
      out.add(callKey(o.tool, o.arguments))
    }
  }
  return out ?? before
}

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
  settled: ReadonlySet<string>,
  history: History.History,
  lookup: (name: string) => ToolSpec | undefined
): CheckedCalls => {
  const seen = history.retrieved
  const outputs = history.outputs
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
