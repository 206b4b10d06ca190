/**
 * The LLM judge's prompt and the schema of its reply: the request, the tool evidence (truncated to a budget)
 * and the answer in; three graded criteria with rationales out, as one JSON object.
 */
import { Schema, SchemaTransformation } from "effect"
import { canonicalJson } from "../math/CanonicalJson.ts"
import type { Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import { Grade } from "../domain/Trajectory.ts"

/** Budgets, in characters, that keep the judge prompt bounded whatever the trajectory. */
export const budgets = {
  /** Per observation (arguments + payload or error). */
  observation: 1_200,
  /** All observations together; the rest are counted, not shown. */
  evidence: 12_000,
  request: 4_000,
  answer: 4_000
} as const

/**
 * The evidence rule, in the words the LLM judge is given (the rule judge's Evidence.ts and Claims.ts apply the same
 * rule): evidence is what the tools returned, never what the assistant wrote itself.
 */
export const evidenceRule =
  `Evidence is what the tools returned: the outputs of successful calls, and the status of failed ones. The assistant's own call arguments, its reasoning or plan, and an error message that repeats those arguments back are not evidence — a value the assistant sent to a tool is not thereby supported, and a value a tool only echoed back from the assistant's own arguments is not either. The user's request may be restated as what a claim is about, never as the value a claim states.`

/**
 * The judge's instructions (system message). Quality states the rule judge's responsiveness rule and its claim reading
 * in words (Responsiveness.ts, RuleJudge.quality): the requested facts, stated as claims, to the point — padding, dumps,
 * echoes, hedges, negations and values under another fact's label are not YES. Faithfulness states the evidence rule.
 */
export const systemPrompt = `You grade the final answer of an assistant that used tools to serve a user request.
You see the request, every tool call the assistant made with what it returned, and the final answer.
Grade three criteria independently, each YES, PARTIAL or NO:

quality: does the answer completely and responsively address the request?
  An answer is responsive when it states the facts the request asks for, about the entity the request names, and is to the point.
  A fact is stated only when the answer asserts it: a value that is negated ("not X"), hedged ("X or Y", "probably X"), contradicted by another value given for the same thing, retracted later, or written under another fact's label is not stated.
  Any form counts: a sentence, a list, a table, a JSON object, values alone, another language.
  YES = every requested fact is stated, to the point: only the requested facts and the little context that identifies them;
  PARTIAL = some requested facts are stated, or all are but the answer is not to the point: it is padded with content the request did not ask for, dumps raw tool outputs instead of selecting the answer, is far longer than the requested facts need, or hedges between the requested value and another record's;
  NO = no requested fact is stated, or there is no answer. An answer that mostly repeats the request's own words, refuses, or only says the tools failed states no requested fact: NO.
faithfulness: is every factual claim of the answer backed by the tool evidence?
  ${evidenceRule}
  A claim is any value the answer states, however written: names, numbers (in digits of any script, in words, as ordinals), ids, dates, quoted values, and plain words given as a value ("status: shipped"). Text you cannot read counts as an unbacked claim.
  YES = all claims are backed, every number included (an answer that honestly reports that the tools failed is faithful); PARTIAL = most are; NO = the answer relies on unbacked or contradicted claims, or there is no answer.
  A single number that no tool output supports keeps faithfulness from YES.
utility: did the successful tool calls gather enough evidence to answer the request?
  YES = the evidence needed for a complete answer was observed; PARTIAL = some of it; NO = none of it (for example, every relevant call failed).

Judge only from what is shown. Reply with one JSON object and nothing else:
{"quality": {"verdict": "YES|PARTIAL|NO", "rationale": "<one sentence>"}, "faithfulness": {"verdict": "...", "rationale": "..."}, "utility": {"verdict": "...", "rationale": "..."}}`

const clip = (text: string, limit: number): string =>
  text.length <= limit ? text : `${text.slice(0, limit)}… [${text.length - limit} more characters]`

/** The tool evidence of a trajectory as numbered lines, within {@link budgets}. */
export const renderEvidence = (trajectory: Trajectory): string => {
  const lines: Array<string> = []
  let used = 0
  let omitted = 0
  let n = 0
  for (const step of trajectory.steps) {
    for (const o of step.observations) {
      n++
      const outcome = o.outcome._tag === "ok"
        ? `ok: ${canonicalJson(o.outcome.payload)}`
        : `error ${o.outcome.error.status} ${o.outcome.error.kind}: ${o.outcome.error.message}`
      const line = clip(`[${n}] round ${step.index + 1} ${o.tool}(${canonicalJson(o.arguments)}) -> ${outcome}`, budgets.observation)
      if (used + line.length > budgets.evidence) {
        omitted++
        continue
      }
      used += line.length + 1
      lines.push(line)
    }
  }
  if (lines.length === 0 && omitted === 0) return "(the assistant made no tool calls)"
  return omitted > 0 ? `${lines.join("\n")}\n(${omitted} more calls omitted for length)` : lines.join("\n")
}

/** Options of the judge prompt. */
export interface PromptOptions {
  /** Show the task's gold facts as a reference for quality (off by default: the judge grades like a human would). */
  readonly reference?: boolean
}

/** The user message: request, evidence and answer (and, optionally, the reference facts). */
export const userPrompt = (task: Task, trajectory: Trajectory, options: PromptOptions = {}): string => {
  const answer = trajectory.answer?.trim() ?? ""
  const sections = [
    `## User request\n${clip(task.request, budgets.request)}`,
    `## Tool calls and results\n${renderEvidence(trajectory)}`,
    ...(options.reference === true && task.facts.length > 0
      ? [`## Reference facts a complete answer states\n${task.facts.map((f) => `- ${f.key}: ${f.value}`).join("\n")}`]
      : []),
    `## Final answer\n${answer.length === 0 ? "(no answer: the assistant stopped without answering)" : clip(answer, budgets.answer)}`,
    "Grade the final answer. Reply with the JSON object only."
  ]
  return sections.join("\n\n")
}

/** A grade as a model may write it: any case, surrounding spaces. */
const LooseGrade = Schema.String.pipe(
  Schema.decode(SchemaTransformation.trim()),
  Schema.decode(SchemaTransformation.toUpperCase()),
  Schema.decodeTo(Grade)
)

/** One graded criterion. */
export const Criterion = Schema.Struct({ verdict: LooseGrade, rationale: Schema.optionalKey(Schema.String) })

/** The judge's reply. */
export const JudgeReply = Schema.Struct({ quality: Criterion, faithfulness: Criterion, utility: Criterion })
/** The judge's reply. */
export type JudgeReply = typeof JudgeReply.Type

/** The JSON object in a model's reply: code fences and prose around it are dropped. */
export const extractJsonObject = (text: string): string => {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)
  const inner = fenced?.[1] ?? text
  const start = inner.indexOf("{")
  const end = inner.lastIndexOf("}")
  return start >= 0 && end > start ? inner.slice(start, end + 1) : inner.trim()
}

/** Decodes a reply text into the three criteria. */
export const decodeReply = Schema.decodeUnknownEffect(Schema.fromJsonString(JudgeReply))

/** The message sent after a malformed reply, so the second try knows what was wrong. */
export const repairPrompt = (problem: string): string =>
  `Your reply could not be read: ${problem}\nReply again with only the JSON object, in exactly this shape:\n` +
  `{"quality": {"verdict": "YES|PARTIAL|NO", "rationale": "..."}, "faithfulness": {"verdict": "...", "rationale": "..."}, "utility": {"verdict": "...", "rationale": "..."}}`

/** The rationale of a verdict, from the three criteria's. */
export const joinRationale = (reply: JudgeReply): string =>
  [`Q: ${reply.quality.rationale ?? ""}`, `F: ${reply.faithfulness.rationale ?? ""}`, `U: ${reply.utility.rationale ?? ""}`].join("; ")
