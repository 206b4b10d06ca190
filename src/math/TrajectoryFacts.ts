/**
 * The bridge from a recorded trajectory to the plain fact records the reward functions score: phases, and per
 * step / call / search / phase what happened relative to the history. Pure; every judgement lives in Reward.ts.
 */
import type { ErrorKind, Observation } from "../domain/Call.ts"
import type { CallId } from "../domain/Ids.ts"
import type { Plan } from "../domain/Plan.ts"
import type { DepKind } from "../domain/Tool.ts"
import type { ControllerState, Grade, Phase, Step, Trajectory } from "../domain/Trajectory.ts"
import type { Turn } from "../domain/Turn.ts"
import { canonicalJson } from "./CanonicalJson.ts"
import * as Controller from "./Controller.ts"
import * as PlanMath from "./PlanDag.ts"

/** G_dep as a lookup: the strongest relation from `from` to `to` (`DepGraph.kind` has this shape). */
export type DepLookup = (from: string, to: string) => DepKind | undefined

/** A lookup for when no dependency graph is known: no edges. */
export const noDeps: DepLookup = () => undefined

/** How a call ended: its outcome tag, the error kind, or `not_run` when no observation was recorded for it. */
export type CallResult = "ok" | ErrorKind | "not_run"

/** Whether a call's result is a fault of the machinery (`tool_defect`) rather than the agent's or the API's. */
export const isMachineryFault = (result: CallResult): boolean => result === "tool_defect"

/** One call of a phase. */
export interface CallFact {
  readonly id: string
  readonly tool: string
  /** Position of the issuing step in the trajectory. */
  readonly step: number
  readonly result: CallResult
  /** Identical (tool + resolved arguments) to an earlier call, as the runtime's validation recorded it. */
  readonly repeated: boolean
  /** Its tool had been returned by a search of an earlier step. */
  readonly grounded: boolean
  /** Issued before something it depends on (see docs/reward.md, L3). */
  readonly outOfOrder: boolean
  /** Dependency layer within its phase: 1 + max layer of the phase's earlier calls it depends on. */
  readonly layer: number
}

/** One search of a phase. */
export interface SearchFact {
  readonly step: number
  readonly slot: string
  readonly hits: number
  /** Hits neither retrieved nor called before this search (earlier searches of the same step count as before). */
  readonly newTools: number
  /** A hit is called successfully at a later step. */
  readonly usedLater: boolean
  /** 1 + the number of searches for the same slot in earlier steps of the phase (refinements are sequential). */
  readonly layer: number
}

/** The dependency declaration of the plan active in a phase, against G_dep (feeds L2). */
export interface DependencyFacts {
  /** Declared plan edges between nodes bound to tools. */
  readonly declared: number
  /** Declared edges G_dep supports (a hard or soft edge in the same direction). */
  readonly supported: number
  /** Hard G_dep edges among the plan's tools and the tools the phase called. */
  readonly required: number
  /** Required edges the plan declares (directly or through other nodes). */
  readonly recalled: number
}

/** The r_base checks of a step, as counts (the runtime's validation). */
export interface Violations {
  readonly unseenTools: number
  readonly invalidArguments: number
  readonly repeatedCalls: number
  readonly unresolvedRefs: number
}

/** What the step reward needs to know about one step. */
export interface StepFacts {
  readonly index: number
  readonly phase: Phase
  /** The controller's decision before the step, recomputed from the history. */
  readonly decision: Controller.Decision
  /** The state the step is scored under (Answer for the step that answers, or a runtime-forced final round). */
  readonly state: ControllerState
  readonly parsed: boolean
  readonly answered: boolean
  readonly plan: Controller.PlanStatus
  readonly violations: Violations
  /** Tools retrieved or called before the step, sorted. */
  readonly seenBefore: ReadonlyArray<string>
  /** Actions of the turn the paradigm dropped (they did not run; neither credited nor charged). */
  readonly dropped: number
  /** Searches the retriever failed on and calls whose implementation crashed (faults of the machinery, not charged). */
  readonly machineryFaults: number
  readonly calls: ReadonlyArray<CallFact>
  readonly searches: ReadonlyArray<SearchFact>
}

/** What the phase reward needs to know about one phase: steps [start, end). */
export interface PhaseFacts {
  readonly kind: Phase
  readonly start: number
  readonly end: number
  /** Steps of the phase that issued at least one search or call. */
  readonly rounds: number
  readonly calls: ReadonlyArray<CallFact>
  readonly searches: ReadonlyArray<SearchFact>
  readonly dependencies: DependencyFacts
}

