import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import * as App from "../../layers/App.ts"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import { repoRoot } from "../../src/io/DataPath.ts"
import { canonicalJson } from "../../src/math/CanonicalJson.ts"
import * as Session from "../../src/runtime/Session.ts"
import { TaskSource } from "../../src/toolenv/TaskSource.ts"
import { safetyBoundMs } from "../support/Bounds.ts"
import * as RoundRobinProxy from "../support/RoundRobinProxy.ts"
import { goldRounds, timeless } from "../support/ServedEpisode.ts"

/** `npm run serve -- <args>` as a child process; resolves with its URL once it prints the listening line. */
const serve = (args: ReadonlyArray<string>): Promise<{ readonly child: ChildProcess; readonly url: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "programs/serve.ts", ...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    // the listening line is the event waited on; the bound only catches a hang
    const timer = setTimeout(() => reject(new Error(`serve did not start within the safety bound: ${err}`)), safetyBoundMs)
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const m = /toolenv listening on (http:\/\/\S+)/.exec(out)
      if (m !== null) {
        clearTimeout(timer)
        resolve({ child, url: m[1] as string })
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => void (err += chunk))
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${err}`)))
  })

const clientKey = "serve-test-client-key-0001"
const post = async (url: string, body: unknown): Promise<{ status: number; json: any }> => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-client-key": clientKey }, body: JSON.stringify(body) })
  return { status: res.status, json: await res.json() }
}
const get = async (url: string): Promise<any> => (await fetch(url, { headers: { "x-client-key": clientKey } })).json()

const dir = mkdtempSync(path.join(tmpdir(), "paraagent-serve-"))
const store = path.join(dir, "sessions.sqlite")
const replicas: Array<{ readonly child: ChildProcess; readonly url: string }> = []

describe("npm run serve: two replicas over one --store behind a round-robin proxy", () => {
  beforeAll(async () => {
    const args = ["--port", "0", "--world-size", "2000", "--store", store]
    replicas.push(...(await Promise.all([serve(args), serve(args)])))
  })
  afterAll(() => {
    for (const r of replicas) r.child.kill("SIGTERM")
    rmSync(dir, { recursive: true, force: true })
  })

  it("one episode stepped alternately through both replicas is the trajectory one process gives; a racing duplicate round is a 409", async () => {
    const proxy = await RoundRobinProxy.start(replicas.map((r) => r.url))
    try {
      const listed = await (await fetch(`${proxy.url}/tasks?split=test&level=I3&count=1&gold=true`)).json() as { tasks: Array<any> }
      const view = listed.tasks[0]
      const created = await post(`${proxy.url}/sessions`, { taskId: view.id, seed: 5, faultRate: 0.3 })
      expect(created.status).toBe(200)
      const id = created.json.sessionId as string
      const rounds = goldRounds({ ...view, seed: 0 })
      for (const [round, request] of rounds.entries()) {
        const r = await post(`${proxy.url}/sessions/${id}/step`, { ...request, round })
        expect(r.status).toBe(200)
        if (r.json.done === true) break
      }
      const served = await get(`${proxy.url}/sessions/${id}/trajectory`) as Trajectory
      // both replicas served steps of it
      expect(new Set(proxy.served).size).toBe(2)

      const local = await Effect.runPromise(Effect.gen(function*() {
        const source = yield* TaskSource
        const task = (yield* source.sample({ split: "test", levels: ["I3"], count: 1 }))[0]!
        const outputs = goldRounds(task).map((r) => ({ text: "", turn: r.turn!, usage: { promptTokens: 0, completionTokens: 0 } }))
        const session = yield* Session.replay({ task, paradigm: "ParaAct", seed: 5, policy: "remote" }, outputs)
        return yield* session.trajectory
      }).pipe(Effect.provide(App.layer({ world: { size: 2000 }, tasks: { holdoutTools: true }, simulator: { faultRate: 0.3 } }))))
      expect(canonicalJson(JSON.parse(timeless(served)))).toBe(canonicalJson(JSON.parse(timeless(local))))

      // the same round sent to both replicas at once: one is accepted, the other loses on the log's unique key
      const fresh = await post(`${replicas[0]!.url}/sessions`, { seed: 1 })
      const sid = fresh.json.sessionId as string
      const turn = { turn: { searches: [{ slot: "s1", query: "weather" }], calls: [] } }
      const race = await Promise.all(replicas.map((r) => post(`${r.url}/sessions/${sid}/step`, { ...turn, round: 0 })))
      expect(race.map((r) => r.status).sort()).toEqual([200, 409])
      const after = await get(`${replicas[1]!.url}/sessions/${sid}`) as { rounds: number }
      expect(after.rounds).toBe(1)
    } finally {
      await proxy.close()
    }
  })
})
