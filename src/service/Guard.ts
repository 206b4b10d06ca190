/**
 * The server's first line of defence, as pure functions: the nesting depth of a JSON text (found without parsing it,
 * so a 10k-deep body is refused before any recursive decoder sees it), a constant-time bearer-token check, and the
 * client keys sessions are bound to, and the network checks (Host, Origin, Content-Type) that keep web pages out.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { isIP } from "node:net"

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

/**
 * The server's token check over a request's headers: `Authorization: Bearer <token>`, or `X-API-Key: <token>` (the
 * header the Open Reward Standard's clients send), each compared by digest in constant time.
 */
export const tokenCheck = (token: string): ((headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>) => boolean) => {
  const bearer = bearerCheck(token)
  const expected = digest(token)
  return (headers) => {
    const authorization = headers["authorization"]
    if (typeof authorization === "string" && bearer(authorization)) return true
    const key = headers["x-api-key"]
    return typeof key === "string" && key.length > 0 && timingSafeEqual(digest(key), expected)
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

// ---- browser and network hygiene: what a web page (or a DNS-rebound name) cannot make the server do ----

/** Who may reach the server from a browser, besides its own pages and non-browser clients. */
export interface NetworkPolicy {
  /** The address the server listens on (`--host`): a name there is accepted in `Host`. */
  readonly bindHost: string
  /** Host names a request may name in `Host` besides IP literals, `localhost` and `bindHost`; `*` allows any. */
  readonly allowHosts: ReadonlyArray<string>
  /** Origins (`scheme://host[:port]`) whose pages may send requests; `*` allows any. */
  readonly allowOrigins: ReadonlyArray<string>
}

/** Why a request is refused before it reaches a route: the status, the tag of its JSON body, the header at fault. */
export interface Refusal {
  readonly status: 403 | 415
  readonly tag: "Forbidden" | "UnsupportedMediaType"
  readonly field: string
  readonly value: string
  readonly message: string
}

const hostnameOf = (host: string): string | undefined => {
  try {
    const url = new URL(`http://${host}`)
    return url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase()
  } catch {
    return undefined
  }
}

const isIpLiteral = (name: string): boolean => isIP(name) !== 0

/**
 * The `Host` check against DNS rebinding: a page on a name the attacker controls, re-pointed at this machine, sends
 * its name in `Host`. IP literals (a client that connected to the address it names), `localhost`, the bound name and
 * `--allow-host` names pass; no `Host` at all (HTTP/1.0 tools; browsers always send one) passes too.
 */
export const checkHost = (host: string | undefined, policy: NetworkPolicy): Refusal | undefined => {
  if (host === undefined) return undefined
  const name = hostnameOf(host)
  const allowed = name !== undefined && (
    isIpLiteral(name) || name === "localhost" || name === policy.bindHost.toLowerCase() ||
    policy.allowHosts.some((h) => h === "*" || h.toLowerCase() === name)
  )
  return allowed ? undefined : {
    status: 403,
    tag: "Forbidden",
    field: "Host",
    value: host.slice(0, 200),
    message: `requests naming host ${JSON.stringify(host.slice(0, 200))} are refused (a DNS-rebinding guard): start the server with --allow-host ${name ?? "<name>"} if that name is this server's`
  }
}

/** An origin as compared: `scheme://host[:port]` in lower case, or undefined when it is not a URL origin. */
export const normalOrigin = (origin: string): string | undefined => {
  try {
    const url = new URL(origin)
    return url.origin === "null" ? undefined : url.origin.toLowerCase()
  } catch {
    return undefined
  }
}

/**
 * The `Origin` check against cross-site requests: a browser sends `Origin` with every cross-origin request (and every
 * POST), so one from a page of another origin is refused unless `--allow-origin` names it. The server's own pages (an
 * origin whose host is the request's `Host`, e.g. `/docs`) and clients that send no `Origin` pass.
 */
export const checkOrigin = (origin: string | undefined, host: string | undefined, policy: NetworkPolicy): Refusal | undefined => {
  if (origin === undefined) return undefined
  const normal = normalOrigin(origin)
  if (normal !== undefined) {
    if (host !== undefined && new URL(normal).host === host.toLowerCase()) return undefined
    if (policy.allowOrigins.some((o) => o === "*" || o === normal)) return undefined
  }
  return {
    status: 403,
    tag: "Forbidden",
    field: "Origin",
    value: origin.slice(0, 200),
    message: `requests from pages of origin ${JSON.stringify(origin.slice(0, 200))} are refused: start the server with --allow-origin ${normal ?? "<origin>"} to let that page use it`
  }
}

/** Whether a `Content-Type` names JSON (`application/json`, any parameters). */
export const isJsonMediaType = (contentType: string | undefined): boolean =>
  contentType !== undefined && contentType.split(";", 1)[0]!.trim().toLowerCase() === "application/json"

/**
 * The `Content-Type` check: a request with a body must say it is JSON (the only body any route takes, the MCP
 * endpoint's included). A browser can send a form or `text/plain` cross-site without asking first; it cannot send
 * `application/json` without a CORS preflight, which this server answers only for `--allow-origin` origins.
 */
export const checkContentType = (method: string, headers: { readonly [name: string]: string | ReadonlyArray<string> | undefined }): Refusal | undefined => {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return undefined
  const length = headers["content-length"]
  const hasBody = headers["transfer-encoding"] !== undefined || (length !== undefined && String(length) !== "0")
  if (!hasBody) return undefined
  const type = headers["content-type"]
  const given = typeof type === "string" ? type : undefined
  return isJsonMediaType(given) ? undefined : {
    status: 415,
    tag: "UnsupportedMediaType",
    field: "Content-Type",
    value: (given ?? "").slice(0, 200),
    message: `a request body must be JSON sent with Content-Type: application/json (got ${given === undefined ? "no Content-Type" : JSON.stringify(given.slice(0, 200))})`
  }
}

/** The network checks in their order (Host, Origin, Content-Type): the first refusal, or undefined to go on. */
export const admit = (
  method: string,
  headers: { readonly [name: string]: string | ReadonlyArray<string> | undefined },
  policy: NetworkPolicy
): Refusal | undefined => {
  const host = typeof headers["host"] === "string" ? headers["host"] : undefined
  const origin = typeof headers["origin"] === "string" ? headers["origin"] : undefined
  return checkHost(host, policy) ?? checkOrigin(origin, host, policy) ?? checkContentType(method, headers)
}
