/**
 * Errors that cross a process boundary or get stored: tagged, schema-backed, each naming what was wrong.
 */
import { Schema } from "effect"

/** A model turn that does not follow the ParaAct protocol: which tag, at which character offset. */
export class ProtocolError extends Schema.TaggedError<ProtocolError>()("ProtocolError", {
  tag: Schema.String,
  offset: Schema.Finite,
  message: Schema.String
}) {}

/** A file or record that failed to decode: which file, where, and why. */
export class DecodeError extends Schema.TaggedError<DecodeError>()("DecodeError", {
  source: Schema.String,
  message: Schema.String
}) {}

/** A configuration or flag value that is out of range or malformed. */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  field: Schema.String,
  value: Schema.String,
  message: Schema.String
}) {}

/**
 * A text of several lines as one line of an error message (SQLite's quick_check, one damaged page a line; a schema
 * decoder's issues; a defect's stack):
 * trimmed, each line break and the blanks around it replaced by "; ".
 */
export const oneLine = (text: string): string => text.trim().replace(/\s*\n\s*/g, "; ")
