/**
 * Files that may not be files, and outputs that may not be writable: a path named like a model, a query file or a data
 * file can be a FIFO (reading it with no writer blocks forever), a socket or a device — every loader reads through
 * these, so such a path is a clear error naming it, never a hang; and every output path a program is given is probed
 * before any work (`checkWritable`), so an unwritable `--out` is said at once, not after hours.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"
import { ConfigError } from "../domain/Errors.ts"

/** The words for a path that is neither a file nor a folder. */
export const notAFileMessage = "not a regular file (a FIFO, socket, device or broken link): never opened"

/** Rejects with an Error naming the path unless it is a regular file (symbolic links followed); else resolves. */
export const assertRegularFile = async (path: string): Promise<void> => {
  const stats = await fs.stat(path)
  if (stats.isFile()) return
  throw new Error(stats.isDirectory() ? `${path} is a folder, not a file` : `${path} is ${notAFileMessage}`)
}

/** `fs.readFile` of a path checked to be a regular file first (as bytes). */
export const readBytes = async (path: string): Promise<Buffer> => {
  await assertRegularFile(path)
  return fs.readFile(path)
}

/** `fs.readFile` of a path checked to be a regular file first (as UTF-8 text). */
export const readUtf8 = async (path: string): Promise<string> => {
  await assertRegularFile(path)
  return fs.readFile(path, "utf8")
}

/** A mode with no write bit: read-only for everyone (root included, whom the kernel would let write anyway). */
const noWriteBit = (mode: number): boolean => (mode & 0o222) === 0

/**
 * Checks, before any work, that `target` can be written: the folder (`kind: "folder"`: the target itself, created with
 * its parents when absent; `"file"`: its parent) gets a probe file created and removed, and a folder or an existing
 * file without any write bit is refused too (root passes the probe in a read-only folder). Rejects with an Error
 * saying what is wrong, naming the path.
 */
export const probeWritable = async (target: string, kind: "folder" | "file"): Promise<void> => {
  const resolved = nodePath.resolve(target)
  const dir = kind === "folder" ? resolved : nodePath.dirname(resolved)
  if (kind === "file") {
    const stats = await fs.stat(resolved).catch(() => undefined)
    if (stats !== undefined && stats.isDirectory()) throw new Error(`${resolved} is a folder, not a file`)
    if (stats !== undefined && !stats.isFile()) throw new Error(`${resolved} is ${notAFileMessage}`)
    if (stats !== undefined && noWriteBit(stats.mode)) throw new Error(`${resolved} is read-only (no write permission)`)
  }
  // the folder to be created lands in its nearest existing ancestor: that one must be writable (root could mkdir anyway)
  let existing = dir
  while (!(await fs.stat(existing).then(() => true, () => false))) {
    const parent = nodePath.dirname(existing)
    if (parent === existing) break
    existing = parent
  }
  const ancestor = await fs.stat(existing).catch(() => undefined)
  if (ancestor !== undefined && ancestor.isDirectory() && existing !== dir && noWriteBit(ancestor.mode)) {
    throw new Error(`cannot create ${dir}: the folder ${existing} is read-only (no write permission)`)
  }
  await fs.mkdir(dir, { recursive: true }).catch((e: unknown) => {
    throw new Error(`cannot create the folder ${dir} (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`)
  })
  const stats = await fs.stat(dir)
  if (!stats.isDirectory()) throw new Error(`${dir} is not a folder`)
  if (noWriteBit(stats.mode)) throw new Error(`the folder ${dir} is read-only (no write permission)`)
  const probe = nodePath.join(dir, `.paraagent-write-probe-${process.pid}-${randomBytes(4).toString("hex")}`)
  await fs.writeFile(probe, "").catch((e: unknown) => {
    throw new Error(`cannot write in the folder ${dir} (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`)
  })
  await fs.rm(probe, { force: true })
}

/** {@link probeWritable} as an effect failing with a ConfigError on `flag` (e.g. `--out`), naming the path and why. */
export const checkWritable = (flag: string, target: string, kind: "folder" | "file"): Effect.Effect<void, ConfigError> =>
  Effect.tryPromise({
    try: () => probeWritable(target, kind),
    catch: (e) => new ConfigError({ field: flag, value: target, message: `${flag} ${target}: ${e instanceof Error ? e.message : String(e)} — checked before any work` })
  })
