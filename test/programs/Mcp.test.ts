import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { repoRoot } from "../../src/io/DataPath.ts"
import { callTool } from "../support/McpPeer.ts"

// `npm run mcp` as a desktop client starts it: one spawned process, driven by the official SDK client over stdio
describe("npm run mcp (stdio)", () => {
  it("serves the tools over stdio with nothing but protocol on stdout: an episode from the task source ends with the judge's verdict and R_ans; bad input is a tool error", async () => {
    const transport = new StdioClientTransport({
      command: "npx",
      args: ["tsx", "programs/mcp.ts", "--size", "2000", "--fault-rate", "0", "--max-rounds", "6"],
      cwd: repoRoot,
      stderr: "pipe"
    })
    let stderr = ""
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const client = new Client({ name: "stdio-test", version: "1.0.0" })
    // a line on stdout that is not JSON-RPC reaches the client as a transport error
    const transportErrors: Array<string> = []
    client.onerror = (e) => transportErrors.push(String(e))
    await client.connect(transport)
    try {
      const listed = await client.listTools()
      assert.deepStrictEqual(listed.tools.map((t) => t.name), ["start_episode", "search_tools", "describe_tool", "call_tool", "call_tools", "answer", "episode_state"])

      const started = await callTool(client, "start_episode", { split: "test", level: "I1", index: 0, paradigm: "ParaAct" })
      assert.isFalse(started.isError, started.text)
      assert.match(String(started.value?.["taskId"]), /^gen-7-test-I1-\d+$/)
      assert.strictEqual(started.value?.["maxRounds"], 6)

      const searched = await callTool(client, "search_tools", { queries: [{ query: "sentiment of a text" }, { query: "weather stations in a city" }] })
      assert.isFalse(searched.isError, searched.text)
      const searches = searched.value?.["searches"] as ReadonlyArray<{ readonly slot: string; readonly hits: ReadonlyArray<{ readonly tool: string }> }>
      assert.deepStrictEqual(searches.map((s) => s.slot), ["s1", "s2"])
      assert.isTrue(searches.every((s) => s.hits.length > 0))

      const bad = await callTool(client, "call_tools", { calls: [{ tool: searches[0]?.hits[0]?.tool, arguments: "x" }] })
      assert.isTrue(bad.isError)
      assert.include(bad.text, "arguments")

      const answered = await callTool(client, "answer", { answer: "I could not tell." })
      assert.isFalse(answered.isError, answered.text)
      const scoring = answered.value?.["scoring"] as { readonly verdict: { readonly judge: string }; readonly answerReward: { readonly pattern: string; readonly rAns: number } }
      assert.strictEqual(scoring.verdict.judge, "rule")
      assert.match(scoring.answerReward.pattern, /^[01]{3}$/)
      assert.isNumber(scoring.answerReward.rAns)
      const state = await callTool(client, "episode_state", {})
      assert.deepStrictEqual([state.value?.["rounds"], state.value?.["stop"]], [2, "answer"])
      assert.deepStrictEqual(transportErrors, [])
    } finally {
      await client.close()
    }
    assert.notInclude(stderr, "internal error")
  })
})
