/**
 * The node-level front of the ToolEnv server: the phase (starting → ready → draining), `GET /ready` answered without
 * the framework, requests that arrive before the router is attached answered at once (never left hanging), the count
 * of requests in flight, and the drain a SIGTERM asks for: stop accepting, finish what is in flight, report.
 */
import { Context, Effect } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Phase } from "../../src/service/Readiness.ts"
import { FastPathServer } from "./StepFastPath.ts"

/** Takes a request the front routes elsewhere (another worker process) and answers it; false: not taken. */
export type Router = (request: IncomingMessage, response: ServerResponse) => boolean

const pathOf = (url: string | undefined): string => (url ?? "/").split("?", 1)[0] as string

const json = (response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "cache-control": "no-store", ...headers })
  response.end(text)
}

/**
 * Node's HTTP server with the front in `emit`: every request is counted until its response closes; `/ready` is answered
 * here in every phase; while starting, every request is answered here (503, `/health` with `status: "starting"`); a
 * router (the worker front) may take a request before the fast path and the framework see it.
 */
export class FrontServer extends FastPathServer {
  /** Where the server is; `ready` once the router is attached. */
  phase: Phase = "starting"
  /** The worker front; undefined on a single process. */
  router: Router | undefined = undefined
  /** Requests received whose response has not closed. */
  inflight = 0
  private idleWaiters: Array<() => void> = []

  override emit(event: string, ...args: Array<unknown>): boolean {
    if (event !== "request") return super.emit(event, ...args)
    const request = args[0] as IncomingMessage
    const response = args[1] as ServerResponse
    this.inflight++
    response.once("close", () => {
      this.inflight--
      if (this.inflight === 0) for (const wake of this.idleWaiters.splice(0)) wake()
    })
    const path = pathOf(request.url)
    if (path === "/ready" && (request.method === "GET" || request.method === "HEAD")) {
      // a load balancer's probe: never queued behind the framework
      json(response, this.phase === "ready" ? 200 : 503, { status: this.phase })
      return true
    }
    if (this.phase === "starting") {
      if (path === "/health") json(response, 503, { status: "starting" }, { "retry-after": "1" })
      else json(response, 503, { _tag: "Starting", message: "the server is starting: retry shortly (GET /ready answers 200 once it serves)" }, { "retry-after": "1" })
      return true
    }
    if (this.router !== undefined && this.router(request, response)) return true
    return super.emit(event, ...args)
  }

  /** Resolves once no request is in flight. */
  idle(): Promise<void> {
    return this.inflight === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * Stops accepting connections (idle keep-alive connections close, answered ones close after their response) and
   * waits for the requests in flight, at most `timeoutMs`; true when all finished in time.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.phase = "draining"
    if (this.listening) this.close()
    this.closeIdleConnections()
    let timer: NodeJS.Timeout | undefined
    const finished = await Promise.race([
      this.idle().then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs)
      })
    ])
    if (timer !== undefined) clearTimeout(timer)
    return finished
  }
}

/** The running server's front, for the program that owns it (readiness, the drain on SIGTERM). */
export class ServerFront extends Context.Service<ServerFront, {
  readonly phase: () => Phase
  readonly inflight: () => number
  /** Stop accepting, finish what is in flight (at most `timeoutMs`); true when everything finished. */
  readonly drain: (timeoutMs: number) => Effect.Effect<boolean>
}>()("paraagent/layers/ServerFront") {}

/** The service over a front server. */
export const serviceOf = (server: FrontServer): ServerFront["Service"] =>
  ServerFront.of({
    phase: () => server.phase,
    inflight: () => server.inflight,
    drain: (timeoutMs) => Effect.promise(() => server.drain(timeoutMs))
  })
