import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { ChildProcess } from "node:child_process"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { repoRoot } from "../../src/io/DataPath.ts"
import { callTool } from "../support/McpPeer.ts"

/** Ends the server's stdin, as a client does at a normal close, and resolves with its exit code once it has exited. */
const endStdin = (transport: StdioClientTransport): Promise<number | null> => {
  // the SDK's own close() ends stdin too, but sends SIGTERM after 2 s: on a loaded machine that would decide the exit
  // code by the clock, so the test ends stdin itself and waits for the exit event
  const child = (transport as unknown as { readonly _process?: ChildProcess })._process
  if (child === undefined) return Promise.resolve(null)
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode)
    child.once("exit", (code) => resolve(code))
    child.stdin?.end()
  })
}

// the MCP server as a desktop client starts it (`node --import tsx programs/mcp.ts`, the command docs/mcp.md gives):
// one spawned process, driven by the official SDK client over stdio
describe("the MCP server over stdio (programs/mcp.ts)", () => {
  it("serves the tools over stdio with nothing but protocol on stdout: an episode from the task source ends with the judge's verdict and R_ans; bad input is a tool error; the end of stdin exits 0", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", "programs/mcp.ts", "--size", "2000", "--fault-rate", "0", "--max-rounds", "6"],
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
    let exitCode: number | null = null
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
      exitCode = await endStdin(transport)
    }
    assert.strictEqual(exitCode, 0, stderr)
    assert.include(stderr, "stdin closed: the MCP server stops")
    assert.notInclude(stderr, "internal error")
  })
})
