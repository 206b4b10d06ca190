import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import type { Observation } from "../../src/domain/Call.ts"
import type { Task } from "../../src/domain/Task.ts"
import type { Step, Trajectory } from "../../src/domain/Trajectory.ts"
import * as PolicyPrompt from "../../src/agent/PolicyPrompt.ts"
import * as Evaluation from "../../src/math/Evaluation.ts"
import * as OpenAiFormat from "../../src/protocol/OpenAiFormat.ts"
import * as ParaAct from "../../src/protocol/ParaAct.ts"
import * as Exports from "../../src/training/Exports.ts"
import { contextKey, type Recorded, recordedRollouts } from "../support/RecordedRollouts.ts"

const maxRounds = 8
let cached: Recorded | undefined
/** 3 held-out tasks × 4 paradigms × G = 2 teacher rollouts on a 4,000-tool world, T_max 8, scored per group. */
const rollouts = Effect.suspend(() =>
  cached !== undefined
    ? Effect.succeed(cached)
    : recordedRollouts({ worldSize: 4_000, tasks: 3, paradigms: ["ParaAct", "ReAct", "ExploreThenExecute", "DFSDT"], group: 2, maxRounds, mistakeRate: 0.2 })
      .pipe(Effect.tap((r) => Effect.sync(() => (cached = r))))
)

const decodeDemonstration = Schema.decodeUnknownSync(Schema.fromJsonString(Exports.DemonstrationLine))
const decodeExperience = Schema.decodeUnknownSync(Schema.fromJsonString(Exports.ExperienceLine))

const exported = <A>(result: Result.Result<Exports.Exported<A>, Exports.ExportError>): Exports.Exported<A> => {
  if (Result.isFailure(result)) assert.fail(`${result.failure.field}: ${result.failure.message}`)
  return result.success
}

/** The steps of the conversation: DFSDT's path to the last step by parent links, else every step. */
const pathOf = (trajectory: Trajectory): ReadonlyArray<Step> => {
  if (trajectory.paradigm !== "DFSDT") return trajectory.steps
  const path: Array<Step> = []
  for (let step = trajectory.steps.at(-1); step !== undefined; step = step.parent === undefined ? undefined : trajectory.steps[step.parent]) {
    path.unshift(step)
  }
  return path
}

/** The JSON a call's outcome is fed back as, computed here from the observation (the payload, or the error). */
const outcomeText = (o: Observation): string => JSON.stringify(o.outcome._tag === "ok" ? o.outcome.payload : { error: o.outcome.error })

/** A fed-back text equals the expected one, or is its cut to `budget` characters. */
const assertFedBack = (shown: string, expected: string, budget: number, label: string) => {
  if (expected.length <= budget) assert.strictEqual(shown, expected, label)
  else assert.isTrue(shown.startsWith(expected.slice(0, budget)) && shown.includes(`[${expected.length - budget} more characters]`), label)
}

const byId = (run: Recorded) => new Map(run.trajectories.map((t) => [t.id as string, t]))
const tasksById = (run: Recorded) => new Map(run.tasks.map((t) => [t.id as string, t]))

/** The checks every demonstration passes, whatever its mode. */
const checkCommon = (line: Exports.DemonstrationLine, trajectory: Trajectory, task: Task, run: Recorded, filtered: boolean) => {
  // one JSON line that decodes back to itself
  const text = JSON.stringify(line)
  assert.notInclude(text, "\n")
  assert.deepStrictEqual(decodeDemonstration(text), line)
  assert.strictEqual(line.task_id, trajectory.taskId)
  assert.strictEqual(line.level, task.level)
  assert.deepStrictEqual(line.verdict, trajectory.verdict)
  if (filtered) assert.isTrue(Evaluation.outcomeOf(task, trajectory).success)
  const { messages } = line
  assert.strictEqual(messages[0]?.role, "system")
  assert.include(messages[0]?.content ?? "", `at most ${maxRounds} rounds`)
  assert.deepStrictEqual(messages[1], { role: "user", content: task.request })
  assert.strictEqual(messages.at(-1)?.role, "assistant")
  // no two assistant turns in a row: every turn but the last got its observation (or a note) back
  for (let i = 1; i < messages.length; i++) {
    assert.isFalse(messages[i]?.role === "assistant" && messages[i - 1]?.role === "assistant", `${line.id} message ${i}`)
  }
  assert.strictEqual(messages.filter((m) => m.role === "system").length, 1)
  // everything but the reply is exactly what the OpenAI policy is sent before the last step: built from the context the
  // runtime really gave the policy then
  const last = trajectory.steps.at(-1)!
  const given = run.contexts.get(contextKey(trajectory.paradigm, trajectory.seed, last.index, task.request))!
  const { task: _privileged, ...context } = given
  assert.deepStrictEqual(messages.slice(0, -1), PolicyPrompt.buildMessages(context, line.mode))
  // the tools: exactly the ones retrieved on the steps the policy saw, once each, as OpenAI function specs
  const path = pathOf(trajectory)
  const seen = [...new Set(path.slice(0, -1).flatMap((s) => s.searches.flatMap((r) => r.hits.map((h) => h.tool as string))))]
  const names = line.tools.map((t) => t.function.name)
  const own = line.mode === "native" ? names.slice(1) : names
  if (line.mode === "native") assert.strictEqual(names[0], OpenAiFormat.searchToolName)
  assert.sameMembers(own, seen)
  assert.strictEqual(new Set(own).size, own.length)
  for (const tool of line.tools.slice(line.mode === "native" ? 1 : 0)) {
    assert.deepStrictEqual(tool, OpenAiFormat.toolDefinition(run.lookup(tool.function.name)!))
    assert.notInclude(JSON.stringify(tool), "\"x-")
  }
  return path
}

