/**
 * The rule judge: Quality / Faithfulness / Utility for tasks with gold facts. The answer is read into claims
 * (Claims.ts); Quality counts the gold facts stated as claims — bound to the right label, affirmatively, not hedged,
 * contradicted or retracted; Faithfulness checks every value-bearing span against the tool outputs (Evidence.ts).
 * Deterministic, free, and the reference the LLM judge is checked against.
 */
import { Effect, Layer } from "effect"
import type { GoldFact, Task } from "../domain/Task.ts"
import type { Grade, Trajectory, Verdict } from "../domain/Trajectory.ts"
import * as Claims from "./Claims.ts"
import { type Evidence, evidenceStates, jsonLeaves, outputEvidence, requestEvidence } from "./Evidence.ts"
import { type FactToken, normalizeText, parseWholeNumber } from "./FactTokens.ts"
import { Judge, JudgeError } from "./Judge.ts"
import * as Responsiveness from "./Responsiveness.ts"
import { gradeShare, hasIdAt, heldBy, quality, type FactStatement, type QualityCheck } from "./RuleQuality.ts"
import { faithfulness, textBacked, type CheckedSpan } from "./RuleFaithfulness.ts"
export { HEDGES, NEGATIONS, bindLabel, factGroups, gradeShare, quality, statesValue, type FactGroup, type FactStatement, type NotStated, type QualityCheck } from "./RuleQuality.ts"
export { FAITHFUL_PARTIAL_MIN, fabricatedNumbers, faithfulness, type CheckedSpan, type FaithfulnessCheck } from "./RuleFaithfulness.ts"

export { type Evidence, evidenceStates, jsonLeaves, makeEvidence, outputEvidence, requestEvidence, ROUNDED_DECIMALS } from "./Evidence.ts"


/** The judge's label in verdicts. */
export const NAME = "rule"

/** The tool evidence of a trajectory (see Evidence.outputEvidence: tool outputs only, never the agent's own arguments). */
export const trajectoryEvidence = (task: Task, trajectory: Trajectory): Evidence => outputEvidence(task, trajectory)

// ---------------------------------------------------------------------------------------------------------------
// Utility
// ---------------------------------------------------------------------------------------------------------------

/** Every successful observation of a trajectory, with its payload. */
const successes = (trajectory: Trajectory) =>
  trajectory.steps.flatMap((step) =>
    step.observations.flatMap((o) => (o.outcome._tag === "ok" ? [{ observation: o, payload: o.outcome.payload }] : []))
  )

/** The gold facts that some successful call observed. */
export interface UtilityCheck {
  readonly grade: Grade
  readonly observed: ReadonlyArray<GoldFact>
  readonly unobserved: ReadonlyArray<GoldFact>
}

/** Utility: the share of gold facts whose value appears in the payload of some successful call. */
export const utility = (facts: ReadonlyArray<GoldFact>, trajectory: Trajectory): UtilityCheck => {
  // each payload's leaves are walked once, not once per fact
  const payloads = successes(trajectory).map((s) => jsonLeaves(s.payload))
  const observed = facts.filter((f) => payloads.some(heldBy(f.value)))
  const unobserved = facts.filter((f) => !observed.includes(f))
  return { grade: gradeShare(observed.length, facts.length), observed, unobserved }
}

/**
 * Per step, whether the evidence was complete **before** it: every fact's value held by the payload of a successful
 * call of an earlier step (Utility's rule, {@link utility}, on the trajectory cut before the step). All false when
 * there are no facts: completeness is then not defined. Each payload is walked once.
 */
export const evidenceBefore = (facts: ReadonlyArray<GoldFact>, trajectory: Pick<Trajectory, "steps">): ReadonlyArray<boolean> => {
  const tests = facts.map((f) => heldBy(f.value))
  const held = facts.map(() => false)
  let open = facts.length
  return trajectory.steps.map((step) => {
    const complete = facts.length > 0 && open === 0
    for (const o of step.observations) {
      if (open === 0) break
      if (o.outcome._tag !== "ok") continue
      const leaves = jsonLeaves(o.outcome.payload)
      tests.forEach((test, k) => {
        if (!held[k] && test(leaves)) {
          held[k] = true
          open--
        }
      })
    }
    return complete
  })
}

/** The gold facts that can be checked: those whose value is a number or has at least one word. */
export const usableFacts = (task: Task): ReadonlyArray<GoldFact> =>
  task.facts.filter((f) => normalizeText(f.value).length > 0 || parseWholeNumber(f.value) !== undefined)

// ---------------------------------------------------------------------------------------------------------------
// The verdict
// ---------------------------------------------------------------------------------------------------------------

const listFacts = (facts: ReadonlyArray<GoldFact>): string => facts.map((f) => `${f.key}=${JSON.stringify(f.value)}`).join(", ")
const listMissing = (statements: ReadonlyArray<FactStatement>): string =>
  statements.filter((s) => !s.stated).map((s) => `${s.fact.key}=${JSON.stringify(s.fact.value)}${s.reason !== undefined ? ` (${s.reason})` : ""}`).join(", ")
const listSpans = (spans: ReadonlyArray<CheckedSpan>): string => spans.slice(0, 8).map((t) => `${t.kind} ${JSON.stringify(t.text.length > 80 ? `${t.text.slice(0, 77)}…` : t.text)}`).join(", ") +
  (spans.length > 8 ? `, … ${spans.length - 8} more` : "")

/**
 * The factual tokens of a reading (numbers, dates, ids, quotes, names), for the responsiveness checks; a token inside
 * a stated gold value ("296" of "Re: Project team 296") is part of that value, not a claim of its own.
 */
const factTokensOf = (reading: Claims.Reading, within: ReadonlyArray<{ readonly start: number; readonly end: number }>): ReadonlyArray<FactToken> => {
  // a token inside a stated value, other than the value itself
  const covered = new Uint8Array(reading.text.length + 1)
  const exact = new Set<string>()
  for (const o of within) {
    covered.fill(1, o.start, o.end)
    exact.add(`${o.start}:${o.end}`)
  }
  const strictlyInside = (s: Claims.ValueSpan) => covered[s.start] === 1 && covered[Math.max(s.start, s.end - 1)] === 1 && !exact.has(`${s.start}:${s.end}`)
  return reading.spans.filter((s) => !strictlyInside(s)).flatMap((s): ReadonlyArray<FactToken> => {
    switch (s.kind) {
      case "number":
        return s.number === undefined || s.ambiguous === true ? [] : [{ kind: "number", text: s.text, number: s.number }]
      case "date":
        return [{ kind: "date", text: s.text, iso: s.iso ?? "" }]
      case "id":
        return [{ kind: "id", text: s.text }]
      case "quoted":
        return [{ kind: "quoted", text: s.text }]
      case "entity":
        return [{ kind: "entity", text: s.text }]
      default:
        return []
    }
  })
}

/** Quality with the responsiveness checks: coverage, then NO for an echo, and YES demoted to PARTIAL when any check fails. */
export interface ResponsiveQuality extends QualityCheck {
  readonly coverage: Grade
  readonly responsiveness: Responsiveness.ResponsivenessCheck
}

/**
 * Quality: the gold facts stated ({@link quality}) *and* to the point (`Responsiveness.check`): an echo of
 * the request is NO; an answer that states every fact but fails a responsiveness check (length budget, unrequested
 * content, fact precision, wrong entity, the read limit) is PARTIAL. "Requested" is what the user's request says —
 * never what the agent itself sent as arguments.
 */
