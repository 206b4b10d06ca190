import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import * as Exports from "../../src/training/Exports.ts"
import * as VerlExports from "../../src/training/VerlExports.ts"
import type { Task } from "../../src/domain/Task.ts"
import { verlFixture } from "../support/VerlFixture.ts"

const options: VerlExports.RlOptions = {
  paradigm: "ParaAct",
  maxRounds: 8,
  faultRate: 0.05,
  world: { _tag: "generated", seed: 7, size: 600 },
  seedOf: (_task, index) => 100 + index
}

describe("verl RL rows", () => {
  it.effect("one row per task: the round-1 prompt, the agent loop's name and what it needs to open the session", () =>
    Effect.gen(function*() {
      const { tasks } = yield* verlFixture
      const rows = Result.getOrThrow(VerlExports.rlRows(tasks, options))
      assert.strictEqual(rows.length, tasks.length)
      rows.forEach((row, i) => {
        const task = tasks[i] as Task
        assert.strictEqual(row.agent_name, "paraagent_paraact")
        assert.deepStrictEqual(row.prompt.map((m) => m.role), ["system", "user"])
        assert.strictEqual(row.prompt[1]?.content, task.request)
        assert.include(row.prompt[0]?.content ?? "", "8 rounds")
        assert.deepStrictEqual(
          { ...row.extra_info, task: null },
          { index: i, task_id: task.id, split: "train", level: task.level, paradigm: "ParaAct", seed: 100 + i, max_rounds: 8, fault_rate: 0.05, world_seed: 7, world_size: 600, library: null, task: null }
        )
        assert.deepStrictEqual(JSON.parse(row.extra_info.task ?? "null"), task)
        assert.deepStrictEqual(JSON.parse(row.reward_model.ground_truth), task.facts.map((f) => ({ key: f.key, value: f.value })))
      })
    }))

  it.effect("a library world names the folder; postTask false leaves the task out", () =>
    Effect.gen(function*() {
      const { tasks } = yield* verlFixture
      const rows = Result.getOrThrow(VerlExports.rlRows(tasks.slice(0, 1), { ...options, world: { _tag: "library", dir: "/data/tools" }, postTask: false }))
      assert.deepStrictEqual([rows[0]?.extra_info.library, rows[0]?.extra_info.world_seed, rows[0]?.extra_info.task], ["/data/tools", null, null])
    }))

  it.effect("bad options and duplicate tasks are named errors", () =>
    Effect.gen(function*() {
      const { tasks } = yield* verlFixture
      const field = (r: Result.Result<unknown, Exports.ExportError>) => (Result.isFailure(r) ? r.failure.field : "ok")
      assert.strictEqual(field(VerlExports.rlRows(tasks, { ...options, maxRounds: 0 })), "maxRounds")
      assert.strictEqual(field(VerlExports.rlRows(tasks, { ...options, faultRate: 1.5 })), "faultRate")
      assert.strictEqual(field(VerlExports.rlRows([tasks[0] as Task, tasks[0] as Task], options)), "taskId")
    }))
})

describe("verl SFT rows", () => {
  it.effect("the judge-filtered demonstrations, every message with every field, tool-call arguments JSON strings", () =>
    Effect.gen(function*() {
      const { tasks, demos } = yield* verlFixture
      assert.strictEqual(demos.trajectories.length, tasks.length)
      assert.strictEqual(demos.lines.length + demos.skipped.length, tasks.length)
      assert.isAbove(demos.lines.length, 0)
      const kept = new Set(demos.lines.map((l) => l.id as string))
      for (const t of demos.trajectories) {
        const task = tasks.find((x) => x.id === t.taskId) as Task
        assert.strictEqual(kept.has(t.id), t.verdict !== undefined && Exports.passed(t, task))
      }
      let calls = 0
      for (const line of demos.lines) {
        const row = VerlExports.sftRow(line)
        assert.deepStrictEqual(JSON.parse(row.tools), line.tools)
        assert.strictEqual(row.messages.length, line.messages.length)
        for (const [i, m] of row.messages.entries()) {
          const original = line.messages[i]
          assert.deepStrictEqual(Object.keys(m), ["role", "content", "tool_calls", "tool_call_id", "name"])
          assert.strictEqual(m.role, original?.role)
          for (const c of m.tool_calls ?? []) {
            calls++
            assert.isObject(JSON.parse(c.function.arguments))
          }
          if (m.role === "tool") assert.isString(m.tool_call_id)
          else assert.isNull(m.tool_call_id)
        }
        assert.strictEqual(row.messages.at(-1)?.role, "assistant")
      }
      assert.isAbove(calls, 0)
    }))
})
