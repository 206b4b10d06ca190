/**
 * A minimal Open Reward Standard client written from the specification (openrewardstandard.io: http-api, sse): JSON
 * for control routes, `X-Session-ID` on session routes, and tool calls read as server-sent events (`task_id`, `chunk`
 * events, then `end` with the RunToolOutput JSON, or `error`). Used by the ORS contract tests and the load bench.
 */

/** One parsed SSE event. */
export interface SseEvent {
  readonly event: string
  readonly data: string
}

/** Parses an SSE body: events separated by blank lines, `data:` lines joined with newlines, comments skipped. */
export const parseSse = (text: string): ReadonlyArray<SseEvent> => {
  const events: Array<SseEvent> = []
  let event: string | undefined
  let data: Array<string> = []
  for (const raw of text.split(/\r\n|\r|\n/)) {
    if (raw === "") {
      if (event !== undefined) events.push({ event, data: data.join("\n") })
      event = undefined
      data = []
      continue
    }
    if (raw.startsWith(":")) continue
    const colon = raw.indexOf(":")
    const field = colon < 0 ? raw : raw.slice(0, colon)
    const value = colon < 0 ? "" : raw.slice(colon + 1).replace(/^ /, "")
    if (field === "event") event = value
    else if (field === "data") data.push(value)
  }
  return events
}

/** The outcome of a tool call: its task id, the events, and the RunToolOutput of the `end` event (or the error). */
export interface CallResult {
  readonly status: number
  readonly taskId: string | undefined
  readonly events: ReadonlyArray<SseEvent>
  readonly result: { readonly ok: true; readonly output: ToolOutput } | { readonly ok: false; readonly error: string } | undefined
  readonly error: string | undefined
}

/** ORS ToolOutput as the client reads it. */
export interface ToolOutput {
  readonly blocks: ReadonlyArray<{ readonly type: string; readonly text: string; readonly detail: unknown }>
  readonly metadata: any
  readonly reward: number | null
  readonly finished: boolean
}

/** A client of one ORS server and environment. */
export const client = (base: string, env: string, headers: Record<string, string> = {}) => {
  const request = async (method: string, path: string, body?: unknown, sid?: string, extra: Record<string, string> = {}) => {
    const response = await fetch(base + path, {
      method,
      headers: { ...headers, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...(sid !== undefined ? { "x-session-id": sid } : {}), ...extra },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    const text = await response.text()
    return { status: response.status, text, json: (): any => JSON.parse(text) }
  }
  return {
    request,
    listEnvironments: async () => (await request("GET", "/list_environments")).json() as ReadonlyArray<string>,
    tools: async () => (await request("GET", `/${env}/tools`)).json().tools as ReadonlyArray<{ name: string; description: string; input_schema: unknown }>,
    splits: async () => (await request("GET", `/${env}/splits`)).json() as ReadonlyArray<{ name: string; type: string }>,
    numTasks: async (split: string) => (await request("POST", `/${env}/num_tasks`, { split })).json().num_tasks as number,
    task: async (split: string, index: number) => (await request("POST", `/${env}/task`, { split, index })).json().task as Record<string, unknown>,
    taskRange: async (split: string, start?: number, stop?: number) =>
      (await request("POST", `/${env}/task_range`, { split, ...(start !== undefined ? { start } : {}), ...(stop !== undefined ? { stop } : {}) })).json().tasks as ReadonlyArray<Record<string, unknown>>,
    /** `POST /create_session` read as the reference SDK reads it (SSE: the `task_id` event) */
    createSession: async (): Promise<string> => {
      const r = await request("POST", "/create_session", undefined, undefined, { accept: "text/event-stream" })
      const events = parseSse(r.text)
      const id = events.find((e) => e.event === "task_id")?.data
      if (r.status !== 200 || id === undefined) throw new Error(`create_session: ${r.status} ${r.text}`)
      return id
    },
    create: (sid: string, body: Record<string, unknown>) => request("POST", "/create", { env_name: env, ...body }, sid),
    prompt: async (sid: string) => (await request("GET", `/${env}/prompt`, undefined, sid)).json() as ReadonlyArray<{ type: string; text: string }>,
    taskTools: (sid: string) => request("GET", `/${env}/task_tools`, undefined, sid),
    ping: (sid: string) => request("POST", "/ping", undefined, sid),
    delete: (sid: string) => request("POST", "/delete", undefined, sid),
    deleteSession: (sid: string) => request("POST", "/delete_session", undefined, sid),
    call: async (sid: string, name: string, input: unknown, taskId?: string): Promise<CallResult> => {
      const r = await request("POST", `/${env}/call`, { name, input, ...(taskId !== undefined ? { task_id: taskId } : {}) }, sid, { accept: "text/event-stream" })
      if (r.status !== 200) return { status: r.status, taskId: undefined, events: [], result: undefined, error: r.text }
      const events = parseSse(r.text)
      const chunks: Array<string> = []
      let result: CallResult["result"]
      let error: string | undefined
      for (const e of events) {
        if (e.event === "chunk") chunks.push(e.data)
        else if (e.event === "end") result = JSON.parse([...chunks, e.data].join(""))
        else if (e.event === "error") error = e.data
      }
      return { status: r.status, taskId: events.find((e) => e.event === "task_id")?.data, events, result, error }
    }
  }
}