export const responsiveQuality = (
  task: Task,
  facts: ReadonlyArray<GoldFact>,
  trajectory: Trajectory,
  reading: Claims.Reading,
  outputs: Evidence,
  request: Evidence
): ResponsiveQuality => {
  const answer = trajectory.answer?.trim() ?? ""
  const coverage = quality(facts, reading, task.request, outputs)
  const context = Responsiveness.makeContext(task.request, facts, successes(trajectory).map((s) => ({ arguments: s.observation.arguments, payload: s.payload })))
  const text = reading.text
  // a stated fact is news: Quality already refused a value found only in the answer's quotations of the request
  const statesNewFact = coverage.stated.length > 0
  const tokens = factTokensOf(reading, coverage.valueOccurrences)
  const fromRequest = (t: FactToken): boolean =>
    t.kind === "number" ? evidenceStates(request, t.number) : t.kind === "date" ? request.dates.has(t.iso) : t.kind === "id" ? hasIdAt(request.raw, t.text) : textBacked(request, t.text)
  const responsiveness = Responsiveness.check(text, answer.length, reading.unread, tokens, context, fromRequest, statesNewFact)
  const grade: Grade = answer.length === 0
    ? "NO"
    : responsiveness.echo
    ? "NO"
    : coverage.grade === "YES" && !responsiveness.ok
    ? "PARTIAL"
    : coverage.grade
  return { ...coverage, grade, coverage: coverage.grade, responsiveness }
}

/**
 * The rule verdict on a trajectory of a task with gold facts (the caller ensures `task.facts` is not empty).
 * Gold facts whose value normalises to nothing are ignored. The rationale names every check that failed, and why a
 * gold value found in the answer did not count (negated, hedged, bound to another label, contradicted, retracted).
 */
export const judgeRule = (task: Task, trajectory: Trajectory): Verdict => {
  const facts = usableFacts(task)
  const answer = trajectory.answer?.trim() ?? ""
  const reading = Claims.read(answer)
  const outputs = outputEvidence(task, trajectory)
  const request = requestEvidence(task)
  const q = responsiveQuality(task, facts, trajectory, reading, outputs, request)
  const f = answer.length === 0
    ? { grade: "NO" as const, supported: [], unsupported: [], fabricated: [] }
    : faithfulness(reading, outputs, request, q.valueOccurrences)
  const u = utility(facts, trajectory)
  const noAnswer = answer.length === 0
  const failed = q.responsiveness.failures.map((x) => `${x.check}: ${x.message}`)
  const rationale = [
    noAnswer
      ? "Q: no answer"
      : `Q: ${q.stated.length}/${facts.length} gold facts stated${q.missing.length > 0 ? ` (missing ${listMissing(q.statements)})` : ""}` +
        (failed.length > 0 ? `; not to the point — ${failed.join("; ")}` : ""),
    noAnswer
      ? "F: no answer to be faithful"
      : `F: ${f.supported.length}/${f.supported.length + f.unsupported.length} value-bearing spans backed by tool outputs${f.unsupported.length > 0 ? ` (unsupported ${listSpans(f.unsupported)})` : ""}` +
        (f.fabricated.length > 0 ? `; fabricated numbers ${f.fabricated.slice(0, 5).join(", ")}` : ""),
    `U: ${u.observed.length}/${facts.length} gold facts observed by successful calls${u.unobserved.length > 0 ? ` (not observed ${listFacts(u.unobserved)})` : ""}`
  ].join("; ")
  const counts = { facts: facts.length, stated: noAnswer ? 0 : q.stated.length, unrequested: noAnswer ? 0 : q.responsiveness.unrequestedFacts }
  return { quality: q.grade, faithfulness: f.grade, utility: u.grade, rationale, judge: NAME, counts }
}

/** The rule judge as a service; a task without gold facts is a JudgeError (use the LLM judge for those). */
export const make: Judge["Service"] = Judge.of({
  name: NAME,
  judge: Effect.fn("RuleJudge.judge")(function*(task: Task, trajectory: Trajectory) {
    if (usableFacts(task).length === 0) {
      return yield* new JudgeError({ message: `rule judge: task ${task.id} has no gold facts to check an answer against` })
    }
    return judgeRule(task, trajectory)
  })
})

/** The rule judge layer. */
export const layer: Layer.Layer<Judge> = Layer.succeed(Judge, make)
