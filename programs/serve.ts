/**
 * `npm run serve -- [--port] [--host] [--library <dir>|generated] [--token] [--store <file>|postgres://...] ...`: ToolEnv over HTTP
 * (layers/server/ToolEnvServer.ts). Prints one line with its URL once it is listening; `--port 0` picks a free port.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { existsSync, statSync } from "node:fs"
import { createServer } from "node:net"
import * as Otlp from "../layers/Otlp.ts"
import * as ServerFront from "../layers/server/ServerFront.ts"
import * as WorkerCluster from "../layers/server/WorkerCluster.ts"
import cluster from "node:cluster"
import * as ToolEnvServer from "../layers/server/ToolEnvServer.ts"
import { ConfigError } from "../src/domain/Errors.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Cli from "../src/io/Cli.ts"
import * as Guard from "../src/service/Guard.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Provenance from "../src/io/Provenance.ts"

const port = RunConfig.intFlag("port", { minimum: 0, maximum: 65_535 }, "TCP port; 0 picks a free one").pipe(Flag.withDefault(8765))
const host = Flag.String("host").pipe(Flag.withDescription("interface to listen on (loopback unless told otherwise)"), Flag.withDefault("127.0.0.1"))
const library = Flag.String("library").pipe(Flag.withDescription("`generated` (the seeded world) or a ToolBench-format folder"), Flag.withDefault("generated"))
const worldSeed = RunConfig.flags.worldSeed.pipe(Flag.withDefault(ToolEnvServer.defaultOptions.worldSeed))
const worldSize = RunConfig.flags.worldSize.pipe(Flag.withDefault(ToolEnvServer.defaultOptions.worldSize))
const token = Flag.String("token").pipe(
  Flag.withDescription("bearer token required on every route but /health (else $PARAAGENT_SERVER_TOKEN; none: no auth)"),
  Flag.optional
)
const hostName = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i
const allowHost = RunConfig.parsedListFlag("allow-host", "a host name (or * for any)", "host names requests may name in Host besides IP literals, localhost and --host (DNS-rebinding guard)",
  (h) => (h === "*" || hostName.test(h) ? h.toLowerCase() : undefined)).pipe(Flag.withDefault([] as ReadonlyArray<string>))
const allowOrigin = RunConfig.parsedListFlag("allow-origin", "an origin like http://localhost:3000 (or * for any)", "origins whose web pages may use the server (CORS); other pages are refused",
  (o) => (o === "*" ? o : /^https?:\/\/[^/]+$/i.test(o) ? Guard.normalOrigin(o) : undefined)).pipe(Flag.withDefault([] as ReadonlyArray<string>))
const store = Flag.String("store").pipe(
  Flag.withDescription("the action log shared by replicas: a SQLite file (one machine) or postgres://user@host/db (several); default: memory"),
  Flag.optional
)
const pgSchema = Flag.String("pg-schema").pipe(Flag.withDescription("with a postgres:// store: the schema of its tables (created when absent)"), Flag.withDefault("toolenv"))
const workers = RunConfig.intFlag("workers", { minimum: 1, maximum: 64 }, "server processes on the one port (node cluster), all on the same --store").pipe(Flag.withDefault(1))
const pgPool = RunConfig.intFlag("pg-pool", { minimum: 1, maximum: 1000 }, "with a postgres:// store: connections in this process's pool").pipe(Flag.withDefault(8))
const maxLogMb = RunConfig.intFlag("max-log-mb", { minimum: 16, maximum: 1_000_000 }, "MiB of sessions the in-memory log holds (posted tasks: a quarter of it); past it the least recently used go").pipe(Flag.withDefault(256))
const drawThread = Flag.Boolean("draw-thread").pipe(
  Flag.withDescription("draw tasks of the generated world on a worker thread, so a long draw never stalls other clients (--no-draw-thread: on the server's thread, in slices)"),
  Flag.withDefault(true)
)
const retriever = Flag.Literals("retriever", ["bm25", "dense", "hybrid"]).pipe(Flag.withDescription("the retriever sessions search with"), Flag.withDefault("bm25"))
const maxSessions = RunConfig.intFlag("max-sessions", { minimum: 1, maximum: 1_000_000 }, "sessions held in memory at once").pipe(Flag.withDefault(1024))
const sessionTtl = RunConfig.intFlag("session-ttl", { minimum: 1, maximum: 7 * 86_400 }, "seconds a session may sit idle before it leaves memory").pipe(Flag.withDefault(600))
const maxBody = RunConfig.intFlag("max-body", { minimum: 1024, maximum: 64 * 1024 * 1024 }, "largest request body, bytes").pipe(Flag.withDefault(1024 * 1024))
const maxDepth = RunConfig.intFlag("max-depth", { minimum: 4, maximum: 1000 }, "deepest JSON nesting of a body").pipe(Flag.withDefault(64))
const maxActions = RunConfig.intFlag("max-actions", { minimum: 1, maximum: 10_000 }, "searches + calls one turn may carry").pipe(Flag.withDefault(64))
const maxRounds = RunConfig.flags.maxRounds.pipe(Flag.withDefault(12))
const faultRate = RunConfig.numberFlag("fault-rate", { minimum: 0, maximum: 1 }, "transient-fault probability per call when a session names none").pipe(Flag.withDefault(0.05))
const drainTimeout = RunConfig.intFlag("drain-timeout", { minimum: 0, maximum: 3600 }, "seconds SIGTERM waits for in-flight requests before exiting 143").pipe(Flag.withDefault(20))

/**
 * How the process ends: the drain a SIGTERM (or SIGINT) starts sets `drained`; the signal's grace outlasts the drain's
 * timeout (set once the flags are read).
 */
