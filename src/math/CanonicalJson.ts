/**
 * Canonical JSON: object keys sorted at every depth, so equal values print equally.
 * Used as the identity of a call (tool + arguments) for repeats, caches and fault seeds.
 */

/** Serialises a JSON-compatible value with object keys sorted. */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(",")}}`
}

/** The identity of a call: its tool and canonical arguments. */
export const callKey = (tool: string, args: unknown): string => `${tool}(${canonicalJson(args)})`
