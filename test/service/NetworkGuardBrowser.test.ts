/**
 * The default ToolEnv server (no token) attacked by a real browser (Debian's headless Chromium, driven by
 * playwright-core): a page of another origin tries every request it can send without asking first (forms, no-cors
 * fetches with text bodies), and a DNS-rebound page — loaded from an attacker's name that then resolves to the
 * server's address and port — tries the same-origin requests rebinding allows. Nothing may change on the server.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { HttpServer } from "effect/http"
import { existsSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { chromium } from "playwright-core"
import * as ToolEnvServer from "../../layers/server/ToolEnvServer.ts"

const executablePath = "/usr/bin/chromium"
const hasChromium = existsSync(executablePath)
const args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
if (!hasChromium) process.stderr.write(`NetworkGuardBrowser: skipped, ${executablePath} is absent (Debian's chromium package installs it)\n`)

const options: ToolEnvServer.ServerOptions = { ...ToolEnvServer.defaultOptions, worldSize: 2000, sessions: { ...ToolEnvServer.defaultOptions.sessions, ttlMs: 60_000 } }
const urlOf = (context: Context.Context<HttpServer.HttpServer>) => Effect.provide(ToolEnvServer.url, context)

/** A plain page server (the attacker's site); `close` drops its open connections too. */
const pageServer = (port = 0) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<http.Server>((resolve) => {
        const server = http.createServer((_req, res) => {
          res.writeHead(200, { "content-type": "text/html" })
          res.end("<!doctype html><title>a page</title><iframe name=sink></iframe>")
        })
        server.listen(port, "127.0.0.1", () => resolve(server))
      })),
    (server) => Effect.promise(() => new Promise<void>((done) => {
      server.closeAllConnections()
      server.close(() => done())
    }))
  )

const sessionsOf = (base: string) => Effect.promise(async () => ((await (await fetch(`${base}/health`)).json()) as { sessions: number }).sessions)

describe(hasChromium ? "the server attacked from headless Chromium" : `the server attacked from headless Chromium (skipped: ${executablePath} is absent)`, () => {
  it.live.skipIf(!hasChromium)("a page of another origin and a DNS-rebound page change nothing on the default server", () =>
    Effect.scoped(Effect.gen(function*() {
      // the attacker's page first, on the port the server will take once the name is rebound to it
      const attacker = yield* Effect.acquireRelease(
        Effect.promise(() => chromium.launch({ executablePath, headless: true, args: [...args, "--host-resolver-rules=MAP rebind.test 127.0.0.1"] })),
        (b) => Effect.promise(() => b.close())
      )
      const rebindPage = yield* Effect.promise(() => attacker.newPage())
      const port = yield* Effect.scoped(Effect.gen(function*() {
        const early = yield* pageServer()
        const p = (early.address() as AddressInfo).port
        yield* Effect.promise(() => rebindPage.goto(`http://rebind.test:${p}/`))
        return p
      }))
      // the name now resolves to the ToolEnv server, listening on the same address and port
      const base = yield* urlOf(yield* Layer.build(ToolEnvServer.layer({ ...options, port })))
      const site = yield* pageServer()
      const sitePage = yield* Effect.promise(() => attacker.newPage())
      yield* Effect.promise(() => sitePage.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`))

      // 1. a page of another origin: every request it can send without a preflight, and one that needs one
      const crossSite = yield* Effect.promise(() =>
        sitePage.evaluate(async (target) => {
          const attempts: Array<string> = []
          const tryFetch = async (label: string, path: string, init: RequestInit) => {
            try {
              const res = await fetch(target + path, init)
              attempts.push(`${label}: ${res.type} ${res.status}`)
            } catch (e) {
              attempts.push(`${label}: blocked (${(e as Error).name})`)
            }
          }
          await tryFetch("no-cors text reset", "/reset", { method: "POST", mode: "no-cors", body: "{\"seed\":1}" })
          await tryFetch("no-cors text session", "/sessions", { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: "{\"seed\":2}" })
          await tryFetch("no-cors posted task", "/tasks", { method: "POST", mode: "no-cors", body: "{\"request\":\"planted\",\"id\":\"planted\"}" })
          await tryFetch("json reset (preflight)", "/reset", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
          await tryFetch("read tasks", "/tasks?count=1", {})
          // a form, submitted into the iframe
          const form = document.createElement("form")
          form.method = "POST"
          form.action = target + "/reset"
          form.target = "sink"
          form.enctype = "text/plain"
          const field = document.createElement("input")
          field.name = "{\"seed\":3,\"x\":\""
          field.value = "\"}"
          form.appendChild(field)
          document.body.appendChild(form)
          const loaded = new Promise((done) => document.querySelector("iframe")!.addEventListener("load", done, { once: true }))
          form.submit()
          await loaded
          attempts.push("form submitted")
          return attempts
        }, base))
      assert.lengthOf(crossSite, 6)
      // the no-cors answers are opaque, the preflighted and read ones blocked: the page learns nothing
      assert.deepStrictEqual(crossSite.slice(0, 3).map((a) => a.replace(/^.*: /, "")), ["opaque 0", "opaque 0", "opaque 0"])
      assert.match(crossSite[3]!, /blocked \(TypeError\)/)
      assert.match(crossSite[4]!, /blocked \(TypeError\)/)

      // 2. the rebound page: same origin as far as the browser knows, so it can send JSON and read the answers
      const rebound = yield* Effect.promise(() =>
        rebindPage.evaluate(async () => {
          const reset = await fetch("/reset", { method: "POST", headers: { "content-type": "application/json" }, body: "{\"seed\":4}" })
          const tasks = await fetch("/tasks?count=1&gold=true")
          return [reset.status, tasks.status, await tasks.text()]
        }))
      assert.deepStrictEqual(rebound.slice(0, 2), [403, 403])
      assert.notInclude(String(rebound[2]), "gen-7-")
      assert.include(String(rebound[2]), "DNS-rebinding guard")

      // nothing was created or planted
      assert.strictEqual(yield* sessionsOf(base), 0)
      const planted = yield* Effect.promise(() => fetch(`${base}/tasks/planted`))
      assert.strictEqual(planted.status, 404)
      const metrics = yield* Effect.promise(async () => (await fetch(`${base}/metrics`)).text())
      assert.match(metrics, /toolenv_errors_total\{kind="Forbidden"\} ([5-9]|\d\d+)/)
    })))
})
