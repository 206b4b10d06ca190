/**
 * The searchable text of a tool interface: one document per ToolSpec, split into named fields so a
 * retriever can weight them (BM25F) or join them (dense encoders, the plain baseline).
 */
import type { ToolName } from "../domain/Ids.ts"
import type { JsonSchema } from "../domain/Json.ts"
import type { ToolSpec } from "../domain/Tool.ts"

/** The fields of a tool document (the default order {@link text} joins them in). */
export const fieldNames = ["group", "api", "description", "groupDescription", "category", "parameters"] as const
/** One field of a tool document. */
export type FieldName = (typeof fieldNames)[number]

/** The fields of the plain baseline: tool name, API name, both descriptions and the category. */
export const plainFields: ReadonlyArray<FieldName> = ["group", "api", "description", "groupDescription", "category"]

/** The searchable text of one tool interface. */
export interface ToolDocument {
  /** The callable name of the tool (what a hit returns). */
  readonly tool: ToolName
  /**
   * group: the provider / ToolBench tool name; api: the API's own name; description: the API's description;
   * groupDescription: the provider's description; category; parameters: each parameter's name and description.
   */
  readonly fields: { readonly [F in FieldName]: string }
}

/** Names and descriptions of the parameters, nested object properties and array items included. */
const parameterText = (schema: JsonSchema, out: Array<string>): void => {
  const properties = schema.properties ?? {}
  for (const name of Object.keys(properties)) {
    const property = properties[name]
    if (property === undefined) continue
    out.push(name)
    if (property.description !== undefined && property.description.trim() !== "") out.push(property.description.trim())
    parameterText(property, out)
  }
  if (schema.items !== undefined) parameterText(schema.items, out)
}

/** The document of one tool interface. */
export const fromTool = (tool: ToolSpec): ToolDocument => {
  const parameters: Array<string> = []
  parameterText(tool.parameters, parameters)
  return {
    tool: tool.name,
    fields: {
      group: tool.group,
      // When a source has no separate API name, `apiName` repeats the group; indexing it twice would
      // double-count the group's words.
      api: tool.apiName === tool.group ? "" : tool.apiName,
      description: tool.description,
      groupDescription: tool.groupDescription ?? "",
      category: tool.category,
      parameters: parameters.join(". ")
    }
  }
}

/** The chosen fields, in the order given, joined into one text: empty fields skipped, ". " between fields. */
export const text = (document: ToolDocument, fields: ReadonlyArray<FieldName> = fieldNames): string => {
  let out = ""
  for (const field of fields) {
    const value = document.fields[field].trim()
    if (value === "") continue
    out = out === "" ? value : /[.!?:;]$/.test(out) ? `${out} ${value}` : `${out}. ${value}`
  }
  return out
}

/** The whole searchable text of a tool: every field joined (what a dense encoder embeds). */
export const toolText = (tool: ToolSpec, fields: ReadonlyArray<FieldName> = fieldNames): string =>
  text(fromTool(tool), fields)