const ending = { drained: false, graceMs: Signals.defaultGraceMs }

/** Why a host and port cannot be listened on, in words (the code kept in brackets). */
const listenProblem = (code: string | undefined, message: string): string =>
  code === "EADDRINUSE" ? "the port is in use (EADDRINUSE)"
  : code === "EADDRNOTAVAIL" ? "the address is not one of this machine's (EADDRNOTAVAIL)"
  : code === "ENOTFOUND" || code === "EAI_AGAIN" ? `no such host (${code})`
  : code === "EACCES" ? "permission denied: ports below 1024 need privileges (EACCES)"
  : `${message}${code !== undefined ? ` (${code})` : ""}`

/** A ConfigError naming the flag at fault (the host when it does not resolve or is not local, else the port). */
const listenError = (host: string, port: number, cause: unknown): ConfigError => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String((cause as { code: unknown }).code) : undefined
  const message = cause instanceof Error ? cause.message : String(cause)
  const onHost = code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EADDRNOTAVAIL"
  return new ConfigError({
    field: onHost ? "--host" : "--port",
    value: onHost ? host : String(port),
    message: `cannot listen on ${host}:${port}: ${listenProblem(code, message)}`
  })
}

/** Listens on host:port once and lets go, so a port in use or a bad host is said before a cluster forks its workers. */
const probeListen = (host: string, port: number): Effect.Effect<void, ConfigError> =>
  Effect.callback<void, ConfigError>((resume) => {
    const probe = createServer()
    probe.once("error", (e) => resume(Effect.fail(listenError(host, port, e))))
    probe.listen(port, host, () => probe.close(() => resume(Effect.void)))
  })

