/**
 * The ToolEnv HTTP server: the API of src/service over the generated world (or a ToolBench folder), a retriever, the
 * rule judge and a session store (memory, a shared SQLite file, or PostgreSQL), served by Node's http with the guard in front
 * (bearer token, body size, nesting depth), OpenAPI at /openapi.json, docs at /docs and Prometheus at /metrics.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, Schedule, Scope, Tracer } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiMiddleware, HttpApiScalar } from "effect/http-api"
import { PrometheusMetrics } from "effect/observability"
import { createHash } from "node:crypto"
import * as path from "node:path"
import * as JudgeRule from "../../src/judge/RuleJudge.ts"
import * as Simulator from "../../src/toolenv/Simulator.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import { ToolEnvApi } from "../../src/service/Api.ts"
import * as Guard from "../../src/service/Guard.ts"
import * as Handlers from "../../src/service/Handlers.ts"
import { Readiness } from "../../src/service/Readiness.ts"
import * as Metrics from "../../src/service/ServiceMetrics.ts"
import * as OrsRoutes from "../../src/service/OrsRoutes.ts"
import * as SessionStore from "../../src/service/SessionStore.ts"
import * as Sessions from "../../src/service/Sessions.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import * as ToolLibraryModule from "../../src/toolenv/ToolLibrary.ts"
import * as World from "../../src/toolenv/world/World.ts"
import * as McpEnvironment from "./McpEnvironment.ts"
import * as McpHttp from "./McpHttp.ts"
import * as RetrieverOnnx from "../onnx/RetrieverOnnx.ts"
import * as ServerFront from "./ServerFront.ts"
import * as SessionStorePostgres from "../storage/SessionStorePostgres.ts"
import * as SessionStoreSqlite from "../storage/SessionStoreSqlite.ts"
import * as StepFastPath from "./StepFastPath.ts"
import * as WorkerCluster from "./WorkerCluster.ts"

/** Which retriever sessions search with (BM25 is always loaded for `/tools/search`). */
export type RetrieverChoice = "bm25" | "dense" | "hybrid"

/** Everything the server is built from. */
export interface ServerOptions {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  /** `generated` (seeded world) or a ToolBench folder. */
  readonly library: "generated" | { readonly dir: string }
  readonly worldSeed: number
  readonly worldSize: number
  /** Bearer token required on every route but `/health`; absent: no auth. */
  readonly token?: string
  /**
   * Host names a request may name in `Host` besides IP literals, `localhost` and `host` (`--allow-host`; `*`: any):
   * anything else is a 403, so a DNS-rebound name cannot reach the server.
   */
  readonly allowHosts?: ReadonlyArray<string>
  /** Origins whose pages may use the server (`--allow-origin`; `*`: any); other pages' requests are a 403. */
  readonly allowOrigins?: ReadonlyArray<string>
  /** A SQLite file shared by replicas; absent: the log lives in this process's memory. */
  readonly store?: string
  /** Byte bounds of the memory store (when there is no `store`); default 256 MiB of sessions, 64 MiB of posted tasks. */
  readonly memoryStore?: SessionStore.MemoryOptions
  /** Under `--workers N`: this worker's place (layers/server/WorkerCluster.ts); absent: a single process. */
  readonly worker?: WorkerCluster.WorkerPlace
  /** With a `postgres://` store: the schema of its tables (default `toolenv`) and this replica's pool size (default 8). */
  readonly postgres?: { readonly schema?: string; readonly pool?: number }
  readonly retriever: RetrieverChoice
  /** Largest request body, bytes. */
  readonly maxBody: number
  /** Deepest JSON nesting a body may have. */
  readonly maxDepth: number
  readonly sessions: Omit<Sessions.SessionsConfig, "world">
  /**
   * Task draws of the generated world on a worker thread (layers/server/TaskSourceWorker.ts), so a long draw never stalls the
   * other clients; `npm run serve` turns it on. Off (the default here): draws run on the server's thread in slices.
   */
  readonly drawWorker?: boolean
  /** More routes on the same server. */
  readonly routes?: Layer.Layer<never, never, HttpRouter.HttpRouter>
  /** The Open Reward Standard routes (src/service/OrsRoutes.ts) beside the native API; false: not served. */
  readonly ors?: boolean
  /** The MCP endpoint (streamable HTTP, layers/server/McpHttp.ts) at `/mcp`, behind the same bearer auth; false: not served. */
  readonly mcp?: boolean
  /**
   * `POST /sessions/{id}/step` answered at the node level (layers/server/StepFastPath.ts) when no exporting tracer is set;
   * false: every step through the framework's router (tests compare the two answers).
   */
  readonly stepFastPath?: boolean
}

