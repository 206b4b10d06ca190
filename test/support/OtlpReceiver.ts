/**
 * A loopback OTLP/HTTP collector for tests: a real node:http server (LoopbackServer) answering every export with 200,
 * and a decoder of what arrived (the OTLP/JSON encoding effect's exporter sends) into flat spans.
 */
import { Effect, Schema } from "effect"
import type { Scope } from "effect"
import * as LoopbackServer from "./LoopbackServer.ts"

const AnyValue = Schema.Struct({
  stringValue: Schema.optionalKey(Schema.String),
  intValue: Schema.optionalKey(Schema.Union([Schema.Number, Schema.String])),
  doubleValue: Schema.optionalKey(Schema.Number),
  boolValue: Schema.optionalKey(Schema.Boolean)
})
const KeyValue = Schema.Struct({ key: Schema.String, value: AnyValue })
const OtlpSpan = Schema.Struct({
  traceId: Schema.String,
  spanId: Schema.String,
  parentSpanId: Schema.optionalKey(Schema.String),
  name: Schema.String,
  startTimeUnixNano: Schema.String,
  endTimeUnixNano: Schema.String,
  attributes: Schema.Array(KeyValue),
  links: Schema.Array(Schema.Struct({ traceId: Schema.String, spanId: Schema.String, attributes: Schema.Array(KeyValue) })),
  status: Schema.Struct({ code: Schema.Number, message: Schema.optionalKey(Schema.String) })
})
/** The body of one OTLP/JSON traces export. */
export const TraceData = Schema.Struct({
  resourceSpans: Schema.Array(Schema.Struct({
    resource: Schema.Struct({ attributes: Schema.Array(KeyValue) }),
    scopeSpans: Schema.Array(Schema.Struct({ spans: Schema.Array(OtlpSpan) }))
  }))
})

/** An attribute value as a plain value (an `intValue` string becomes a number). */
type Value = string | number | boolean
const plain = (v: typeof AnyValue.Type): Value =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? ""
const record = (kvs: ReadonlyArray<typeof KeyValue.Type>): Record<string, Value> => Object.fromEntries(kvs.map((kv) => [kv.key, plain(kv.value)]))

/** One received span, flattened. */
export interface ReceivedSpan {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly attributes: Readonly<Record<string, Value>>
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
  readonly status: number
  readonly resource: Readonly<Record<string, Value>>
  readonly durationNs: bigint
}

/** A running collector. */
export interface Receiver {
  /** `http://127.0.0.1:<port>` (its traces path is `/v1/traces`). */
  readonly url: string
  /** Every span received so far, decoded; fails on a body that is not OTLP/JSON traces. */
  readonly spans: Effect.Effect<ReadonlyArray<ReceivedSpan>, Schema.SchemaError>
  /** The raw requests (path, headers, body text). */
  readonly requests: Effect.Effect<ReadonlyArray<LoopbackServer.RecordedRequest>>
}

const decode = Schema.decodeUnknownEffect(TraceData)

/** The spans of one decoded export, flattened. */
const flatten = (data: typeof TraceData.Type): Array<ReceivedSpan> =>
  data.resourceSpans.flatMap((rs) => {
    const resource = record(rs.resource.attributes)
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s): ReceivedSpan => ({
        name: s.name,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId,
        attributes: record(s.attributes),
        links: s.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
        status: s.status.code,
        resource,
        durationNs: BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano)
      }))
    )
  })

/** Starts a collector that accepts every export; it stops when the scope closes. */
export const make: Effect.Effect<Receiver, never, Scope.Scope> = Effect.map(
  LoopbackServer.make({ fallback: LoopbackServer.Reply.json({}) }),
  (server): Receiver => ({
    url: server.url,
    requests: server.requests,
    spans: Effect.flatMap(server.requests, (requests) =>
      Effect.map(
        Effect.forEach(requests.filter((r) => r.url === "/v1/traces"), (r) => Effect.map(decode(r.body), flatten)),
        (lists) => lists.flat()
      ))
  })
)
