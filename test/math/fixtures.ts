/**
 * Hand-made steps for the controller and facts tests: a compact description expands into a domain `Step`
 * (turn, search results, observations, validation) so a trajectory reads like the story it tells.
 */
import { errorOutcome } from "../../src/domain/Call.ts"
import type { ErrorKind } from "../../src/domain/Call.ts"
import { callId, toolName, trajectoryId, taskId } from "../../src/domain/Ids.ts"
import type { Json, JsonObject } from "../../src/domain/Json.ts"
import type { ControllerState, Step, StepValidation, Trajectory, Verdict } from "../../src/domain/Trajectory.ts"
import type { Turn } from "../../src/domain/Turn.ts"

/** A plan node: id, deps, and optionally the tool bound to it. */
export interface NodeSpec {
  readonly id: string
  readonly deps?: ReadonlyArray<string>
  readonly tool?: string
  readonly slot?: string
}

/** A call of a turn and how it ended (`not_run` records no observation). */
export interface CallSpec {
  readonly id: string
  readonly tool: string
  readonly args?: JsonObject
  readonly result?: "ok" | ErrorKind | "not_run"
  readonly payload?: Json
  readonly refs?: ReadonlyArray<string>
}

/** A search and the tools it returned. */
export interface SearchSpec {
  readonly slot: string
  readonly hits: ReadonlyArray<string>
}

/** One step in short. */
export interface StepSpec {
  readonly malformed?: boolean
  readonly plan?: ReadonlyArray<NodeSpec>
  readonly searches?: ReadonlyArray<SearchSpec>
  readonly calls?: ReadonlyArray<CallSpec>
  readonly answer?: string
  readonly validation?: Partial<StepValidation>
  readonly controller?: ControllerState
}

/** Expands a step description at position `index`. */
export const makeStep = (index: number, spec: StepSpec): Step => {
  const calls = spec.calls ?? []
  const searches = spec.searches ?? []
  const turn: Turn = {
    searches: searches.map((s) => ({ slot: s.slot, query: `find ${s.slot}` })),
    calls: calls.map((c) => ({ id: callId(c.id), tool: toolName(c.tool), arguments: c.args ?? {} })),
    ...(spec.plan === undefined
      ? {}
      : {
        plan: {
          nodes: spec.plan.map((n) => ({
            id: callId(n.id),
            deps: (n.deps ?? []).map(callId),
            ...(n.tool === undefined ? {} : { tool: toolName(n.tool) }),
            ...(n.slot === undefined ? {} : { slot: n.slot })
          }))
        }
      }),
    ...(spec.answer === undefined ? {} : { answer: spec.answer })
  }
  return {
    index,
    raw: spec.malformed === true ? "<call>[{" : "turn",
    ...(spec.malformed === true ? { protocolError: { tag: "call", offset: 6, message: "unterminated JSON" } } : { turn }),
    validation: {
      unseenTools: [],
      invalidArguments: [],
      repeatedCalls: [],
      unresolvedRefs: [],
      ...spec.validation
    },
    controller: spec.controller ?? "May",
    phase: "explore",
    searches: spec.malformed === true ? [] : searches.map((s) => ({
      slot: s.slot,
      query: `find ${s.slot}`,
      hits: s.hits.map((tool, rank) => ({ tool: toolName(tool), score: 1 / (rank + 1) })),
      startMs: 0,
      endMs: 1
    })),
    observations: spec.malformed === true ? [] : calls.filter((c) => c.result !== "not_run").map((c) => ({
      callId: callId(c.id),
      tool: toolName(c.tool),
      arguments: c.args ?? {},
      outcome: (c.result ?? "ok") === "ok"
        ? { _tag: "ok" as const, payload: c.payload ?? { from: c.id } }
        : errorOutcome(c.result as ErrorKind, "failed"),
      refs: (c.refs ?? []).map(callId),
      attempts: 1,
      startMs: 0,
      endMs: 1
    })),
    startMs: 0,
    policyMs: 1,
    endMs: 2,
    usage: { promptTokens: 10, completionTokens: 5 }
  }
}

/** Expands a list of step descriptions. */
export const makeSteps = (specs: ReadonlyArray<StepSpec>): ReadonlyArray<Step> => specs.map((s, i) => makeStep(i, s))

/** A trajectory around some steps. */
export const makeTrajectory = (specs: ReadonlyArray<StepSpec>, verdict?: Omit<Verdict, "judge">): Trajectory => ({
  id: trajectoryId("t1"),
  taskId: taskId("task1"),
  paradigm: "ParaAct",
  policy: "test",
  seed: 1,
  steps: makeSteps(specs),
  phases: [],
  stop: "answer",
  startedAt: 0,
  durationMs: 10,
  ...(verdict === undefined ? {} : { verdict: { ...verdict, judge: "test" } })
})

/** A G_dep lookup from a list of `from>to` (hard) and `from~to` (soft) strings. */
export const depLookup = (edges: ReadonlyArray<string>) => {
  const kinds = new Map<string, "hard" | "soft">()
  for (const e of edges) {
    const hard = e.includes(">")
    const [from, to] = e.split(hard ? ">" : "~")
    kinds.set(`${from}|${to}`, hard ? "hard" : "soft")
  }
  return (from: string, to: string) => kinds.get(`${from}|${to}`)
}
