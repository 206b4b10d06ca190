/**
 * `npm run serve -- --workers N`: N server processes on one port through node's cluster module, every one on the same
 * shared store. Each session id has one owner worker (a hash of the id); a worker that receives a request for
 * another worker's session (node hands connections round-robin) forwards it over that worker's local socket, so a step
 * finds its session warm. When the owner is gone (restarting), the request is served where it landed: the shared log
 * rebuilds the session, so routing only ever costs time, never correctness. `/metrics` gathers every worker's metrics,
 * each sample labelled `worker`. The primary restarts a worker that dies, relays SIGTERM, and exits 0 once every
 * worker drained.
 */
import cluster from "node:cluster"
import type { Worker } from "node:cluster"
import * as fs from "node:fs"
import * as http from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { replayed } from "./StepFastPath.ts"
import type { FrontServer, Router } from "./ServerFront.ts"

/** Where a worker is in the cluster. */
export interface WorkerPlace {
  readonly index: number
  readonly workers: number
  /** The folder of the workers' local sockets (one per worker, named by index). */
  readonly socketDir: string
}

/** The worker's place from the environment the primary forks it with; undefined in a single process. */
export const placeFromEnv = (): WorkerPlace | undefined => {
  const index = process.env["PARAAGENT_WORKER_INDEX"]
  const workers = process.env["PARAAGENT_WORKERS"]
  const socketDir = process.env["PARAAGENT_WORKER_SOCKETS"]
  if (index === undefined || workers === undefined || socketDir === undefined || cluster.isPrimary) return undefined
  return { index: Number(index), workers: Number(workers), socketDir }
}

/** FNV-1a (32 bits) of a string. */
const fnv1a = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

/** The worker that owns a session id. */
export const ownerOf = (id: string, workers: number): number => fnv1a(id) % workers

/** The local socket of worker `index`. */
export const socketOf = (place: Pick<WorkerPlace, "socketDir">, index: number): string => path.join(place.socketDir, `w${index}.sock`)

const forwardedHeader = "x-paraagent-forwarded"

/**
 * Which worker a request belongs to, from what routes it: the id in `/sessions/{id}…`, ORS's `X-Session-ID`; MCP
 * sessions and OpenEnv's reset/step/state (whose episode may be named in the body, or be the last reset) live on worker
 * 0; anything else is served where it landed (undefined).
 */
export const targetOf = (request: IncomingMessage, workers: number): number | undefined => {
  const url = request.url ?? "/"
  const pathname = url.split("?", 1)[0] as string
  const session = /^\/sessions\/([^/]+)/.exec(pathname)
  if (session !== null && session[1] !== undefined) return ownerOf(decodeURIComponent(session[1]), workers)
  const sid = request.headers["x-session-id"]
  if (typeof sid === "string" && sid.trim() !== "") return ownerOf(sid.trim(), workers)
  if (pathname === "/mcp" || pathname === "/reset" || pathname === "/step" || pathname === "/state") return 0
  return undefined
}

/** A sample line of the Prometheus text format with `worker="k"` added to its labels. */
const labelled = (line: string, worker: number): string => {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?(\s.*)$/.exec(line)
  if (m === null) return line
  const labels = m[2] === undefined ? `{worker="${worker}"}` : `{worker="${worker}",${m[2].slice(1)}`
  return `${m[1]}${labels}${m[3]}`
}

/** Every worker's metrics in one exposition: HELP/TYPE once per metric, each sample labelled with its worker. */
export const mergeMetrics = (texts: ReadonlyArray<string | undefined>): string => {
  const headers = new Map<string, Array<string>>()
  const samples = new Map<string, Array<string>>()
  const order: Array<string> = []
  const nameOf = (line: string) => (line.startsWith("#") ? (line.split(/\s+/)[2] ?? "") : (/^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] ?? "")).replace(/_(bucket|sum|count)$/, "")
  for (const [worker, text] of texts.entries()) {
    if (text === undefined) continue
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue
      const name = nameOf(line)
      if (!headers.has(name)) {
        headers.set(name, [])
        samples.set(name, [])
        order.push(name)
      }
      if (line.startsWith("#")) {
        const list = headers.get(name) as Array<string>
        if (!list.includes(line)) list.push(line)
      } else (samples.get(name) as Array<string>).push(labelled(line, worker))
    }
  }
  return order.flatMap((name) => [...(headers.get(name) ?? []), ...(samples.get(name) ?? [])]).join("\n") + "\n"
}

