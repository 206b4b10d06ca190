import { describe, expect, it } from "@effect/vitest"
import * as http from "node:http"
import { boundedGet, probeStart, summarize } from "../support/StartupProbe.ts"

/** Waits for a child to exit; resolves with its code (or the signal's name). */
const exited = (child: import("node:child_process").ChildProcess): Promise<number | string> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode)
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"))
  })

const postJson = (port: number, path: string, body: unknown): Promise<{ status: number; json: any }> =>
  new Promise((resolve, reject) => {
    const text = JSON.stringify(body)
    const request = http.request({ host: "127.0.0.1", port, path, method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) } }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (c: Buffer) => chunks.push(c))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }))
    })
    request.on("error", reject)
    request.end(text)
  })

describe("npm run serve: start-up and shutdown", () => {
  it("polled from the moment it is spawned, every request is refused (no socket yet) or answered within its bound; /ready turns 200", async () => {
    // two starts here; bench/serve-startup.ts runs a hundred in a row (docs/service.md)
    for (let start = 0; start < 2; start++) {
      const probed = await probeStart(["--world-size", "2000"], { everyMs: 50, boundMs: 20_000, afterReady: 5 })
      try {
        const s = summarize(probed.polls)
        expect(s.overBound).toBe(0)
        expect(s.errors).toEqual([])
        expect(s.otherStatus).toEqual([])
        expect(s.ok).toBeGreaterThan(0)
        for (const p of probed.polls) if (p.kind === "answered" && p.status === 503) expect(JSON.parse(p.body)).toEqual({ status: "starting" })
        const health = probed.polls.find((p) => p.kind === "answered" && p.status === 200)
        expect(JSON.parse((health as { body: string }).body)).toMatchObject({ status: "healthy", state: "ready" })
        const ready = await boundedGet(`http://127.0.0.1:${probed.port}/ready`, 20_000)
        expect(ready).toMatchObject({ kind: "answered", status: 200 })
      } finally {
        probed.child.kill("SIGKILL")
        await exited(probed.child)
      }
    }
  }, 1_300_000)

  it("SIGTERM stops accepting, lets the step in flight finish, and exits 0", async () => {
    const probed = await probeStart(["--world-size", "2000"], { afterReady: 0 })
    const { child, port } = probed
    try {
      const created = await postJson(port, "/sessions", { seed: 1 })
      expect(created.status).toBe(200)
      const id = created.json.sessionId as string
      // the session belongs to the key the create was issued (docs/service.md, ownership)
      const clientKey = created.json.clientKey as string
      expect(typeof clientKey).toBe("string")
      const body = JSON.stringify({ turn: { searches: [{ slot: "s1", query: "weather forecast" }], calls: [] }, round: 0 })
      // a step whose body is still arriving when the signal comes: the request is in flight
      const response = new Promise<{ status: number; json: any }>((resolve, reject) => {
        const request = http.request({ host: "127.0.0.1", port, path: `/sessions/${id}/step`, method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-client-key": clientKey } }, (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }))
        })
        request.on("error", reject)
        request.write(body.slice(0, 10))
        setTimeout(() => {
          child.kill("SIGTERM")
          // the listening socket closes; the request in flight goes on
          const check = setInterval(async () => {
            const probe = await boundedGet(`http://127.0.0.1:${port}/ready`, 5_000)
            if (probe.kind === "refused") {
              clearInterval(check)
              request.end(body.slice(10))
            }
          }, 50)
        }, 200)
      })
      const answered = await response
      expect(answered.status).toBe(200)
      expect(answered.json.step.index).toBe(0)
      expect(await exited(child)).toBe(0)
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  }, 700_000)
})
