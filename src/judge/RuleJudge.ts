/**
 * The rule judge: Quality / Faithfulness / Utility for tasks with gold facts, decided by matching normalised
 * facts against the answer and the observations — deterministic, free, and the reference the LLM judge is checked against.
 */
import { Effect, Layer } from "effect"
import type { Json } from "../domain/Json.ts"
import type { GoldFact, Task } from "../domain/Task.ts"
import type { Grade, Trajectory, Verdict } from "../domain/Trajectory.ts"
import { Judge, JudgeError } from "./Judge.ts"
import {
  boundForExtraction,
  containsTokens,
  digitGroups,
  digitRuns,
  extractDates,
  extractFactTokens,
  extractNumbersOutsideDates,
  type FactToken,
  maskListMarkers,
  MAX_EXTRACTED_CHARS,
  normalizeText,
  type NumberToken,
  numberStates,
  parseWholeDate,
  parseWholeNumber
} from "./FactTokens.ts"
import * as Responsiveness from "./Responsiveness.ts"

/** Faithfulness is PARTIAL when at least this share of the answer's factual tokens is supported (and not all are). */
export const FAITHFUL_PARTIAL_MIN = 0.5

/** The judge's label in verdicts. */
export const NAME = "rule"

// ---------------------------------------------------------------------------------------------------------------
// Evidence
// ---------------------------------------------------------------------------------------------------------------

/** Everything the answer may lean on, in comparable forms. */
export interface Evidence {
  /** Normalised text of every source, each source separated so tokens never join across sources. */
  readonly text: string
  /** Lower-cased raw text, for ids (whose punctuation matters). */
  readonly raw: string
  readonly numbers: ReadonlyArray<number>
  readonly dates: ReadonlySet<string>
  /** `text` with a space on each side, so a token run is found with one `includes`. */
  readonly padded: string
  /** The digit groups of every source (leading zeros stripped), for the fabricated-number check. */
  readonly digitGroups: ReadonlySet<string>
  /** The numbers, exactly and rounded to 1..{@link ROUNDED_DECIMALS} decimals, for O(1) look-ups. */
  readonly rounded: ReadonlyArray<ReadonlySet<number>>
}

/** Numbers shown with up to this many decimals are looked up in precomputed rounded sets; more decimals scan. */
export const ROUNDED_DECIMALS = 4

const roundTo = (x: number, d: number): number => Math.round(x * 10 ** d) / 10 ** d

/** Whether some evidence number is stated by a number as written (see `numberStates`), in O(1) for ≤ 4 decimals. */
export const evidenceStates = (evidence: Evidence, shown: NumberToken): boolean => {
  if (evidence.rounded[0]?.has(shown.value) === true) return true
  if (shown.decimals === 0) return false
  const set = evidence.rounded[shown.decimals]
  if (set !== undefined) return set.has(roundTo(shown.value, shown.decimals)) || evidence.numbers.length < 64 && evidence.numbers.some((t) => numberStates(shown, t))
  return evidence.numbers.some((truth) => numberStates(shown, truth))
}

/** The leaves of a JSON value (object keys included), as strings, and the lengths of its arrays. */
export const jsonLeaves = (value: Json): { readonly strings: ReadonlyArray<string>; readonly numbers: ReadonlyArray<number> } => {
  const strings: Array<string> = []
  const numbers: Array<number> = []
  const walk = (v: Json): void => {
    if (v === null) return
    if (typeof v === "string") {
      strings.push(v)
      return
    }
    if (typeof v === "number") {
      numbers.push(v)
      strings.push(String(v))
      return
    }
    if (typeof v === "boolean") {
      strings.push(String(v))
      return
    }
    if (Array.isArray(v)) {
      // a count of what a tool listed is supported by the list itself
      numbers.push(v.length)
      for (const item of v) walk(item)
      return
    }
    for (const [key, item] of Object.entries(v)) {
      strings.push(key)
      walk(item)
    }
  }
  walk(value)
  return { strings, numbers }
}

