/**
 * verl's dataset rows: training tasks as RL rows (the prompt, the agent loop's name, what it needs to open a ToolEnv
 * session) and judge-filtered demonstrations as multi-turn SFT rows. Pure: tasks and demonstration lines in, rows out.
 */
import { Result } from "effect"
import type { Task } from "../domain/Task.ts"
import type { Paradigm } from "../domain/Trajectory.ts"
import * as PolicyPrompt from "../agent/PolicyPrompt.ts"
import * as Controller from "../math/Controller.ts"
import { ExportError } from "./Exports.ts"
import type { DemonstrationLine, Mode } from "./Exports.ts"

/** The `agent_name` of every RL row: the ParaAct agent loop of integrations/verl. */
export const agentName = "paraagent_paraact"
/** The `data_source` of every row (verl's reward routing key; the agent loop scores through the server instead). */
export const dataSource = "paraagent_toolenv"
/** The `ability` of every RL row. */
export const ability = "tool_use"
/** `reward_model.style`: the reward comes from the ToolEnv server's scoring of the session, not from a rule on text. */
export const rewardStyle = "toolenv_session"

/** The world the rows' sessions run in: the generated world by seed and size, or a ToolBench-format library folder. */
export type WorldRef =
  | { readonly _tag: "generated"; readonly seed: number; readonly size: number }
  | { readonly _tag: "library"; readonly dir: string }

/** What the agent loop reads to open a session (integrations/verl/paraagent_verl/agent_loop.py `session_request`). */
export interface RlExtraInfo {
  /** The row's position (verl's `index`: the G rollouts of a row share it). */
  readonly index: number
  readonly task_id: string
  readonly split: string
  readonly level: string
  readonly paradigm: Paradigm
  /** The base rollout seed; rollout k of the row's group uses seed + k. */
  readonly seed: number
  /** T_max. */
  readonly max_rounds: number
  readonly fault_rate: number
  readonly world_seed: number | null
  readonly world_size: number | null
  readonly library: string | null
  /** The task as JSON (request, gold DAG, facts), for servers that take a posted task; null when not posted. */
  readonly task: string | null
}

/** One chat message of an RL prompt. */
export interface PromptMessage {
  readonly role: "system" | "user"
  readonly content: string
}

/** One row of verl's RL dataset (RLHFDataset: `prompt` is the chat the policy sees at round 1). */
export interface RlRow {
  readonly data_source: string
  readonly prompt: ReadonlyArray<PromptMessage>
  readonly ability: string
  readonly reward_model: { readonly style: string; readonly ground_truth: string }
  readonly extra_info: RlExtraInfo
  readonly agent_name: string
}

/** How RL rows are built. */
export interface RlOptions {
  readonly paradigm: Paradigm
  readonly maxRounds: number
  readonly faultRate: number
  readonly world: WorldRef
  /** The base rollout seed of a task. */
  readonly seedOf: (task: Task, index: number) => number
  /** Whether `extra_info.task` carries the task (default true). */
  readonly postTask?: boolean
  readonly budgets?: Partial<PolicyPrompt.HistoryBudgets>
}

/** The prompt of round 1: the system prompt of the text protocol (paradigm guidance, T_max) and the request. */
export const initialPrompt = (task: Task, paradigm: Paradigm, maxRounds: number, budgets: PolicyPrompt.HistoryBudgets = PolicyPrompt.defaultBudgets): ReadonlyArray<PromptMessage> => {
  const decision = Controller.decide(Controller.remember([]), { finalRound: maxRounds === 1 })
  const messages = PolicyPrompt.buildMessages(
    { request: task.request, paradigm, round: 0, maxRounds, controller: decision.state, history: [], tools: [], seed: 0 },
    "text",
    budgets
  )
  return messages.flatMap((m): Array<PromptMessage> => (m.role === "system" || m.role === "user") && m.content !== null ? [{ role: m.role, content: m.content }] : [])
}

