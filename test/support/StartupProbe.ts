/**
 * Starts `npm run serve` on a known port and polls `/health` from the moment the process is spawned, the way a
 * client or a load balancer that does not wait for the listening line would: every request carries a bound, and each
 * one is recorded as refused (no socket yet), answered (status, body, time) or over its bound (the failure the
 * readiness fix is about). Used by test/programs/ServeStartup.test.ts and bench/serve-startup.ts.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import * as http from "node:http"
import * as net from "node:net"
import { repoRoot } from "../../src/io/DataPath.ts"

/** One poll. */
export type Poll =
  | { readonly kind: "refused"; readonly at: number }
  | { readonly kind: "answered"; readonly at: number; readonly ms: number; readonly status: number; readonly body: string }
  | { readonly kind: "over-bound"; readonly at: number; readonly ms: number }
  | { readonly kind: "error"; readonly at: number; readonly ms: number; readonly message: string }

/** A start that was probed. */
export interface ProbedStart {
  readonly child: ChildProcess
  readonly port: number
  readonly polls: ReadonlyArray<Poll>
  /** ms from spawn to the first 200 from /health. */
  readonly readyMs: number
}

/** A port that was free a moment ago (bound to 0, then released). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** One GET with a bound on its whole time (connect, headers, body). */
export const boundedGet = (url: string, boundMs: number): Promise<Poll> => {
  const at = Date.now()
  return new Promise((resolve) => {
    let settled = false
    const done = (poll: Poll) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(poll)
    }
    const request = http.get(url, { agent: false }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (c: Buffer) => chunks.push(c))
      response.on("end", () => done({ kind: "answered", at, ms: Date.now() - at, status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
      response.on("error", (e) => done({ kind: "error", at, ms: Date.now() - at, message: e.message }))
    })
    const timer = setTimeout(() => {
      request.destroy()
      done({ kind: "over-bound", at, ms: Date.now() - at })
    }, boundMs)
    request.on("error", (e: NodeJS.ErrnoException) =>
      done(e.code === "ECONNREFUSED" ? { kind: "refused", at } : { kind: "error", at, ms: Date.now() - at, message: `${e.code ?? ""} ${e.message}` }))
  })
}

/**
 * Spawns `node --import tsx programs/serve.ts --port <free port> ...args` and polls `/health` every `everyMs` from the
 * spawn on (each poll its own connection, several in flight at once) until `afterReady` polls after the first 200 have
 * come back, or `giveUpMs` passes. Polls are started on a timer, not after the previous one ends, so a hung request
 * does not hide the ones behind it.
 */
export const probeStart = async (
  args: ReadonlyArray<string>,
  options: { readonly everyMs?: number; readonly boundMs?: number; readonly afterReady?: number; readonly giveUpMs?: number } = {}
): Promise<ProbedStart> => {
  const everyMs = options.everyMs ?? 50
  const boundMs = options.boundMs ?? 20_000
  const afterReady = options.afterReady ?? 5
  const giveUpMs = options.giveUpMs ?? 600_000
  const port = await freePort()
  const started = Date.now()
  const child = spawn(process.execPath, ["--import", "tsx", "programs/serve.ts", "--port", String(port), ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr?.setEncoding("utf8").on("data", (c: string) => void (stderr += c))
  child.stdout?.resume()
  const polls: Array<Promise<Poll>> = []
  let readyAt: number | undefined
  let sinceReady = 0
  await new Promise<void>((resolve, reject) => {
    const tick = setInterval(() => {
      if (child.exitCode !== null) {
        clearInterval(tick)
        return reject(new Error(`serve exited with ${child.exitCode} before it was ready: ${stderr}`))
      }
      if (Date.now() - started > giveUpMs) {
        clearInterval(tick)
        return reject(new Error(`serve was not ready within ${giveUpMs} ms: ${stderr}`))
      }
      if (readyAt !== undefined && ++sinceReady > afterReady) {
        clearInterval(tick)
        return resolve()
      }
      const poll = boundedGet(`http://127.0.0.1:${port}/health`, boundMs)
      polls.push(poll)
      void poll.then((p) => {
        if (readyAt === undefined && p.kind === "answered" && p.status === 200) readyAt = Date.now()
      })
    }, everyMs)
  })
  return { child, port, polls: await Promise.all(polls), readyMs: (readyAt as number) - started }
}

/** What a start's polls show: counts by kind and status, the slowest answer, and the bodies of non-200 answers. */
export const summarize = (polls: ReadonlyArray<Poll>) => {
  const answered = polls.filter((p): p is Extract<Poll, { kind: "answered" }> => p.kind === "answered")
  return {
    polls: polls.length,
    refused: polls.filter((p) => p.kind === "refused").length,
    answered: answered.length,
    ok: answered.filter((p) => p.status === 200).length,
    starting: answered.filter((p) => p.status === 503).length,
    overBound: polls.filter((p) => p.kind === "over-bound").length,
    errors: polls.filter((p) => p.kind === "error").map((p) => (p as { message: string }).message),
    otherStatus: answered.filter((p) => p.status !== 200 && p.status !== 503).map((p) => `${p.status} ${p.body}`),
    slowestMs: Math.max(0, ...answered.map((p) => p.ms))
  }
}