describe("Exports.demonstrations", () => {
  it.effect("text mode: the ParaAct conversation the OpenAI policy sees, one judge-passed trajectory per line", () =>
    Effect.gen(function*() {
      const run = yield* rollouts
      const { lines, skipped } = exported(Exports.demonstrations(run.trajectories, { mode: "text", tasks: run.tasks, lookup: run.lookup, maxRounds }))
      const trajectories = byId(run)
      const tasks = tasksById(run)
      const passing = run.trajectories.filter((t) => Evaluation.outcomeOf(tasks.get(t.taskId)!, t).success)
      assert.isAbove(lines.length, 10)
      assert.deepStrictEqual(lines.map((l) => l.id), passing.map((t) => t.id))
      assert.strictEqual(lines.length + skipped.length, run.trajectories.length)
      for (const s of skipped) assert.strictEqual(s.reason, trajectories.get(s.id)!.verdict === undefined ? "unjudged" : "not_kept")
      assert.sameMembers([...new Set(lines.map((l) => l.paradigm))], ["ParaAct", "ReAct", "ExploreThenExecute", "DFSDT"])
      let notes = 0
      for (const line of lines) {
        const trajectory = trajectories.get(line.id)!
        const path = checkCommon(line, trajectory, tasks.get(line.task_id)!, run, true)
        assert.strictEqual(line.mode, "text")
        assert.include(line.messages[0]!.content ?? "", ParaAct.instructions)
        assert.isTrue(line.messages.every((m) => m.role !== "tool" && !("tool_calls" in m)))
        // the assistant turns are the path's turns as the policy wrote them, in order
        const assistants = line.messages.filter((m) => m.role === "assistant")
        assert.deepStrictEqual(assistants.map((m) => m.content), path.map((s) => s.raw))
        // each turn but the last is followed by its observation: every search's slot and every call's outcome
        path.slice(0, -1).forEach((step, k) => {
          const at = line.messages.findIndex((m) => m === assistants[k])
          const observation = line.messages[at + 1]
          assert.strictEqual(observation?.role, "user")
          const body = observation?.content ?? ""
          assert.isTrue(body.startsWith("<observation>\n") && body.endsWith("\n</observation>"))
          for (const s of step.searches) assert.include(body, `<search slot=${JSON.stringify(s.slot)}`)
          for (const o of step.observations) {
            const open = `<result id=${JSON.stringify(o.callId)} tool=${JSON.stringify(o.tool)} status=${JSON.stringify(o.outcome._tag)}>\n`
            const from = body.indexOf(open)
            assert.isAtLeast(from, 0, `${line.id} step ${step.index} ${o.callId}`)
            const shown = body.slice(from + open.length, body.indexOf("\n</result>", from))
            assertFedBack(shown, outcomeText(o), k === path.length - 2 ? PolicyPrompt.defaultBudgets.latest : PolicyPrompt.defaultBudgets.older, `${line.id} ${o.callId}`)
          }
          if (step.protocolError !== undefined) assert.include(body, "<protocol-error")
        })
        notes += line.messages.filter((m) => m.role === "user" && /^(This is your last round|These turns were already tried)/.test(m.content)).length
      }
      // the notes the policy gets (last round, DFSDT's abandoned turns) are in the conversations too
      assert.isAbove(notes, 0)
    }))

  it.effect("native mode: tool_calls with JSON-string arguments matching the step's calls, tool results matching its observations", () =>
    Effect.gen(function*() {
      const run = yield* rollouts
      // every judged trajectory, failed and truncated ones included, for more shapes of conversation
      const { lines } = exported(Exports.demonstrations(run.trajectories, { mode: "native", tasks: run.tasks, lookup: run.lookup, maxRounds, keep: () => true }))
      const trajectories = byId(run)
      const tasks = tasksById(run)
      assert.strictEqual(lines.length, run.trajectories.filter((t) => t.verdict !== undefined).length)
      let toolMessages = 0
      for (const line of lines) {
        const trajectory = trajectories.get(line.id)!
        const path = checkCommon(line, trajectory, tasks.get(line.task_id)!, run, false)
        assert.strictEqual(line.mode, "native")
        assert.include(line.messages[0]!.content ?? "", OpenAiFormat.nativeInstructions)
        const assistants = line.messages.flatMap((m, i) => (m.role === "assistant" ? [{ m, i }] : []))
        assert.strictEqual(assistants.length, path.length)
        path.forEach((step, k) => {
          const { m: message, i: at } = assistants[k]!
          assert.strictEqual(message.role, "assistant")
          if (message.role !== "assistant") return
          const turn = step.turn
          if (turn === undefined) {
            // a malformed turn is shown as its raw text, then the error
            assert.strictEqual(message.content, step.raw)
            assert.isUndefined(message.tool_calls)
            assert.include(line.messages[at + 1]?.content ?? "", "<protocol-error")
            return
          }
          const calls = message.tool_calls ?? []
          // searches first (search_tools), then the calls, each arguments a JSON string of the step's own values
          assert.strictEqual(calls.length, turn.searches.length + turn.calls.length)
          turn.searches.forEach((s, j) => {
            const call = calls[j]!
            assert.strictEqual(call.type, "function")
            assert.strictEqual(call.function.name, OpenAiFormat.searchToolName)
            assert.deepStrictEqual(JSON.parse(call.function.arguments), { slot: s.slot, query: s.query })
          })
          turn.calls.forEach((c, j) => {
            const call = calls[turn.searches.length + j]!
            assert.strictEqual(call.id, c.id)
            assert.strictEqual(call.function.name, c.tool)
            assert.deepStrictEqual(JSON.parse(call.function.arguments), c.arguments)
          })
          if (k === path.length - 1) {
            assert.strictEqual(at, line.messages.length - 1)
            assert.strictEqual(calls.length, 0)
            return
          }
          // the tool messages right after answer every tool_call id once, in order, with the outcome the step observed
          const results = line.messages.slice(at + 1, at + 1 + calls.length)
          assert.deepStrictEqual(results.map((r) => r.role), calls.map(() => "tool"))
          assert.deepStrictEqual(results.map((r) => (r.role === "tool" ? r.tool_call_id : "")), calls.map((c) => c.id))
          assert.notStrictEqual(line.messages[at + 1 + calls.length]?.role, "tool")
          const budget = k === path.length - 2 ? PolicyPrompt.defaultBudgets.latest : PolicyPrompt.defaultBudgets.older
          turn.calls.forEach((c, j) => {
            const observation = step.observations.find((o) => o.callId === c.id)
            const shown = results[turn.searches.length + j]?.content ?? ""
            if (observation === undefined) assert.include(shown, "not_executed")
            else assertFedBack(shown, outcomeText(observation), budget, `${line.id} ${c.id}`)
            toolMessages++
          })
          turn.searches.forEach((s, j) => {
            const result = step.searches.find((r) => r.slot === s.slot)
            const shown = JSON.parse(results[j]?.content ?? "null") as { slot?: string; tools?: ReadonlyArray<{ name: string }> } | null
            if (result === undefined || shown === null || shown.tools === undefined) return
            assert.strictEqual(shown.slot, s.slot)
            assert.deepStrictEqual(shown.tools.map((t) => t.name), result.hits.map((h) => h.tool))
          })
        })
      }
      assert.isAbove(toolMessages, 20)
    }))

  it.effect("refuses inputs that do not fit together, naming the field and the value", () =>
    Effect.gen(function*() {
      const run = yield* rollouts
      const base = { mode: "text" as const, tasks: run.tasks, lookup: run.lookup, maxRounds }
      const failure = (result: Result.Result<unknown, Exports.ExportError>) => {
        assert.isTrue(Result.isFailure(result))
        return Result.isFailure(result) ? result.failure : assert.fail("expected an ExportError")
      }
      const unknownTask = failure(Exports.demonstrations(run.trajectories, { ...base, tasks: run.tasks.slice(1) }))
      assert.strictEqual(unknownTask.field, "taskId")
      assert.strictEqual(unknownTask.value, run.tasks[0]!.id)
      const lacking = failure(Exports.demonstrations(run.trajectories, { ...base, lookup: () => undefined }))
      assert.strictEqual(lacking.field, "tools")
      const long = run.trajectories.find((t) => t.verdict !== undefined && t.steps.length > 3)!
      const tooFew = failure(Exports.demonstrations([long], { ...base, maxRounds: 3, keep: () => true }))
      assert.deepStrictEqual([tooFew.field, tooFew.value], ["maxRounds", "3"])
      assert.strictEqual(failure(Exports.demonstrations([], { ...base, maxRounds: 0 })).field, "maxRounds")
      const otherTask = failure(Exports.demonstration(long, run.tasks.find((t) => t.id !== long.taskId)!, base))
      assert.deepStrictEqual([otherTask.field, otherTask.value], ["taskId", long.taskId])
      assert.strictEqual(failure(Exports.experience(run.trajectories, { estimator: " " })).field, "estimator")
      // an unjudged trajectory is skipped, never a demonstration, even with a filter that keeps everything
      const { verdict: _verdict, ...unjudged } = long
      const kept = exported(Exports.demonstrations([unjudged], { ...base, keep: () => true }))
      assert.deepStrictEqual(kept, { lines: [], skipped: [{ id: long.id, reason: "unjudged" }] })
    }))
})

