/**
 * Traces over OTLP/HTTP for every program: the `--otlp <url>` global flag, the tracer layer (effect/observability,
 * JSON encoding) with secret-redacting span attributes, and the hand-over of the endpoint and the parent span to a
 * worker thread so its spans reach the same collector under the same trace.
 */
import { Context, Duration, Effect, Layer, Option, Result, Tracer } from "effect"
import { CliError, Command, Flag, GlobalFlag } from "effect/cli"
import { FetchHttpClient, Headers, UrlParams } from "effect/http"
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"
import type { OtlpResource } from "effect/observability"
import * as Telemetry from "../src/io/Telemetry.ts"

/** Where traces go: a decoded `--otlp` value. */
export interface Endpoint {
  /** The traces URL posted to: user-info removed, `/v1/traces` added to a base URL. */
  readonly url: string
  /** Headers of every export (`authorization` from the URL's user-info). Never logged, never in a span. */
  readonly headers: Readonly<Record<string, string>>
  /** The URL as it may be shown: no user-info, no query. */
  readonly shown: string
}

/** The OTLP/HTTP path of traces below a collector's base URL. */
export const tracesPath = "/v1/traces"

/**
 * Decodes a collector URL: http or https; a base URL (`http://127.0.0.1:4318`, or with a path prefix) gets
 * `/v1/traces` added, a URL already ending in it is kept; `user:password@` becomes a Basic `authorization` header
 * (fetch refuses URLs with credentials); a `#fragment` is dropped. The failure says what is wrong, without the value.
 */
