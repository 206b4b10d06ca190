/**
 * The server's first line of defence, as pure functions: the nesting depth of a JSON text (found without parsing it,
 * so a 10k-deep body is refused before any recursive decoder sees it), a constant-time bearer-token check, and the
 * client keys sessions are bound to.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

/** The deepest `[`/`{` nesting of a JSON text, strings skipped; stops counting once past `limit`. */
export const nestingDepth = (text: string, limit = Number.POSITIVE_INFINITY): number => {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
      continue
    }
    if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      depth++
      if (depth > max) {
        max = depth
        if (max > limit) return max
      }
    } else if (c === 125 || c === 93) depth--
  }
  return max
}

const digest = (s: string): Buffer => createHash("sha256").update(s).digest()

/** A checker of `Authorization: Bearer <token>` headers that compares digests in constant time. */
export const bearerCheck = (token: string): ((header: string | undefined) => boolean) => {
  const expected = digest(token)
  return (header) => {
    if (header === undefined || !header.startsWith("Bearer ")) return false
    return timingSafeEqual(digest(header.slice("Bearer ".length)), expected)
  }
}

/** The header a client names itself with; its sessions and posted tasks are bound to it. */
export const clientKeyHeader = "x-client-key"

const clientKeyPattern = /^[A-Za-z0-9._~+/=-]{16,256}$/

/** A well-formed client key: 16 to 256 characters of letters, digits and `._~+/=-` (base64, base64url, hex, UUIDs). */
export const isClientKey = (key: string): boolean => clientKeyPattern.test(key)

/** The owner a client key stands for in the session log: a digest, so a leaked log leaks no key. */
export const ownerOf = (key: string): string => createHash("sha256").update(`paraagent-client-key\u0000${key}`).digest("hex")

/** The owner of a caller without a key: matches no stored session (stored owners are digests). */
export const noOwner = ""

/** A key the server issues to a client that opened a session without one (192 random bits, base64url). */
export const newClientKey = (): string => randomBytes(24).toString("base64url")