/** The judge's verdicts, when the trajectory was judged. */
export interface VerdictFacts {
  readonly quality: Grade
  readonly faithfulness: Grade
  readonly utility: Grade
}

/** Everything the reward of one trajectory is computed from. */
export interface TrajectoryFacts {
  readonly steps: ReadonlyArray<StepFacts>
  readonly phases: ReadonlyArray<PhaseFacts>
  readonly verdict: VerdictFacts | undefined
  /** T_max forced the end (stop `max_rounds`, an answer at the forced last round included); absent: not truncated. */
  readonly truncated?: boolean
}

/** A maximal run of steps of one phase: steps [start, end) (the shape of the domain's `PhaseSpan`). */
export interface Span {
  readonly kind: Phase
  readonly start: number
  readonly end: number
}

/** Options of {@link fromTrajectory}. */
export interface FactsOptions {
  /** G_dep; defaults to {@link noDeps}. */
  readonly deps?: DepLookup
  /**
   * The steps form a search tree (DFSDT): each step is scored against the root-to-parent path the policy was shown
   * ({@link History.pathTo}), not against every earlier step. {@link fromTrajectory} sets it for DFSDT trajectories.
   */
  readonly tree?: boolean
}

/** The paradigm whose trajectories are search trees (the runtime's `Paradigm.rules.DFSDT.backtrack`). */
export const treeParadigm = "DFSDT"

/** The labels of a step's dropped actions (`search:<slot>`, `call:<id>`), as a set. */
const droppedOf = (step: Step): ReadonlySet<string> => new Set(step.validation.dropped ?? [])

/**
 * The turn as the runtime ran it: the recorded turn (what the policy said) less the actions the paradigm dropped.
 * Dropped actions did not run; they are neither credited nor charged.
 */
export const executedTurn = (step: Step): Turn | undefined => {
  const turn = step.turn
  const dropped = droppedOf(step)
  if (turn === undefined || dropped.size === 0) return turn
  return {
    ...turn,
    searches: turn.searches.filter((s) => !dropped.has(`search:${s.slot}`)),
    calls: turn.calls.filter((c) => !dropped.has(`call:${c.id}`))
  }
}

/**
 * The phase of a turn: calls make it execute; only searches make it explore; a turn with neither (answer,
 * plan only, malformed) joins the phase before it, and the first step defaults to explore.
 */
export const phaseOf = (turn: Turn | undefined, previous: Phase | undefined): Phase => {
  if (turn !== undefined && turn.calls.length > 0) return "execute"
  if (turn !== undefined && turn.searches.length > 0) return "explore"
  return previous ?? "explore"
}

/**
 * The phase of a recorded step: as {@link phaseOf}, counting what actually ran too (observations are calls,
 * search results are searches), so a step recorded without a parsed turn still lands in the right phase.
 */
export const phaseOfStep = (step: Step, previous: Phase | undefined): Phase =>
  step.observations.length > 0 ? "execute" : phaseOf(executedTurn(step), step.searches.length > 0 ? "explore" : previous)

/** The phase of every step (see {@link phaseOfStep}). */
export const phasesOf = (steps: ReadonlyArray<Step>): ReadonlyArray<Phase> => {
  const out: Array<Phase> = []
  let previous: Phase | undefined
  for (const step of steps) {
    previous = phaseOfStep(step, previous)
    out.push(previous)
  }
  return out
}

/** Maximal runs of equal phases. */
export const spans = (phases: ReadonlyArray<Phase>): ReadonlyArray<Span> => {
  const out: Array<Span> = []
  let start = 0
  for (let i = 1; i <= phases.length; i++) {
    if (i === phases.length || phases[i] !== phases[i - 1]) {
      const kind = phases[start]
      if (kind !== undefined) out.push({ kind, start, end: i })
      start = i
    }
  }
  return out
}

/** The phase spans of a list of steps (what the runtime stores in `Trajectory.phases`). */
export const segment = (steps: ReadonlyArray<Step>): ReadonlyArray<Span> => spans(phasesOf(steps))

/** A call's facts but its layer, with what the layer is computed from. */
interface RawCall extends Omit<CallFact, "layer"> {
  readonly refs: ReadonlyArray<string>
  readonly declaredDeps: ReadonlyArray<string>
}

interface RawSearch {
  readonly step: number
  readonly slot: string
  readonly hits: ReadonlyArray<string>
  readonly newTools: number
}

const normaliseSlot = (slot: string): string => slot.trim().toLowerCase().replace(/\s+/g, " ")

