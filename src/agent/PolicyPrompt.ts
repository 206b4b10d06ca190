/**
 * What an LLM policy is shown each round: the system prompt (protocol, paradigm guidance, round limit, tool docs), the
 * request and the history as chat messages, in text or native mode. Pure: the OpenAI policy sends it, exporters write it.
 */
import type { ToolSpec } from "../domain/Tool.ts"
import type { Paradigm, Step } from "../domain/Trajectory.ts"
import * as OpenAiFormat from "../protocol/OpenAiFormat.ts"
import * as ParaAct from "../protocol/ParaAct.ts"
import type { PolicyContext } from "./Policy.ts"

/** How the model expresses a turn: native tool calling, or the ParaAct text protocol. */
export type Mode = OpenAiFormat.Mode

/** How much of each observation the model sees again. */
export interface HistoryBudgets {
  /** Per payload of the most recent round (what the model must act on now). */
  readonly latest: number
  /** Per payload of earlier rounds: values the agent still needs are reachable through `$ref` without reading them. */
  readonly older: number
  /** Per tool description in the tool documentation. */
  readonly description: number
}

/** The default budgets: 4,000 characters for the latest round's payloads, 800 for older ones, 600 per description. */
export const defaultBudgets: HistoryBudgets = { latest: 4_000, older: 800, description: 600 }

/** What each paradigm asks of the model, appended to the protocol instructions. */
export const paradigmGuidance: Readonly<Record<Paradigm, string>> = {
  ParaAct:
    "Act in parallel. When exploring, search for every capability slot of your plan in the same turn. When executing, " +
    "call every tool whose inputs are ready in the same turn; only calls that need another call's output wait for it. " +
    "Go back to searching whenever an observation shows your plan is wrong.",
  ReAct:
    "Take exactly one action per round: a single search query or a single tool call, then wait for its observation " +
    "before deciding the next one. Extra searches or calls in a turn are ignored.",
  ExploreThenExecute:
    "Work in two phases. First explore: search until you have found a tool for every capability slot of your plan. " +
    "Your first tool call starts the execution phase, and from then on you cannot search again: plan your searches completely first.",
  DFSDT:
    "Follow one path at a time, taking one action per round. When a call fails or leads nowhere, give it up and try " +
    "the next most promising alternative instead of repeating it."
}

/** A text cut to `limit` characters, saying how many more there were. */
export const clip = (text: string, limit: number): string =>
  text.length <= limit ? text : `${text.slice(0, limit)}... [${text.length - limit} more characters]`

/**
 * One tool's documentation for a prompt: name, description (clipped), its entity line (`OpenAiFormat.entityLine`:
 * the `x-entity` marks as text) and the parameter schema (without `x-` extensions).
 */
export const toolDoc = (spec: ToolSpec, descriptionBudget: number): string => {
  const entities = OpenAiFormat.entityLine(spec)
  return `### ${spec.name}\n${clip(spec.description, descriptionBudget)}\n${entities.length > 0 ? `${entities}\n` : ""}parameters: ${JSON.stringify(OpenAiFormat.stripExtensions(spec.parameters))}`
}

/** The documentation of the tools the agent has seen, for the text-protocol system prompt. */
export const toolDocs = (tools: ReadonlyArray<ToolSpec>, budgets: HistoryBudgets = defaultBudgets): string =>
  tools.length === 0
    ? "## Tools you have found\nNone yet: search for the capabilities the request needs."
    : `## Tools you have found\n${tools.map((t) => toolDoc(t, budgets.description)).join("\n\n")}`

/** The system prompt: the protocol, the paradigm's guidance, the round limit and (text mode) the tools' documentation. */
export const systemPrompt = (context: PolicyContext, mode: Mode, budgets: HistoryBudgets = defaultBudgets): string =>
  [
    mode === "text" ? ParaAct.instructions : OpenAiFormat.nativeInstructions,
    `## How to act (${context.paradigm})\n${paradigmGuidance[context.paradigm]}`,
    `You have at most ${context.maxRounds} rounds; give your final answer by the last one.`,
    ...(mode === "text" ? [toolDocs(context.tools, budgets)] : [])
  ].join("\n\n")

const lastRoundNote = (mode: Mode): string =>
  mode === "text"
    ? "This is your last round: write your final answer now, in <answer>...</answer>."
    : "This is your last round: give your final answer now, in <answer>...</answer>, with no tool calls."

/** DFSDT: the turns already tried (and given up) from this point, so the model tries something else. */
export const abandonedNote = (abandoned: ReadonlyArray<Step>, budgets: HistoryBudgets = defaultBudgets): string =>
  `These turns were already tried from this point and abandoned (they failed or led nowhere). Do something different:\n${
    abandoned.map((step, i) => `[${i + 1}]\n${clip(step.raw, budgets.older)}`).join("\n")
  }`

/**
 * The conversation for one round: the system prompt, the request, then every earlier step as the messages of the
 * mode (observations cut to the latest / older budgets), then (DFSDT) the abandoned alternatives, then a note on the
 * last round.
 */
export const buildMessages = (context: PolicyContext, mode: Mode, budgets: HistoryBudgets = defaultBudgets): ReadonlyArray<OpenAiFormat.ChatMessage> => {
  const history = context.history.flatMap((step, i) =>
    OpenAiFormat.stepToMessages(step, mode, {
      maxPayloadChars: i === context.history.length - 1 ? budgets.latest : budgets.older
    })
  )
  const abandoned = context.abandoned ?? []
  const retry = abandoned.length === 0 ? [] : [{ role: "user" as const, content: abandonedNote(abandoned, budgets) }]
  const last = context.round >= context.maxRounds - 1 ? [{ role: "user" as const, content: lastRoundNote(mode) }] : []
  return [
    { role: "system", content: systemPrompt(context, mode, budgets) },
    { role: "user", content: context.request },
    ...history,
    ...retry,
    ...last
  ]
}

/** The `tools` of a native-mode request: `search_tools` and the tools the agent has seen. */
export const nativeTools = (tools: ReadonlyArray<ToolSpec>): ReadonlyArray<OpenAiFormat.OpenAiTool> => [
  OpenAiFormat.searchToolDefinition,
  ...tools.filter((t) => t.name !== OpenAiFormat.searchToolName).map(OpenAiFormat.toolDefinition)
]
