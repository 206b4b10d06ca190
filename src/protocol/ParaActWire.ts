/**
 * The wire schemas of ParaAct: the JSON inside `<plan>`, `<search>` and `<call>`, and decoding one item of it into a
 * ProtocolError that names the field and points at its character offset in the turn.
 */
import { Result, Schema, SchemaAST, SchemaIssue } from "effect"
import type { ProtocolError } from "../domain/Errors.ts"
import { ToolName } from "../domain/Ids.ts"
import { type Json, JsonObject } from "../domain/Json.ts"
import { type JsonSpan, locate } from "./ParaActJson.ts"
import { fail, type TagName } from "./ParaActScanner.ts"
import { callIdPattern } from "./Refs.ts"

/** What a malformed call or plan-node id is told: the id grammar in words. */
export const callIdMessage = "an id is a letter or _ followed by up to 63 letters, digits or _ (like c1)"
/** A call or plan-node id as written in a turn: {@link callIdPattern}. */
export const WireCallId = Schema.String.check(Schema.isPattern(callIdPattern, { message: callIdMessage })).pipe(
  Schema.brand("CallId")
)

/** One element of the `<call>` list: `name` is the tool's callable name; `id` and `arguments` ({}) may be omitted. */
export const WireCall = Schema.Struct({
  id: Schema.optionalKey(WireCallId),
  name: ToolName,
  arguments: Schema.optionalKey(JsonObject)
})

/** One node of a `<plan>`; `deps` ([]) may be omitted. */
export const WirePlanNode = Schema.Struct({
  id: WireCallId,
  tool: Schema.optionalKey(ToolName),
  slot: Schema.optionalKey(Schema.String),
  deps: Schema.optionalKey(Schema.Array(WireCallId))
})

/** The `<plan>` object form: `{"nodes": [...]}`. */
export const WirePlan = Schema.Struct({ nodes: Schema.Array(WirePlanNode) })

/** One element of the `<search>` list in object form; a plain string is also accepted. */
export const WireSearch = Schema.Struct({
  slot: Schema.optionalKey(Schema.NonEmptyString),
  query: Schema.String.check(Schema.isPattern(/\S/, { message: "a query has at least one non-space character" }))
})

/** A path like `[1].arguments.city` for messages. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((s) =>
    typeof s === "number"
      ? `[${s}]`
      : typeof s === "string" && /^[A-Za-z_$][\w$]*$/.test(s)
      ? `.${s}`
      : `[${JSON.stringify(String(s))}]`
  ).join("").replace(/^\./, "")

/** A short rendering of a JSON value for error messages (at most 40 characters). */
export const preview = (value: unknown): string => {
  const s = typeof value === "number" ? String(value) : JSON.stringify(value) ?? String(value)
  return s.length > 40 ? `${s.slice(0, 37)}...` : s
}

/** The first failing leaf of a schema issue and the path to it. */
const firstLeaf = (issue: SchemaIssue.Issue): { readonly path: ReadonlyArray<PropertyKey>; readonly leaf: SchemaIssue.Issue } => {
  const path: Array<PropertyKey> = []
  let current = issue
  for (;;) {
    if (current._tag === "Pointer") {
      path.push(...current.path)
      current = current.issue
    } else if (current._tag === "Composite") {
      current = current.issues[0]
    } else if (current._tag === "Filter" || current._tag === "Encoding") {
      current = current.issue
    } else return { path, leaf: current }
  }
}

/** The value at a path inside a JSON value, and whether the path exists. */
export const valueAt = (value: unknown, path: ReadonlyArray<PropertyKey>): { readonly found: boolean; readonly value: unknown } => {
  let current = value
  for (const segment of path) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment)) return { found: false, value: undefined }
    current = (current as Record<PropertyKey, unknown>)[segment]
  }
  return { found: true, value: current }
}

/** An element to decode: its value and its path from the root of the tag's JSON (which locates its span). */
export interface Located {
  readonly value: Json
  readonly path: ReadonlyArray<PropertyKey>
}

/**
 * Decodes `item` with `schema`; on failure, names the field and points at its offset in the text.
 * `root` is the span of the tag's whole JSON value; `item.path` locates the item inside it.
 * Unknown keys are errors unless `lenient`.
 */
export const decodeItem = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  tag: TagName,
  root: JsonSpan,
  item: Located,
  lenient: boolean
): Result.Result<S["Type"], ProtocolError> => {
  const decoded = Schema.decodeUnknownResult(schema)(item.value, { onExcessProperty: lenient ? "ignore" : "error" })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  const { leaf, path: inner } = firstLeaf(decoded.failure.issue)
  const path = [...item.path, ...inner]
  const where = locate(root, path)
  const field = formatPath(path)
  const label = field === "" ? `<${tag}>` : `<${tag}> ${field}`
  if (leaf._tag === "MissingKey") {
    const parent = formatPath(path.slice(0, -1))
    const key = JSON.stringify(String(path.at(-1) ?? ""))
    return fail(tag, where.offset, `${parent === "" ? `<${tag}>` : `<${tag}> ${parent}`}: missing required field ${key}`)
  }
  if (leaf._tag === "UnexpectedKey") {
    const allowed = SchemaAST.isObjects(leaf.ast) ? leaf.ast.propertySignatures.map((p) => String(p.name)).join(", ") : ""
    return fail(tag, where.keyOffset, `${label}: unknown field${allowed === "" ? "" : ` (allowed: ${allowed})`}`)
  }
  const got = valueAt(item.value, inner)
  const message = decoded.failure.message.split("\n")[0] ?? "invalid value"
  return fail(tag, where.offset, `${label}: ${message}${got.found ? `, got ${preview(got.value)}` : ""}`)
}
