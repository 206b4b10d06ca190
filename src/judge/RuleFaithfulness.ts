/**
 * The rule judge's Faithfulness: every value-bearing span of the answer checked against the tool outputs and the request
 * (Evidence.ts); fabricated numbers and unbacked values named.
 */
import type { Grade } from "../domain/Trajectory.ts"
import * as Claims from "./Claims.ts"
import { type Evidence, evidenceStates } from "./Evidence.ts"
import { digitGroups, digitRuns, extractDates, extractNumbersOutsideDates, maskListMarkers, normalizeText } from "./FactTokens.ts"
import { contentWords, hasIdAt } from "./RuleQuality.ts"

/** Faithfulness is PARTIAL when at least this share of the answer's value-bearing spans is supported (and not all are). */
export const FAITHFUL_PARTIAL_MIN = 0.5
// Faithfulness
// ---------------------------------------------------------------------------------------------------------------

/** Words a report about the tools themselves uses ("the tools failed or were not found"): backed by the trajectory. */
const PROCESS_WORDS: ReadonlySet<string> = new Set([
  "tool", "tools", "call", "calls", "called", "fail", "failed", "fails", "failure", "failures", "error", "errors", "found",
  "returned", "return", "returns", "available", "unavailable", "succeeded", "success", "successful", "obtain", "obtained",
  "retrieve", "retrieved", "request", "requested", "result", "results", "data", "information", "api", "service",
  "server", "timeout", "timed", "out", "rate", "limit", "limited", "invalid", "arguments", "argument", "missing",
  "unknown", "answer", "complete", "completed", "could", "get", "got", "none", "nothing", "usable", "every", "make"
])

/** One value-bearing span of an answer that Faithfulness checked. */
export interface CheckedSpan {
  readonly kind: Claims.SpanKind | "stated" | "unread"
  readonly text: string
}

/** The value-bearing spans of an answer, split by whether the tool outputs back them, and its fabricated numbers. */
export interface FaithfulnessCheck {
  readonly grade: Grade
  readonly supported: ReadonlyArray<CheckedSpan>
  readonly unsupported: ReadonlyArray<CheckedSpan>
  /** Digit runs (wherever they sit: "42km", "x99") that no number or digits of the evidence back. */
  readonly fabricated: ReadonlyArray<string>
}

/**
 * Digit runs of a text (as the claim reader reads it) that nothing in the evidence backs: not its digits (ids, dates, times keep theirs), not a
 * number it states (rounding and thousands separators allowed), not a fraction shown as a percentage. Line-leading
 * list markers and ordinals (checked as numbers by the claim reader) are skipped here. A run is backed when any of the
 * given evidences backs it.
 */
export const fabricatedNumbers = (text: string, ...evidences: ReadonlyArray<Evidence>): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const run of digitRuns(maskListMarkers(text))) {
    if (run.ordinal) continue
    const backed = evidences.some((evidence) => {
      if (run.groups.every((g) => evidence.digitGroups.has(g))) return true
      const n = run.number
      return n !== undefined && (evidenceStates(evidence, n) || (run.percent && evidence.rounded[0]?.has(n.value / 100) === true))
    })
    if (!backed) out.add(run.text)
  }
  return [...out]
}

const numberBacked = (evidence: Evidence, span: Claims.ValueSpan): boolean => {
  const n = span.number
  if (n === undefined) return false
  if (evidenceStates(evidence, n)) return true
  return span.text.endsWith("%") && evidence.numbers.some((truth) => Math.abs(n.value / 100 - truth) <= 1e-9)
}

export const textBacked = (evidence: Evidence, text: string): boolean => {
  const needle = normalizeText(text)
  return needle.length > 0 && evidence.padded.includes(` ${needle} `)
}

