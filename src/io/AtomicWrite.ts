/**
 * The project's one atomic file writer: the data goes to a temp file beside the target, which is then renamed over it
 * (atomic on one file system), so a reader never sees half a file. A failed write removes its temp file. A file too
 * large to hold as one string is written in parts ({@link writeFileAtomicPartsEffect}), its middle spooled to a temp
 * file first ({@link spool}).
 */
import { Effect } from "effect"
import type * as Scope from "effect/Scope"
import { createReadStream } from "node:fs"
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

/** A piece of a file written in parts: text, or the whole content of another file (a {@link Spool}). */
export type Part = string | { readonly file: string }

/** Writes the parts in order to `file` atomically, as {@link writeFileAtomic} writes one string. */
export const writeFileAtomicParts = async (file: string, parts: ReadonlyArray<Part>): Promise<void> => {
  await fs.mkdir(path.dirname(file), { recursive: true })
  const temp = `${file}.${process.pid}-${counter++}.tmp`
  try {
    const handle = await fs.open(temp, "w")
    try {
      for (const part of parts) {
        if (typeof part === "string") await handle.write(part)
        else for await (const chunk of createReadStream(part.file)) await handle.write(chunk as Buffer)
      }
    } finally {
      await handle.close()
    }
    await fs.rename(temp, file)
  } catch (e) {
    await fs.rm(temp, { force: true })
    throw e
  }
}

const platformError = (file: string, method: string) => (cause: unknown): PlatformError.PlatformError => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  return PlatformError.systemError({
    _tag: tagOf(code),
    module: "AtomicWrite",
    method,
    pathOrDescriptor: file,
    description: cause instanceof Error ? cause.message : String(cause),
    cause
  })
}

/** {@link writeFileAtomicParts} as an Effect; a failure is a `PlatformError` naming the file and the system error. */
export const writeFileAtomicPartsEffect = (file: string, parts: ReadonlyArray<Part>): Effect.Effect<void, PlatformError.PlatformError> =>
  Effect.tryPromise({ try: () => writeFileAtomicParts(file, parts), catch: platformError(file, "writeFileAtomicParts") })

/** A temp file beside a target that text is appended to in order; removed when its scope closes. */
export interface Spool {
  readonly file: string
  readonly append: (text: string) => Effect.Effect<void, PlatformError.PlatformError>
}

/** A {@link Spool} beside `target` (`<target>.<pid>-<n>.spool`), closed and removed with the scope. */
export const spool = (target: string): Effect.Effect<Spool, PlatformError.PlatformError, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          await fs.mkdir(path.dirname(target), { recursive: true })
          const file = `${target}.${process.pid}-${counter++}.spool`
          return { file, handle: await fs.open(file, "w") }
        },
        catch: platformError(target, "spool")
      }),
      ({ file, handle }) => Effect.promise(() => handle.close().catch(() => undefined).then(() => fs.rm(file, { force: true })))
    ),
    ({ file, handle }): Spool => ({
      file,
      append: (text) => Effect.tryPromise({ try: () => handle.write(text).then(() => undefined), catch: platformError(file, "append") })
    })
  )

/** {@link writeFileAtomic} as an Effect; a failure is a `PlatformError` naming the file and the system error. */
export const writeFileAtomicEffect = (file: string, data: Uint8Array | string): Effect.Effect<void, PlatformError.PlatformError> =>
  Effect.tryPromise({ try: () => writeFileAtomic(file, data), catch: platformError(file, "writeFileAtomic") })
