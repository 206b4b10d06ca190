/**
 * JSON values and the JSON-Schema subset ParaAgent uses for tool parameters and responses.
 * `x-entity` is our extension: it marks a value as an attribute of a world entity (`team.id`, `team.name`).
 */
import { Schema } from "effect"

/** Any JSON value. */
export const Json = Schema.Json
/** Any JSON value. */
export type Json = Schema.Json
/** A JSON object. */
export const JsonObject = Schema.JsonObject
/** A JSON object. */
export type JsonObject = Schema.JsonObject

/** The primitive types of JSON Schema. */
export const JsonType = Schema.Literals(["string", "number", "integer", "boolean", "array", "object", "null"])
/** The primitive types of JSON Schema. */
export type JsonType = typeof JsonType.Type

/** The JSON-Schema subset used for tool parameters and response payloads. */
export interface JsonSchema {
  readonly type?: JsonType
  readonly description?: string
  readonly enum?: ReadonlyArray<Json>
  readonly default?: Json
  readonly format?: string
  readonly items?: JsonSchema
  readonly properties?: { readonly [key: string]: JsonSchema }
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: boolean
  readonly minimum?: number
  readonly maximum?: number
  readonly "x-entity"?: string
}

/** Schema of {@link JsonSchema} (recursive). */
export const JsonSchema: Schema.Codec<JsonSchema> = Schema.Struct({
  type: Schema.optionalKey(JsonType),
  description: Schema.optionalKey(Schema.String),
  enum: Schema.optionalKey(Schema.Array(Json)),
  default: Schema.optionalKey(Json),
  format: Schema.optionalKey(Schema.String),
  items: Schema.optionalKey(Schema.suspend((): Schema.Codec<JsonSchema> => JsonSchema)),
  properties: Schema.optionalKey(Schema.Record(Schema.String, Schema.suspend((): Schema.Codec<JsonSchema> => JsonSchema))),
  required: Schema.optionalKey(Schema.Array(Schema.String)),
  additionalProperties: Schema.optionalKey(Schema.Boolean),
  minimum: Schema.optionalKey(Schema.Number),
  maximum: Schema.optionalKey(Schema.Number),
  "x-entity": Schema.optionalKey(Schema.String)
})

/** The parameters of a tool: always an object schema. */
export interface ParametersSchema extends JsonSchema {
  readonly type: "object"
  readonly properties: { readonly [key: string]: JsonSchema }
  readonly required: ReadonlyArray<string>
}

/** Schema of {@link ParametersSchema}. */
export const ParametersSchema: Schema.Codec<ParametersSchema> = Schema.Struct({
  type: Schema.Literal("object"),
  description: Schema.optionalKey(Schema.String),
  properties: Schema.Record(Schema.String, JsonSchema),
  required: Schema.Array(Schema.String),
  additionalProperties: Schema.optionalKey(Schema.Boolean)
})
