/**
 * The first SIGTERM ends a program (exit 143; SIGINT 130; 0 for a server that drained), whatever it is waiting on; a
 * FIFO named like a data file in a `--library` folder is skipped, not waited on (before: `serve` hung before listening
 * and ignored the first SIGTERM).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { repoRoot } from "../../src/io/DataPath.ts"
import { safetyBoundMs } from "../support/Bounds.ts"
import * as LoopbackServer from "../support/LoopbackServer.ts"

interface Ended {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Spawns a program, waits for a line of its stdout or stderr matching `ready` (or for `ready` to resolve), sends
 * `signal`, and resolves with how it ended. A generous bound kills it if it never becomes ready or never ends.
 */
const signalled = (file: string, args: ReadonlyArray<string>, ready: RegExp | (() => Promise<unknown>), signal: NodeJS.Signals) =>
  Effect.promise(() =>
    new Promise<Ended & { readonly readyReached: boolean }>((resolve) => {
      const child = spawn(process.execPath, ["--import", "tsx", file, ...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PARAAGENT_BASE_URL: "", PARAAGENT_MODEL: "" } })
      let stdout = ""
      let stderr = ""
      let readyReached = false
      const fire = () => {
        if (readyReached) return
        readyReached = true
        child.kill(signal)
      }
      const safety = setTimeout(() => child.kill("SIGKILL"), safetyBoundMs)
      child.stdout.setEncoding("utf8").on("data", (c: string) => {
        stdout += c
        if (ready instanceof RegExp && ready.test(stdout)) fire()
      })
      child.stderr.setEncoding("utf8").on("data", (c: string) => {
        stderr += c
        if (ready instanceof RegExp && ready.test(stderr)) fire()
      })
      if (!(ready instanceof RegExp)) void ready().then(fire)
      child.on("close", (code, sig) => {
        clearTimeout(safety)
        resolve({ code, signal: sig, stdout, stderr, readyReached })
      })
    }))

const dir = mkdtempSync(join(tmpdir(), "paraagent-signals-"))
const library = join(dir, "lib")
mkdirSync(join(library, "Cat"), { recursive: true })
writeFileSync(join(library, "Cat", "t.json"), JSON.stringify({
  tool_name: "T",
  tool_description: "a tool",
  api_list: [{ name: "a", description: "an api", method: "GET", required_parameters: [], optional_parameters: [] }]
}))
execFileSync("mkfifo", [join(library, "Cat", "pipe.json")])

describe("signals and files that are not files", () => {
  it.live("serve over a --library holding a FIFO named *.json starts (the FIFO skipped); the first SIGTERM ends it: drained, exit 0", () =>
    Effect.gen(function*() {
      const r = yield* signalled("programs/serve.ts", ["--port", "0", "--library", library], /toolenv listening on/, "SIGTERM")
      assert.isTrue(r.readyReached, `serve never listened: ${r.stderr}`)
      // a graceful finish: nothing was in flight, so the drain is done at once (143 only when it outlives --drain-timeout)
      assert.strictEqual(r.code, 0, r.stderr)
    }))

  it.live("a program waiting on a model endpoint that never answers: SIGTERM ends it with 143, SIGINT with 130", () =>
    Effect.gen(function*() {
      for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
        const server = yield* LoopbackServer.make({ fallback: LoopbackServer.Reply.json({}, { delayMs: 600_000 }) })
        const arrived = () =>
          new Promise<void>((done) => {
            const poll = setInterval(() => {
              void Effect.runPromise(server.requests).then((rs) => {
                if (rs.length > 0) {
                  clearInterval(poll)
                  done()
                }
              })
            }, 100)
          })
        const r = yield* signalled(
          "programs/compare.ts",
          ["--policy", "openai", "--base-url", `${server.url}/v1`, "--model", "m", "--world-size", "600", "--tasks", "1", "--levels", "I1", "--paradigms", "ReAct", "--group", "1", "--max-rounds", "1", "--out", join(dir, `run-${signal}`)],
          arrived,
          signal
        )
        assert.isTrue(r.readyReached)
        assert.strictEqual(r.code, code, r.stderr)
        assert.notInclude(r.stderr, "    at ")
      }
    }).pipe(Effect.scoped))
})