/** Defaults: loopback, a free port, the generated world (seed 7, 50,011 tools), no token, memory store, BM25. */
export const defaultOptions: ServerOptions = {
  host: "127.0.0.1",
  port: 0,
  library: "generated",
  worldSeed: World.defaultSeed,
  worldSize: 50_011,
  retriever: "bm25",
  maxBody: 1024 * 1024,
  maxDepth: 64,
  sessions: (({ world: _, ...rest }) => rest)(Sessions.defaultConfig(""))
}

/** The id of the world the options build: sessions name it, and a replica of another world refuses them. */
export const worldId = (options: ServerOptions, library?: ToolLibraryModule.Library): string => {
  if (options.library === "generated") return `generated:seed=${options.worldSeed}:size=${options.worldSize}`
  const digest = createHash("sha256")
  for (const t of library?.tools ?? []) digest.update(`${t.name}\u0000${t.id}\n`)
  return `library:${path.resolve(options.library.dir)}:${digest.digest("hex").slice(0, 16)}`
}

const problem = (status: number, body: Record<string, unknown>) => HttpServerResponse.jsonUnsafe(body, { status })

/** The network policy of the options (`--host`, `--allow-host`, `--allow-origin`). */
export const networkPolicy = (options: Pick<ServerOptions, "host" | "allowHosts" | "allowOrigins">): Guard.NetworkPolicy => ({
  bindHost: options.host,
  allowHosts: options.allowHosts ?? [],
  allowOrigins: (options.allowOrigins ?? []).map((o) => (o === "*" ? o : Guard.normalOrigin(o) ?? o))
})

/** The CORS answer for a page of an allowed origin: it may read the answers and send JSON with the client headers. */
const corsHeaders = (origin: string): Record<string, string> => ({
  "access-control-allow-origin": origin,
  "access-control-allow-methods": "GET, POST, DELETE",
  "access-control-allow-headers": "authorization, content-type, x-client-key, mcp-session-id, mcp-protocol-version, last-event-id",
  "access-control-expose-headers": "mcp-session-id",
  "access-control-max-age": "600",
  vary: "Origin"
})

/**
 * The guard in front of every route: the network checks (Host against DNS rebinding, Origin against other sites'
 * pages, a JSON Content-Type for every body), the token (all but /health), body size and nesting depth; CORS
 * answers for pages of `--allow-origin` origins only.
 */
const guard = (options: ServerOptions) => {
  const check = options.token === undefined ? undefined : Guard.tokenCheck(options.token)
  const policy = networkPolicy(options)
  return HttpRouter.middleware((app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const refused = Guard.admit(request.method, request.headers, policy)
      if (refused !== undefined) {
        yield* Metrics.countError(refused.tag)
        return problem(refused.status, { _tag: refused.tag, field: refused.field, value: refused.value, message: refused.message })
      }
      // a page of an allowed other origin (the Origin check passed, and it is not this server's own)
      const origin = request.headers["origin"]
      const host = request.headers["host"]
      const cors = origin !== undefined && (host === undefined || Guard.normalOrigin(origin) === undefined || new URL(origin).host !== host.toLowerCase())
        ? corsHeaders(origin)
        : undefined
      if (cors !== undefined && request.method === "OPTIONS") return HttpServerResponse.empty({ status: 204, headers: cors })
      const answer = yield* guarded(request, app)
      return cors === undefined ? answer : HttpServerResponse.setHeaders(answer, cors)
    }), { global: true })

  function guarded<E, R>(request: HttpServerRequest.HttpServerRequest, app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) {
    return Effect.gen(function*() {
      const url = request.url
      const pathname = url.split("?", 1)[0]
      if (check !== undefined && pathname !== "/health" && !check(request.headers)) {
        yield* Metrics.countError("Unauthorized")
        return problem(401, { _tag: "Unauthorized", message: "a bearer token is required: Authorization: Bearer <token>" })
      }
      if (request.method === "POST" || request.method === "PUT" || request.method === "PATCH") {
        const declared = Number(request.headers["content-length"] ?? "0")
        if (declared > options.maxBody) {
          yield* Metrics.countError("PayloadTooLarge")
          return problem(413, { _tag: "PayloadTooLarge", field: "body", limit: options.maxBody, message: `request body of ${declared} bytes is over the limit of ${options.maxBody} (--max-body)` })
        }
        const text = yield* request.text.pipe(Effect.provideService(HttpServerRequest.MaxBodySize, options.maxBody as never), Effect.option)
        if (text._tag === "None") {
          yield* Metrics.countError("PayloadTooLarge")
          return problem(413, { _tag: "PayloadTooLarge", field: "body", limit: options.maxBody, message: `request body unreadable or over the limit of ${options.maxBody} bytes (--max-body)` })
        }
        const depth = Guard.nestingDepth(text.value, options.maxDepth)
        if (depth > options.maxDepth) {
          yield* Metrics.countError("PayloadTooLarge")
          return problem(413, { _tag: "PayloadTooLarge", field: "body", limit: options.maxDepth, message: `JSON nested more than ${options.maxDepth} levels deep` })
        }
        // MCP's streamable HTTP: a body the server cannot accept is an HTTP error status (the JSON-RPC error inside)
        if (pathname === McpHttp.defaultPath && options.mcp !== false) {
          const refused = jsonRpcRefusal(text.value)
          if (refused !== undefined) {
            yield* Metrics.countError("InvalidRequest")
            return HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", id: null, error: refused }, { status: 400 })
          }
        }
      }
      return yield* app
    })
  }
}