/** One call of a step as {@link callsOf} reads it. */
interface StepCall {
  readonly id: CallId
  readonly tool: string
  readonly result: CallResult
  readonly refs: ReadonlyArray<string>
}

/** A recorded observation as a step call (the tool that actually ran, its outcome, the refs it consumed). */
const observed = (id: CallId, obs: Observation): StepCall =>
  ({ id, tool: obs.tool, result: obs.outcome._tag === "ok" ? "ok" : obs.outcome.error.kind, refs: obs.refs })

/** The calls of one step, each with its observation (matched by id, first unused), and observations no call claims. */
const callsOf = (step: Step): ReadonlyArray<StepCall> => {
  const used = new Set<number>()
  const out: Array<StepCall> = []
  for (const call of executedTurn(step)?.calls ?? []) {
    const at = step.observations.findIndex((o, i) => !used.has(i) && o.callId === call.id)
    const obs = step.observations[at]
    if (obs === undefined) {
      out.push({ id: call.id, tool: call.tool, result: "not_run", refs: [] })
      continue
    }
    used.add(at)
    out.push(observed(call.id, obs))
  }
  step.observations.forEach((obs, i) => {
    if (!used.has(i)) out.push(observed(obs.callId, obs))
  })
  return out
}

/**
 * The calls of a step that repeat another call of the same turn (same tool, same resolved arguments) **[ours]**: all
 * of a turn's calls run at once, so the second of two identical calls cannot be a retry of the first — it is a repeat,
 * like one of an earlier round (which the runtime's validation flags). The first of each identical set is not.
 * Resolved arguments are the observation's (what the tool received); a call with no observation keeps the turn's.
 */
export const inTurnRepeats = (step: Step): ReadonlySet<string> => {
  const out = new Set<string>()
  const calls = executedTurn(step)?.calls ?? []
  if (calls.length < 2) return out
  const byId = new Map<string, Array<Observation>>()
  for (const o of step.observations) byId.set(o.callId, [...(byId.get(o.callId) ?? []), o])
  const seen = new Set<string>()
  for (const call of calls) {
    const observed = byId.get(call.id)?.shift()
    const key = `${call.tool}\u0000${canonicalJson(observed?.arguments ?? call.arguments)}`
    if (seen.has(key)) out.add(call.id)
    else seen.add(key)
  }
  return out
}

/** The repeated calls of a step: those the runtime flagged (an identical earlier call) and the {@link inTurnRepeats}. */
export const repeatedCallsOf = (step: Step): ReadonlySet<string> => {
  const inTurn = inTurnRepeats(step)
  if (inTurn.size === 0) return new Set(step.validation.repeatedCalls)
  return new Set([...step.validation.repeatedCalls, ...inTurn])
}

/** The facts of a step that its step reward (r_base, r_plan) reads. */
export type StepScoreFacts = Pick<StepFacts, "decision" | "state" | "parsed" | "answered" | "plan" | "violations">

/**
 * {@link StepScoreFacts} of `step`, scored against `memory`: the controller's memory of the history the policy was
 * shown before it (every earlier step; the root-to-parent path for DFSDT). Equal to those fields of
 * `fromSteps(...).steps[k]`, which uses it; a server that keeps the memory scores a step without refolding the
 * trajectory.
 */
export const stepScoreFacts = (memory: Controller.Memory, step: Step): StepScoreFacts => {
  const decision = Controller.decide(memory)
  const answered = step.turn?.answer !== undefined
  const forced = step.controller === "Answer"
  const validation = step.validation
  return {
    decision,
    state: Controller.scoredState(forced ? "Answer" : decision.state, answered),
    parsed: step.turn !== undefined,
    answered,
    plan: Controller.classifyPlan(memory, step),
    violations: {
      unseenTools: validation.unseenTools.length,
      invalidArguments: validation.invalidArguments.length,
      repeatedCalls: repeatedCallsOf(step).size,
      unresolvedRefs: validation.unresolvedRefs.length
    }
  }
}

/** Builds the facts of a trajectory. `verdict` is taken from the trajectory when present. */
export const fromTrajectory = (trajectory: Trajectory, options?: FactsOptions): TrajectoryFacts => {
  const facts = fromSteps(trajectory.steps, trajectory.verdict, { tree: trajectory.paradigm === treeParadigm, ...options })
  return trajectory.stop === "max_rounds" ? { ...facts, truncated: true } : facts
}

