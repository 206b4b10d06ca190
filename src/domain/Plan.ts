/**
 * The `<plan>` of a ParaAct turn: a DAG over capability slots / calls.
 * A node's id is the call id that will execute it, so calls and `$ref`s share the plan's namespace.
 */
import { Schema } from "effect"
import { CallId, ToolName } from "./Ids.ts"

/** One node of a plan: a capability slot, optionally already bound to a tool. */
export const PlanNode = Schema.Struct({
  id: CallId,
  /** The tool that will serve the node, once known. */
  tool: Schema.optionalKey(ToolName),
  /** The capability the node needs, in words (what a search for it would ask). */
  slot: Schema.optionalKey(Schema.String),
  deps: Schema.Array(CallId)
})
/** One node of a plan. */
export type PlanNode = typeof PlanNode.Type

/** A plan: nodes with dependencies; layer = 1 + max layer of deps. */
export const Plan = Schema.Struct({
  nodes: Schema.Array(PlanNode)
})
/** A plan. */
export type Plan = typeof Plan.Type