const serve = Command.make("serve", {
  port, host, library, worldSeed, worldSize, token, allowHost, allowOrigin, store, maxLogMb, drawThread, retriever, maxSessions, sessionTtl, maxBody, maxDepth, maxActions, maxRounds, faultRate, drainTimeout, pgSchema, pgPool, workers
}, (flags) =>
  Effect.gen(function*() {
    if (flags.library !== "generated" && !(existsSync(flags.library) && statSync(flags.library).isDirectory())) {
      return yield* new ConfigError({ field: "--library", value: flags.library, message: "--library must be `generated` or an existing folder" })
    }
    const secret = Option.getOrUndefined(flags.token) ?? process.env["PARAAGENT_SERVER_TOKEN"]
    if (secret !== undefined && secret.length < 8) {
      return yield* new ConfigError({ field: "--token", value: "", message: "--token must be at least 8 characters" })
    }
    if (flags.workers > 1 && Option.isNone(flags.store)) {
      return yield* new ConfigError({ field: "--workers", value: String(flags.workers), message: "--workers needs a shared --store (a SQLite file or postgres://…): every worker reads and writes the same action log" })
    }
    ending.graceMs = (flags.drainTimeout + 10) * 1000
    // a cluster's primary builds nothing and its workers share its port: a port in use or a bad host is said now, by a
    // probe. One process says it at the real listen, after the world is built: a probe listens for a moment, and a
    // client polling from the spawn (a load balancer, test/programs/ServeStartup.test.ts) could connect to it and be
    // reset — a request left unanswered
    if (flags.workers > 1 && cluster.isPrimary) yield* probeListen(flags.host, flags.port)
    if (flags.workers > 1 && cluster.isPrimary) {
      // the primary builds nothing: it forks the workers, restarts one that dies, and relays SIGTERM
      const code = yield* Effect.uninterruptible(Effect.promise(() =>
        WorkerCluster.runPrimary({
          workers: flags.workers,
          onReady: (url) => console.log(`toolenv listening on ${url} (${flags.workers} workers)`),
          log: (line) => console.error(`serve: ${line}`)
        })))
      return process.exit(code)
    }
    const place = WorkerCluster.placeFromEnv()
    const options: ToolEnvServer.ServerOptions = {
      host: flags.host,
      port: flags.port,
      library: flags.library === "generated" ? "generated" : { dir: flags.library },
      worldSeed: flags.worldSeed,
      worldSize: flags.worldSize,
      ...(secret !== undefined ? { token: secret } : {}),
      allowHosts: flags.allowHost,
      allowOrigins: flags.allowOrigin,
      ...(Option.isSome(flags.store) ? { store: flags.store.value, postgres: { schema: flags.pgSchema, pool: flags.pgPool } } : {}),
      ...(place !== undefined ? { worker: place } : {}),
      drawWorker: flags.drawThread,
      memoryStore: { maxBytes: flags.maxLogMb * 1024 * 1024, maxTaskBytes: flags.maxLogMb * 256 * 1024 },
      retriever: flags.retriever,
      maxBody: flags.maxBody,
      maxDepth: flags.maxDepth,
      sessions: {
        ...ToolEnvServer.defaultOptions.sessions,
        maxSessions: flags.maxSessions,
        ttlMs: flags.sessionTtl * 1000,
        maxActions: flags.maxActions,
        maxRounds: flags.maxRounds,
        faultRate: flags.faultRate
      }
    }
    yield* Effect.gen(function*() {
      const url = yield* ToolEnvServer.url
      const front = yield* ServerFront.ServerFront
      if (place !== undefined && process.send !== undefined) process.send({ type: "ready", url })
      else yield* Console.log(`toolenv listening on ${url}`)
      // SIGTERM: stop accepting, let the steps in flight finish (at most --drain-timeout), then close the layers
      return yield* Effect.never.pipe(Effect.onInterrupt(() =>
        Effect.flatMap(front.drain(flags.drainTimeout * 1000), (finished) => Effect.sync(() => void (ending.drained = finished)))))
    }).pipe(
      Effect.provide(ToolEnvServer.layer(options)),
      // taken between the probe and the real listen
      Effect.catchTag("ServeError", (e) => Effect.fail(listenError(flags.host, flags.port, e.cause)))
    )
  })).pipe(Command.withDescription("Serve ToolEnv over HTTP: tools, retrieval, tasks, sessions, scoring, OpenEnv, /metrics, /openapi.json, /docs"))

serve.pipe(
  Otlp.traced("serve"),
  Cli.run("serve", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  // the first SIGTERM interrupts: the drain above runs, then exit 0 (143 when it outlived --drain-timeout, or after
  // its grace); a second signal exits at once
  Signals.runMain({ graceMs: () => ending.graceMs, finished: () => ending.drained })
)
