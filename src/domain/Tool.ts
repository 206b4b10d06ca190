/**
 * A tool interface as ParaAgent sees it, whatever library it was imported from.
 * One ToolSpec is one callable API (RapidAPI "tools" group several of them under `group`).
 */
import { Schema } from "effect"
import { ToolId, ToolName } from "./Ids.ts"
import { Json, JsonSchema, ParametersSchema } from "./Json.ts"

/** Where a tool interface came from. */
export const SourceKind = Schema.Literals([
  "generated",
  "toolbench",
  "stabletoolbench",
  "bfcl",
  "api-bank",
  "openapi",
  "mcp",
  "seal-tools",
  "user"
])
/** Where a tool interface came from. */
export type SourceKind = typeof SourceKind.Type

/** The origin of one tool interface: the library kind and a locator inside it (file, operation id, ...). */
export const ToolSource = Schema.Struct({
  kind: SourceKind,
  ref: Schema.String
})
/** The origin of one tool interface. */
export type ToolSource = typeof ToolSource.Type

/** One callable tool interface. */
export const ToolSpec = Schema.Struct({
  /** Stable id across rebuilds of the same library. */
  id: ToolId,
  /** Callable name, unique in its library, safe as an OpenAI function name (`[A-Za-z0-9_-]{1,64}`). */
  name: ToolName,
  /** The provider / tool that groups several APIs (ToolBench `tool_name`); equals `apiName` when there is none. */
  group: Schema.String,
  /** The API's own name as its source spells it. */
  apiName: Schema.String,
  category: Schema.String,
  description: Schema.String,
  /** The group's description, when the source has one. */
  groupDescription: Schema.optionalKey(Schema.String),
  parameters: ParametersSchema,
  /** Schema of the response payload, when known. */
  response: Schema.optionalKey(JsonSchema),
  /** An example response payload, when the source has one. */
  example: Schema.optionalKey(Json),
  /** HTTP method, for HTTP APIs. */
  method: Schema.optionalKey(Schema.String),
  source: ToolSource
})
/** One callable tool interface. */
export type ToolSpec = typeof ToolSpec.Type

/**
 * The key of a tool's provider group: its category and provider name. Two RapidAPI providers of one name in different
 * categories are different tools, so the category is part of the key.
 */
export const groupKey = (tool: Pick<ToolSpec, "category" | "group">): string => `${tool.category}\u0000${tool.group}`

/** The kind of an edge of G_dep. */
export const DepKind = Schema.Literals(["hard", "soft"])
/** The kind of an edge of G_dep: hard = `to` needs a value only `from` produces; soft = `to` is better after `from`. */
export type DepKind = typeof DepKind.Type

/** One edge of the dependency graph G_dep: `from` feeds `to`. */
export const DepEdge = Schema.Struct({
  from: ToolName,
  to: ToolName,
  kind: DepKind,
  /** The parameter of `to` that the edge feeds (hard edges). */
  param: Schema.optionalKey(Schema.String),
  /** The response field of `from` that provides the value (dotted path, `[]` for array items). */
  field: Schema.optionalKey(Schema.String),
  /** The entity attribute carried along the edge (`team.id`), when known. */
  entity: Schema.optionalKey(Schema.String)
})
/** One edge of the dependency graph G_dep. */
export type DepEdge = typeof DepEdge.Type