const isJsonRpcMessage = (value: unknown): boolean =>
  typeof value === "object" && value !== null && !Array.isArray(value) && (value as { jsonrpc?: unknown }).jsonrpc === "2.0" &&
  (typeof (value as { method?: unknown }).method === "string" || "result" in value || "error" in value)

/**
 * The JSON-RPC error of a body MCP cannot accept — not JSON (-32700), or neither a JSON-RPC message nor a non-empty
 * batch of them (-32600) — or undefined for a body to hand to the MCP server. (Its own answer to these is a 200.)
 */
const jsonRpcRefusal = (text: string): { readonly code: number; readonly message: string } | undefined => {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch (e) {
    return { code: -32700, message: `Parse error: ${e instanceof Error ? e.message : String(e)}` }
  }
  const ok = Array.isArray(body) ? body.length > 0 && body.every(isJsonRpcMessage) : isJsonRpcMessage(body)
  return ok ? undefined : { code: -32600, message: "Invalid Request: not a JSON-RPC 2.0 message (jsonrpc \"2.0\" and a method, result or error)" }
}

/** The library, world and task source the options name (McpEnvironment's builder, shared with the MCP server). */
const environment = (options: ServerOptions) =>
  options.library === "generated"
    ? McpEnvironment.generatedWorld({ seed: options.worldSeed, size: options.worldSize }, { drawWorker: options.drawWorker === true })
    : McpEnvironment.toolBenchWorld(options.library.dir)

const retrievers = (choice: RetrieverChoice) =>
  Layer.effect(Handlers.Retrievers, Effect.gen(function*() {
    const bm25 = yield* Retriever.pipe(Effect.provide(Retriever.layerBm25))
    const byName = new Map<string, Retriever["Service"]>([["bm25", bm25]])
    if (choice !== "bm25") {
      const other = yield* Retriever.pipe(Effect.provide(choice === "dense" ? RetrieverOnnx.layerShipped : RetrieverOnnx.layerHybrid()))
      byName.set(choice, other)
    }
    return Handlers.Retrievers.of({ default: choice, byName })
  }))

/**
 * The services of the server: the world, the task source, the store, the retrievers, the judge, the Sessions and the
 * sweeper. Built before the socket opens: the world is built synchronously (seconds for 50k tools), and a server that
 * accepted connections meanwhile would hold requests it cannot answer.
 */
export const services = (options: ServerOptions) => {
  const store = options.store === undefined
    ? SessionStore.layerMemory(options.memoryStore)
    : SessionStorePostgres.isPostgresUrl(options.store)
    ? SessionStorePostgres.layer({ url: options.store, ...options.postgres })
    : SessionStoreSqlite.layer(options.store)
  const sessions = Layer.unwrap(Effect.gen(function*() {
    const library = yield* ToolLibrary
    const { default: name, byName } = yield* Handlers.Retrievers
    const retriever = byName.get(name) as Retriever["Service"]
    const place = options.worker
    const owns = place === undefined ? {} : { ownsId: (id: string) => WorkerCluster.ownerOf(id, place.workers) === place.index }
    return Sessions.layer({ ...options.sessions, ...owns, world: worldId(options, library) }).pipe(Layer.provide(Layer.succeed(Retriever, retriever)))
  }))
  const sweeper = Layer.effectDiscard(Effect.gen(function*() {
    const service = yield* Sessions.Sessions
    const every = Math.max(50, Math.min(30_000, Math.floor(options.sessions.ttlMs / 4)))
    yield* Effect.forkScoped(Effect.repeat(service.sweep, Schedule.spaced(every)))
  }))
  return sweeper.pipe(
    Layer.provideMerge(sessions),
    Layer.provideMerge(Layer.mergeAll(retrievers(options.retriever), JudgeRule.layer, store)),
    Layer.provideMerge(environment(options))
  )
}

