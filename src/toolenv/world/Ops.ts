/**
 * What a generated tool does, as data: its kind, the semantic role of each parameter, and the shape of its response
 * (envelope + fields, each field saying where its value comes from). The ToolSpec's JSON schemas are derived from it,
 * the simulator executes it, and the task generator reads paths of facts and ids from it.
 */
import type { Json, JsonSchema } from "../../domain/Json.ts"

/** The kinds of generated operation. */
export type OpKind =
  | "search" // name query → list of matching entities
  | "lookup" // exact name → one entity (404 when none)
  | "details" // id → one entity
  | "list" // filters (categorical, reference, range) → entities
  | "children" // parent id → its children (block relation) or referrers (inverse relation)
  | "series" // id + date range → daily values
  | "latest" // id → today's value of a series
  | "stats" // id + date range → min / max / mean of a series
  | "top" // → entities ranked by a numeric attribute
  | "featured" // optional date → one entity chosen by the date
  | "action" // (target id) + inputs → a created record
  | "record" // created record id → the record
  | "convert" // amount + currency codes → converted amount
  | "utility" // inputs → computed outputs

/** The role of a parameter. */
export type Role =
  | "id" // the id of the entity the call is about (`x-entity: <type>.id`)
  | "query" // a name to search for (`x-entity: <type>.name`)
  | "eq" // equality filter on a categorical attribute
  | "ref_id" // equality filter on a reference: the id of the referenced entity
  | "ref_name" // equality filter on a reference, given the referenced entity's name
  | "min" // lower bound of a numeric or date attribute
  | "max" // upper bound
  | "limit" // maximum number of items
  | "from" // first day of a series range
  | "to" // last day of a series range
  | "date" // a day (featured item)
  | "input" // an input of an action or a utility
  | "amount" // amount to convert
  | "base" // currency to convert from
  | "quote" // currency to convert to

/** One parameter of a generated tool. */
export interface Param {
  readonly name: string
  readonly role: Role
  /** The attribute (eq/min/max/ref_*), or the input key (input). */
  readonly key?: string
  /** The referenced type (ref_id / ref_name). */
  readonly refType?: string
  readonly required: boolean
  readonly schema: JsonSchema
}

/** Where a response field's value comes from. */
export type Source =
  | { readonly kind: "attr"; readonly key: string } // attribute of the item entity or record (`id`, `name` included)
  | { readonly kind: "rank" } // 1-based position in the list
  | { readonly kind: "date" } // the day of a series point
  | { readonly kind: "value" } // the value of a series point, or a latest value
  | { readonly kind: "stat"; readonly stat: "min" | "max" | "mean" | "days" | "first" | "last" | "change_pct" }
  | { readonly kind: "arg"; readonly param: string } // echo of an argument
  | { readonly kind: "out"; readonly key: string } // output of a computation (utility, conversion)
  | { readonly kind: "const"; readonly value: Json }

/** One field of a response item. */
export interface Field {
  /** The key in the payload. */
  readonly out: string
  readonly source: Source
  readonly schema: JsonSchema
}

/** A root-level field beside the payload. */
export interface Meta {
  readonly out: string
  readonly value: "total" | "returned" | "limit" | "ok" | "success" | "page"
  readonly schema: JsonSchema
}

/** Where the payload sits in the response. */
export interface Envelope {
  /** Path from the root to the item list / item object; empty for a bare payload. */
  readonly path: ReadonlyArray<string>
  readonly meta: ReadonlyArray<Meta>
}

/** A generated operation. */
export interface Op {
  readonly kind: OpKind
  /** Type of the items returned (entity type, created record type; "" for convert and utilities). */
  readonly type: string
  readonly params: ReadonlyArray<Param>
  /** Whether the payload is a list of items or a single item. */
  readonly result: "list" | "object"
  readonly envelope: Envelope
  readonly fields: ReadonlyArray<Field>
  /** children: how the items relate to the id's entity. */
  readonly relation?: { readonly via: "parent" | "inverse"; readonly from: string; readonly name: string }
  /** series / latest / stats: the series; top: the ranking attribute. */
  readonly metric?: string
  /** action / record: the action's key; utility: the utility's key. */
  readonly action?: string
  readonly utility?: string
  /** Items returned when the caller gives no limit. */
  readonly defaultLimit?: number
}

/** The parameter with a role, if any. */
export const paramOf = (op: Op, role: Role): Param | undefined => op.params.find((p) => p.role === role)

/** The dotted path of an item field in a response (`results.0.id`, `data.team_id`); `index` for list payloads. */
export const fieldPath = (op: Op, out: string, index = 0): string =>
  [...op.envelope.path, ...(op.result === "list" ? [String(index)] : []), out].join(".")

/** The G_dep path of a field (`results[].id`, `data.team_id`). */
export const edgePath = (op: Op, out: string): string =>
  op.result === "list" ? `${op.envelope.path.length === 0 ? "[]" : `${op.envelope.path.join(".")}[]`}.${out}` : [...op.envelope.path, out].join(".")