/** Whether one evidence backs a span, by its kind. */
const backs = (evidence: Evidence, span: Claims.ValueSpan): boolean => {
  switch (span.kind) {
    case "number":
      return numberBacked(evidence, span)
    case "date":
      return span.iso !== undefined && evidence.dates.has(span.iso)
    case "id":
      return hasIdAt(evidence.raw, span.text)
    case "quoted":
    case "entity":
      return textBacked(evidence, span.text)
    case "residue":
      return evidence.sources.has(normalizeText(span.text))
    case "text": {
      if (textBacked(evidence, span.text)) return true
      const words = contentWords(span.text).length > 0 ? contentWords(span.text) : normalizeText(span.text).split(" ")
      return words.every((w) => evidence.words.has(w) || PROCESS_WORDS.has(w) || (w === "yes" && evidence.words.has("true")) || (w === "no" && evidence.words.has("false")))
    }
  }
}

/**
 * Faithfulness (the evidence rule, docs/reward.md): every value-bearing span of the answer must be backed by a tool
 * output — numbers however written (digits of any script, words, ordinals), dates, times and ids, quoted values,
 * names, a claim's plain text value, every place it states a gold value, and the residue the reader cannot parse (backed
 * only by an output holding that exact token; text past the read limit never is). What a claim is *about* (its label)
 * may restate the request too; a name, quote or number that restates the request inside a longer value may as well,
 * but a claim's whole value never rests on the request. All backed → YES; at least {@link FAITHFUL_PARTIAL_MIN} →
 * PARTIAL; else NO. No (or an empty) answer is NO: there is no answer to be faithful.
 */
export const faithfulness = (
  reading: Claims.Reading,
  outputs: Evidence,
  request: Evidence,
  stated: ReadonlyArray<{ readonly start: number; readonly end: number }> = []
): FaithfulnessCheck => {
  if (reading.text.trim().length === 0 && reading.unread === 0) return { grade: "NO", supported: [], unsupported: [], fabricated: [] }
  const ok: Array<CheckedSpan> = []
  const bad: Array<CheckedSpan> = []
  const checked = new Uint8Array(reading.text.length + 1)
  for (const span of reading.spans) {
    if (span.kind === "number" && span.ambiguous === true && !(span.whole && !span.inLabel)) continue
    // a label's names and words say what the claim is about; its numbers, dates, ids and quotes are still checked
    if (span.inLabel && (span.kind === "entity" || span.kind === "text")) continue
    // the request backs a label's spans, a restated quotation of it anywhere, and a name or number inside a longer value
    const backed = backs(outputs, span) ||
      ((span.inLabel || span.kind === "quoted" || (!span.whole && span.kind !== "text" && span.kind !== "residue")) && backs(request, span))
    ;(backed ? ok : bad).push({ kind: span.kind, text: span.text })
    checked.fill(1, span.start, span.end)
  }
  for (const o of stated) {
    if (checked[o.start] === 1 || checked[Math.max(o.start, o.end - 1)] === 1) continue
    const text = reading.text.slice(o.start, o.end)
    ;(textBacked(outputs, text) || statesValueIn(outputs, text) ? ok : bad).push({ kind: "stated", text })
  }
  if (reading.unread > 0) bad.push({ kind: "unread", text: `${reading.unread} characters past the first ${Claims.MAX_READ_CHARS}` })
  // a digit run glued to letters ("42km", "x99") reads as no number above: still, its digits must come from somewhere
  const badDigits = digitGroups(bad.map((t) => t.text).join(" "))
  const fabricated = fabricatedNumbers(reading.text, outputs, request).filter((n) => !n.split(/[.,]/).every((g) => badDigits.has(g.replace(/^0+(?=\d)/, ""))))
  const all = ok.length + bad.length
  const share = all === 0 ? 1 : ok.length / all
  const grade: Grade = bad.length === 0 && fabricated.length === 0 ? "YES" : share >= FAITHFUL_PARTIAL_MIN ? "PARTIAL" : "NO"
  return { grade, supported: ok, unsupported: bad, fabricated }
}

/** Whether the evidence states a number or date written as this text. */
const statesValueIn = (evidence: Evidence, text: string): boolean => {
  const dates = extractDates(text)
  if (dates.length > 0) return dates.every((d) => evidence.dates.has(d.iso))
  const numbers = extractNumbersOutsideDates(text, dates)
  return numbers.length > 0 && numbers.every((n) => evidenceStates(evidence, n))
}
