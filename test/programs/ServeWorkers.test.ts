import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { repoRoot } from "../../src/io/DataPath.ts"
import { spawnProgram } from "../support/Spawn.ts"

const key = "serve-workers-test-client-key"

/** One request on its own connection (node's cluster hands each connection to the next worker). */
const request = (port: number, method: string, pathname: string, body?: unknown): Promise<{ status: number; text: string }> =>
  new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body)
    const r = http.request({ host: "127.0.0.1", port, path: pathname, method, agent: false, headers: { "x-client-key": key, ...(text !== undefined ? { "content-type": "application/json", "content-length": Buffer.byteLength(text) } : {}) } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
    })
    r.on("error", reject)
    r.end(text)
  })

const metric = (text: string, name: string): Map<string, number> => {
  const out = new Map<string, number>()
  for (const line of text.split("\n")) {
    const m = new RegExp(`^${name}\\{worker="(\\d+)"[^}]*\\} (\\S+)$`).exec(line)
    if (m !== null) out.set(m[1] as string, (out.get(m[1] as string) ?? 0) + Number(m[2]))
  }
  return out
}

describe("npm run serve -- --workers 2", () => {
  it("two processes on one port and one store: steps land warm on their session's worker, /metrics labels each worker, SIGTERM drains both and exits 0", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-workers-test-"))
    const child = spawn(process.execPath, ["--import", "tsx", "programs/serve.ts", "--port", "0", "--world-size", "1000", "--workers", "2", "--store", path.join(dir, "log.sqlite")], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = ""
        let err = ""
        child.stdout.setEncoding("utf8").on("data", (c: string) => {
          out += c
          const m = /toolenv listening on http:\/\/127\.0\.0\.1:(\d+) \(2 workers\)/.exec(out)
          if (m !== null) resolve(Number(m[1]))
        })
        child.stderr.setEncoding("utf8").on("data", (c: string) => void (err += c))
        child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)))
      })
      const turn = (round: number) => ({ round, turn: { searches: [{ slot: "s1", query: `weather forecast ${round}` }], calls: [] } })
      for (let episode = 0; episode < 6; episode++) {
        const created = await request(port, "POST", "/sessions", { seed: episode })
        expect(created.status).toBe(200)
        const id = JSON.parse(created.text).sessionId as string
        for (let round = 0; round < 3; round++) expect((await request(port, "POST", `/sessions/${id}/step`, turn(round))).status).toBe(200)
        const info = JSON.parse((await request(port, "GET", `/sessions/${id}`)).text)
        expect(info.rounds).toBe(3)
      }
      const metrics = (await request(port, "GET", "/metrics")).text
      const steps = metrics.split("\n").length > 0 ? metric(metrics, "toolenv_steps_total") : new Map()
      expect([...steps.keys()].sort()).toEqual(["0", "1"])
      expect([...steps.values()].reduce((a, b) => a + b, 0)).toBe(18)
      // every step found its session in its owner's memory: no replay from the log anywhere
      expect([...metric(metrics, "toolenv_replays_total").values()].reduce((a, b) => a + b, 0)).toBe(0)
      child.kill("SIGTERM")
      const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)))
      expect(code).toBe(0)
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 900_000)

  it("--workers without a shared --store is refused in one line", async () => {
    const r = await spawnProgram("programs/serve.ts", ["--workers", "2", "--world-size", "500"])
    expect(r.code).not.toBe(0)
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).toMatch(/--workers needs a shared --store/)
  }, 300_000)
})
