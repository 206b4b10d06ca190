import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import fc from "fast-check"
import { errorOutcome, type Observation } from "../../src/domain/Call.ts"
import type { CallId, ToolName } from "../../src/domain/Ids.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import { type SearchResult, type Step, validStep } from "../../src/domain/Trajectory.ts"
import type { Turn } from "../../src/domain/Turn.ts"
import {
  AssistantMessage,
  ChatMessage,
  messageToTurn,
  type MessageOptions,
  OpenAiTool,
  renderObservation,
  searchToolDefinition,
  stepToMessages,
  stripExtensions,
  describeTool,
  entityLine,
  toolDefinition,
  turnToMessage
} from "../../src/protocol/OpenAiFormat.ts"
import { printTurn, tagNames } from "../../src/protocol/ParaAct.ts"
import { soupArb, validTurnArb } from "../support/Turns.ts"

const id = (s: string) => s as CallId
const tool = (s: string) => s as ToolName

const roster: ToolSpec = {
  id: "generated:sports/team_roster" as ToolSpec["id"],
  name: tool("team_roster"),
  group: "Team Roster",
  apiName: "team_roster",
  category: "Sports",
  description: "Lists the players of a team.",
  parameters: {
    type: "object",
    properties: {
      team_id: { type: "string", "x-entity": "team.id", description: "the team" },
      filters: {
        type: "array",
        items: { type: "object", properties: { position: { type: "string", "x-entity": "player.position" } } }
      }
    },
    required: ["team_id"]
  },
  source: { kind: "generated", ref: "test" }
}

const message = (content: string | null, calls: ReadonlyArray<readonly [string, string, string]> = []): AssistantMessage => ({
  role: "assistant",
  content,
  ...(calls.length > 0
    ? { tool_calls: calls.map(([callId, name, args]) => ({ id: callId, type: "function" as const, function: { name, arguments: args } })) }
    : {})
})

const ok = (m: AssistantMessage, options?: MessageOptions): Turn => {
  const r = messageToTurn(m, options)
  if (Result.isFailure(r)) throw new Error(`${r.failure.tag}@${r.failure.offset}: ${r.failure.message}`)
  return r.success
}

const err = (m: AssistantMessage, options?: MessageOptions) => {
  const r = messageToTurn(m, options)
  if (Result.isSuccess(r)) throw new Error(`expected an error, got ${JSON.stringify(r.success)}`)
  return r.failure
}

const step = (fields: Partial<Step> & Pick<Step, "raw">): Step => ({
  index: 0,
  validation: validStep,
  controller: "May",
  phase: "execute",
  searches: [],
  observations: [],
  startMs: 0,
  policyMs: 1,
  endMs: 2,
  usage: { promptTokens: 0, completionTokens: 0 },
  ...fields
})

const observation = (callId: string, toolName: string, outcome: Observation["outcome"]): Observation => ({
  callId: id(callId),
  tool: tool(toolName),
  arguments: {},
  outcome,
  refs: [],
  attempts: 1,
  startMs: 0,
  endMs: 1
})

describe("tool definitions", () => {
  it("maps a ToolSpec to an OpenAI function, stripping x-entity at every depth (its marks as the description's entity line)", () => {
    const def = toolDefinition(roster)
    expect(def).toEqual({
      type: "function",
      function: {
        name: "team_roster",
        description: `Lists the players of a team.\n${entityLine(roster)}`,
        parameters: {
          type: "object",
          properties: {
            team_id: { type: "string", description: "the team" },
            filters: { type: "array", items: { type: "object", properties: { position: { type: "string" } } } }
          },
          required: ["team_id"]
        }
      }
    })
    expect(JSON.stringify(def)).not.toContain("x-entity")
    expect(Result.isSuccess(Schema.decodeUnknownResult(OpenAiTool)(def))).toBe(true)
  })

  it("entityLine states which entity each parameter takes and which the response returns", () => {
    expect(entityLine(roster)).toBe("Entities: team_id takes team.id.")
    expect(entityLine({ ...roster, response: { type: "array", items: { type: "object", properties: { id: { type: "string", "x-entity": "player.id" } } } } }))
      .toBe("Entities: team_id takes team.id; returns player.id.")
    expect(entityLine(roster)).not.toContain("x-entity")
    expect(entityLine({ ...roster, parameters: { type: "object", properties: { q: { type: "string" } }, required: [] }, response: { type: "object" } })).toBe("")
  })

  it("stripExtensions keeps a property named like an extension key only when it is a property name", () => {
    expect(stripExtensions({ type: "object", properties: { "x-entity": { type: "string", "x-entity": "a.b" } } })).toEqual({
      type: "object",
      properties: { "x-entity": { type: "string" } }
    })
  })

  it("search_tools is a valid OpenAI function whose query is required", () => {
    expect(Result.isSuccess(Schema.decodeUnknownResult(OpenAiTool)(searchToolDefinition))).toBe(true)
    expect(searchToolDefinition.function.parameters["required"]).toEqual(["query"])
  })
})

