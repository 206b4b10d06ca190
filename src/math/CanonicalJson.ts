/**
 * Canonical JSON: object keys sorted at every depth, so equal values print equally.
 * Used as the identity of a call (tool + arguments) for repeats, caches and fault seeds — a hot path of the
 * simulator, so it builds the string directly instead of through key/filter/map arrays.
 */

/** Sorts keys by UTF-16 code unit (Array.prototype.sort's default order); insertion sort for the usual few keys. */
const sortKeys = (keys: Array<string>): Array<string> => {
  const n = keys.length
  if (n > 12) return keys.sort()
  for (let i = 1; i < n; i++) {
    const k = keys[i] as string
    let j = i - 1
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string
      j--
    }
    keys[j + 1] = k
  }
  return keys
}

/** Serialises a JSON-compatible value with object keys sorted; `undefined` members are skipped, non-finite numbers are null. */
export const canonicalJson = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return Number.isFinite(value) ? String(value) : "null"
    case "boolean":
      return value ? "true" : "false"
    case "object": {
      if (value === null) return "null"
      if (Array.isArray(value)) {
        let out = "["
        for (let i = 0; i < value.length; i++) out += (i === 0 ? "" : ",") + canonicalJson(value[i])
        return `${out}]`
      }
      const record = value as Record<string, unknown>
      const keys = sortKeys(Object.keys(record))
      let out = "{"
      let first = true
      for (const k of keys) {
        const v = record[k]
        if (v === undefined) continue
        out += `${first ? "" : ","}${JSON.stringify(k)}:${canonicalJson(v)}`
        first = false
      }
      return `${out}}`
    }
    default:
      return JSON.stringify(value) ?? "null"
  }
}

/** The identity of a call: its tool and canonical arguments. */
export const callKey = (tool: string, args: unknown): string => `${tool}(${canonicalJson(args)})`