const readBody = (request: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

/**
 * The worker's front: the router installed on its FrontServer (forwarding what another worker owns, gathering
 * `/metrics`), and the local socket other workers forward to. Returns a function that closes the socket.
 */
export const install = (server: FrontServer, place: WorkerPlace): (() => Promise<void>) => {
  const agents = Array.from({ length: place.workers }, () => new http.Agent({ keepAlive: true, maxSockets: 256 }))
  const local = http.createServer((request, response) => {
    // a forwarded request is served here whatever it names
    server.emit("request", request, response)
  })
  local.keepAliveTimeout = 30_000
  const socket = socketOf(place, place.index)
  fs.rmSync(socket, { force: true })
  local.listen(socket)

  /** Sends a request (its body already read) to worker `to`; undefined when that worker cannot be reached. */
  const send = (to: number, request: IncomingMessage, body: Buffer, extraHeaders: Record<string, string> = {}) =>
    new Promise<http.IncomingMessage | undefined>((resolve) => {
      const headers = { ...request.headers, [forwardedHeader]: String(place.index), "content-length": String(body.length), ...extraHeaders }
      delete (headers as Record<string, unknown>)["transfer-encoding"]
      const out = http.request({ socketPath: socketOf(place, to), method: request.method, path: request.url, headers, agent: agents[to] }, resolve)
      out.on("error", () => resolve(undefined))
      out.end(body)
    })

  const metrics = async (request: IncomingMessage, response: ServerResponse) => {
    const texts = await Promise.all(agents.map(async (_, k) => {
      const answer = await send(k, request, Buffer.alloc(0))
      if (answer === undefined || answer.statusCode !== 200) {
        answer?.resume()
        return undefined
      }
      return (await readBody(answer)).toString("utf8")
    }))
    const text = mergeMetrics(texts)
    response.writeHead(200, { "content-type": "text/plain; version=0.0.4", "content-length": Buffer.byteLength(text) })
    response.end(text)
  }

  const router: Router = (request, response) => {
    if (request.headers[forwardedHeader] !== undefined) return false
    const pathname = (request.url ?? "/").split("?", 1)[0]
    if (pathname === "/metrics" && request.method === "GET") {
      void metrics(request, response)
      return true
    }
    const target = targetOf(request, place.workers)
    if (target === undefined || target === place.index) return false
    void readBody(request).then(async (body) => {
      const answer = await send(target, request, body)
      if (answer === undefined) {
        // the owner is gone (restarting): serve it here from the shared log
        server.emit("request", replayed(request, body), response)
        return
      }
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
    }, () => response.destroy())
    return true
  }
  server.router = router
  // a worker whose primary is gone drains and exits rather than serving on alone
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"))
  return () =>
    new Promise((resolve) => {
      server.router = undefined
      for (const agent of agents) agent.destroy()
      local.close(() => resolve())
      local.closeAllConnections()
    })
}

/** What the primary reports. */
export interface PrimaryOptions {
  readonly workers: number
  /** Prints the listening line once every worker is up. */
  readonly onReady: (url: string) => void
  /** Prints a line about the cluster (a worker restarted, a signal relayed). */
  readonly log: (line: string) => void
}

/**
 * Runs the primary: forks `workers` copies of this program (the same arguments; each told its index and the socket
 * folder), restarts one that dies while the cluster runs, and on SIGTERM/SIGINT asks each to drain; resolves with the
 * exit code (0 when every worker drained and exited 0; 143/130 otherwise).
 */
export const runPrimary = (options: PrimaryOptions): Promise<number> =>
  new Promise((resolve) => {
    const socketDir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-workers-"))
    const byIndex = new Map<number, Worker>()
    const ready = new Set<number>()
    let stopping: NodeJS.Signals | undefined
    let failed = false
    let announced = false
    const fork = (index: number) => {
      const worker = cluster.fork({ PARAAGENT_WORKER_INDEX: String(index), PARAAGENT_WORKERS: String(options.workers), PARAAGENT_WORKER_SOCKETS: socketDir })
      byIndex.set(index, worker)
      worker.on("message", (message: { readonly type?: string; readonly url?: string }) => {
        if (message.type !== "ready" || message.url === undefined) return
        ready.add(index)
        if (!announced && ready.size === options.workers) {
          announced = true
          options.onReady(message.url)
        }
      })
      worker.on("exit", (code, signal) => {
        ready.delete(index)
        if (stopping !== undefined) {
          if (code !== 0) failed = true
          byIndex.delete(index)
          if (byIndex.size === 0) {
            fs.rmSync(socketDir, { recursive: true, force: true })
            resolve(failed ? (stopping === "SIGINT" ? 130 : 143) : 0)
          }
          return
        }
        options.log(`worker ${index} exited (${signal ?? code}); starting it again`)
        setTimeout(() => fork(index), 200)
      })
    }
    for (let i = 0; i < options.workers; i++) fork(i)
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      // the primary owns its signals: no other handler ends it before the workers drained
      process.removeAllListeners(signal)
      process.on(signal, () => {
        if (stopping !== undefined) {
          for (const w of byIndex.values()) w.process.kill("SIGKILL")
          process.exit(signal === "SIGINT" ? 130 : 143)
        }
        stopping = signal
        for (const w of byIndex.values()) w.process.kill("SIGTERM")
      })
    }
  })