describe("turn -> assistant message", () => {
  it("puts think/plan/answer in content and searches then calls in tool_calls", () => {
    const turn: Turn = {
      think: "go",
      plan: { nodes: [{ id: id("c1"), deps: [] }] },
      searches: [],
      calls: [{ id: id("c1"), tool: tool("team_roster"), arguments: { team_id: { $ref: "c0.id" }, b: 1 } }]
    }
    expect(turnToMessage(turn)).toEqual({
      role: "assistant",
      content: "<think>\ngo\n</think>\n<plan>\n{\"nodes\":[\n  {\"id\":\"c1\",\"deps\":[]}\n]}\n</plan>",
      tool_calls: [{ id: "c1", type: "function", function: { name: "team_roster", arguments: "{\"b\":1,\"team_id\":{\"$ref\":\"c0.id\"}}" } }]
    })
    const searching = turnToMessage({ searches: [{ slot: "c1", query: "team roster" }, { slot: "s2", query: "weather" }], calls: [] })
    expect(searching).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "search-1", type: "function", function: { name: "search_tools", arguments: "{\"slot\":\"c1\",\"query\":\"team roster\"}" } },
        { id: "search-2", type: "function", function: { name: "search_tools", arguments: "{\"slot\":\"s2\",\"query\":\"weather\"}" } }
      ]
    })
  })

  it("property: turn -> message -> turn is the identity, and the message is a valid ChatMessage (2,000 turns)", () => {
    fc.assert(
      fc.property(validTurnArb, (turn) => {
        const m = turnToMessage(turn)
        const decoded = Schema.decodeUnknownResult(Schema.fromJsonString(ChatMessage))(JSON.stringify(m))
        expect(Result.isSuccess(decoded) && decoded.success).toEqual(m)
        const back = messageToTurn(m)
        if (Result.isFailure(back)) throw new Error(`${back.failure.message}\n${JSON.stringify(m)}`)
        expect(back.success).toEqual(turn)
      }),
      { numRuns: 2000 }
    )
  })
})

