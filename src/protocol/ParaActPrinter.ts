/**
 * The ParaAct printer: a Turn in the canonical text form (tags in order, JSON lists one item per line, keys in a
 * fixed order), so that parsing a printed valid turn gives it back.
 */
import type { ToolCall } from "../domain/Call.ts"
import type { Plan, PlanNode } from "../domain/Plan.ts"
import type { SearchQuery, Turn } from "../domain/Turn.ts"
import { canonicalJson } from "../math/CanonicalJson.ts"

const q = (s: string): string => JSON.stringify(s)

const printList = (items: ReadonlyArray<string>): string => `[\n${items.map((i) => `  ${i}`).join(",\n")}\n]`

const printNode = (node: PlanNode): string =>
  `{"id":${q(node.id)}${node.tool !== undefined ? `,"tool":${q(node.tool)}` : ""}${
    node.slot !== undefined ? `,"slot":${q(node.slot)}` : ""
  },"deps":[${node.deps.map(q).join(",")}]}`

/** The `<plan>` JSON of a plan, one node per line. */
export const printPlan = (plan: Plan): string =>
  `{"nodes":[\n${plan.nodes.map((n) => `  ${printNode(n)}`).join(",\n")}\n]}`

/** The `<search>` JSON of a list of queries, one per line. */
export const printSearches = (searches: ReadonlyArray<SearchQuery>): string =>
  printList(searches.map((s) => `{"slot":${q(s.slot)},"query":${q(s.query)}}`))

/** The `<call>` JSON of a list of calls, one per line; arguments with sorted keys. */
export const printCalls = (calls: ReadonlyArray<ToolCall>): string =>
  printList(calls.map((c) => `{"id":${q(c.id)},"name":${q(c.tool)},"arguments":${canonicalJson(c.arguments)}}`))

/**
 * Prints a turn in the canonical form: tags in order, each on its own lines, JSON lists one item per line,
 * object keys in a fixed order (arguments sorted). For every valid turn ({@link validateTurn}),
 * `parseTurn(printTurn(t))` gives `t` back.
 */
export const printTurn = (turn: Turn): string => {
  const blocks: Array<string> = []
  if (turn.think !== undefined) blocks.push(`<think>\n${turn.think}\n</think>`)
  if (turn.plan !== undefined) blocks.push(`<plan>\n${printPlan(turn.plan)}\n</plan>`)
  if (turn.searches.length > 0) blocks.push(`<search>\n${printSearches(turn.searches)}\n</search>`)
  if (turn.calls.length > 0) blocks.push(`<call>\n${printCalls(turn.calls)}\n</call>`)
  if (turn.answer !== undefined) blocks.push(`<answer>\n${turn.answer}\n</answer>`)
  return blocks.join("\n")
}
