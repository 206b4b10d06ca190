/**
 * The project's one atomic file writer: the data goes to a temp file beside the target, which is then renamed over it
 * (atomic on one file system), so a reader never sees half a file. A failed write removes its temp file.
 */
import { Effect } from "effect"
import * as PlatformError from "effect/PlatformError"
import * as fs from "node:fs/promises"
import * as path from "node:path"

let counter = 0

/** Writes `data` to `file` atomically, creating the parent folders; rejects (temp file removed) when it cannot. */
export const writeFileAtomic = async (file: string, data: Uint8Array | string): Promise<void> => {
  await fs.mkdir(path.dirname(file), { recursive: true })
  const temp = `${file}.${process.pid}-${counter++}.tmp`
  try {
    await fs.writeFile(temp, data)
    await fs.rename(temp, file)
  } catch (e) {
    await fs.rm(temp, { force: true })
    throw e
  }
}

const tagOf = (code: unknown): PlatformError.SystemErrorTag =>
  code === "ENOENT" || code === "ENOTDIR" ? "NotFound"
  : code === "EACCES" || code === "EPERM" || code === "EROFS" ? "PermissionDenied"
  : code === "EEXIST" ? "AlreadyExists"
  : code === "EBUSY" ? "Busy"
  : code === "EISDIR" ? "BadResource"
  : "Unknown"

/** {@link writeFileAtomic} as an Effect; a failure is a `PlatformError` naming the file and the system error. */
export const writeFileAtomicEffect = (file: string, data: Uint8Array | string): Effect.Effect<void, PlatformError.PlatformError> =>
  Effect.tryPromise({
    try: () => writeFileAtomic(file, data),
    catch: (cause) => {
      const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
      return PlatformError.systemError({
        _tag: tagOf(code),
        module: "AtomicWrite",
        method: "writeFileAtomic",
        pathOrDescriptor: file,
        description: cause instanceof Error ? cause.message : String(cause),
        cause
      })
    }
  })
