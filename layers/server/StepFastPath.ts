/**
 * The hot route of the ToolEnv server, `POST /sessions/{id}/step`, answered at the node level: the same guard (Host,
 * Origin, Content-Type, bearer token, body size, nesting depth), the same client key, the same `StepRequest` schema
 * and the same `Sessions.step`, without the router, the middleware stack and the handler's fiber plumbing. Anything it
 * does not serve itself reaches the framework.
 */
import { Cause, Effect, Exit, Fiber, Metric, Schema, SchemaAST } from "effect"
import type { Context, Scope } from "effect"
import { IncomingMessage, Server } from "node:http"
import type { ServerResponse } from "node:http"
import { InvalidRequest, NotFound, StepConflict, StepRequest, StoreFailure, WrongWorld } from "../../src/service/Api.ts"
import * as Guard from "../../src/service/Guard.ts"
import * as Metrics from "../../src/service/ServiceMetrics.ts"
import type { SessionFailure, Sessions } from "../../src/service/Sessions.ts"

/** What the fast path needs from the server's options. */
export interface FastPathOptions {
  readonly token?: string
  /** The network checks of the framework's guard (Host, Origin, Content-Type). */
  readonly network: Guard.NetworkPolicy
  readonly maxBody: number
  readonly maxDepth: number
}

/** Answers a request and returns true, or returns false having read nothing (the framework then serves it). */
export type FastHandler = (request: IncomingMessage, response: ServerResponse) => boolean

/**
 * Node's HTTP server with a slot for the fast path: a `request` event goes to the installed handler first, and on to
 * the framework's listener when the handler declines it (or none is installed yet).
 */
export class FastPathServer extends Server {
  /** The installed handler; undefined until the server's services are built. */
  fast: FastHandler | undefined = undefined

  /** Hands a request to the framework's listener, past the fast path. */
  serveByFramework(request: IncomingMessage, response: ServerResponse): void {
    super.emit("request", request, response)
  }

  override emit(event: string, ...args: Array<unknown>): boolean {
    if (event === "request" && this.fast !== undefined && this.fast(args[0] as IncomingMessage, args[1] as ServerResponse)) return true
    return super.emit(event, ...args)
  }
}

/** Ids the router would hand to the handler unchanged (no percent-escapes to decode). */
const plainStepPath = /^\/sessions\/([A-Za-z0-9._~-]{1,200})\/step$/

const textDecoder = new TextDecoder()

/** The errors `Sessions.step` refuses with, as the endpoint declares them (status from each class's `httpApiStatus`). */
const failures = [InvalidRequest, NotFound, StepConflict, WrongWorld, StoreFailure] as const
const statusOf = new Map<string, number>(failures.map((e) => [e.identifier, Number(SchemaAST.resolve(e.ast)?.["httpApiStatus"])]))
const encodeFailure = Schema.encodeSync(Schema.Union(failures))

/** A JSON body, or undefined when the text is not JSON (the framework then answers with its own 400). */
const parseJson = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

/**
 * A request whose body was read here, handed to the framework as Node would have: same socket, method, URL, headers
 * and bytes, so its answer (a schema problem, a 413, a malformed body) is the framework's own.
 */
export const replayed = (request: IncomingMessage, body: Buffer): IncomingMessage => {
  const copy = new IncomingMessage(request.socket)
  copy.method = request.method as string
  copy.url = request.url as string
  copy.headers = request.headers
  copy.rawHeaders = request.rawHeaders
  copy.httpVersionMajor = request.httpVersionMajor
  copy.httpVersionMinor = request.httpVersionMinor
  copy.httpVersion = request.httpVersion
  copy.push(body)
  copy.push(null)
  copy.complete = true
  return copy
}

const writeJson = (response: ServerResponse, status: number, text: string): void => {
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

/**
 * The fast path over the server's Sessions, running each step in `context` (the services the framework's handlers
 * run in) as a fiber of `scope` (closing it interrupts steps in flight, as the server's scope does the framework's);
 * `framework` gets the requests it replays. Install it only under the native tracer (no exporter): with one, every
 * request keeps the framework's server span.
 */
export const make = (
  options: FastPathOptions,
  sessions: Sessions["Service"],
  context: Context.Context<never>,
  scope: Scope.Scope,
  framework: (request: IncomingMessage, response: ServerResponse) => void
): FastHandler => {
  const check = options.token === undefined ? undefined : Guard.tokenCheck(options.token)
  const decode = Schema.decodeUnknownExit(StepRequest)
  const run = Effect.runForkWith(context)

  const step = (id: string, owner: string, payload: StepRequest, response: ServerResponse) => {
    const fiber = Fiber.runIn(run(Metric.update(Metrics.fastPathSteps, 1).pipe(
      Effect.andThen(sessions.step(id, owner, payload)),
      Effect.tapError((e: SessionFailure) => Metrics.countError(e._tag)),
      // a defect is a bare 500, as the framework answers it, and logged as it logs it (a store failure is a typed 500)
      Effect.tapDefect((defect) => Effect.logError("POST /sessions/{id}/step failed", defect))
    )), scope)
    fiber.addObserver((exit) => {
      if (response.writableEnded || response.destroyed) return
      if (Exit.isSuccess(exit)) return writeJson(response, 200, JSON.stringify(exit.value))
      const failure = Cause.findErrorOption(exit.cause)
      if (failure._tag === "Some") return writeJson(response, statusOf.get(failure.value._tag) ?? 500, JSON.stringify(encodeFailure(failure.value)))
      response.writeHead(500, { "content-length": 0 })
      response.end()
    })
    if (fiber.pollUnsafe() === undefined) {
      response.on("close", () => {
        if (!response.writableEnded) fiber.interruptUnsafe()
      })
    }
  }

  return (request, response) => {
    if (request.method !== "POST") return false
    const matched = plainStepPath.exec(request.url ?? "")
    if (matched === null) return false
    const headers = request.headers
    // a page's request (any Origin: the framework adds CORS answers) and anything the network checks refuse go to
    // the framework, which answers them
    if (headers["origin"] !== undefined || Guard.admit("POST", headers, options.network) !== undefined) return false
    if (check !== undefined && !check(headers)) return false
    if (headers["content-type"] !== "application/json") return false
    const declared = headers["content-length"]
    if (declared === undefined || !(Number(declared) <= options.maxBody)) return false
    const id = matched[1] as string
    const key = headers[Guard.clientKeyHeader]
    const owner = typeof key === "string" && Guard.isClientKey(key) ? Guard.ownerOf(key) : Guard.noOwner
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks)
      const text = textDecoder.decode(body)
      const json = text === "" || Guard.nestingDepth(text, options.maxDepth) > options.maxDepth ? undefined : parseJson(text)
      const decoded = json === undefined ? undefined : decode(json.value)
      if (decoded === undefined || Exit.isFailure(decoded)) return framework(replayed(request, body), response)
      step(id, owner, decoded.value, response)
    })
    return true
  }
}
