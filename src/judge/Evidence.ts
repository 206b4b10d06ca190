/**
 * What an answer may lean on, in comparable forms: the tool outputs (successful payloads, and the environment's own
 * facts about failed calls), never what the agent wrote itself — its arguments, its think or plan text, or an error
 * message that echoes them; and, separately, the user's request (what a claim's subject may restate).
 */
import type { Json } from "../domain/Json.ts"
import type { Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import { normalize, wordsOf } from "./Claims.ts"
import { digitGroups, extractDates, extractNumbersOutsideDates, normalizeText, type NumberToken, numberStates } from "./FactTokens.ts"
import { readNumberWords } from "./Numerals.ts"

/** Everything an answer may lean on from one source, in comparable forms. */
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
  /** Every normalised word of every source. */
  readonly words: ReadonlySet<string>
  /** Every source whole, normalised: a token the reader could not parse is supported only by an equal source. */
  readonly sources: ReadonlySet<string>
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

/**
 * Builds evidence from free texts and numbers. Every text is normalised like an answer (Claims.normalize: NFKC,
 * invisible characters out, digits of every script), and its numbers are read from digits and from English words.
 */
export const makeEvidence = (texts: ReadonlyArray<string>, numbers: ReadonlyArray<number> = []): Evidence => {
  const allNumbers = [...numbers]
  const dates = new Set<string>()
  const normalizedTexts = texts.map((t) => normalize(t))
  const words = new Set<string>()
  const sources = new Set<string>()
  const norms: Array<string> = []
  for (const text of normalizedTexts) {
    const found = extractDates(text)
    for (const d of found) dates.add(d.iso)
    for (const n of extractNumbersOutsideDates(text, found)) allNumbers.push(n.value)
    const ws = wordsOf(text).map((w) => w.norm)
    for (const w of ws) words.add(w)
    for (const n of readNumberWords(ws)) if (!n.ambiguous) allNumbers.push(n.value)
    const norm = normalizeText(text)
    if (norm.length > 0) {
      norms.push(norm)
      sources.add(norm)
    }
  }
  const text = norms.join(" \u0000 ")
  const raw = normalizedTexts.join("\n").toLowerCase()
  const rounded: Array<Set<number>> = [new Set(allNumbers)]
  for (let d = 1; d <= ROUNDED_DECIMALS; d++) rounded.push(new Set(allNumbers.map((n) => roundTo(n, d))))
  return { text, raw, numbers: allNumbers, dates, padded: ` ${text} `, digitGroups: digitGroups(raw), rounded, words, sources }
}

/** The leaf values (not keys) of a JSON value, as text. */
const leafValues = (value: Json, into: Array<string>): void => {
  if (value === null) return
  if (typeof value !== "object") {
    into.push(String(value))
    return
  }
  if (Array.isArray(value)) {
    for (const item of value) leafValues(item, into)
    return
  }
  for (const item of Object.values(value)) leafValues(item, into)
}

const cache = new WeakMap<object, Map<string, Evidence>>()

/**
 * The tool evidence of a trajectory (the **evidence rule**, docs/reward.md): the payloads of successful calls (every
 * leaf and key, numbers, and the length of every array), the error kind and HTTP status of failed calls, the names of
 * the tools that ran, and how many calls ran, failed and succeeded. Never the arguments the agent sent, nor a failed
 * call's message (which quotes them back). A payload leaf that only echoes an argument of its own call (a write tool
 * returning what it was given) counts only when the request or another output states it too: the agent cannot make a
 * value evidence by sending it. Cached per trajectory (its steps) and request.
 */
export const outputEvidence = (task: Pick<Task, "request">, trajectory: Pick<Trajectory, "steps">): Evidence => {
  const byRequest = cache.get(trajectory.steps) ?? new Map<string, Evidence>()
  const hit = byRequest.get(task.request)
  if (hit !== undefined) return hit
  const texts: Array<string> = []
  const numbers: Array<number> = []
  const echoes: Array<{ readonly text: string; readonly number: number | undefined }> = []
  const plain = new Set<string>()
  let ran = 0
  let failed = 0
  for (const step of trajectory.steps) {
    for (const o of step.observations) {
      if (o.attempts > 0) ran++
      if (o.outcome._tag === "ok") {
        texts.push(o.tool)
        const sent = new Set<string>()
        const args: Array<string> = []
        leafValues(o.arguments, args)
        for (const a of args) sent.add(normalizeText(a))
        const walk = (v: Json): void => {
          if (v === null) return
          if (typeof v !== "object") {
            const text = String(v)
            const norm = normalizeText(text)
            // short values (a rank of 3, a code "vi") coincide too often to be read as an echo
            if (norm.length >= 3 && sent.has(norm)) {
              echoes.push({ text, number: typeof v === "number" ? v : undefined })
              return
            }
            plain.add(norm)
            texts.push(text)
            if (typeof v === "number") numbers.push(v)
            return
          }
          if (Array.isArray(v)) {
            numbers.push(v.length)
            for (const item of v) walk(item)
            return
          }
          for (const [key, item] of Object.entries(v)) {
            texts.push(key)
            walk(item)
          }
        }
        walk(o.outcome.payload)
      } else {
        failed++
        if (o.outcome.error.kind !== "unknown_tool") texts.push(o.tool)
        texts.push(o.outcome.error.kind.replace(/_/g, " "), String(o.outcome.error.status))
        numbers.push(o.outcome.error.status)
      }
    }
  }
  const asked = ` ${normalizeText(task.request)} `
  for (const e of echoes) {
    const norm = normalizeText(e.text)
    if (!plain.has(norm) && !asked.includes(` ${norm} `)) continue
    texts.push(e.text)
    if (e.number !== undefined) numbers.push(e.number)
  }
  numbers.push(ran, failed, ran - failed)
  const evidence = makeEvidence(texts, numbers)
  byRequest.set(task.request, evidence)
  cache.set(trajectory.steps, byRequest)
  return evidence
}

/**
 * What was asked, as evidence: the request and the names of the facts it asks for (the task's fact keys, the structured
 * form of the request). The subject of a claim may restate it; a claim's value never rests on it.
 */
export const requestEvidence = (task: Pick<Task, "request" | "facts">): Evidence => makeEvidence([task.request, ...task.facts.map((f) => f.key)])