/** The training tasks as RL rows, in order; fails on a T_max below 1, a fault rate outside [0, 1] or a duplicate task id. */
export const rlRows = (tasks: ReadonlyArray<Task>, options: RlOptions): Result.Result<ReadonlyArray<RlRow>, ExportError> => {
  const fail = (field: string, value: string, message: string) => Result.fail(new ExportError({ field, value, message }))
  if (!Number.isInteger(options.maxRounds) || options.maxRounds < 1) return fail("maxRounds", String(options.maxRounds), `maxRounds must be a positive integer, got ${options.maxRounds}`)
  if (!(options.faultRate >= 0 && options.faultRate <= 1)) return fail("faultRate", String(options.faultRate), `faultRate must lie in [0, 1], got ${options.faultRate}`)
  const budgets: PolicyPrompt.HistoryBudgets = { ...PolicyPrompt.defaultBudgets, ...options.budgets }
  const seen = new Set<string>()
  const rows: Array<RlRow> = []
  for (const [index, task] of tasks.entries()) {
    if (seen.has(task.id)) return fail("taskId", task.id, `task ${task.id} appears twice: a row per task`)
    seen.add(task.id)
    const world = options.world
    rows.push({
      data_source: dataSource,
      prompt: initialPrompt(task, options.paradigm, options.maxRounds, budgets),
      ability,
      reward_model: { style: rewardStyle, ground_truth: JSON.stringify(task.facts.map((f) => ({ key: f.key, value: f.value }))) },
      extra_info: {
        index,
        task_id: task.id,
        split: task.split,
        level: task.level,
        paradigm: options.paradigm,
        seed: options.seedOf(task, index),
        max_rounds: options.maxRounds,
        fault_rate: options.faultRate,
        world_seed: world._tag === "generated" ? world.seed : null,
        world_size: world._tag === "generated" ? world.size : null,
        library: world._tag === "library" ? world.dir : null,
        task: options.postTask === false ? null : JSON.stringify(task)
      },
      agent_name: agentName
    })
  }
  return Result.succeed(rows)
}

/** One tool call of an SFT assistant message: `function.arguments` is a JSON string. */
export interface SftToolCall {
  readonly id: string
  readonly type: "function"
  readonly function: { readonly name: string; readonly arguments: string }
}

/** One SFT message with every field present (null when absent), so every row has one Parquet struct. */
export interface SftMessage {
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly content: string | null
  readonly tool_calls: ReadonlyArray<SftToolCall> | null
  readonly tool_call_id: string | null
  readonly name: string | null
}

/** One row of verl's multi-turn SFT dataset: the conversation, the tools as JSON text, and where it came from. */
export interface SftRow {
  readonly messages: ReadonlyArray<SftMessage>
  /** The OpenAI function specs as one JSON array (parameter schemas differ per tool; see integrations/verl sft.py). */
  readonly tools: string
  readonly id: string
  readonly task_id: string
  readonly level: string
  readonly paradigm: string
  readonly policy: string
  readonly mode: Mode
  readonly verdict: {
    readonly quality: string
    readonly faithfulness: string
    readonly utility: string
    readonly rationale: string | null
    readonly judge: string
  }
}

/** A demonstration line as an SFT row: same messages and tools, absent fields as nulls, tools as JSON text. */
export const sftRow = (line: DemonstrationLine): SftRow => ({
  messages: line.messages.map((m): SftMessage => ({
    role: m.role,
    content: m.content,
    tool_calls: m.role === "assistant" && m.tool_calls !== undefined
      ? m.tool_calls.map((c) => ({ id: c.id, type: "function", function: { name: c.function.name, arguments: c.function.arguments } }))
      : null,
    tool_call_id: m.role === "tool" ? m.tool_call_id : null,
    name: m.name ?? null
  })),
  tools: JSON.stringify(line.tools),
  id: line.id,
  task_id: line.task_id,
  level: line.level,
  paradigm: line.paradigm,
  policy: line.policy,
  mode: line.mode,
  verdict: {
    quality: line.verdict.quality,
    faithfulness: line.verdict.faithfulness,
    utility: line.verdict.utility,
    rationale: line.verdict.rationale ?? null,
    judge: line.verdict.judge
  }
})
