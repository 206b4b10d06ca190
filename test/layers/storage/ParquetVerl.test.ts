import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { parquetMetadata, parquetReadObjects } from "hyparquet"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ParquetVerl from "../../../layers/storage/ParquetVerl.ts"
import * as VerlExports from "../../../src/training/VerlExports.ts"
import { verlFixture } from "../../support/VerlFixture.ts"

/** Reads a file back with hyparquet (an independent reader): the schema as [path, type, repetition, converted] and the rows. */
const readBack = async (file: string) => {
  const bytes = readFileSync(file)
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
  const schema = parquetMetadata(buffer).schema.slice(1).map((e) => [e.name, e.type ?? "group", e.repetition_type, e.converted_type ?? "-"].join(" "))
  // INT64 comes back as BigInt: numbers again, to compare with the rows written
  const rows = JSON.parse(JSON.stringify(await parquetReadObjects({ file: buffer }), (_k, v) => (typeof v === "bigint" ? Number(v) : v)))
  return { schema, rows }
}

const dir = mkdtempSync(join(tmpdir(), "paraagent-parquet-"))

// The documented columns (docs/formats.md, "verl and TRL exports") as hyparquet reports them: verl's RLHFDataset reads `prompt` (chat messages),
// `data_source`, `reward_model`, `extra_info` (its `index`), `agent_name`; MultiTurnSFTDataset reads `messages`, `tools`.
const rlSchema = [
  "data_source BYTE_ARRAY REQUIRED UTF8",
  "prompt group REQUIRED LIST", "list group REPEATED -", "element group REQUIRED -", "role BYTE_ARRAY REQUIRED UTF8", "content BYTE_ARRAY REQUIRED UTF8",
  "ability BYTE_ARRAY REQUIRED UTF8",
  "reward_model group REQUIRED -", "style BYTE_ARRAY REQUIRED UTF8", "ground_truth BYTE_ARRAY REQUIRED UTF8",
  "extra_info group REQUIRED -", "index INT64 REQUIRED -", "task_id BYTE_ARRAY REQUIRED UTF8", "split BYTE_ARRAY REQUIRED UTF8",
  "level BYTE_ARRAY REQUIRED UTF8", "paradigm BYTE_ARRAY REQUIRED UTF8", "seed INT64 REQUIRED -", "max_rounds INT64 REQUIRED -",
  "fault_rate DOUBLE REQUIRED -", "world_seed INT64 OPTIONAL -", "world_size INT64 OPTIONAL -", "library BYTE_ARRAY OPTIONAL UTF8",
  "task BYTE_ARRAY OPTIONAL UTF8",
  "agent_name BYTE_ARRAY REQUIRED UTF8"
]
const sftSchema = [
  "messages group REQUIRED LIST", "list group REPEATED -", "element group REQUIRED -", "role BYTE_ARRAY REQUIRED UTF8",
  "content BYTE_ARRAY OPTIONAL UTF8", "tool_calls group OPTIONAL LIST", "list group REPEATED -", "element group REQUIRED -",
  "id BYTE_ARRAY REQUIRED UTF8", "type BYTE_ARRAY REQUIRED UTF8", "function group REQUIRED -", "name BYTE_ARRAY REQUIRED UTF8",
  "arguments BYTE_ARRAY REQUIRED UTF8", "tool_call_id BYTE_ARRAY OPTIONAL UTF8", "name BYTE_ARRAY OPTIONAL UTF8",
  "tools BYTE_ARRAY REQUIRED UTF8", "id BYTE_ARRAY REQUIRED UTF8", "task_id BYTE_ARRAY REQUIRED UTF8", "level BYTE_ARRAY REQUIRED UTF8",
  "paradigm BYTE_ARRAY REQUIRED UTF8", "policy BYTE_ARRAY REQUIRED UTF8", "mode BYTE_ARRAY REQUIRED UTF8",
  "verdict group REQUIRED -", "quality BYTE_ARRAY REQUIRED UTF8", "faithfulness BYTE_ARRAY REQUIRED UTF8", "utility BYTE_ARRAY REQUIRED UTF8",
  "rationale BYTE_ARRAY OPTIONAL UTF8", "judge BYTE_ARRAY REQUIRED UTF8"
]

describe("verl parquet, read back with hyparquet", () => {
  it.effect("RL rows round-trip with the documented columns and types (nulls included)", () =>
    Effect.gen(function*() {
      const { tasks } = yield* verlFixture
      const generated = Result.getOrThrow(VerlExports.rlRows(tasks, {
        paradigm: "ParaAct", maxRounds: 8, faultRate: 0.05, world: { _tag: "generated", seed: 7, size: 600 }, seedOf: (_t, i) => 2 ** 40 + i
      }))
      const library = Result.getOrThrow(VerlExports.rlRows(tasks.slice(0, 2), {
        paradigm: "DFSDT", maxRounds: 8, faultRate: 0, world: { _tag: "library", dir: "/data/tools" }, seedOf: () => 0, postTask: false
      }))
      const rows = [...generated, ...library.map((r) => ({ ...r, extra_info: { ...r.extra_info, task_id: `${r.extra_info.task_id}-lib` } }))]
      const file = join(dir, "rl_train.parquet")
      yield* ParquetVerl.writeRl(file, rows)
      const back = yield* Effect.promise(() => readBack(file))
      assert.deepStrictEqual(back.schema, rlSchema)
      assert.deepStrictEqual(back.rows, JSON.parse(JSON.stringify(rows)))
      assert.strictEqual(back.rows[0].extra_info.seed, 2 ** 40)
    }))

  it.effect("SFT rows round-trip: messages with tool_calls (arguments as JSON strings), tools as JSON text", () =>
    Effect.gen(function*() {
      const { demos } = yield* verlFixture
      const rows = demos.lines.map(VerlExports.sftRow)
      const file = join(dir, "sft_train.parquet")
      yield* ParquetVerl.writeSft(file, rows)
      const back = yield* Effect.promise(() => readBack(file))
      assert.deepStrictEqual(back.schema, sftSchema)
      assert.deepStrictEqual(back.rows, JSON.parse(JSON.stringify(rows)))
      const calls = back.rows.flatMap((r: VerlExports.SftRow) => r.messages.flatMap((m) => m.tool_calls ?? []))
      assert.isAbove(calls.length, 0)
      for (const c of calls) assert.isString(c.function.arguments)
      assert.deepStrictEqual(JSON.parse(back.rows[0].tools), demos.lines[0]?.tools)
    }))

  it.effect("an unwritable path is a ParquetError naming the file", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ParquetVerl.writeSft("/dev/null/x/sft.parquet", []))
      assert.strictEqual(error._tag, "ParquetError")
      assert.strictEqual(error.file, "/dev/null/x/sft.parquet")
    }))
})