/** Builds the facts of a list of steps (a trajectory, judged or not). */
export const fromSteps = (
  steps: ReadonlyArray<Step>,
  verdict: VerdictFacts | undefined,
  options?: FactsOptions
): TrajectoryFacts => {
  const deps = options?.deps ?? noDeps
  const phases = phasesOf(steps)
  const stepSpans = spans(phases)

  const rawCalls: Array<Array<RawCall>> = []
  const rawSearches: Array<Array<RawSearch>> = []
  const activeAfter: Array<Controller.ActivePlan | undefined> = []
  const firstToolOfId = new Map<string, string>()
  const lastSuccess = new Map<string, number>()
  const partial: Array<Omit<StepFacts, "calls" | "searches" | "phase">> = []

  const tree = options?.tree === true
  // the controller's memory after each step; a step is scored against the memory of the history the policy saw
  const memoryAfter: Array<Controller.Memory> = []
  const toolOfIdAfter: Array<ReadonlyMap<string, string>> = []
  steps.forEach((step, k) => {
    const parent = tree ? step.parent : k - 1
    const memory = parent === undefined || parent < 0 ? Controller.initial : (memoryAfter[parent] ?? Controller.initial)
    const toolOfId = new Map(parent === undefined || parent < 0 ? [] : (toolOfIdAfter[parent] ?? []))
    const scored = stepScoreFacts(memory, step)
    const validation = step.validation

    // the plan the step's calls run under: the step's own plan when valid, else the active one
    const after = Controller.advance(memory, step)
    const active = after.latestPlan
    const completed = active === undefined ? new Set<CallId>() : Controller.completedNodes(active, memory.successes)
    const unresolved = new Set<string>(validation.unresolvedRefs.map((r) => r.callId))
    const repeated = repeatedCallsOf(step)
    // a call the machinery crashed on (tool_defect) is not the agent's doing: left out of the phase's facts, counted
    const allCalls = callsOf(step)
    const calls = allCalls.filter((c) => !isMachineryFault(c.result))
    const stepCalls: Array<RawCall> = calls.map((call) => {
      if (!firstToolOfId.has(call.id)) firstToolOfId.set(call.id, call.tool)
      if (!toolOfId.has(call.id)) toolOfId.set(call.id, call.tool)
      const node = active?.plan.nodes.find((n) => n.id === call.id)
      const declaredDeps = node === undefined ? [] : [...new Set(node.deps)]
      const depsMet = declaredDeps.every((d) => completed.has(d as CallId))
      const hardBefore = memory.successes.some((s) => deps(s.tool, call.tool) === "hard")
      const producerAlongside = calls.some((other) => other !== call && deps(other.tool, call.tool) === "hard")
      const blindNotFound = call.result === "not_found" && producerAlongside && !hardBefore
      return {
        id: call.id,
        tool: call.tool,
        step: k,
        result: call.result,
        repeated: repeated.has(call.id),
        grounded: memory.retrieved.has(call.tool),
        outOfOrder: unresolved.has(call.id) || !depsMet || blindNotFound,
        refs: call.refs,
        declaredDeps
      }
    })
    for (const call of stepCalls) if (call.result === "ok") lastSuccess.set(call.tool, k)

    const seen = new Set(memory.known)
    // a search the retriever failed on is a fault of the machinery: not a search that "found nothing"
    const stepSearches: Array<RawSearch> = step.searches.filter((search) => search.error === undefined).map((search) => {
      const hits = search.hits.map((h) => h.tool)
      let fresh = 0
      for (const tool of new Set(hits)) {
        if (seen.has(tool)) continue
        seen.add(tool)
        fresh++
      }
      return { step: k, slot: normaliseSlot(search.slot), hits, newTools: fresh }
    })

    partial.push({
      index: k,
      ...scored,
      seenBefore: [...memory.known].sort(),
      dropped: droppedOf(step).size,
      machineryFaults: allCalls.length - calls.length + (step.searches.length - stepSearches.length)
    })
    rawCalls.push(stepCalls)
    rawSearches.push(stepSearches)
    activeAfter.push(active)
    memoryAfter.push(after)
    toolOfIdAfter.push(toolOfId)
  })

  const usedLater = (search: RawSearch): boolean => search.hits.some((tool) => (lastSuccess.get(tool) ?? -1) > search.step)
  const callFacts: Array<Array<CallFact>> = steps.map(() => [])
  const searchFacts: Array<Array<SearchFact>> = steps.map(() => [])
  const phaseFacts: Array<PhaseFacts> = stepSpans.map((span) => {
    const calls: Array<CallFact> = []
    const callLayers: Array<{ raw: RawCall; layer: number }> = []
    const searches: Array<SearchFact> = []
    const slotCounts = new Map<string, number>()
    const acting = new Set<number>()
    for (let k = span.start; k < span.end; k++) {
      for (const raw of rawCalls[k] ?? []) {
        let layer = 1
        for (const earlier of callLayers) {
          if (earlier.raw.step >= k) continue
          const e = earlier.raw
          const depends = raw.refs.includes(e.id) || raw.declaredDeps.includes(e.id) || deps(e.tool, raw.tool) !== undefined ||
            (e.tool === raw.tool && e.result !== "ok")
          if (depends) layer = Math.max(layer, earlier.layer + 1)
        }
        callLayers.push({ raw, layer })
        const { refs: _refs, declaredDeps: _declaredDeps, ...known } = raw
        const fact: CallFact = { ...known, layer }
        calls.push(fact)
        callFacts[k]?.push(fact)
        acting.add(k)
      }
      const stepSlots = new Map<string, number>()
      for (const raw of rawSearches[k] ?? []) {
        const fact: SearchFact = {
          step: raw.step,
          slot: raw.slot,
          hits: raw.hits.length,
          newTools: raw.newTools,
          usedLater: usedLater(raw),
          layer: 1 + (slotCounts.get(raw.slot) ?? 0)
        }
        stepSlots.set(raw.slot, (stepSlots.get(raw.slot) ?? 0) + 1)
        searches.push(fact)
        searchFacts[k]?.push(fact)
        acting.add(k)
      }
      for (const [slot, n] of stepSlots) slotCounts.set(slot, (slotCounts.get(slot) ?? 0) + n)
    }
    return {
      kind: span.kind,
      start: span.start,
      end: span.end,
      rounds: acting.size,
      calls,
      searches,
      dependencies: dependencyFacts(activeAfter[span.end - 1]?.plan, calls, tree ? (toolOfIdAfter[span.end - 1] ?? new Map()) : firstToolOfId, deps)
    }
  })

  return {
    steps: partial.map((p, k) => ({
      ...p,
      phase: phases[k] ?? "explore",
      calls: callFacts[k] ?? [],
      searches: searchFacts[k] ?? []
    })),
    phases: phaseFacts,
    verdict: verdict === undefined
      ? undefined
      : { quality: verdict.quality, faithfulness: verdict.faithfulness, utility: verdict.utility }
  }
}

