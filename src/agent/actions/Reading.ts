/**
 * One round's context read once for every enumerator: the request's clauses, their words and literals, the history
 * folded (`History`) and read for features (`Seen`), the last step, the paradigm's shape, the seen tools by name and
 * in name order, and the successful outputs with their tools. Pure.
 */
import type { Json } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import type { Step } from "../../domain/Trajectory.ts"
import * as History from "../../math/History.ts"
import { clausesOf, literalsOf } from "./Request.ts"
import type { Literal } from "./Request.ts"
import { readHistory } from "./Seen.ts"
import type { Seen } from "./Seen.ts"
import { tokens } from "./Text.ts"
import type { SpaceContext } from "./Types.ts"

/** A successful output with the tool that produced it (undefined when the tool is not among the seen ones). */
export interface Output {
  readonly id: string
  readonly tool: ToolSpec | undefined
  readonly payload: Json
}

/** What every enumerator reads of the context. */
export interface Reading {
  readonly clauses: ReadonlyArray<string>
  readonly clauseTokens: ReadonlyArray<ReadonlySet<string>>
  readonly requestTokens: ReadonlySet<string>
  readonly literals: ReadonlyArray<Literal>
  readonly history: History.History
  readonly seen: Seen
  readonly last: Step | undefined
  readonly single: boolean
  readonly executionBegan: boolean
  readonly byName: ReadonlyMap<string, ToolSpec>
  readonly sortedTools: ReadonlyArray<ToolSpec>
  readonly outputs: ReadonlyArray<Output>
}

/** Reads a round's context. */
export const read = (context: SpaceContext): Reading => {
  const clauses = clausesOf(context.request)
  const clauseTokens = clauses.map(tokens)
  const requestTokens = tokens(context.request)
  const literals = literalsOf(clauses)
  const history = History.of(context.history)
  const seen = readHistory(context.history, clauseTokens)
  const last = context.history[context.history.length - 1]
  const single = context.paradigm === "ReAct" || context.paradigm === "DFSDT"
  const executionBegan = context.history.some((s) => s.observations.some((o) => o.attempts > 0))
  const byName = new Map(context.tools.map((t) => [t.name as string, t]))
  // by name: the space must not depend on the order the runtime lists the tools in (a rebuilt context may differ)
  const sortedTools = [...context.tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const outputs = [...history.outputs.entries()].map(([id, payload]) => {
    const tool = history.successes.find((s) => s.id === id)?.tool
    return { id, tool: tool === undefined ? undefined : byName.get(tool), payload }
  })
  return { clauses, clauseTokens, requestTokens, literals, history, seen, last, single, executionBegan, byName, sortedTools, outputs }
}