describe("Exports.experience", () => {
  it.effect("one line per step of every scored trajectory, carrying the step's rewards and advantages", () =>
    Effect.gen(function*() {
      const run = yield* rollouts
      const { lines, skipped } = exported(Exports.experience(run.trajectories, { estimator: run.estimator }))
      assert.deepStrictEqual(skipped, [])
      const total = run.trajectories.reduce((n, t) => n + t.steps.length, 0)
      assert.strictEqual(lines.length, total)
      let i = 0
      for (const trajectory of run.trajectories) {
        for (const step of trajectory.steps) {
          const line = lines[i++]!
          assert.deepStrictEqual(decodeExperience(JSON.stringify(line)), line)
          assert.strictEqual(line.trajectory_id, trajectory.id)
          assert.strictEqual(line.task_id, trajectory.taskId)
          assert.strictEqual(line.group, `${trajectory.taskId}/${trajectory.paradigm}`)
          assert.strictEqual(line.group_index, trajectory.groupIndex)
          assert.strictEqual(line.step, step.index)
          assert.strictEqual(line.phase, step.phase)
          assert.strictEqual(line.paradigm, trajectory.paradigm)
          assert.strictEqual(line.policy, trajectory.policy)
          assert.strictEqual(line.text, step.raw)
          assert.strictEqual(line.estimator, run.estimator)
          assert.deepStrictEqual(line.advantage, step.advantage)
          assert.deepStrictEqual(
            { r_step: line.reward.r_step, r_base: line.reward.r_base, r_plan: line.reward.r_plan },
            { r_step: step.reward!.rStep, r_base: step.reward!.rBase, r_plan: step.reward!.rPlan }
          )
          assert.strictEqual(line.reward.r_ans, trajectory.answerReward!.rAns)
          const phase = trajectory.phases.find((p) => p.start <= step.index && step.index < p.end)
          assert.strictEqual(line.reward.r_phase, phase?.reward?.rPhase)
          // the teacher gives no log-probabilities and no behaviour version: the optional fields are absent, not null
          assert.isFalse("logprob" in line || "version" in line || "prompt" in line)
        }
      }
      // the group's advantages as scoring left them: A_traj has mean 0 over each judged group
      const groups = new Map<string, Array<number>>()
      for (const line of lines.filter((l) => l.step === 0)) groups.set(line.group, [...(groups.get(line.group) ?? []), line.advantage.traj])
      for (const values of groups.values()) assert.approximately(values.reduce((a, b) => a + b, 0), 0, 1e-9)
    }))

  it.effect("unscored trajectories give no lines; a missing groupIndex falls back to the position in the group", () =>
    Effect.gen(function*() {
      const run = yield* rollouts
      const { lines, skipped } = exported(Exports.experience(run.unscored.slice(0, 3), { estimator: "paraagent" }))
      assert.deepStrictEqual(lines, [])
      assert.deepStrictEqual(skipped, run.unscored.slice(0, 3).map((t) => ({ id: t.id, reason: "unscored" })))
      const pair = run.trajectories.slice(0, 2).map(({ groupIndex: _groupIndex, ...rest }) => rest)
      const fallback = exported(Exports.experience(pair, { estimator: "paraagent", group: () => "g" }))
      assert.deepStrictEqual([...new Set(fallback.lines.map((l) => `${l.trajectory_id}:${l.group_index}:${l.group}`))], pair.map((t, k) => `${t.id}:${k}:g`))
    }))
})
