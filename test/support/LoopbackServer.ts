/**
 * A real HTTP server on 127.0.0.1 (ephemeral port) that replays scripted replies and records what it received.
 * Tests of HTTP clients (the OpenAI layer, the simulator's LLM renderer) run against it as a scoped resource.
 */
import { Effect, Option, Schema } from "effect"
import type { Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"

/** What the server does with one request. */
export type Reply =
  /** Answer `status` with `body` serialised as JSON. */
  | { readonly _tag: "json"; readonly status: number; readonly body: unknown; readonly headers: Readonly<Record<string, string>>; readonly delayMs: number }
  /** Answer `status` with `body` verbatim (malformed JSON, plain text, HTML error pages). */
  | { readonly _tag: "text"; readonly status: number; readonly body: string; readonly headers: Readonly<Record<string, string>>; readonly delayMs: number }
  /** Destroy the connection without answering (the client sees a reset / socket hang-up). */
  | { readonly _tag: "reset"; readonly delayMs: number }
  /** Answer `status` with raw bytes streamed from `chunks` with back-pressure (huge or compressed bodies); chunked unless a content-length header is given. */
  | {
    readonly _tag: "bytes"
    readonly status: number
    readonly chunks: () => Iterable<Uint8Array> | AsyncIterable<Uint8Array>
    readonly headers: Readonly<Record<string, string>>
    readonly delayMs: number
  }

/** Options shared by the reply builders. */
export interface ReplyOptions {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  /** Wait this long before answering (a slow server). */
  readonly delayMs?: number
}

/** Builders for {@link Reply}. */
export const Reply = {
  /** A JSON body (status 200 unless given). */
  json: (body: unknown, options: ReplyOptions = {}): Reply => ({
    _tag: "json",
    status: options.status ?? 200,
    body,
    headers: options.headers ?? {},
    delayMs: options.delayMs ?? 0
  }),
  /** A raw body, sent as is: use it for malformed JSON. */
  text: (body: string, options: ReplyOptions = {}): Reply => ({
    _tag: "text",
    status: options.status ?? 200,
    body,
    headers: { "content-type": "application/json", ...options.headers },
    delayMs: options.delayMs ?? 0
  }),
  /** An error status with an OpenAI-style error body; `retryAfter` sets the `Retry-After` header (seconds). */
  status: (status: number, options: { readonly retryAfter?: number | string; readonly delayMs?: number; readonly message?: string } = {}): Reply => ({
    _tag: "json",
    status,
    body: { error: { message: options.message ?? `scripted ${status}`, type: "scripted", code: status } },
    headers: options.retryAfter === undefined ? {} : { "retry-after": String(options.retryAfter) },
    delayMs: options.delayMs ?? 0
  }),
  /** Raw bytes, streamed as `chunks` yields them (e.g. 50 MB of junk, or a gzip body with `content-encoding: gzip`). */
  bytes: (chunks: () => Iterable<Uint8Array> | AsyncIterable<Uint8Array>, options: ReplyOptions = {}): Reply => ({
    _tag: "bytes",
    status: options.status ?? 200,
    chunks,
    headers: { "content-type": "application/json", ...options.headers },
    delayMs: options.delayMs ?? 0
  }),
  /** Close the connection without an answer. */
  reset: (options: { readonly delayMs?: number } = {}): Reply => ({ _tag: "reset", delayMs: options.delayMs ?? 0 }),
  /** The same reply, sent after `delayMs`. */
  delayed: (reply: Reply, delayMs: number): Reply => ({ ...reply, delayMs })
} as const

/** One request the server received, with its timing (ms on the server's monotonic clock, `performance.now()`). */
export interface RecordedRequest {
  /** 0-based arrival order. */
  readonly index: number
  readonly method: string
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly url: string
  /** Header names lower-cased; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>
  readonly bodyText: string
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly body: unknown
  /** When the whole request body had arrived. */
  readonly receivedAt: number
  /** When the reply was written (or the connection reset); undefined when the client went away first. */
  readonly repliedAt: number | undefined
  /** When the client closed the connection before a reply was written (e.g. its timeout fired). */
  readonly abortedAt: number | undefined
  /** What the server answered (or was going to answer). */
  readonly reply: Reply
}

/** A reply, or a function of the request that picks one. */
export type Responder = Reply | ((request: RecordedRequest) => Reply)

/** A reply given whenever `match` accepts the request, checked before the ordered script; `times` limits its use. */
export interface Route {
  readonly match: (request: { readonly method: string; readonly url: string; readonly body: unknown; readonly headers: Readonly<Record<string, string>> }) => boolean
  readonly reply: Responder
  readonly times?: number
}

/** How the server answers: routes first (in order), then the ordered script, then `fallback`. */
export interface Script {
  readonly routes?: ReadonlyArray<Route>
  /** Replies consumed one per request, in order. */
  readonly replies?: ReadonlyArray<Responder>
  /** When no route matches and the script is exhausted (default: a 500 naming the request index). */
  readonly fallback?: Responder
}

/** A running loopback server. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly port: number
  /** The requests received so far, in arrival order. */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** Appends replies to the ordered script. */
  readonly push: (...replies: ReadonlyArray<Responder>) => Effect.Effect<void>
  /** The same as `requests`, readable outside Effect (e.g. from a simulator callback). */
  readonly requestsUnsafe: () => ReadonlyArray<RecordedRequest>
  /** Waits until request `index` has arrived and was answered or abandoned by its client (an event, not a delay). */
  readonly settled: (index: number) => Effect.Effect<RecordedRequest>
}

