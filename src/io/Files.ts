/**
 * Reading files that may not be files: a path named like a model, a query file or a data file can be a FIFO (reading
 * it with no writer blocks forever, and takes the process's first SIGTERM with it), a socket or a device. Every loader
 * reads through these, so such a path is a clear error naming it, never a hang.
 */
import * as fs from "node:fs/promises"

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
