/**
 * The MCP tools of ToolEnv (`start_episode`, `search_tools`, `describe_tool`, `call_tool`, `call_tools`, `answer`,
 * `episode_state`) registered on an `effect/ai` McpServer, and the stdio server. Arguments are decoded with the same
 * schemas their JSON Schemas come from; every failure is a tool result with `isError` and a message naming the field.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Stdio } from "effect"
import { McpProtocol, McpSchema, McpServer } from "effect/ai"
import { HttpServerRequest } from "effect/http"
import {
  AnswerInput,
  CallInput,
  CallsInput,
  DescribeInput,
  McpEpisodeError,
  McpEpisodes,
  SearchInput,
  StartInput,
  StateInput
} from "./McpEpisodes.ts"
import type { Client } from "./McpEpisodes.ts"
import { packageVersion } from "../io/Provenance.ts"
import { oneLine } from "../domain/Errors.ts"

/** The server's name and version as MCP clients see them. */
export const serverInfo = { name: "paraagent-toolenv", version: packageVersion() } as const

/** The MCP revisions served: the sessionful ones (an episode is bound to a client session). */
export const protocols = [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26] as const

/** What an MCP client is told about the server at initialisation. */
export const instructions = [
  "ToolEnv: an open-world environment of tools. Each client acts in one episode at a time:",
  "start_episode picks a task (or takes your own request) and returns the user request;",
  "search_tools retrieves tools (only retrieved tools can be called); describe_tool shows a retrieved tool's parameters;",
  "call_tools runs one round of independent calls in parallel (call_tool: a round of one call), and a call may use an",
  "earlier call's output with {\"$ref\": \"c1.path.to.field\"}; answer ends the episode and returns the judge's verdict",
  "and R_ans. Every search_tools, call_tool, call_tools and answer is one round of at most maxRounds."
].join(" ")

/** One MCP tool: its name, what the model reads, its input schema and what it does. */
interface ToolDef<A> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: Schema.Codec<A, unknown>
  readonly readOnly: boolean
  readonly run: (episodes: McpEpisodes["Service"], client: Client, input: A) => Effect.Effect<object, McpEpisodeError>
  /** The result is a failure for the client (e.g. the one call of `call_tool` failed), though the round was taken. */
  readonly failed?: (result: object) => boolean
}

const def = <A>(d: ToolDef<A>): ToolDef<unknown> => d as unknown as ToolDef<unknown>

/** The tools, in the order a client lists them. */
export const tools: ReadonlyArray<ToolDef<unknown>> = [
  def({
    name: "start_episode",
    title: "Start an episode",
    description:
      "Start a ToolEnv episode for this client (replacing the one it has, if any). Give a taskId of the task source, or a split/level/index of its task stream (default: test, I1, 0), or your own request. Returns the user request to solve, the round limit and the controller state.",
    input: StartInput as Schema.Codec<StartInput, unknown>,
    readOnly: false,
    run: (e, c, i) => e.start(c, i)
  }),
  def({
    name: "search_tools",
    title: "Search tools",
    description:
      "One exploration round: retrieve tools for up to 16 capability queries at once (they run concurrently). Returns the hits (tool name, score, category, description) per query; a query searched again returns its next hits (page 2, 3, ...). Only tools an episode has retrieved can be described and called.",
    input: SearchInput as Schema.Codec<SearchInput, unknown>,
    readOnly: false,
    run: (e, c, i) => e.search(c, i)
  }),
  def({
    name: "describe_tool",
    title: "Describe a retrieved tool",
    description:
      "The documentation of a tool this episode has retrieved: description, parameters (JSON Schema), response schema and example. Not a round. A tool the episode has not retrieved is refused: search_tools for it first (the runtime refuses calls to unseen tools too).",
    input: DescribeInput as Schema.Codec<DescribeInput, unknown>,
    readOnly: true,
    run: (e, c, i) => e.describe(c, i)
  }),
  def({
    name: "call_tool",
    title: "Call one tool",
    description:
      "One execution round with a single call of a retrieved tool. Returns the observation (status 200 and the output, or the error status, kind and message); the result is an error when the call failed (the round is still spent). Prefer call_tools to run independent calls in one parallel round.",
    input: CallInput as Schema.Codec<CallInput, unknown>,
    readOnly: false,
    run: (e, c, i) => e.call(c, { calls: [{ tool: i.tool, ...(i.arguments !== undefined ? { arguments: i.arguments } : {}), ...(i.id !== undefined ? { id: i.id } : {}) }], ...(i.think !== undefined ? { think: i.think } : {}) }),
    failed: (result) => {
      const observations = (result as { readonly observations?: ReadonlyArray<{ readonly status: number }> }).observations ?? []
      return observations.length > 0 && observations.every((o) => o.status !== 200)
    }
  }),
  def({
    name: "call_tools",
    title: "Call tools in parallel",
    description:
      "One parallel execution round: up to 32 calls of retrieved tools, executed concurrently. A call's arguments may use an earlier round's output with {\"$ref\": \"<call id>.path.to.field\"} (not a call of the same round: it has not run yet). Returns one observation per call, the runtime's objections (unseen tools, invalid arguments, repeats, unresolved refs) and the next controller state.",
    input: CallsInput as Schema.Codec<CallsInput, unknown>,
    readOnly: false,
    run: (e, c, i) => e.call(c, i)
  }),
  def({
    name: "answer",
    title: "Answer and end the episode",
    description:
      "The final round: answer the user's request. Ends the episode; returns the judge's verdict (quality, faithfulness, utility), the answer reward R_ans with its Q/F/U pattern, and the step and phase rewards.",
    input: AnswerInput as Schema.Codec<AnswerInput, unknown>,
    readOnly: false,
    run: (e, c, i) => e.answer(c, i)
  }),
  def({
    name: "episode_state",
    title: "Episode state",
    description:
      "Where this client's episode is: task, rounds taken and left, controller state, the tools it may call, and once ended its stop reason and scoring. With trajectory: true, the whole trajectory (scored once ended). Not a round.",
    input: StateInput as Schema.Codec<StateInput, unknown>,
    readOnly: true,
    run: (e, c, i) => e.state(c, i)
  })
]

