/**
 * The identity of a call on the simulator's hot path: exactly `callKey(tool, args)` of src/math/CanonicalJson.ts, built
 * without the intermediate key, filter and map arrays (a call's arguments are a handful of scalars).
 */
import type { JsonObject } from "../domain/Json.ts"
import { canonicalJson } from "../math/CanonicalJson.ts"

/** Canonical JSON of one value: scalars directly, anything nested through `canonicalJson`. */
const value = (v: unknown): string => {
  switch (typeof v) {
    case "string":
      return JSON.stringify(v)
    case "number":
      // JSON.stringify prints a finite number as its ToString and NaN / ±Infinity as null.
      return Number.isFinite(v) ? String(v) : "null"
    case "boolean":
      return v ? "true" : "false"
    default:
      return canonicalJson(v)
  }
}

/** `canonicalJson(args)`: keys (those with a defined value) in code-unit order at every depth. */
export const canonicalArguments = (args: JsonObject): string => {
  // Arguments that are not an object reach L1 as they are (a typed 400): their identity is plain canonical JSON.
  if (args === null || typeof args !== "object" || Array.isArray(args)) return canonicalJson(args)
  const keys = Object.keys(args)
  const n = keys.length
  // Insertion sort: `<` on strings compares UTF-16 code units, as Array.prototype.sort's default order does.
  if (n <= 12) {
    for (let i = 1; i < n; i++) {
      const k = keys[i] as string
      let j = i - 1
      while (j >= 0 && (keys[j] as string) > k) {
        keys[j + 1] = keys[j] as string
        j--
      }
      keys[j + 1] = k
    }
  } else keys.sort()
  let out = "{"
  let first = true
  for (let i = 0; i < n; i++) {
    const k = keys[i] as string
    const v = args[k]
    if (v === undefined) continue
    out += first ? `${JSON.stringify(k)}:${value(v)}` : `,${JSON.stringify(k)}:${value(v)}`
    first = false
  }
  return `${out}}`
}

/** `callKey(tool, args)`: the tool and its canonical arguments. */
export const callKey = (tool: string, args: JsonObject): string => `${tool}(${canonicalArguments(args)})`
