import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Schema } from "effect"
import { mkdtempSync, readdirSync, appendFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as RunFolder from "../../src/io/RunFolder.ts"

const Row = Schema.Struct({ n: Schema.Number })

describe("RunFolder", () => {
  it.effect("appends JSONL, writes files atomically, and reads back reporting a truncated line", () =>
    Effect.gen(function*() {
      const dir = join(mkdtempSync(join(tmpdir(), "paraagent-run-")), "nested", "run")
      const folder = yield* RunFolder.make(dir)
      yield* Effect.forEach([1, 2, 3], (n) => folder.appendJsonl("rows.jsonl", [{ n }, { n: n * 10 }]), { concurrency: "unbounded" })
      yield* folder.writeJson("summary.json", { ok: true })
      yield* folder.writeText("table.md", "| a |\n")
      // a crash mid-write leaves a partial last line
      appendFileSync(folder.file("rows.jsonl"), "{\"n\": 4")
      const read = yield* RunFolder.readJsonl(folder.file("rows.jsonl"), Row)
      assert.sameMembers(read.values.map((r) => r.n), [1, 10, 2, 20, 3, 30])
      assert.strictEqual(read.errors.length, 1)
      assert.strictEqual(read.errors[0]?.line, 7)
      const fs = yield* FileSystem.FileSystem
      assert.strictEqual(yield* fs.readFileString(folder.file("summary.json")), "{\n  \"ok\": true\n}\n")
      // no temporary files are left behind
      assert.sameMembers(readdirSync(dir), ["rows.jsonl", "summary.json", "table.md"])
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("writeFileAtomic replaces a file's text, concurrent writes leave one of them and no temporary file", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "paraagent-atomic-"))
      const file = join(dir, "report.json")
      yield* RunFolder.writeFileAtomic(file, "first\n")
      yield* RunFolder.writeFileAtomic(file, "second\n")
      const fs = yield* FileSystem.FileSystem
      assert.strictEqual(yield* fs.readFileString(file), "second\n")
      yield* Effect.forEach(["a", "b", "c", "d"], (t) => RunFolder.writeFileAtomic(file, t), { concurrency: "unbounded" })
      assert.include(["a", "b", "c", "d"], yield* fs.readFileString(file))
      assert.deepStrictEqual(readdirSync(dir), ["report.json"])
    }).pipe(Effect.provide(NodeServices.layer)))
})