/**
 * L2's counts for one phase. A node is bound to its `tool`, or else to the tool of the trajectory's first call
 * with the node's id. Declared edges: plan edges between bound nodes; supported when G_dep relates the two tools
 * in that direction. Required: ordered pairs of distinct tools among the bound tools and the phase's called tools
 * with a hard G_dep edge; recalled when a node of the consumer depends, directly or not, on a node of the producer.
 */
export const dependencyFacts = (
  plan: Plan | undefined,
  calls: ReadonlyArray<Pick<CallFact, "tool">>,
  toolOfId: ReadonlyMap<string, string>,
  deps: DepLookup
): DependencyFacts => {
  const bound = new Map<string, string>()
  for (const node of plan?.nodes ?? []) {
    const tool = node.tool ?? toolOfId.get(node.id)
    if (tool !== undefined && !bound.has(node.id)) bound.set(node.id, tool)
  }
  let declared = 0
  let supported = 0
  for (const edge of plan === undefined ? [] : PlanMath.edges(plan)) {
    const from = bound.get(edge.from)
    const to = bound.get(edge.to)
    if (from === undefined || to === undefined || edge.from === edge.to) continue
    declared++
    if (deps(from, to) !== undefined) supported++
  }
  const tools = [...new Set([...bound.values(), ...calls.map((c) => c.tool)])]
  // per bound node, the tools of the nodes it depends on, directly or not
  const upstream = new Map<string, ReadonlySet<string>>()
  for (const id of bound.keys()) {
    const feeding = new Set<string>()
    for (const a of plan === undefined ? [] : PlanMath.ancestors(plan, id)) {
      const tool = bound.get(a)
      if (tool !== undefined) feeding.add(tool)
    }
    upstream.set(id, feeding)
  }
  let required = 0
  let recalled = 0
  for (const producer of tools) {
    for (const consumer of tools) {
      if (producer === consumer || deps(producer, consumer) !== "hard") continue
      required++
      const declaredSomewhere = [...bound].some(([id, tool]) => tool === consumer && (upstream.get(id)?.has(producer) ?? false))
      if (declaredSomewhere) recalled++
    }
  }
  return { declared, supported, required, recalled }
}
