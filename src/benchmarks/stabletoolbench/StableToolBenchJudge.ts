/**
 * The StableToolEval-style pass-rate judge's prompts and the reader of its label: first the query and the final
 * answer alone (Solved / Unsolved / Unsure); an Unsure answer is looked at again with the tool calls behind it.
 */
import { type Effect, Option, Schema } from "effect"
import type { Trajectory } from "../../domain/Trajectory.ts"
import { extractJsonObject, renderEvidence } from "../../judge/Prompt.ts"
import type { AnswerStatus } from "./StableToolBenchMetrics.ts"

/** The character budgets of the prompts. */
export const budgets = { query: 4_000, answer: 4_000 } as const

const clip = (text: string, limit: number): string =>
  text.length <= limit ? text : `${text.slice(0, limit)}… [${text.length - limit} more characters]`

/** The instructions of both stages (system message). */
export const systemPrompt = `You check whether an assistant's final answer solves a user's query that needed real-world tools (APIs).
Label the answer with exactly one status:
  Solved   = the answer gives what the query asks for: every part of the query is addressed with concrete information, not a promise or a description of what could be done;
  Unsolved = the answer misses the main point, gives up, says the tools failed without giving the requested information, or addresses only a minor part of the query;
  Unsure   = you cannot tell from what you see whether the answer is right (for example it states facts you cannot check, or it addresses some parts and not others).
Reply with one JSON object and nothing else: {"answer_status": "Solved|Unsolved|Unsure", "reason": "<one sentence>"}`

/** Stage one: the query and the final answer. */
export const answerPrompt = (query: string, answer: string): string =>
  [
    `## Query\n${clip(query, budgets.query)}`,
    `## Final answer\n${clip(answer.trim(), budgets.answer)}`,
    "Label the final answer. Reply with the JSON object only."
  ].join("\n\n")

/** Stage two (after Unsure): the query, every tool call with what it returned, and the final answer. */
export const detailPrompt = (query: string, trajectory: Trajectory): string =>
  [
    `## Query\n${clip(query, budgets.query)}`,
    `## Tool calls the assistant made and what they returned\n${renderEvidence(trajectory)}`,
    `## Final answer\n${clip((trajectory.answer ?? "").trim(), budgets.answer)}`,
    "The first look at this answer was Unsure. Decide now from the tool evidence: is the answer backed by it and does it solve the query? Reply with the JSON object only."
  ].join("\n\n")

/** A status as a model may write it (any case, spaces, an `AnswerStatus.` prefix), or undefined when it is none. */
export const normalizeStatus = (text: string): AnswerStatus | undefined => {
  const bare = text.trim().toLowerCase().replace(/^answerstatus\./, "")
  return bare === "solved" ? "Solved" : bare === "unsolved" ? "Unsolved" : bare === "unsure" ? "Unsure" : undefined
}

/** The judge's reply. */
export const LabelReply = Schema.Struct({ answer_status: Schema.String, reason: Schema.optionalKey(Schema.String) })

const decodeReply = Schema.decodeUnknownOption(Schema.fromJsonString(LabelReply))

/** A read reply: the label and its reason, or why it could not be read. */
export type ReadLabel =
  | { readonly _tag: "label"; readonly status: AnswerStatus; readonly reason: string }
  | { readonly _tag: "malformed"; readonly problem: string }

/**
 * Reads a reply: the JSON object (code fences and prose around it dropped); else exactly one status word standing alone
 * in the text. Anything else is malformed (the caller scores it Unsolved), never a thrown error.
 */
export const readLabel = (text: string): ReadLabel => {
  const decoded = decodeReply(extractJsonObject(text))
  if (Option.isSome(decoded)) {
    const status = normalizeStatus(decoded.value.answer_status)
    if (status !== undefined) return { _tag: "label", status, reason: decoded.value.reason ?? "" }
    return { _tag: "malformed", problem: `answer_status ${JSON.stringify(clip(decoded.value.answer_status, 80))} is none of Solved, Unsolved, Unsure` }
  }
  const words = new Set([...text.matchAll(/\b(unsolved|solved|unsure)\b/gi)].map((m) => (m[1] ?? "").toLowerCase()))
  if (words.size === 1) {
    const status = normalizeStatus([...words][0] ?? "")
    if (status !== undefined) return { _tag: "label", status, reason: "" }
  }
  return {
    _tag: "malformed",
    problem: words.size === 0
      ? `no answer_status in the reply: ${JSON.stringify(clip(text, 200))}`
      : `several statuses in the reply (${[...words].join(", ")}): ${JSON.stringify(clip(text, 200))}`
  }
}

/** One labelling of an answer; `failure` says why the label is a default Unsolved (endpoint error, unreadable reply). */
export interface LabelResult {
  readonly status: AnswerStatus
  readonly reason: string
  readonly failure?: string
}

/** A pass-rate judge: labels the final answer of a trajectory for a query; never fails (a failure is Unsolved). */
export interface Labeler {
  readonly name: string
  readonly label: (query: string, trajectory: Trajectory) => Effect.Effect<LabelResult>
}
