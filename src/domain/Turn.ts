/**
 * One model turn of the ParaAct loop, after parsing: think, plan, searches, calls, answer.
 * A turn with searches explores; a turn with calls executes; an answer ends the episode.
 */
import { Schema } from "effect"
import { ToolCall } from "./Call.ts"
import { Plan } from "./Plan.ts"

/** One retrieval query for one capability slot. */
export const SearchQuery = Schema.Struct({
  slot: Schema.String,
  query: Schema.String
})
/** One retrieval query for one capability slot. */
export type SearchQuery = typeof SearchQuery.Type

/** A parsed model turn. */
export const Turn = Schema.Struct({
  think: Schema.optionalKey(Schema.String),
  plan: Schema.optionalKey(Plan),
  searches: Schema.Array(SearchQuery),
  calls: Schema.Array(ToolCall),
  answer: Schema.optionalKey(Schema.String)
})
/** A parsed model turn. */
export type Turn = typeof Turn.Type
