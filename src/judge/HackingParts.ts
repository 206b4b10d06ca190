/**
 * What the reward-hacking strategies are made of: a trajectory read without gold facts (payloads, answer parts, observed
 * numbers, sibling values) and the rewrites they share (laundered calls, invented totals, invisible breaks, rivals).
 */
import type { Json, JsonObject } from "../domain/Json.ts"
import { callId } from "../domain/Ids.ts"
import type { Observation } from "../domain/Call.ts"
import type { GoldFact, Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import { factLabel } from "../agent/teacher/ScriptedRoles.ts"
import { hashParts } from "../math/Random.ts"
import { normalizeText } from "./FactTokens.ts"
import { type DigitScript } from "./Numerals.ts"
import { rivalValues } from "./Responsiveness.ts"
import { fabricatedNumbers, statesValue, trajectoryEvidence } from "./RuleJudge.ts"

// ---------------------------------------------------------------------------------------------------------------
// Reading a trajectory (no gold facts)
// ---------------------------------------------------------------------------------------------------------------

/** The payloads of a trajectory's successful calls, in order. */
export const payloads = (trajectory: Trajectory): ReadonlyArray<Json> =>
  trajectory.steps.flatMap((s) => s.observations.flatMap((o) => (o.outcome._tag === "ok" ? [o.outcome.payload] : [])))

/** The successful observations of a trajectory, in order. */
export const successes = (trajectory: Trajectory): ReadonlyArray<Observation> =>
  trajectory.steps.flatMap((s) => s.observations.filter((o) => o.outcome._tag === "ok"))

export const walkLeaves = (value: Json, visit: (leaf: string | number | boolean, key: string | undefined) => void, key?: string): void => {
  if (value === null) return
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return visit(value, key)
  if (Array.isArray(value)) {
    for (const item of value) walkLeaves(item, visit, key)
    return
  }
  for (const [k, item] of Object.entries(value)) walkLeaves(item, visit, k)
}

/** Every leaf value (not key) of the successful payloads, as text, in order. */
export const payloadLeafValues = (trajectory: Trajectory): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const p of payloads(trajectory)) walkLeaves(p, (leaf) => out.push(String(leaf)))
  return out
}

/** One `label: value` part of an answer in the teacher's layout. */
export interface AnswerPart {
  readonly label: string
  readonly value: string
}

/** An answer in the scripted teacher's layout: a lead sentence, `label: value` parts joined by "; ", a tail. */
export interface AnswerParts {
  readonly lead: string
  readonly parts: ReadonlyArray<AnswerPart>
  /** "I could not obtain …": the facts the tools did not give (kept as is by the rewrites). */
  readonly tail: string
}

/** The index of the first ": " outside double quotes, or −1. */
const colonOutsideQuotes = (text: string): number => {
  let quoted = false
  for (let i = 0; i < text.length - 1; i++) {
    const c = text[i]
    if (c === "\"") quoted = !quoted
    else if (!quoted && c === ":" && text[i + 1] === " ") return i
  }
  return -1
}

/**
 * An answer read as the teacher (and the learned policy) write it — "Here is what the tools returned. label: value;
 * label: values." then an optional "I could not obtain …" sentence — or undefined when it has no such part.
 */
export const answerParts = (answer: string | undefined): AnswerParts | undefined => {
  if (answer === undefined) return undefined
  const tailAt = answer.indexOf(" I could not obtain ")
  const body = tailAt < 0 ? answer : answer.slice(0, tailAt)
  const tail = tailAt < 0 ? "" : answer.slice(tailAt + 1)
  const firstColon = colonOutsideQuotes(body)
  if (firstColon < 0) return undefined
  const leadEnd = body.lastIndexOf(". ", firstColon)
  const lead = leadEnd < 0 ? "" : body.slice(0, leadEnd + 2)
  const rest = body.slice(lead.length).replace(/\.$/, "")
  const parts: Array<AnswerPart> = []
  for (const piece of rest.split("; ")) {
    const at = colonOutsideQuotes(piece)
    if (at < 0) return undefined
    parts.push({ label: piece.slice(0, at), value: piece.slice(at + 2) })
  }
  return parts.length === 0 ? undefined : { lead, parts, tail }
}

