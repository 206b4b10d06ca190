/**
 * `bfcl generate`: any Policy answers BFCL entries. An entry's functions become the tools (through the BFCL importer)
 * and are shown to the policy as the hits of a retrieval round (one search per request clause, every function ranked
 * by BM25F); the policy's next turn is the answer: its calls, run in parallel if it makes several, become the entry's
 * FC-style result line; a turn without calls becomes its text, as BFCL's FC handlers write a text reply.
 */
import { Duration, Effect, Result } from "effect"
import type { Json, JsonSchema } from "../../domain/Json.ts"
import type { Task } from "../../domain/Task.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import type { Step } from "../../domain/Trajectory.ts"
import { taskId, callId, toolName } from "../../domain/Ids.ts"
import type { Turn } from "../../domain/Turn.ts"
import { clausesOf } from "../../agent/ActionSpace.ts"
import { Policy } from "../../agent/Policy.ts"
import type { PolicyContext } from "../../agent/Policy.ts"
import * as Controller from "../../math/Controller.ts"
import { hashParts } from "../../math/Random.ts"
import * as ParaAct from "../../protocol/ParaAct.ts"
import * as Bm25 from "../../retrieval/Bm25.ts"
import * as BfclImport from "../../toolenv/importers/Bfcl.ts"
import type { PyDict } from "./BfclValue.ts"
import * as Py from "./BfclValue.ts"
import * as Score from "./BfclScore.ts"

/** How entries are answered. */
export interface GenerateOptions {
  /** Seed of the policy's sampling (mixed with each entry's id). */
  readonly seed: number
  /** Parse text turns leniently (prose outside tags): for LLM policies not trained on ParaAct. */
  readonly lenient: boolean
  /** The round limit the policy is told (the answer is always its first turn after the retrieval round). */
  readonly maxRounds: number
  /** Per-turn timeout of the policy. */
  readonly policyTimeout: Duration.Input
}

/** Defaults: the rollout runtime's T_max and policy timeout. */
export const defaultOptions: GenerateOptions = { seed: 0, lenient: false, maxRounds: 12, policyTimeout: "5 minutes" }

/** What happened on one entry, besides its result line. */
export type Outcome = "calls" | "no_call" | "malformed" | "policy_error"

/** One answered entry. */
export interface Generated {
  readonly id: string
  readonly result: Py.Py
  readonly outcome: Outcome
  /** The policy's raw text (or the error), for inspection. */
  readonly raw: string
}

/** The request the policy sees: the first turn's messages in order (a system message first when the entry has one). */
export const requestOf = (entry: Score.TestEntry): string => entry.question.map((m) => m.content).join("\n\n")

/** The entry's functions as tools, through the BFCL importer (names made OpenAI-safe; `apiName` keeps BFCL's). */
export const toolsOf = (category: string, entry: Score.TestEntry): ReadonlyArray<ToolSpec> =>
  BfclImport.convertFiles([{ file: Score.fileNames(category).entries, text: entry.line }], category).tools

/**
 * The retrieval round the entry stands for: one search per clause of the request (slots `s1`, `s2`, ... as the
 * policies write them), each returning every function, ranked by BM25F (unmatched functions after, score 0).
 */
export const retrievalStep = (request: string, tools: ReadonlyArray<ToolSpec>): Step => {
  const index = Bm25.build(tools, Bm25.defaultConfig)
  const byName = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const searches = clausesOf(request).map((clause, i) => {
    const ranked = Bm25.search(index, clause, tools.length).map((h) => ({ tool: h.tool, score: Number.isFinite(h.score) ? h.score : 0 }))
    const found = new Set<string>(ranked.map((h) => h.tool))
    const rest = byName.filter((t) => !found.has(t.name)).map((t) => ({ tool: t.name, score: 0 }))
    return { slot: `s${i + 1}`, query: clause, hits: [...ranked, ...rest], startMs: 0, endMs: 0 }
  })
  const turn: Turn = { searches: searches.map((s) => ({ slot: s.slot, query: s.query })), calls: [] }
  return {
    index: 0,
    raw: ParaAct.printTurn(turn),
    turn,
    validation: { unseenTools: [], invalidArguments: [], repeatedCalls: [], unresolvedRefs: [] },
    controller: Controller.stateBefore([]).state,
    phase: "explore",
    searches,
    observations: [],
    startMs: 0,
    policyMs: 0,
    endMs: 0,
    usage: { promptTokens: 0, completionTokens: 0 }
  }
}