export const parse = (text: string): Result.Result<Endpoint, string> => {
  const trimmed = text.trim()
  if (trimmed === "" || !URL.canParse(trimmed)) return Result.fail("an absolute http(s) URL such as http://127.0.0.1:4318")
  const url = new URL(trimmed)
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Result.fail(`an http(s) URL (OTLP/HTTP), not ${url.protocol.slice(0, -1)}:`)
  }
  if (url.hostname === "") return Result.fail("a URL with a host")
  const headers: Record<string, string> = {}
  if (url.username !== "" || url.password !== "") {
    const user = decodeURIComponent(url.username)
    const password = decodeURIComponent(url.password)
    headers["authorization"] = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`
    url.username = ""
    url.password = ""
  }
  url.hash = ""
  const path = url.pathname.replace(/\/+$/, "")
  url.pathname = path.endsWith(tracesPath) ? path : `${path}${tracesPath}`
  return Result.succeed({ url: url.href, headers, shown: `${url.origin}${url.pathname}` })
}

/** The `--otlp` flag: optional, decoded by {@link parse}; a bad value is one line naming the flag (value redacted). */
export const urlFlag: Flag.Flag<Option.Option<Endpoint>> = Flag.String("otlp").pipe(
  Flag.withDescription("export traces over OTLP/HTTP (JSON) to this collector, e.g. http://127.0.0.1:4318 (/v1/traces is added to a base URL; user:password@ becomes Basic auth)"),
  Flag.mapEffect((text) => {
    const decoded = parse(text)
    return Result.isSuccess(decoded)
      ? Effect.succeed(decoded.success)
      : Effect.fail(new CliError.InvalidValue({ option: "otlp", value: Telemetry.redact(text), expected: decoded.failure, kind: "flag" }))
  }),
  Flag.optional
)

/** `--otlp` as a global setting: accepted before or after any subcommand, read by {@link traced}. */
export const flag = GlobalFlag.Setting("otlp")({ flag: urlFlag })

/** What the running process exports to, for code that hands tracing on (worker threads). */
export interface Exporting {
  readonly endpoint: Endpoint
  /** The program's name: the `paraagent.program` resource attribute. */
  readonly program: string
}

/** The export of this fiber's program, when `--otlp` was given. */
export const CurrentExport = Context.Reference<Option.Option<Exporting>>("paraagent/Otlp/CurrentExport", {
  defaultValue: () => Option.none()
})

/** Where the tracer layer runs, as resource attributes. */
export interface LayerOptions {
  readonly program: string
  /** A worker thread's role (its spans carry `paraagent.thread`). */
  readonly thread?: string
  /** How often buffered spans are posted (default 5 s; the rest is posted when the layer closes). */
  readonly exportInterval?: Duration.Input
}

type OtlpSpan = OtlpTracer.ScopeSpan["spans"][number]

const redactValue = (value: OtlpResource.AnyValue): OtlpResource.AnyValue =>
  typeof value.stringValue === "string"
    ? { ...value, stringValue: Telemetry.redact(value.stringValue) }
    : value.arrayValue !== undefined
    ? { ...value, arrayValue: { values: value.arrayValue.values.map(redactValue) } }
    : value.kvlistValue !== undefined
    ? { ...value, kvlistValue: { values: redactAttributes(value.kvlistValue.values) } }
    : value
const redactAttributes = (attributes: Array<OtlpResource.KeyValue>): Array<OtlpResource.KeyValue> =>
  attributes.map((kv) => ({ key: kv.key, value: redactValue(kv.value) }))
const redactSpan = (span: OtlpSpan): OtlpSpan => ({
  ...span,
  attributes: redactAttributes(span.attributes),
  events: span.events.map((e) => ({ ...e, attributes: redactAttributes(e.attributes) })),
  status: span.status.message === undefined ? span.status : { ...span.status, message: Telemetry.redact(span.status.message) }
})

/**
 * OTLP/JSON with every string of every span redacted on its way out (`Telemetry.redact`): attributes, events and
 * status. Spans of failures carry the failure's message and stack, causes included, and a transport error's cause
 * may spell out a URL with its credentials (undici's does).
 */
export const serialization: Layer.Layer<OtlpSerialization.OtlpSerialization> = Layer.effect(
  OtlpSerialization.OtlpSerialization,
  Effect.map(OtlpSerialization.OtlpSerialization, (json) =>
    OtlpSerialization.OtlpSerialization.of({
      ...json,
      traces: (data) =>
        json.traces({
          resourceSpans: data.resourceSpans.map((rs) => ({
            ...rs,
            scopeSpans: rs.scopeSpans.map((ss) => ({ ...ss, spans: ss.spans.map(redactSpan) }))
          }))
        })
    }))
).pipe(Layer.provide(OtlpSerialization.layerJson))

const redactedQueryNames = [...UrlParams.CurrentRedactedNames.defaultValue(), Telemetry.secretName]
const redactedHeaderNames = [...Headers.CurrentRedactedNames.defaultValue(), Telemetry.secretName]

/**
 * The tracer layer: spans of everything run under it are batched and posted to `endpoint` as OTLP/JSON, and the
 * rest are posted when the layer closes (a collector that is down costs at most the 3 s shutdown timeout and is
 * otherwise silent; `--log-level debug` shows the exporter's errors). HTTP client and server spans redact query
 * parameters and headers with secret-like names. Its `Flusher` posts on demand; with no endpoint it flushes nothing
 * and no tracer is installed.
 */
export const layer = (endpoint: Option.Option<Endpoint> | Endpoint, options: LayerOptions): Layer.Layer<OtlpExporter.Flusher> => {
  const target = Option.isOption(endpoint) ? endpoint : Option.some(endpoint)
  if (Option.isNone(target)) return OtlpExporter.layerFlusher
  const tracer = OtlpTracer.layer({
    url: target.value.url,
    headers: target.value.headers,
    resource: {
      serviceName: "paraagent",
      attributes: { "paraagent.program": options.program, ...(options.thread !== undefined ? { "paraagent.thread": options.thread } : {}) }
    },
    ...(options.exportInterval !== undefined ? { exportInterval: options.exportInterval } : {})
  }).pipe(Layer.provide([serialization, FetchHttpClient.layer]))
  return Layer.mergeAll(
    tracer,
    Layer.succeed(CurrentExport, Option.some({ endpoint: target.value, program: options.program })),
    Layer.succeed(UrlParams.CurrentRedactedNames, redactedQueryNames),
    Layer.succeed(Headers.CurrentRedactedNames, redactedHeaderNames)
  )
}

/** The tracer layer of the `--otlp` flag's value (see {@link flag}). */
export const layerFromFlag = (program: string) => Layer.unwrap(Effect.map(flag, (endpoint) => layer(endpoint, { program })))

/**
 * A program's one line: `command.pipe(Otlp.traced("compare"), Cli.run("compare", ...))` adds `--otlp <url>` to the
 * command and all its subcommands, and runs the handler under the tracer layer when it is given.
 */
export const traced = (program: string) =>
<const Name extends string, Input, ContextInput, E, R>(command: Command.Command<Name, Input, ContextInput, E, R>) =>
  command.pipe(Command.provide(layerFromFlag(program)), Command.withGlobalFlags([flag]))

/** What a worker thread needs to export into the same trace: structured-clonable. */
export interface Carrier {
  readonly endpoint: Endpoint
  readonly program: string
  readonly parent?: { readonly traceId: string; readonly spanId: string; readonly sampled: boolean }
}

/** The carrier for a worker started from here: the export and the current span; undefined when not exporting. */
export const carrier: Effect.Effect<Carrier | undefined> = Effect.gen(function*() {
  const current = yield* CurrentExport
  if (Option.isNone(current)) return undefined
  const parent = yield* Effect.option(Effect.currentParentSpan)
  return {
    endpoint: current.value.endpoint,
    program: current.value.program,
    ...(Option.isSome(parent) ? { parent: { traceId: parent.value.traceId, spanId: parent.value.spanId, sampled: parent.value.sampled } } : {})
  }
})

/**
 * Runs a worker thread's program under the tracer layer of `carrier`, its spans children of the span that started
 * the worker; `self` unchanged without a carrier. The layer closes (and posts what is left) when `self` ends, so a
 * worker that answers afterwards has exported everything.
 */
export const inWorker = (carrier: Carrier | undefined, thread: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  if (carrier === undefined) return self
  const parented = carrier.parent === undefined ? self : Effect.withParentSpan(self, Tracer.externalSpan(carrier.parent))
  return Effect.provide(parented, layer(carrier.endpoint, { program: carrier.program, thread }))
}
