/**
 * The searchable text of a tool interface: one document per ToolSpec, split into named fields so a
 * retriever can weight them (BM25F) or join them (dense encoders, the plain baseline).
 */
import type { ToolName } from "../domain/Ids.ts"
import type { JsonSchema } from "../domain/Json.ts"
import { groupKey, type ToolSpec } from "../domain/Tool.ts"

/** The fields of a tool document (the default order {@link text} joins them in). */
export const fieldNames = ["group", "api", "description", "groupDescription", "category", "parameters"] as const
/** One field of a tool document. */
export type FieldName = (typeof fieldNames)[number]

/** The fields of the plain baseline: tool name, API name, both descriptions and the category. */
export const plainFields: ReadonlyArray<FieldName> = ["group", "api", "description", "groupDescription", "category"]

/** The text of each field of a document. */
export type Fields = { readonly [F in FieldName]: string }

/** The searchable text of one tool interface. */
export interface ToolDocument {
  /** The callable name of the tool (what a hit returns). */
  readonly tool: ToolName
  /**
   * group: the provider / ToolBench tool name; api: the API's own name; description: the API's description;
   * groupDescription: the provider's description; category; parameters: each parameter's name and description.
   */
  readonly fields: Fields
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

/** The fields a provider's APIs share (they are stated once in a group document). */
export const sharedFields: ReadonlyArray<FieldName> = ["group", "groupDescription", "category"]

/** The key of a tool's provider group (category + provider name); defined with the ToolSpec. */
export { groupKey } from "../domain/Tool.ts"

/**
 * A library's tools grouped by provider ({@link groupKey}), groups in order of first appearance. The members of group
 * g are `members[memberStart[g] .. memberStart[g + 1] - 1]` (tool indices, ascending); `groupOf[t]` is tool t's group.
 */
export interface Groups {
  readonly count: number
  readonly groupOf: Int32Array
  readonly memberStart: Int32Array
  readonly members: Int32Array
}

/** Groups a library's tools by provider. */
export const groups = (tools: ReadonlyArray<Pick<ToolSpec, "category" | "group">>): Groups => {
  const ids = new Map<string, number>()
  const groupOf = new Int32Array(tools.length)
  const sizes: Array<number> = []
  tools.forEach((tool, t) => {
    const key = groupKey(tool)
    let g = ids.get(key)
    if (g === undefined) {
      g = sizes.length
      ids.set(key, g)
      sizes.push(0)
    }
    groupOf[t] = g
    sizes[g] = (sizes[g] as number) + 1
  })
  const count = sizes.length
  const memberStart = new Int32Array(count + 1)
  for (let g = 0; g < count; g++) memberStart[g + 1] = (memberStart[g] as number) + (sizes[g] as number)
  const cursor = memberStart.slice(0, count)
  const members = new Int32Array(tools.length)
  for (let t = 0; t < tools.length; t++) {
    const g = groupOf[t] as number
    members[cursor[g] as number] = t
    cursor[g] = (cursor[g] as number) + 1
  }
  return { count, groupOf, memberStart, members }
}

/**
 * The document of a whole provider: its name, description and category once, and the API names, descriptions and
 * parameters of all its APIs (in library order) joined. A request written against several APIs of one provider
 * matches this document better than any single API's.
 */
export const groupDocument = (members: ReadonlyArray<ToolDocument>): Fields => {
  const first = members[0]?.fields
  const joined = (field: FieldName): string =>
    members.map((m) => m.fields[field].trim()).filter((v) => v !== "").join(". ")
  return {
    group: first?.group ?? "",
    api: joined("api"),
    description: joined("description"),
    groupDescription: first?.groupDescription ?? "",
    category: first?.category ?? "",
    parameters: joined("parameters")
  }
}

/** The document of every group, in group order: {@link groupDocument} of its members' documents (`documents` in library order). */
export const groupDocuments = (documents: ReadonlyArray<ToolDocument>, groups: Groups): Array<Fields> =>
  Array.from({ length: groups.count }, (_, g) =>
    groupDocument(
      Array.from(groups.members.subarray(groups.memberStart[g], groups.memberStart[g + 1]), (t) => documents[t] as ToolDocument)
    ))
