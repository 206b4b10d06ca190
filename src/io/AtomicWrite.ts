/**
 * Writing a file so that a reader never sees half of it: the data goes to a temp file beside the target, which is then
 * renamed over it (atomic on one file system). A failed write removes its temp file and rejects.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"

let counter = 0

/** Writes `data` to `file` atomically, creating the parent folders. */
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