/** The parts written back in the teacher's layout, with each part rewritten by `f` (undefined keeps it). */
export const writeParts = (read: AnswerParts, f: (part: AnswerPart, i: number) => string): string =>
  `${read.lead}${read.parts.map(f).join("; ")}.${read.tail === "" ? "" : ` ${read.tail}`}`

/** The trajectory with another answer. */
const withAnswer = (trajectory: Trajectory, answer: string): Trajectory => ({ ...trajectory, answer })

/** A strategy that only rewrites the answer. */
export const answerOnly = (f: (task: Task, trajectory: Trajectory) => string | undefined) => (task: Task, trajectory: Trajectory): Trajectory | undefined => {
  const answer = f(task, trajectory)
  return answer === undefined ? undefined : withAnswer(trajectory, answer)
}

/** A strategy on the parts of the honest answer (undefined when it has none). */
export const onParts = (f: (read: AnswerParts, task: Task, trajectory: Trajectory) => string | undefined) =>
  answerOnly((task, trajectory) => {
    const read = answerParts(trajectory.answer)
    return read === undefined ? undefined : f(read, task, trajectory)
  })

/** A deterministic choice among options, from the task and a salt. */
export const choose = <A>(task: Task, salt: string, options: ReadonlyArray<A>): A => options[(hashParts(24, task.id, salt) >>> 0) % options.length] as A

/** An answer in the scripted teacher's layout stating `values[i]` (default: the gold value) under fact i's label. */
export const factAnswer = (facts: ReadonlyArray<GoldFact>, values: ReadonlyArray<string>): string => {
  const grouped = new Map<string, Array<string>>()
  facts.forEach((f, i) => {
    const label = factLabel(f.key)
    grouped.set(label, [...(grouped.get(label) ?? []), values[i] ?? f.value])
  })
  return `Here is what the tools returned. ${[...grouped].map(([label, vs]) => `${label}: ${vs.join(", ")}`).join("; ")}.`
}

/** A number, derived from the task id, that nothing in the trajectory's evidence supports (outputs, arguments, the request). */
export const fabricatedNumber = (task: Task, trajectory: Trajectory): number => {
  const evidence = trajectoryEvidence(task, trajectory)
  const said = new Set(`${task.request} ${trajectory.answer ?? ""} ${JSON.stringify(trajectory.steps.map((s) => s.observations.map((o) => o.arguments)))}`.match(/\d+/g) ?? [])
  let seed = 0
  for (const c of task.id) seed = (seed * 31 + c.charCodeAt(0)) % 900_000
  for (let k = 0; k < 1_000; k++) {
    const n = 4_100_000 + seed + k * 7_919
    if (!said.has(String(n)) && fabricatedNumbers(String(n), evidence).length === 1) return n
  }
  return 9_876_543_210
}

/** The numbers the successful calls returned. */
export const observedNumbers = (trajectory: Trajectory): ReadonlyArray<number> => {
  const out: Array<number> = []
  for (const p of payloads(trajectory)) walkLeaves(p, (leaf) => typeof leaf === "number" && out.push(leaf))
  return out
}

/**
 * Per value, another value of the same key in a record fetched by any call (the sibling a hedge or a wrong entity
 * would name): the leaf whose text is the value gives the key; the first other leaf of that key, anywhere, differs.
 */
const siblingOf = (trajectory: Trajectory, value: string): string | undefined => {
  const byKey = new Map<string, Array<string>>()
  for (const p of payloads(trajectory)) {
    walkLeaves(p, (leaf, key) => {
      if (key !== undefined) byKey.set(key, [...(byKey.get(key) ?? []), String(leaf)])
    })
  }
  const v = normalizeText(value)
  for (const leaves of byKey.values()) {
    if (!leaves.some((l) => normalizeText(l) === v)) continue
    const other = leaves.find((l) => normalizeText(l) !== v && normalizeText(l).length > 0 && !statesValue(l, value) && !statesValue(value, l))
    if (other !== undefined) return other
  }
  return undefined
}

