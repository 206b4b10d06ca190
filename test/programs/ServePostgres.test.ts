import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { repoRoot } from "../../src/io/DataPath.ts"
import { canonicalJson } from "../../src/math/CanonicalJson.ts"
import * as Postgres from "../support/Postgres.ts"
import * as RoundRobinProxy from "../support/RoundRobinProxy.ts"
import { goldRounds, timeless } from "../support/ServedEpisode.ts"
import { spawnProgram } from "../support/Spawn.ts"

const pg = Postgres.available()

/** `npm run serve -- <args>` as a child process; resolves with its URL once it prints the listening line. */
const serve = (args: ReadonlyArray<string>): Promise<{ readonly child: ChildProcess; readonly url: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "programs/serve.ts", ...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const m = /toolenv listening on (http:\/\/\S+)/.exec(out)
      if (m !== null) resolve({ child, url: m[1] as string })
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => void (err += chunk))
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${err}`)))
  })

const key = { "x-client-key": "serve-postgres-test-client" }
const post = async (url: string, body: unknown) => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...key }, body: JSON.stringify(body) })
  return { status: res.status, json: (await res.json()) as any }
}

if (pg.url === undefined) {
  describe.skip(`npm run serve on PostgreSQL: ${pg.reason}`, () => {
    it("skipped", () => {})
  })
} else {
  const url = pg.url
  const schema = Postgres.freshSchema("serve")
  const replicas: Array<{ readonly child: ChildProcess; readonly url: string }> = []

  describe("npm run serve: two replicas on one PostgreSQL (--store postgres://)", () => {
    beforeAll(async () => {
      const args = ["--port", "0", "--world-size", "2000", "--store", url, "--pg-schema", schema, "--pg-pool", "4"]
      replicas.push(...(await Promise.all([serve(args), serve(args)])))
    }, 600_000)
    afterAll(() => {
      for (const r of replicas) r.child.kill("SIGKILL")
      Postgres.dropSchema(url, schema)
    })

    it("an episode stepped alternately through both replicas is one process's; a racing round is one 200 and one 409; a close on one is a 404 on the other", async () => {
      const proxy = await RoundRobinProxy.start(replicas.map((r) => r.url))
      try {
        const listed = await (await fetch(`${proxy.url}/tasks?split=test&level=I3&count=1&gold=true`)).json() as { tasks: Array<any> }
        const view = listed.tasks[0]
        const created = await post(`${proxy.url}/sessions`, { taskId: view.id, seed: 5, faultRate: 0.3 })
        expect(created.status).toBe(200)
        const id = created.json.sessionId as string
        for (const [round, request] of goldRounds({ ...view, seed: 0 }).entries()) {
          const r = await post(`${proxy.url}/sessions/${id}/step`, { ...request, round })
          expect(r.status).toBe(200)
          if (r.json.done === true) break
        }
        expect(new Set(proxy.served).size).toBe(2)
        const fromA = await (await fetch(`${replicas[0]!.url}/sessions/${id}/trajectory`, { headers: key })).json()
        const fromB = await (await fetch(`${replicas[1]!.url}/sessions/${id}/trajectory`, { headers: key })).json()
        expect(canonicalJson(JSON.parse(timeless(fromA)))).toBe(canonicalJson(JSON.parse(timeless(fromB))))
        // the log: one row per accepted round, in order
        const rows = Postgres.runSql(url, `SELECT string_agg(t.idx::text, ',' ORDER BY t.idx) FROM "${schema}".turns t JOIN "${schema}".sessions s USING (incarnation) WHERE s.id = '${id}'`).trim()
        expect(rows).toBe(fromA.steps.map((_: unknown, i: number) => String(i)).join(","))

        const fresh = await post(`${replicas[0]!.url}/sessions`, { seed: 1 })
        const sid = fresh.json.sessionId as string
        const turn = { turn: { searches: [{ slot: "s1", query: "weather" }], calls: [] } }
        const race = await Promise.all(replicas.map((r) => post(`${r.url}/sessions/${sid}/step`, { ...turn, round: 0 })))
        expect(race.map((r) => r.status).sort()).toEqual([200, 409])
        const closed = await fetch(`${replicas[0]!.url}/sessions/${sid}`, { method: "DELETE", headers: key })
        expect(closed.status).toBe(200)
        const after = await post(`${replicas[1]!.url}/sessions/${sid}/step`, { ...turn, round: 1 })
        expect(after.status).toBe(404)
      } finally {
        await proxy.close()
      }
    }, 600_000)

    it("an unreachable database or a foreign schema is one line on stderr and a non-zero exit", async () => {
      const down = new URL(url)
      down.port = "1"
      const unreachable = await spawnProgram("programs/serve.ts", ["--port", "0", "--world-size", "500", "--store", down.toString()])
      expect(unreachable.code).not.toBe(0)
      expect(unreachable.stderr.trim().split("\n")).toHaveLength(1)
      expect(unreachable.stderr).toMatch(/unreachable: .*ECONNREFUSED/)
      const foreign = Postgres.freshSchema("alien")
      try {
        Postgres.runSql(url, `CREATE SCHEMA "${foreign}"; CREATE TABLE "${foreign}".orders (id int)`)
        const refused = await spawnProgram("programs/serve.ts", ["--port", "0", "--world-size", "500", "--store", url, "--pg-schema", foreign])
        expect(refused.code).not.toBe(0)
        expect(refused.stderr.trim().split("\n")).toHaveLength(1)
        expect(refused.stderr).toMatch(/holds tables of another application \(orders\)/)
      } finally {
        Postgres.dropSchema(url, foreign)
      }
    }, 600_000)
  })
}