/** The JSON Schema of a tool's input, from the schema its arguments are decoded with (unknown keys refused). */
export const inputJsonSchema = (schema: Schema.Top): McpSchema.ToolJson => {
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const defs = Object.keys(document.definitions).length === 0 ? {} : { $defs: document.definitions }
  return { ...(document.schema as object), ...defs } as McpSchema.ToolJson
}

/** A tool result carrying `value` as JSON text and as structured content. */
export const result = (value: object, isError = false): McpSchema.CallToolResult => {
  const text = JSON.stringify(value)
  // the wire form: keys holding undefined are dropped here (the JSON-RPC encoder refuses them)
  return new McpSchema.CallToolResult({
    content: [{ type: "text", text }],
    structuredContent: JSON.parse(text) as unknown,
    ...(isError ? { isError: true } : {})
  })
}

/** A failed tool result whose text names what was wrong. */
export const failure = (tool: string, field: string, message: string): McpSchema.CallToolResult =>
  new McpSchema.CallToolResult({
    content: [{ type: "text", text: `${tool}: ${field === "episode" || message.startsWith(field) ? "" : `${field}: `}${message}` }],
    isError: true
  })

/** Decodes, runs, and turns every outcome into a tool result; a defect is logged and reported as an error result. */
const handler = (episodes: McpEpisodes["Service"], tool: ToolDef<unknown>) => {
  const decode = Schema.decodeUnknownEffect(tool.input)
  return (payload: unknown): Effect.Effect<McpSchema.CallToolResult, never, McpSchema.McpRequestContext> =>
    Effect.gen(function*() {
      const request = yield* McpSchema.McpRequestContext
      const http = yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest)
      const session = Option.isSome(http) ? http.value.headers["mcp-session-id"] : undefined
      const client: Client = { id: session !== undefined ? `session:${session}` : `client:${request.clientId}`, name: request.clientInfo?.name ?? "client" }
      const input = yield* decode(payload ?? {}, { onExcessProperty: "error", errors: "all" }).pipe(
        Effect.mapError((e) => new McpEpisodeError({ field: "arguments", message: `invalid: ${oneLine(e.message)}` }))
      )
      const value = yield* tool.run(episodes, client, input)
      return result(value, tool.failed?.(value) ?? false)
    }).pipe(
      Effect.catchTag("McpEpisodeError", (e) => Effect.succeed(failure(tool.name, e.field, e.message))),
      Effect.catchDefect((defect) =>
        Effect.logError(`MCP tool ${tool.name} crashed`, defect).pipe(
          Effect.as(failure(tool.name, "episode", `internal error in ${tool.name}: ${oneLine(String(defect))}`))
        )),
      Effect.withSpan(`McpTools.${tool.name}`)
    )
}

/** Registers the tools on the McpServer in context, over the episodes in context. */
export const registrations: Layer.Layer<never, never, McpServer.McpServer | McpEpisodes> = Layer.effectDiscard(
  Effect.gen(function*() {
    const server = yield* McpServer.McpServer
    const episodes = yield* McpEpisodes
    for (const tool of tools) {
      yield* server.addTool({
        tool: new McpSchema.Tool({
          name: tool.name,
          title: tool.title,
          description: tool.description,
          inputSchema: inputJsonSchema(tool.input),
          annotations: { title: tool.title, readOnlyHint: tool.readOnly, destructiveHint: false, idempotentHint: tool.readOnly, openWorldHint: false }
        }),
        annotations: Context.empty(),
        handle: handler(episodes, tool)
      })
    }
  })
)

/** The MCP server over standard input and output (nothing but protocol goes to stdout). */
export const layerStdio: Layer.Layer<McpServer.McpServer, never, Stdio.Stdio | McpEpisodes> = McpServer.layerStdio({
  ...serverInfo,
  instructions,
  protocols,
  registrations
}).pipe(Layer.orDie)