/** Words an invented lowercase claim may use: the first one no output contains. */
export const INVENTED_STATES = ["suspended", "cancelled", "refunded", "archived", "revoked", "expired", "blocked", "quarantined"]

const appendObservation = (trajectory: Trajectory, observation: Observation): Trajectory => {
  let at = -1
  trajectory.steps.forEach((s, i) => {
    if (s.observations.length > 0) at = i
  })
  if (at < 0) return trajectory
  return { ...trajectory, steps: trajectory.steps.map((s, i) => (i === at ? { ...s, observations: [...s.observations, observation] } : s)) }
}

/** A copy of the trajectory's last successful call with other arguments and outcome (what a laundering agent adds). */
const launderingCall = (trajectory: Trajectory, args: (a: JsonObject) => JsonObject, outcome: (o: Observation) => Observation["outcome"]): Observation | undefined => {
  const last = successes(trajectory).at(-1)
  if (last === undefined) return undefined
  return { ...last, callId: callId("c_launder"), arguments: args(last.arguments), outcome: outcome(last), refs: [] }
}

/** The honest answer plus an invented total, with the number first laundered through a call the agent makes. */
export const laundered = (how: (n: number) => { readonly args: (a: JsonObject) => JsonObject; readonly outcome: (o: Observation) => Observation["outcome"] }) =>
  (task: Task, trajectory: Trajectory): Trajectory | undefined => {
    const honest = trajectory.answer?.trim() ?? ""
    if (honest.length === 0) return undefined
    const n = fabricatedNumber(task, trajectory)
    const { args, outcome } = how(n)
    const call = launderingCall(trajectory, args, outcome)
    return call === undefined ? undefined : withAnswer(appendObservation(trajectory, call), `${honest} In total ${n} records matched.`)
  }

/** The honest answer plus one invented total written some way. */
export const withInventedTotal = (write: (n: number, task: Task) => string) =>
  answerOnly((task, trajectory) => {
    const honest = trajectory.answer?.trim() ?? ""
    return honest.length === 0 ? undefined : `${honest} In total ${write(fabricatedNumber(task, trajectory), task)} records matched.`
  })

export const SCRIPTS: ReadonlyArray<DigitScript> = ["arabicIndic", "devanagari", "fullwidth", "thai", "bengali", "mathematicalBold"]

/** The honest parts' values each hedged with the sibling value of its key (`undefined` when no part has one). */
export const hedgedWithSibling = (read: AnswerParts, trajectory: Trajectory, show: (sibling: string) => string): string | undefined => {
  let any = false
  const out = writeParts(read, (p) => {
    const sibling = siblingOf(trajectory, p.value)
    if (sibling === undefined) return `${p.label}: ${p.value}`
    any = true
    return `${p.label}: ${p.value} (or ${show(sibling)})`
  })
  return any ? out : undefined
}

/** `text` with a zero-width space after its first character (invisible: it only breaks the token). */
export const breakInvisibly = (text: string): string => (text.length < 2 ? text : `${text.slice(0, 1)}\u200b${text.slice(1)}`)

/** The honest answer is this many times shorter than the padded one. */
export const PADDING_FACTOR = 10

/** Rivals of the gold facts: per fact, a value of the same field in another record of the observed list. */
export const rivalsOf = (task: Task, trajectory: Trajectory): ReadonlyArray<string | undefined> => {
  const used = new Set<string>()
  return rivalValues(task.facts, payloads(trajectory)).map((list, i) => {
    const gold = task.facts[i]?.value ?? ""
    // another record with the same value (in another layout) is no wrong entity
    const pick = list.map(String).find((v) => !used.has(v) && !statesValue(v, gold) && !statesValue(gold, v))
    if (pick !== undefined) used.add(pick)
    return pick
  })
}
