import { assert, describe, expect, it as vitestIt, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import * as ToolEnvServer from "../../layers/server/ToolEnvServer.ts"
import type { Task } from "../../src/domain/Task.ts"
import type { Turn } from "../../src/domain/Turn.ts"
import { canonicalJson } from "../../src/math/CanonicalJson.ts"
import * as ParaAct from "../../src/protocol/ParaAct.ts"
import * as Ors from "../../src/service/Ors.ts"
import * as OrsClient from "../support/OrsClient.ts"
import { goldRounds, timeless } from "../support/ServedEpisode.ts"

const options: ToolEnvServer.ServerOptions = {
  ...ToolEnvServer.defaultOptions,
  worldSize: 2000,
  sessions: { ...ToolEnvServer.defaultOptions.sessions, maxSessions: 64, ttlMs: 60_000 }
}

const server = Layer.mergeAll(ToolEnvServer.layer(options), FetchHttpClient.layer)

/** A structured turn as the ORS tool call that asks for it. */
const toolCallOf = (turn: Turn): { readonly name: string; readonly input: Record<string, unknown> } =>
  turn.answer !== undefined
    ? { name: "answer", input: { answer: turn.answer } }
    : turn.searches.length > 0
    ? { name: "search_tools", input: { queries: turn.searches.map((s) => ({ slot: s.slot, query: s.query })) } }
    : { name: "call_tools", input: { calls: turn.calls.map((c) => ({ id: c.id, tool: c.tool, arguments: c.arguments })) } }

/** The same episode without its ids and clock readings. */
const comparable = (t: any): string => canonicalJson(JSON.parse(timeless({ ...t, id: "" })))

/** The caller's client key (docs/service.md, ownership): ORS and native requests act for the same owner. */
const key = "ors-contract-test-client-key"
const owned = { "x-client-key": key }

const post = async (url: string, body: unknown) => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...owned }, body: JSON.stringify(body) })
  return { status: res.status, json: (await res.json()) as any }
}