/** Builds the evidence from free texts and numbers. */
export const makeEvidence = (texts: ReadonlyArray<string>, numbers: ReadonlyArray<number> = []): Evidence => {
  const allNumbers = [...numbers]
  const dates = new Set<string>()
  for (const text of texts) {
    const found = extractDates(text)
    for (const d of found) dates.add(d.iso)
    for (const n of extractNumbersOutsideDates(text, found)) allNumbers.push(n.value)
  }
  const text = texts.map(normalizeText).filter((t) => t.length > 0).join(" \u0000 ")
  const raw = texts.join("\n").toLowerCase()
  const rounded: Array<Set<number>> = [new Set(allNumbers)]
  for (let d = 1; d <= ROUNDED_DECIMALS; d++) rounded.push(new Set(allNumbers.map((n) => roundTo(n, d))))
  return { text, raw, numbers: allNumbers, dates, padded: ` ${text} `, digitGroups: digitGroups(raw), rounded }
}

/** Every successful observation of a trajectory, with its payload. */
const successes = (trajectory: Trajectory) =>
  trajectory.steps.flatMap((step) =>
    step.observations.flatMap((o) => (o.outcome._tag === "ok" ? [{ observation: o, payload: o.outcome.payload }] : []))
  )

/**
 * The evidence an answer may be faithful to: the request; the payloads of successful calls and the arguments
 * the tools accepted; the error kind, status and message of failed calls (so an honest failure report is supported);
 * the names of the tools called.
 */
export const trajectoryEvidence = (task: Task, trajectory: Trajectory): Evidence => {
  const texts: Array<string> = [task.request]
  const numbers: Array<number> = []
  for (const step of trajectory.steps) {
    for (const o of step.observations) {
      texts.push(o.tool)
      if (o.outcome._tag === "ok") {
        const payload = jsonLeaves(o.outcome.payload)
        const args = jsonLeaves(o.arguments)
        texts.push(...payload.strings, ...args.strings)
        numbers.push(...payload.numbers, ...args.numbers)
      } else {
        texts.push(o.outcome.error.kind.replace(/_/g, " "), String(o.outcome.error.status), o.outcome.error.message)
        numbers.push(o.outcome.error.status)
      }
    }
  }
  return makeEvidence(texts, numbers)
}

// ---------------------------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------------------------

/**
 * Whether a text states a gold value: a numeric value only as a number (rounding-tolerant, never as the digits
 * of a date or an id), a date only as a date (any recognised layout), anything else as a run of normalised words.
 */
export const statesValue = (text: string, value: string): boolean => statesOf(value)(text)

/** {@link statesValue} with the gold value parsed once, for testing it against many texts. */
const statesOf = (value: string): (text: string) => boolean => {
  const number = parseWholeNumber(value)
  if (number !== undefined) {
    const truth = number.value
    return (text) => extractNumbersOutsideDates(text).some((shown) => numberStates(shown, truth))
  }
  const date = parseWholeDate(value)
  if (date !== undefined) return (text) => extractDates(text).some((d) => d.iso === date)
  const needle = normalizeText(value)
  return (text) => containsTokens(normalizeText(text), needle)
}

/** Whether a JSON payload's leaves (see {@link jsonLeaves}) hold a gold value, with the value parsed once. */
const heldBy = (value: string): (leaves: ReturnType<typeof jsonLeaves>) => boolean => {
  const number = parseWholeNumber(value)
  const states = statesOf(value)
  return ({ numbers, strings }) => (number !== undefined && numbers.some((n) => numberStates(number, n))) || strings.some(states)
}

const hasIdAt = (raw: string, id: string): boolean => {
  const needle = id.toLowerCase()
  let from = 0
  while (true) {
    const at = raw.indexOf(needle, from)
    if (at < 0) return false
    const before = raw[at - 1]
    const after = raw[at + needle.length]
    const boundary = (c: string | undefined) => c === undefined || !/[\p{L}\p{N}_]/u.test(c)
    if (boundary(before) && boundary(after)) return true
    from = at + 1
  }
}