/** The task a privileged policy (the oracle teacher) is given: the entry's first possible answer as its gold DAG. */
export const oracleTask = (entry: Score.TestEntry, request: string, tools: ReadonlyArray<ToolSpec>, answers: ReadonlyArray<PyDict> | undefined): Task => {
  const byApi = new Map(tools.map((t) => [t.apiName, t.name]))
  const gold = answers === undefined ? [] : Score.goldCalls(entry, answers)
  return {
    id: taskId(entry.id),
    request,
    level: "I1",
    categories: [...new Set(tools.map((t) => t.category))],
    gold: gold.map((g, i) => ({
      id: callId(`c${i + 1}`),
      tool: toolName(byApi.get(g.name) ?? g.name),
      arguments: Py.toJson(g.arguments) as Record<string, never>,
      deps: []
    })),
    facts: [],
    split: "test",
    seed: 0,
    source: "bfcl"
  }
}

/**
 * A JSON value as the Python value a model's JSON would give: a number where the schema says `number` (BFCL's
 * `float`) is a float even when integral, since the policy's arguments pass through JSON numbers, which lose `20.0`.
 */
const typed = (value: Json, schema: JsonSchema | undefined): Py.Py => {
  if (typeof value === "number" && schema?.type === "number") return Py.float(value)
  if (Array.isArray(value)) return Py.list(value.map((v) => typed(v, schema?.items)))
  if (value !== null && typeof value === "object") {
    return Py.record(Object.entries(value).map(([k, v]) => [k, typed(v, schema?.properties?.[k])] as const))
  }
  return Py.fromJson(value)
}

/** A turn's calls as BFCL's FC result: each under the function's BFCL name, arguments as a JSON string. */
const resultOfTurn = (turn: Turn, tools: ReadonlyArray<ToolSpec>): Py.Py => {
  const byName = new Map(tools.map((t) => [t.name as string, t]))
  return Py.list(turn.calls.map((c) => {
    const tool = byName.get(c.tool)
    return Py.record([[tool?.apiName ?? c.tool, Py.str(Py.jsonText(typed(c.arguments, tool?.parameters)))]])
  }))
}

/** Answers one entry with the Policy in context; never fails (a policy error becomes BFCL's inference-error text). */
export const generateEntry = Effect.fn("Bfcl.generateEntry")(function*(
  category: string,
  entry: Score.TestEntry,
  answers: ReadonlyArray<PyDict> | undefined,
  options: GenerateOptions = defaultOptions
) {
  const policy = yield* Policy
  const tools = toolsOf(category, entry)
  const request = requestOf(entry)
  const history = [retrievalStep(request, tools)]
  const context: PolicyContext = {
    request,
    paradigm: "ParaAct",
    round: history.length,
    maxRounds: options.maxRounds,
    controller: Controller.stateBefore(history).state,
    history,
    tools,
    seed: hashParts(options.seed, "bfcl", entry.id) & 0x7fffffff,
    ...(policy.privileged ? { task: oracleTask(entry, request, tools, answers) } : {})
  }
  const output = yield* policy.act(context).pipe(
    Effect.timeout(options.policyTimeout),
    Effect.map((o) => ({ ok: true as const, output: o })),
    Effect.catch((e) => Effect.succeed({ ok: false as const, message: e._tag === "TimeoutError" ? "the policy timed out" : e.message }))
  )
  if (!output.ok) return { id: entry.id, result: Py.str(`Error during inference: ${output.message}`), outcome: "policy_error", raw: output.message } satisfies Generated
  const raw = output.output.text
  const parsed = output.output.turn !== undefined
    ? ParaAct.validateTurn(output.output.turn, { usedCallIds: [] })
    : ParaAct.parseTurn(raw, { lenient: options.lenient, usedCallIds: [], nextCallIndex: 1 })
  if (Result.isFailure(parsed)) return { id: entry.id, result: Py.str(raw), outcome: "malformed", raw } satisfies Generated
  const turn = parsed.success
  if (turn.calls.length === 0) return { id: entry.id, result: Py.str(turn.answer ?? raw), outcome: "no_call", raw } satisfies Generated
  return { id: entry.id, result: resultOfTurn(turn, tools), outcome: "calls", raw } satisfies Generated
})

/** How many entries ended each way. */
export const outcomes = (generated: ReadonlyArray<Generated>): Readonly<Record<Outcome, number>> => {
  const out: Record<Outcome, number> = { calls: 0, no_call: 0, malformed: 0, policy_error: 0 }
  for (const g of generated) out[g.outcome]++
  return out
}