describe("assistant message -> turn", () => {
  it("reads tool calls, keeping valid fresh ids and replacing others", () => {
    const turn = ok(
      message("I'll look these up.", [
        ["call_AbC123", "team_roster", "{\"team_id\":\"t1\"}"],
        ["chatcmpl-tool-9", "forecast", ""],
        ["call_AbC123", "forecast", "{}"],
        ["c1", "forecast", " {} "]
      ]),
      { usedCallIds: ["c1", "c2"] }
    )
    expect(turn).toEqual({
      think: "I'll look these up.",
      searches: [],
      calls: [
        { id: "call_AbC123", tool: "team_roster", arguments: { team_id: "t1" } },
        { id: "c3", tool: "forecast", arguments: {} },
        { id: "c4", tool: "forecast", arguments: {} },
        { id: "c5", tool: "forecast", arguments: {} }
      ]
    })
  })

  it("content without tags and without tool calls is the answer; reasoning_content becomes the think", () => {
    expect(ok(message("  The answer is 42. "), { reasoning: "easy" })).toEqual({ think: "easy", searches: [], calls: [], answer: "The answer is 42." })
  })

  it("search_tools calls become searches, with generated slots where none is given", () => {
    expect(ok(message(null, [["a", "search_tools", "{\"query\":\"weather\"}"], ["b", "search_tools", "{\"slot\":\"s1\",\"query\":\"teams\"}"]]))).toEqual({
      searches: [{ slot: "s2", query: "weather" }, { slot: "s1", query: "teams" }],
      calls: []
    })
  })

  it("a message without action is an error at the end of the content, naming its last tag", () => {
    const planOnly = "<think>\nfirst the team\n</think>\n<plan>\n{\"nodes\":[{\"id\":\"c1\",\"deps\":[]}]}\n</plan>"
    for (const [content, tag] of [[planOnly, "plan"], ["<think>\nhmm\n</think>", "think"], [null, "think"], ["", "think"]] as const) {
      const e = err(message(content))
      expect({ tag: e.tag, offset: e.offset }).toEqual({ tag, offset: (content ?? "").length })
      expect(e.message).toContain("the turn has no action")
    }
    const reasoned = err(message(null), { reasoning: "thinking it over" })
    expect({ tag: reasoned.tag, offset: reasoned.offset }).toEqual({ tag: "think", offset: 0 })
  })

  it("errors name the call and the offset inside its arguments", () => {
    const bad = err(message(null, [["call_1", "forecast", "{\"city\": \"Paris\",}"]]))
    expect({ tag: bad.tag, offset: bad.offset }).toEqual({ tag: "call", offset: 17 })
    expect(bad.message).toContain("tool_calls[0] (forecast, id \"call_1\"): arguments are not valid JSON")
    const array = err(message(null, [["call_1", "forecast", "[1]"]]))
    expect(array.message).toContain("must be a JSON object")
    const ref = err(message(null, [["call_1", "forecast", "{\"a\": {\"$ref\": \"c1..b\"}}"]]))
    expect({ tag: ref.tag, offset: ref.offset }).toEqual({ tag: "call", offset: 6 })
    const search = err(message(null, [["s", "search_tools", "{\"slot\":\"s1\"}"]]))
    expect({ tag: search.tag, offset: search.offset }).toEqual({ tag: "search", offset: 0 })
    expect(search.message).toBe("tool_calls[0] (search_tools, id \"s\"): missing required field \"query\"")
    const query = err(message(null, [["s", "search_tools", "{\"query\": 3}"]]))
    expect({ offset: query.offset, message: query.message }).toEqual({ offset: 10, message: "tool_calls[0] (search_tools, id \"s\"): query: Expected string, got 3" })
  })

  it("property: total on arbitrary content and arguments (3,000 runs): a turn, or an error inside the text it names", () => {
    const callArb = fc.record({
      id: fc.oneof(fc.constantFrom("c1", "call_1", "chatcmpl-tool-1", ""), fc.string({ maxLength: 6 })),
      name: fc.oneof(fc.constantFrom("search_tools", "forecast", ""), fc.string({ maxLength: 6 })),
      arguments: fc.oneof(soupArb, fc.json({ maxDepth: 3 }), fc.constantFrom("", "{}", "{\"query\":\"q\"}", "{\"a\":{\"$ref\":\"c1.x\"}}"))
    })
    fc.assert(
      fc.property(fc.option(soupArb, { nil: null }), fc.array(callArb, { maxLength: 3 }), fc.boolean(), fc.option(soupArb, { nil: undefined }), (content, calls, lenient, reasoning) => {
        const m = message(content, calls.map((c) => [c.id, c.name, c.arguments] as const))
        const r = messageToTurn(m, reasoning === undefined ? { lenient } : { lenient, reasoning })
        if (Result.isSuccess(r)) {
          const again = messageToTurn(turnToMessage(r.success))
          expect(Result.isSuccess(again) && again.success).toEqual(r.success)
        } else {
          expect(tagNames).toContain(r.failure.tag)
          const longest = Math.max((content ?? "").length, ...calls.map((c) => c.arguments.length))
          expect(r.failure.offset).toBeGreaterThanOrEqual(0)
          expect(r.failure.offset).toBeLessThanOrEqual(longest)
        }
      }),
      { numRuns: 3000 }
    )
  })

  it("applies the turn rules: answer alone, search or call, actions as tool calls", () => {
    expect(err(message("<answer>x</answer>", [["c1", "forecast", "{}"]]))).toMatchObject({ tag: "answer", offset: 0 })
    expect(err(message(null, [["a", "search_tools", "{\"query\":\"q\"}"], ["c1", "forecast", "{}"]]))).toMatchObject({ tag: "call", offset: 0 })
    expect(err(message("<think>x</think>"))).toMatchObject({ tag: "think", offset: 16 })
    expect(err(message("<think>x</think><call>[{\"name\":\"a\"}]</call>"))).toMatchObject({ tag: "call", offset: 16 })
    expect(err(message(null))).toMatchObject({ tag: "think", offset: 0 })
  })
})

