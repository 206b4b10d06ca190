import { assert, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { spool, writeFileAtomic, writeFileAtomicEffect, writeFileAtomicParts, writeFileAtomicPartsEffect } from "../../src/io/AtomicWrite.ts"

describe("writeFileAtomic", () => {
  it("creates parent folders, writes text and bytes, replaces an existing file and leaves no temp file", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "paraagent-atomic-"))
    const file = path.join(dir, "a", "b", "out.bin")
    await writeFileAtomic(file, "first")
    expect(await fs.readFile(file, "utf8")).toBe("first")
    await writeFileAtomic(file, new Uint8Array([1, 2, 3]))
    expect([...(await fs.readFile(file))]).toEqual([1, 2, 3])
    expect(await fs.readdir(path.dirname(file))).toEqual(["out.bin"])
    await fs.rm(dir, { recursive: true, force: true })
  })

  it("rejects when the rename fails, keeps what was there and removes its temp file", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "paraagent-atomic-"))
    const target = path.join(dir, "taken")
    await fs.mkdir(target)
    await fs.writeFile(path.join(target, "inside"), "kept")
    await expect(writeFileAtomic(target, "data")).rejects.toThrow()
    expect((await fs.readdir(dir)).sort()).toEqual(["taken"])
    expect(await fs.readFile(path.join(target, "inside"), "utf8")).toBe("kept")
    await fs.rm(dir, { recursive: true, force: true })
  })

  it.effect("the Effect form fails with a PlatformError naming the file, and leaves no temp file", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "paraagent-atomic-")))
      const target = path.join(dir, "taken")
      yield* Effect.promise(() => fs.mkdir(target))
      const error = yield* Effect.flip(writeFileAtomicEffect(target, "data"))
      assert.strictEqual(error._tag, "PlatformError")
      assert.include(error.message, target)
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(dir)), ["taken"])
      yield* Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
    }))
})

describe("writeFileAtomicParts and spool", () => {
  it.effect("a page written around a spooled middle is the concatenation; the spool is gone with its scope; no temp file stays", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "paraagent-parts-")))
      const file = path.join(dir, "page.html")
      const middle = Array.from({ length: 2000 }, (_, i) => `"détail ${i} ${"x".repeat(i % 97)}"`)
      const spooled = yield* Effect.scoped(Effect.gen(function*() {
        const s = yield* spool(file)
        for (const [i, m] of middle.entries()) yield* s.append(i === 0 ? m : `,${m}`)
        yield* writeFileAtomicPartsEffect(file, ["<head>[", { file: s.file }, "]</tail>\n"])
        return s.file
      }))
      assert.strictEqual(yield* Effect.promise(() => fs.readFile(file, "utf8")), `<head>[${middle.join(",")}]</tail>\n`)
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(dir)), ["page.html"])
      assert.isFalse(spooled === file)
      yield* Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
    }))

  it("a part that cannot be read fails the write: the old file is kept and no temp file stays", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "paraagent-parts-"))
    const file = path.join(dir, "page.html")
    await fs.writeFile(file, "old")
    await expect(writeFileAtomicParts(file, ["new", { file: path.join(dir, "missing.spool") }])).rejects.toThrow()
    expect(await fs.readFile(file, "utf8")).toBe("old")
    expect(await fs.readdir(dir)).toEqual(["page.html"])
    await fs.rm(dir, { recursive: true, force: true })
  })
})