/** The routes of the server over its services: the API, MCP, the docs page, /metrics, the guard, extra routes. */
export const http = (options: ServerOptions) => {
  const api = HttpApiBuilder.layer(ToolEnvApi, { openapiPath: "/openapi.json" }).pipe(
    Layer.provide(Handlers.layer),
    Layer.provide(HttpApiMiddleware.layerProblemDetails({ includeDetails: true }))
  )
  // MCP sessions act in episodes of their own (docs/mcp.md) over this server's library, judge and default retriever,
  // with a simulator at the server's default fault rate
  const mcp = options.mcp === false ? Layer.empty : McpHttp.layer().pipe(
    Layer.provide(McpEnvironment.episodes({ faultRate: options.sessions.faultRate, episodes: { rollout: { maxRounds: options.sessions.maxRounds } } })),
    Layer.provide(Simulator.layer({ faultRate: options.sessions.faultRate })),
    Layer.provide(Layer.effect(Retriever, Effect.map(Handlers.Retrievers, ({ default: name, byName }) => byName.get(name) as Retriever["Service"])))
  )
  return Layer.mergeAll(
    api,
    mcp,
    options.ors === false ? Layer.empty : OrsRoutes.layer,
    HttpApiScalar.layer(ToolEnvApi, { path: "/docs" }),
    PrometheusMetrics.layerHttp({ path: "/metrics" }),
    guard(options),
    options.routes ?? Layer.empty
  )
}

/** The routes and services of the server (everything but the listening socket). */
export const routes = (options: ServerOptions) => http(options).pipe(Layer.provideMerge(services(options)))

/**
 * The step fast path installed on `server` once the Sessions are built (until then, and after the layer closes,
 * every request goes to the framework). Not under an exporting tracer: there each request keeps its server span.
 */
const fastPath = (server: StepFastPath.FastPathServer, options: ServerOptions) =>
  Layer.effectDiscard(Effect.gen(function*() {
    if ((yield* Tracer.Tracer) !== Tracer.nativeTracer) return
    const sessions = yield* Sessions.Sessions
    const context = yield* Effect.context<never>()
    const scope = yield* Scope.Scope
    server.fast = StepFastPath.make({ ...options, network: networkPolicy(options) }, sessions, context, scope, (request, response) => server.serveByFramework(request, response))
    yield* Effect.addFinalizer(() => Effect.sync(() => {
      server.fast = undefined
    }))
  }))

/**
 * The server listening on `host:port` (HttpServer in the output: its `address` is the bound port; ServerFront: its
 * phase and drain). The services are built first, then the socket opens, then the router attaches and the phase turns
 * `ready`; a request in the short window between the last two is answered by the front (503, `status: "starting"`).
 */
export const layer = (options: ServerOptions) =>
  Layer.unwrap(Effect.sync(() => {
    const server = new ServerFront.FrontServer()
    // the router and its routes are built before the socket opens too (the OpenAPI document, the MCP server): only
    // attaching the handler is left once it listens
    const router = http(options).pipe(Layer.provideMerge(HttpRouter.layer))
    const served = Layer.unwrap(Effect.map(HttpRouter.HttpRouter, (r) => HttpServer.serve(r.asHttpEffect())))
    const attached = options.stepFastPath === false ? served : fastPath(server, options).pipe(Layer.provideMerge(served))
    const ready = Layer.effectDiscard(Effect.gen(function*() {
      if (options.worker !== undefined) {
        const close = WorkerCluster.install(server, options.worker)
        yield* Effect.addFinalizer(() => Effect.promise(close))
      }
      if (server.phase === "starting") server.phase = "ready"
    }))
    return ready.pipe(
      Layer.provideMerge(attached),
      Layer.provideMerge(NodeHttpServer.layerServer(() => server, { port: options.port, host: options.host })),
      Layer.provideMerge(router),
      Layer.provideMerge(NodeHttpServer.layerHttpServices),
      Layer.provideMerge(Layer.succeed(ServerFront.ServerFront, ServerFront.serviceOf(server))),
      Layer.provideMerge(Layer.succeed(Readiness, Readiness.of({ phase: () => server.phase }))),
      Layer.provideMerge(services(options))
    )
  }))

/** `http://host:port` of the running server. */
export const url: Effect.Effect<string, never, HttpServer.HttpServer> = HttpServer.addressFormattedWith((address) => Effect.succeed(address))