describe("steps -> messages", () => {
  const turn: Turn = {
    think: "both at once",
    searches: [],
    calls: [
      { id: id("c1"), tool: tool("team_search"), arguments: { name: "Lakers" } },
      { id: id("c2"), tool: tool("forecast"), arguments: { city: "LA" } },
      { id: id("c3"), tool: tool("team_roster"), arguments: { team_id: { $ref: "c0.id" } } }
    ]
  }
  const executed = step({
    raw: printTurn(turn),
    turn,
    observations: [
      observation("c2", "forecast", errorOutcome("rate_limited", "slow down")),
      observation("c1", "team_search", { _tag: "ok", payload: { results: [{ id: "t_17" }] } })
    ]
  })

  it("native: the assistant message, then one tool message per tool call in order, answering every id", () => {
    const messages = stepToMessages(executed, "native")
    expect(messages).toEqual([
      turnToMessage(turn),
      { role: "tool", tool_call_id: "c1", content: "{\"results\":[{\"id\":\"t_17\"}]}" },
      { role: "tool", tool_call_id: "c2", content: "{\"error\":{\"kind\":\"rate_limited\",\"status\":429,\"message\":\"slow down\"}}" },
      { role: "tool", tool_call_id: "c3", content: "{\"error\":{\"kind\":\"not_executed\",\"message\":\"the runtime did not execute this call\"}}" }
    ])
    for (const m of messages) expect(Result.isSuccess(Schema.decodeUnknownResult(ChatMessage)(m))).toBe(true)
  })

  it("text: the raw turn, then one user message with the <observation> block", () => {
    const messages = stepToMessages(executed, "text", { maxPayloadChars: 30 })
    expect(messages).toEqual([
      { role: "assistant", content: executed.raw },
      {
        role: "user",
        content: [
          "<observation>",
          "<result id=\"c1\" tool=\"team_search\" status=\"ok\">",
          "{\"results\":[{\"id\":\"t_17\"}]}",
          "</result>",
          "<result id=\"c2\" tool=\"forecast\" status=\"error\">",
          "{\"error\":{\"kind\":\"rate_limited... [38 more characters]",
          "</result>",
          "<result id=\"c3\" tool=\"team_roster\" status=\"not_executed\">",
          "{\"error\":{\"kind\":\"not_executed... [53 more characters]",
          "</result>",
          "</observation>"
        ].join("\n")
      }
    ])
  })

  it("search results show the tools found, with their documentation when a lookup is given", () => {
    const searchTurn: Turn = { searches: [{ slot: "c1", query: "team \"roster\"" }, { slot: "s2", query: "weather" }], calls: [] }
    const hits: SearchResult = { slot: "c1", query: "team \"roster\"", hits: [{ tool: tool("team_roster"), score: 0.91234 }, { tool: tool("other"), score: 0.5 }], startMs: 0, endMs: 1 }
    const s = step({ raw: printTurn(searchTurn), turn: searchTurn, phase: "explore", searches: [hits] })
    const lookupTool = (name: string) => name === "team_roster" ? roster : undefined
    expect(renderObservation(s, { lookupTool })).toBe([
      "<observation>",
      "<search slot=\"c1\" query=\"team \\\"roster\\\"\">",
      JSON.stringify({
        slot: "c1",
        query: "team \"roster\"",
        tools: [
          { name: "team_roster", score: 0.912, description: describeTool(roster), parameters: stripExtensions(roster.parameters) },
          { name: "other", score: 0.5 }
        ]
      }),
      "</search>",
      "<search slot=\"s2\" query=\"weather\">",
      "{\"error\":{\"kind\":\"not_executed\",\"message\":\"the runtime did not run this search\"}}",
      "</search>",
      "</observation>"
    ].join("\n"))
    const native = stepToMessages(s, "native")
    expect(native.map((m) => m.role === "tool" ? m.tool_call_id : m.role)).toEqual(["assistant", "search-1", "search-2"])
  })

  it("a malformed turn: its raw text, then the protocol error as feedback (both modes)", () => {
    const bad = step({ raw: "<call>[}</call>", protocolError: { tag: "call", offset: 7, message: "invalid JSON in <call>" } })
    const expected = [
      { role: "assistant", content: "<call>[}</call>" },
      { role: "user", content: "<observation>\n<protocol-error tag=\"call\" offset=\"7\">invalid JSON in <call></protocol-error>\n</observation>" }
    ]
    expect(stepToMessages(bad, "text")).toEqual(expected)
    expect(stepToMessages(bad, "native")).toEqual(expected)
  })

  it("an answer step has nothing to observe", () => {
    const answer: Turn = { searches: [], calls: [], answer: "42" }
    expect(stepToMessages(step({ raw: printTurn(answer), turn: answer }), "text")).toEqual([{ role: "assistant", content: printTurn(answer) }])
    expect(stepToMessages(step({ raw: printTurn(answer), turn: answer }), "native")).toEqual([turnToMessage(answer)])
  })

  it("property: in native mode every tool_call id is answered by exactly one tool message", () => {
    fc.assert(
      fc.property(validTurnArb, fc.double({ min: 0, max: 1, noNaN: true }), (turn, keep) => {
        const observations = turn.calls
          .filter((_, i) => (i + 1) / (turn.calls.length + 1) <= keep)
          .map((c) => observation(c.id, c.tool, { _tag: "ok", payload: null }))
        const messages = stepToMessages(step({ raw: printTurn(turn), turn, observations }), "native")
        const asked = (messages[0]?.role === "assistant" ? messages[0].tool_calls ?? [] : []).map((c) => c.id)
        const answered = messages.flatMap((m) => m.role === "tool" ? [m.tool_call_id] : [])
        expect(answered).toEqual(asked)
      }),
      { numRuns: 500 }
    )
  })
})