layer(server, { timeout: 120_000 })("the Open Reward Standard routes (a client written from the ORS specification)", (it) => {
  it.effect("discovery: environments, tools with JSON Schemas, splits, tasks by index and range; list_tasks points to the index API", () =>
    Effect.gen(function*() {
      const base = yield* ToolEnvServer.url
      const ors = OrsClient.client(base, Ors.envName)
      const result = yield* Effect.promise(async () => {
        const environments = await ors.listEnvironments()
        const tools = await ors.tools()
        const splits = await ors.splits()
        const num = await ors.numTasks("test")
        const one = await ors.task("test", 3)
        const range = await ors.taskRange("test", 2, 5)
        const listed = await ors.request("POST", `/${Ors.envName}/tasks`, { split: "test" })
        const badSplit = await ors.request("POST", `/${Ors.envName}/num_tasks`, { split: "dev" })
        const tooMany = await ors.request("POST", `/${Ors.envName}/task_range`, { split: "train", start: 0, stop: 500 })
        const jsonSid = await ors.request("POST", "/create_session")
        return { environments, tools, splits, num, one, range, listed, badSplit, tooMany, jsonSid }
      })
      assert.deepStrictEqual(result.environments, ["toolenv"])
      assert.deepStrictEqual(result.tools.map((t) => t.name), ["search_tools", "call_tools", "answer", "paraact", "describe_tool"])
      for (const t of result.tools) assert.strictEqual((t.input_schema as { type: string }).type, "object")
      assert.deepStrictEqual(result.splits, [{ name: "train", type: "train" }, { name: "validation", type: "validation" }, { name: "test", type: "test" }])
      assert.strictEqual(result.num, 10_000)
      // the index API and the range agree, and the task is the one POST /sessions {split, index} acts on
      assert.deepStrictEqual(result.range[1], result.one)
      assert.match(String(result.one["taskId"]), /^gen-7-test-I[123]-\d+$/)
      assert.strictEqual(result.listed.status, 400)
      assert.match(result.listed.json().detail, /index-based API/)
      assert.strictEqual(result.badSplit.status, 400)
      assert.strictEqual(result.badSplit.json().detail, "Invalid split")
      assert.strictEqual(result.tooMany.status, 400)
      assert.match(result.jsonSid.json().sid, /^[0-9a-f-]{36}$/)
    }))

  it.effect("whole episodes through ORS alone give the native API's trajectory and rewards: r_step inline, r_step + R_ans when finished", () =>
    Effect.gen(function*() {
      const base = yield* ToolEnvServer.url
      const ors = OrsClient.client(base, Ors.envName, owned)
      const outcome = yield* Effect.promise(async () => {
        const tasks = await ors.taskRange("test", 0, 6)
        const gold = await (await fetch(`${base}/tasks?split=test&count=6&gold=true`)).json() as { tasks: Array<any> }
        const episodes: Array<any> = []
        let chunked = 0
        for (const [k, which] of [[0, 4], [1, 5]] as const) {
          const listed = tasks[which]!
          const task = { ...gold.tasks.find((t) => t.id === listed["taskId"]), seed: 0 } as Task
          const rounds = goldRounds(task).map((r) => r.turn as Turn)
          const seed = 3 + k
          // ORS: one session by task_spec (a listed task plus session options), the other by split and index
          const sid = await ors.createSession()
          const created = k === 0
            ? await ors.create(sid, { task_spec: { ...listed, seed, faultRate: 0.3 } })
            : await ors.create(sid, { split: "test", index: which })
          const prompt = await ors.prompt(sid)
          const taskTools = await ors.taskTools(sid)
          const outputs: Array<OrsClient.CallResult> = []
          for (const turn of rounds) {
            const { name, input } = toolCallOf(turn)
            const called = await ors.call(sid, name, input)
            outputs.push(called)
            chunked += called.events.filter((e) => e.event === "chunk").length
            if (called.result?.ok === true && called.result.output.finished) break
          }
          const orsTrajectory = await (await fetch(`${base}/sessions/${sid}/trajectory`, { headers: owned })).json()
          // the native API, the same task, seed, fault rate and turns (raw text as ORS records it)
          const native = await post(`${base}/sessions`, k === 0 ? { taskId: listed["taskId"], seed, faultRate: 0.3 } : { split: "test", index: which })
          const nid = native.json.sessionId as string
          const steps: Array<any> = []
          for (const [round, turn] of rounds.entries()) {
            const r = await post(`${base}/sessions/${nid}/step`, { text: ParaAct.printTurn(turn), turn, round })
            steps.push(r.json)
            if (r.json.done === true) break
          }
          const score = await post(`${base}/sessions/${nid}/score`, {})
          const nativeTrajectory = await (await fetch(`${base}/sessions/${nid}/trajectory`, { headers: owned })).json()
          // reconnecting with the task id of a past round answers that round again, from the log
          const again = await ors.call(sid, "search_tools", { queries: [{ query: "anything" }] }, outputs[0]!.taskId)
          const againLast = await ors.call(sid, "answer", { answer: "whatever" }, outputs[outputs.length - 1]!.taskId)
          const deleted = await ors.delete(sid)
          const pingAfter = await ors.ping(sid)
          episodes.push({ created, prompt, taskTools, outputs, orsTrajectory, steps, score: score.json, nativeTrajectory, again, againLast, deleted, pingAfter, task })
        }
        return { episodes, chunked }
      })
      for (const e of outcome.episodes) {
        assert.strictEqual(e.created.status, 200)
        assert.strictEqual(e.prompt[1].text, e.task.request)
        assert.strictEqual(e.taskTools.status, 200)
        // same trajectory
        assert.strictEqual(comparable(e.orsTrajectory), comparable(e.nativeTrajectory))
        assert.strictEqual(e.outputs.length, e.steps.length)
        for (const [i, out] of (e.outputs as Array<OrsClient.CallResult>).entries()) {
          assert.strictEqual(out.taskId, `${i}@${e.orsTrajectory.steps.length > 0 ? out.result && (out.result as any).output.metadata.sessionId : ""}`)
          assert.isTrue(out.result?.ok)
          const output = (out.result as { output: OrsClient.ToolOutput }).output
          const step = e.steps[i]
          assert.deepStrictEqual(output.metadata.stepReward, step.reward)
          assert.strictEqual(output.finished, step.done)
          assert.strictEqual(canonicalJson(JSON.parse(timeless(output.metadata.step))), canonicalJson(JSON.parse(timeless(step.step))))
          if (step.done) {
            assert.closeTo(output.reward as number, step.reward.rStep + e.score.answer.rAns, 1e-12)
            assert.deepStrictEqual(output.metadata.score.answer, e.score.answer)
            assert.deepStrictEqual(output.metadata.score.steps, e.score.steps)
            // the verdict as POST /score gives it: redacted for the client (issue 24; test/service/Server.test.ts)
            assert.deepStrictEqual(output.metadata.score.verdict, e.score.verdict)
          } else {
            assert.strictEqual(output.reward, step.reward.rStep)
          }
        }
        assert.isTrue(e.outputs[e.outputs.length - 1].result.output.finished)
        // a reconnect with a round's task id answers that round again from the log (an earlier round without `next`)
        assert.deepStrictEqual(e.againLast.result, e.outputs[e.outputs.length - 1].result)
        const { next: _, ...first } = e.outputs[0].result.output.metadata
        assert.deepStrictEqual(e.again.result.output.metadata, first)
        assert.strictEqual(e.again.result.output.reward, e.outputs[0].result.output.reward)
        assert.strictEqual(e.deleted.status, 200)
        assert.strictEqual(e.pingAfter.status, 404)
      }
      // results over 4 KB arrive in chunk events before the end event
      expect(outcome.chunked).toBeGreaterThan(0)
    }))

  it.effect("refusals: no X-Session-ID, an unknown session, a duplicate create, an unknown tool, bad input, a round after the end", () =>
    Effect.gen(function*() {
      const base = yield* ToolEnvServer.url
      const ors = OrsClient.client(base, Ors.envName)
      const r = yield* Effect.promise(async () => {
        const noSid = await ors.request("POST", `/${Ors.envName}/call`, { name: "answer", input: { answer: "x" } })
        const unknown = await ors.call("no-such-session", "answer", { answer: "x" })
        const sid = await ors.createSession()
        const created = await ors.create(sid, { split: "test", index: 0 })
        const duplicate = await ors.create(sid, { split: "test", index: 0 })
        const both = await ors.create(await ors.createSession(), { split: "test", index: 0, task_spec: { taskId: "x" } })
        const badTool = await ors.call(sid, "rm_rf", {})
        const badInput = await ors.call(sid, "search_tools", { queries: [] })
        const notRetrieved = await ors.call(sid, "describe_tool", { name: "nonexistent_tool" })
        const text = await ors.call(sid, "paraact", { text: "<answer>I do not know.</answer>" })
        const after = await ors.call(sid, "answer", { answer: "again" })
        const unknownTask = await ors.call(sid, "answer", { answer: "x" }, "not-a-task-id")
        return { noSid, unknown, created, duplicate, both, badTool, badInput, notRetrieved, text, after, unknownTask }
      })
      assert.strictEqual(r.noSid.status, 400)
      assert.strictEqual(r.noSid.json().detail, "X-Session-ID header is required")
      assert.strictEqual(r.unknown.status, 404)
      assert.strictEqual(r.created.status, 200)
      assert.strictEqual(r.duplicate.status, 400)
      assert.strictEqual(r.duplicate.json().detail, "Session already exists")
      assert.strictEqual(r.both.status, 400)
      // tool-level failures are `ok: false` results and spend no round
      assert.deepStrictEqual(r.badTool.result?.ok, false)
      assert.match((r.badTool.result as { error: string }).error, /not a valid tool/)
      assert.deepStrictEqual(r.badInput.result?.ok, false)
      assert.deepStrictEqual(r.notRetrieved.result?.ok, false)
      // the text protocol: an answer ends the episode (round 0)
      assert.strictEqual(r.text.taskId?.startsWith("0@"), true)
      assert.isTrue((r.text.result as { output: OrsClient.ToolOutput }).output.finished)
      assert.deepStrictEqual(r.after.result?.ok, false)
      assert.strictEqual(r.unknownTask.error, "unknown task_id")
    }))
})

describe("Ors (pure)", () => {
  vitestIt("task ids name a round of a session; SSE framing splits results over 4 KB into chunks", () => {
    assert.strictEqual(Ors.roundOfTaskId(Ors.taskIdOf("abc-1", 7), "abc-1"), 7)
    assert.isUndefined(Ors.roundOfTaskId(Ors.taskIdOf("abc-1", 7), "abc-2"))
    const big = "x".repeat(Ors.chunkSize * 2 + 10)
    const events = OrsClient.parseSse(Ors.resultEvents(big))
    assert.deepStrictEqual(events.map((e) => e.event), ["chunk", "chunk", "end"])
    assert.strictEqual(events.map((e) => e.data).join(""), big)
    assert.deepStrictEqual(OrsClient.parseSse(Ors.sseEvent("end", "a\nb")), [{ event: "end", data: "a\nb" }])
  })
})