/** Whether one factual token of the answer is backed by the evidence. */
export const supported = (token: FactToken, evidence: Evidence): boolean => {
  switch (token.kind) {
    case "quoted":
    case "entity": {
      const needle = normalizeText(token.text)
      return needle.length > 0 && evidence.padded.includes(` ${needle} `)
    }
    case "date":
      return evidence.dates.has(token.iso)
    case "id":
      return hasIdAt(evidence.raw, token.text)
    case "number": {
      const n = token.number
      const percentAsFraction = token.text.endsWith("%") ? [n.value / 100] : []
      return evidenceStates(evidence, n) ||
        percentAsFraction.some((v) => evidence.rounded[0]?.has(v) === true || evidence.numbers.some((truth) => Math.abs(v - truth) <= 1e-9))
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Criteria
// ---------------------------------------------------------------------------------------------------------------

/** YES when all, PARTIAL when some, NO when none (of a non-empty set). */
export const gradeShare = (hit: number, total: number): Grade => (hit === total ? "YES" : hit > 0 ? "PARTIAL" : "NO")

/** The facts an answer states, of those a complete answer must state. */
export interface QualityCheck {
  readonly grade: Grade
  readonly stated: ReadonlyArray<GoldFact>
  readonly missing: ReadonlyArray<GoldFact>
}

/**
 * Quality's coverage: the share of gold facts the answer states (read in its first {@link MAX_EXTRACTED_CHARS}
 * characters). No (or an empty) answer is NO. {@link judgeRule} then applies the responsiveness checks.
 */
export const quality = (facts: ReadonlyArray<GoldFact>, answer: string | undefined, request?: string): QualityCheck => {
  const text = head(answer?.trim() ?? "")
  // A gold value the request itself names ("home team of the match \"A vs B\"": A) is stated only outside the
  // answer's quotations of the request, or quoting the question would state its answer.
  const unquoted = request === undefined ? text : Responsiveness.withoutRequestQuotes(text, request)
  const stated = text.length === 0 ? [] : facts.filter((f) => statesValue(request !== undefined && statesValue(request, f.value) ? unquoted : text, f.value))
  const missing = facts.filter((f) => !stated.includes(f))
  return { grade: text.length === 0 ? "NO" : gradeShare(stated.length, facts.length), stated, missing }
}

const head = (text: string): string => (text.length <= MAX_EXTRACTED_CHARS ? text : text.slice(0, MAX_EXTRACTED_CHARS))

/** The factual tokens of an answer, split by whether the evidence backs them, and its fabricated numbers. */
export interface FaithfulnessCheck {
  readonly grade: Grade
  readonly supported: ReadonlyArray<FactToken>
  readonly unsupported: ReadonlyArray<FactToken>
  /** Digit runs (wherever they sit: "42km", "x99") that no number or digits of the evidence back. */
  readonly fabricated: ReadonlyArray<string>
}

/**
 * Digit runs of an answer that nothing in the evidence backs: not its digits (ids, dates, times keep theirs), not a
 * number it states (rounding and thousands separators allowed), not a fraction shown as a percentage. Line-leading
 * list markers and ordinals (1st, 2nd) are layout. Reads the answer as `boundForExtraction` bounds it.
 */
export const fabricatedNumbers = (answer: string, evidence: Evidence): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const run of digitRuns(maskListMarkers(boundForExtraction(answer)))) {
    if (run.ordinal || run.groups.every((g) => evidence.digitGroups.has(g))) continue
    const n = run.number
    if (n !== undefined && (evidenceStates(evidence, n) || (run.percent && evidence.rounded[0]?.has(n.value / 100) === true))) continue
    out.add(run.text)
  }
  return [...out]
}

/**
 * Faithfulness: YES when every factual token is supported (an answer with none claims nothing unsupported),
 * PARTIAL when at least {@link FAITHFUL_PARTIAL_MIN} of them are, else NO; a fabricated number (see
 * {@link fabricatedNumbers}) keeps it from YES. No (or an empty) answer is NO: there is no answer to be faithful.
 * `tokens` are the answer's {@link extractFactTokens}, when the caller has them already.
 */
export const faithfulness = (answer: string | undefined, evidence: Evidence, tokens?: ReadonlyArray<FactToken>): FaithfulnessCheck => {
  const text = answer?.trim() ?? ""
  if (text.length === 0) return { grade: "NO", supported: [], unsupported: [], fabricated: [] }
  const all = tokens ?? extractFactTokens(text)
  const verdicts = all.map((t) => supported(t, evidence))
  const ok = all.filter((_, i) => verdicts[i] === true)
  const bad = all.filter((_, i) => verdicts[i] !== true)
  // a digit run inside a token already found unsupported ("ORD-170", "45") is not reported twice
  const badDigits = digitGroups(bad.map((t) => t.text).join(" "))
  const fabricated = fabricatedNumbers(text, evidence).filter((n) => !n.split(/[.,]/).every((g) => badDigits.has(g.replace(/^0+(?=\d)/, ""))))
  const share = all.length === 0 ? 1 : ok.length / all.length
  const grade: Grade = bad.length === 0 && fabricated.length === 0 ? "YES" : share >= FAITHFUL_PARTIAL_MIN ? "PARTIAL" : "NO"
  return { grade, supported: ok, unsupported: bad, fabricated }
}

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

/** The gold facts that can be checked: those whose value is a number or has at least one word. */
export const usableFacts = (task: Task): ReadonlyArray<GoldFact> =>
  task.facts.filter((f) => normalizeText(f.value).length > 0 || parseWholeNumber(f.value) !== undefined)

const listFacts = (facts: ReadonlyArray<GoldFact>): string => facts.map((f) => `${f.key}=${JSON.stringify(f.value)}`).join(", ")
const listTokens = (tokens: ReadonlyArray<FactToken>): string => tokens.map((t) => `${t.kind} ${JSON.stringify(t.text)}`).join(", ")

/** Quality with the responsiveness checks: coverage, then NO for an echo, and YES demoted to PARTIAL when any check fails. */
export interface ResponsiveQuality extends QualityCheck {
  readonly coverage: Grade
  readonly responsiveness: Responsiveness.ResponsivenessCheck
}

/**
 * Quality: the gold facts stated ({@link quality}) *and* to the point ({@link Responsiveness.check}): an echo of
 * the request is NO; an answer that states every fact but fails a responsiveness check (length budget, unrequested
 * content, fact precision, wrong entity, the extraction cap) is PARTIAL.
 */
export const responsiveQuality = (task: Task, facts: ReadonlyArray<GoldFact>, trajectory: Trajectory, tokens: ReadonlyArray<FactToken>): ResponsiveQuality => {
  const answer = trajectory.answer?.trim() ?? ""
  const coverage = quality(facts, answer, task.request)
  const ok = successes(trajectory)
  const context = Responsiveness.makeContext(task.request, facts, ok.map((s) => ({ arguments: s.observation.arguments, payload: s.payload })))
  const argumentEvidence = makeEvidence(
    [task.request, ...ok.flatMap((s) => jsonLeaves(s.observation.arguments).strings)],
    ok.flatMap((s) => jsonLeaves(s.observation.arguments).numbers)
  )
  // a value the request names is news only where the answer states it outside its quotations of the request
  const unquoted = Responsiveness.withoutRequestQuotes(answer, task.request)
  const statesNewFact = coverage.stated.some((f) => !statesValue(task.request, f.value) || (unquoted !== answer && statesValue(unquoted, f.value)))
  const responsiveness = Responsiveness.check(answer, tokens, context, (t) => supported(t, argumentEvidence), statesNewFact)
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
 * Gold facts whose value normalises to nothing are ignored. The rationale names every check that failed.
 */
export const judgeRule = (task: Task, trajectory: Trajectory): Verdict => {
  const facts = usableFacts(task)
  const answer = trajectory.answer?.trim() ?? ""
  const tokens = answer.length === 0 ? [] : extractFactTokens(answer)
  const q = responsiveQuality(task, facts, trajectory, tokens)
  const f = faithfulness(answer, trajectoryEvidence(task, trajectory), tokens)
  const u = utility(facts, trajectory)
  const noAnswer = answer.length === 0
  const failed = q.responsiveness.failures.map((x) => `${x.check}: ${x.message}`)
  const rationale = [
    noAnswer
      ? "Q: no answer"
      : `Q: ${q.stated.length}/${facts.length} gold facts stated${q.missing.length > 0 ? ` (missing ${listFacts(q.missing)})` : ""}` +
        (failed.length > 0 ? `; not to the point — ${failed.join("; ")}` : ""),
    noAnswer
      ? "F: no answer to be faithful"
      : `F: ${f.supported.length}/${f.supported.length + f.unsupported.length} factual tokens supported${f.unsupported.length > 0 ? ` (unsupported ${listTokens(f.unsupported)})` : ""}` +
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
