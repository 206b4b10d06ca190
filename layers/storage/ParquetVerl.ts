/**
 * verl's Parquet datasets written with hyparquet-writer: the RL rows and the multi-turn SFT rows of
 * src/training/VerlExports.ts, each under an explicit nested schema (lists of structs, nullable fields), atomically.
 */
import { Effect, Schema } from "effect"
import { parquetWriteBuffer } from "hyparquet-writer"
import { writeFileAtomicEffect } from "../../src/io/AtomicWrite.ts"
import type { RlRow, SftRow } from "../../src/training/VerlExports.ts"

/** A Parquet file could not be encoded or written: which file, and why. */
export class ParquetError extends Schema.TaggedError<ParquetError>()("ParquetError", {
  file: Schema.String,
  message: Schema.String
}) {}

/** A column's logical shape; `optional` makes it nullable (Parquet OPTIONAL), else REQUIRED. */
export type Shape =
  | { readonly kind: "string" | "int64" | "double" | "boolean"; readonly optional?: boolean }
  | { readonly kind: "struct"; readonly fields: ReadonlyArray<readonly [string, Shape]>; readonly optional?: boolean }
  | { readonly kind: "list"; readonly element: Shape; readonly optional?: boolean }

/** One Parquet schema element (the fields hyparquet-writer reads). */
export interface SchemaElement {
  readonly name: string
  readonly type?: "BYTE_ARRAY" | "INT64" | "DOUBLE" | "BOOLEAN"
  readonly converted_type?: "UTF8" | "LIST"
  readonly repetition_type?: "REQUIRED" | "OPTIONAL" | "REPEATED"
  readonly num_children?: number
}

const primitive = {
  string: { type: "BYTE_ARRAY", converted_type: "UTF8" },
  int64: { type: "INT64" },
  double: { type: "DOUBLE" },
  boolean: { type: "BOOLEAN" }
} as const

/** The schema elements of a column, depth first; lists in the standard three-level form (`list` / `element`). */
export const elements = (name: string, shape: Shape): Array<SchemaElement> => {
  const repetition = shape.optional === true ? "OPTIONAL" : "REQUIRED"
  switch (shape.kind) {
    case "struct":
      return [{ name, repetition_type: repetition, num_children: shape.fields.length }, ...shape.fields.flatMap(([n, s]) => elements(n, s))]
    case "list":
      return [
        { name, repetition_type: repetition, converted_type: "LIST", num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        ...elements("element", shape.element)
      ]
    default:
      return [{ name, repetition_type: repetition, ...primitive[shape.kind] }]
  }
}

/** The schema of a whole file: a root over the columns. */
export const schemaOf = (columns: ReadonlyArray<readonly [string, Shape]>): Array<SchemaElement> => [
  { name: "root", num_children: columns.length },
  ...columns.flatMap(([n, s]) => elements(n, s))
]

const str: Shape = { kind: "string" }
const optStr: Shape = { kind: "string", optional: true }
const int: Shape = { kind: "int64" }
const optInt: Shape = { kind: "int64", optional: true }

/** The RL file's columns (verl RLHFDataset: `prompt` a list of chat messages; the rest passed to the agent loop). */
export const rlColumns: ReadonlyArray<readonly [keyof RlRow & string, Shape]> = [
  ["data_source", str],
  ["prompt", { kind: "list", element: { kind: "struct", fields: [["role", str], ["content", str]] } }],
  ["ability", str],
  ["reward_model", { kind: "struct", fields: [["style", str], ["ground_truth", str]] }],
  ["extra_info", {
    kind: "struct",
    fields: [
      ["index", int],
      ["task_id", str],
      ["split", str],
      ["level", str],
      ["paradigm", str],
      ["seed", int],
      ["max_rounds", int],
      ["fault_rate", { kind: "double" }],
      ["world_seed", optInt],
      ["world_size", optInt],
      ["library", optStr],
      ["task", optStr]
    ]
  }],
  ["agent_name", str]
]

const toolCall: Shape = {
  kind: "struct",
  fields: [["id", str], ["type", str], ["function", { kind: "struct", fields: [["name", str], ["arguments", str]] }]]
}

/** The SFT file's columns (verl MultiTurnSFTDataset: `messages`, `tools`; the rest is provenance). */
export const sftColumns: ReadonlyArray<readonly [keyof SftRow & string, Shape]> = [
  ["messages", {
    kind: "list",
    element: {
      kind: "struct",
      fields: [
        ["role", str],
        ["content", optStr],
        ["tool_calls", { kind: "list", element: toolCall, optional: true }],
        ["tool_call_id", optStr],
        ["name", optStr]
      ]
    }
  }],
  ["tools", str],
  ["id", str],
  ["task_id", str],
  ["level", str],
  ["paradigm", str],
  ["policy", str],
  ["mode", str],
  ["verdict", {
    kind: "struct",
    fields: [["quality", str], ["faithfulness", str], ["utility", str], ["rationale", optStr], ["judge", str]]
  }]
]

/** A value in the form hyparquet-writer takes for its shape: INT64 as BigInt, walked through structs and lists. */
export const toParquet = (value: unknown, shape: Shape): unknown => {
  if (value === null || value === undefined) return null
  switch (shape.kind) {
    case "int64":
      return typeof value === "number" ? BigInt(value) : value
    case "list":
      return Array.isArray(value) ? value.map((v) => toParquet(v, shape.element)) : value
    case "struct":
      return typeof value === "object"
        ? Object.fromEntries(shape.fields.map(([n, s]) => [n, toParquet((value as Record<string, unknown>)[n], s)]))
        : value
    default:
      return value
  }
}

/** Rows as Parquet bytes under the given columns (one row group per 10,000 rows, snappy). */
export const encode = <Row extends object>(rows: ReadonlyArray<Row>, columns: ReadonlyArray<readonly [keyof Row & string, Shape]>): Uint8Array => {
  const buffer = parquetWriteBuffer({
    schema: schemaOf(columns),
    columnData: columns.map(([name, shape]) => ({ name, data: rows.map((r) => toParquet(r[name], shape)) })),
    rowGroupSize: 10_000,
    createdBy: "paraagent export (hyparquet-writer)"
  })
  return new Uint8Array(buffer)
}

/** Writes rows to a Parquet file atomically. */
export const write = <Row extends object>(
  file: string,
  rows: ReadonlyArray<Row>,
  columns: ReadonlyArray<readonly [keyof Row & string, Shape]>
): Effect.Effect<void, ParquetError> =>
  Effect.try({
    try: () => encode(rows, columns),
    catch: (e) => new ParquetError({ file, message: `cannot encode ${rows.length} rows: ${e instanceof Error ? e.message : String(e)}` })
  }).pipe(
    Effect.flatMap((bytes) => writeFileAtomicEffect(file, bytes)),
    Effect.mapError((e) => (e._tag === "ParquetError" ? e : new ParquetError({ file, message: e.message })))
  )

/** Writes the RL rows. */
export const writeRl = (file: string, rows: ReadonlyArray<RlRow>) => write(file, rows, rlColumns)
/** Writes the SFT rows. */
export const writeSft = (file: string, rows: ReadonlyArray<SftRow>) => write(file, rows, sftColumns)