interface MutableRecord {
  index: number
  method: string
  url: string
  headers: Record<string, string>
  bodyText: string
  body: unknown
  receivedAt: number
  repliedAt: number | undefined
  abortedAt: number | undefined
  reply: Reply
}

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Unknown))

const parseJson = (text: string): unknown => Option.getOrUndefined(decodeJson(text))

const headerRecord = (raw: http.IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

const resolve = (responder: Responder, request: RecordedRequest): Reply =>
  typeof responder === "function" ? responder(request) : responder

/**
 * Starts a server that answers with `script`; it stops (closing every open connection and pending delay)
 * when the scope closes.
 */
export const make = (script: Script = {}): Effect.Effect<LoopbackServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: http.Server; readonly api: LoopbackServer; readonly timers: Set<NodeJS.Timeout> }>((resume) => {
      const recorded: Array<MutableRecord> = []
      const queue: Array<Responder> = [...(script.replies ?? [])]
      const routeUses = (script.routes ?? []).map(() => 0)
      const timers = new Set<NodeJS.Timeout>()

      const choose = (request: RecordedRequest): Reply => {
        const routes = script.routes ?? []
        for (let i = 0; i < routes.length; i++) {
          const route = routes[i]
          if (route === undefined) continue
          const used = routeUses[i] ?? 0
          if (route.times !== undefined && used >= route.times) continue
          if (route.match(request)) {
            routeUses[i] = used + 1
            return resolve(route.reply, request)
          }
        }
        const next = queue.shift()
        if (next !== undefined) return resolve(next, request)
        return script.fallback !== undefined
          ? resolve(script.fallback, request)
          : Reply.status(500, { message: `loopback script exhausted at request ${request.index}` })
      }

      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const bodyText = Buffer.concat(chunks).toString("utf8")
          const record: MutableRecord = {
            index: recorded.length,
            method: req.method ?? "GET",
            url: req.url ?? "/",
            headers: headerRecord(req.headers),
            bodyText,
            body: parseJson(bodyText),
            receivedAt: performance.now(),
            repliedAt: undefined,
            abortedAt: undefined,
            reply: Reply.reset()
          }
          recorded.push(record)
          const reply = choose(record)
          record.reply = reply
          // The response's close event fires when the socket goes away; before a reply that is a client abort.
          res.on("close", () => {
            if (record.repliedAt === undefined && record.abortedAt === undefined) record.abortedAt = performance.now()
          })
          const send = (): void => {
            if (record.abortedAt !== undefined) return
            record.repliedAt = performance.now()
            if (reply._tag === "reset") {
              req.socket.destroy()
              return
            }
            if (reply._tag === "bytes") {
              res.writeHead(reply.status, reply.headers)
              const body = Readable.from(reply.chunks(), { objectMode: false })
              // A client that stops reading (its size cap) closes the socket: stop producing.
              res.on("close", () => body.destroy())
              body.on("error", () => res.destroy())
              body.pipe(res)
              return
            }
            const payload = reply._tag === "json" ? JSON.stringify(reply.body) : reply.body
            res.writeHead(reply.status, {
              "content-type": "application/json",
              "content-length": String(Buffer.byteLength(payload)),
              ...reply.headers
            })
            res.end(payload)
          }
          if (reply.delayMs <= 0) {
            send()
          } else {
            const timer = setTimeout(() => {
              timers.delete(timer)
              send()
            }, reply.delayMs)
            timers.add(timer)
          }
        })
      })

      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        const snapshot = (): ReadonlyArray<RecordedRequest> => recorded.map((r) => ({ ...r }))
        const api: LoopbackServer = {
          url: `http://127.0.0.1:${port}`,
          port,
          requests: Effect.sync(snapshot),
          requestsUnsafe: snapshot,
          settled: (index) =>
            Effect.gen(function*() {
              // polled: the server's close and reply events are plain callbacks outside any fiber
              for (;;) {
                const r = recorded[index]
                if (r !== undefined && (r.repliedAt !== undefined || r.abortedAt !== undefined)) return { ...r }
                yield* Effect.sleep(10)
              }
            }),
          push: (...replies) =>
            Effect.sync(() => {
              queue.push(...replies)
            })
        }
        resume(Effect.succeed({ server, api, timers }))
      })
    }),
    ({ server, timers }) =>
      Effect.callback<void>((resume) => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  ).pipe(Effect.map(({ api }) => api))

/** `LoopbackServer.make(script)`: the constructor under the interface's name. */
export const LoopbackServer = { make } as const
