/**
 * Tracing helpers for every stage: the detailed spans (rounds, policy turns, calls, searches, judge verdicts) exist
 * only when a tracer that exports is installed, and what goes into an attribute is truncated and has its secrets cut.
 */
import { Effect, Tracer } from "effect"

/**
 * Whether a tracer other than Effect's in-memory default is installed (e.g. `layers/Otlp.ts`). Read it once per
 * rollout: the spans it turns on cost microseconds each, which a rollout without an exporter should not pay.
 */
export const exporting: Effect.Effect<boolean> = Effect.map(Effect.tracer, (tracer) => tracer !== Tracer.nativeTracer)

/** Names of query parameters and headers whose values are secrets (matched case-insensitively, anywhere in the name). */
export const secretName = /key|token|secret|passw|auth|credential|session|cookie|signature|sig$/i

const userinfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi
const secretParameter = /([?&;]([a-z0-9_.-]*)=)([^&#\s"']*)/gi
const scheme = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{4,}/g

/**
 * `text` without credentials: the user-info of any URL, the value of any query parameter with a secret-like name
 * (`api-key`, `token`, `sig`, ...) and `Bearer` / `Basic` credentials become `<redacted>`.
 */
export const redact = (text: string): string =>
  // most attribute values hold none of the characters a secret is marked by: skip the regular expressions
  !text.includes("@") && !text.includes("=") && !text.includes("Bearer") && !text.includes("Basic") ? text : text
    .replace(userinfo, "$1<redacted>@")
    .replace(secretParameter, (whole, prefix: string, name: string) => (secretName.test(name) ? `${prefix}<redacted>` : whole))
    .replace(scheme, "$1 <redacted>")

/** An attribute value from free text: redacted, on one line, at most `max` characters. */
export const text = (value: string, max = 200): string => {
  const line = redact(value).replace(/\s+/g, " ").trim()
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`
}

/** Attributes of a span: what OTLP can carry. */
export type Attributes = Readonly<Record<string, string | number | boolean>>

/**
 * `self` inside a span `name` with `attributes`, and with `after(result)` added once it succeeds; `self` unchanged
 * when `on` is false (see {@link exporting}). No stack trace is captured: these spans sit on hot paths.
 */
export const span = <A, E, R>(
  on: boolean,
  name: string,
  attributes: Attributes,
  self: Effect.Effect<A, E, R>,
  after?: (result: A) => Attributes
): Effect.Effect<A, E, R> => {
  if (!on) return self
  const annotated = after === undefined ? self : Effect.tap(self, (result) => Effect.annotateCurrentSpan(after(result)))
  return Effect.withSpan(annotated, name, { attributes, captureStackTrace: false })
}

/**
 * `self` as the root span of its own trace, linked to the span it was called from, with `after(result)` added once
 * it succeeds (a rollout of a long job: one trace per rollout stays small enough to read; the link leads back).
 */
export const rootSpan = <A, E, R>(
  name: string,
  attributes: Attributes,
  self: Effect.Effect<A, E, R>,
  after?: (result: A) => Attributes
): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.option(Effect.currentParentSpan), (caller) =>
    Effect.withSpan(after === undefined ? self : Effect.tap(self, (result) => Effect.annotateCurrentSpan(after(result))), name, {
      root: true,
      attributes,
      links: caller._tag === "Some" ? [{ span: caller.value, attributes: { "link.kind": "called-from" } }] : [],
      captureStackTrace: false
    }))

/**
 * A URL as it may be shown or stored (a run's `config.json`, a message): userinfo and every query value replaced by
 * `<redacted>` (`https://host/v1?api-key=<redacted>`); text that is not a URL only loses userinfo.
 */
export const redactUrl = (url: string): string => {
  if (!URL.canParse(url)) return url.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi, "$1<redacted>@")
  const parsed = new URL(url)
  if (parsed.username === "" && parsed.password === "" && parsed.search === "") return url
  const query = [...parsed.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=<redacted>`).join("&")
  const auth = parsed.username !== "" || parsed.password !== "" ? "<redacted>@" : ""
  return `${parsed.protocol}//${auth}${parsed.host}${parsed.pathname}${query === "" ? "" : `?${query}`}${parsed.hash}`
}
