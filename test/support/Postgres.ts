/**
 * A real PostgreSQL for tests and benches: `$PARAAGENT_TEST_PG` when set (`.ci/run` starts one and sets it), else a
 * scratch cluster started here from Debian's binaries (`initdb -A trust`, `pg_ctl` on a free port and a socket in a
 * temp folder, as the `postgres` user when running as root), else nothing — and the reason, for a one-line skip.
 * Each caller works in schemas of its own (`freshSchema`) and drops them when done.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

/** A reachable database, or why there is none. */
export type Available = { readonly url: string; readonly stop: () => void } | { readonly url: undefined; readonly reason: string }

const binDir = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  if (!fs.existsSync(root)) return undefined
  const versions = fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : path.join(root, versions[0], "bin")
}

const freePortSync = (): number => {
  const out = spawnSync(process.execPath, ["-e", "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"], { encoding: "utf8" })
  return Number(out.stdout.trim())
}

/** The psql binary next to the server's, or the one on PATH. */
export const psql = (): string => {
  const dir = binDir()
  return dir !== undefined && fs.existsSync(path.join(dir, "psql")) ? path.join(dir, "psql") : "psql"
}

/** Runs one SQL statement with psql (for setup and cleanup outside the code under test). */
export const runSql = (url: string, statement: string): string =>
  execFileSync(psql(), [url, "-v", "ON_ERROR_STOP=1", "-qAtc", statement], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1024 * 1024 * 1024 })

let started: Available | undefined

/** The database to use (started once per process when it has to be). */
export const available = (): Available => {
  if (started !== undefined) return started
  const env = process.env["PARAAGENT_TEST_PG"]
  if (env !== undefined && env !== "") return (started = { url: env, stop: () => {} })
  const bin = binDir()
  if (bin === undefined) return (started = { url: undefined, reason: "no PostgreSQL here (Debian's postgresql package; .ci/run installs it): set PARAAGENT_TEST_PG to a database URL to run these tests" })
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-pg-"))
  const data = path.join(dir, "data")
  const port = freePortSync()
  const asRoot = process.getuid?.() === 0
  const run = (command: string, args: ReadonlyArray<string>) => {
    const full = [path.join(bin, command), ...args]
    const result = asRoot
      ? spawnSync("su", ["postgres", "-s", "/bin/sh", "-c", full.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ")], { encoding: "utf8" })
      : spawnSync(full[0] as string, full.slice(1), { encoding: "utf8" })
    if (result.status !== 0) throw new Error(`${command}: ${result.stderr || result.stdout}`)
  }
  try {
    if (asRoot) execFileSync("chown", ["postgres", dir])
    run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"])
    run("pg_ctl", ["-D", data, "-w", "-l", path.join(dir, "log"), "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`, "start"])
  } catch (e) {
    return (started = { url: undefined, reason: `could not start a scratch PostgreSQL from ${bin}: ${(e as Error).message.split("\n")[0]}` })
  }
  const stop = () => {
    try {
      run("pg_ctl", ["-D", data, "-m", "immediate", "stop"])
    } catch {
      // already gone
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
  process.once("exit", stop)
  return (started = { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop })
}

/** A schema name no one else uses (the store creates it; `dropSchema` removes it). */
export const freshSchema = (prefix = "t"): string => `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`

/** Drops a schema and everything in it. */
export const dropSchema = (url: string, schema: string): void => {
  runSql(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
}

/** Whether something answers on the database's port (for a quick pre-check). */
export const reachable = (url: string): Promise<boolean> =>
  new Promise((resolve) => {
    const u = new URL(url)
    const socket = net.connect({ host: u.hostname, port: Number(u.port || 5432) })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })
