/**
 * The official MCP SDK client as a test peer, and the scripted episode the MCP tests act: the same turns are stepped
 * through MCP and through a Session in-process, so the two trajectories can be compared.
 */
import * as ServedEpisode from "./ServedEpisode.ts"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Task } from "../../src/domain/Task.ts"
import type { Trajectory } from "../../src/domain/Trajectory.ts"

/** What a tool call returned, as the SDK client gives it. */
export interface ToolResult {
  readonly isError: boolean
  readonly text: string
  readonly value: Record<string, unknown> | undefined
}

/** Calls an MCP tool and reads its text and structured content. */
export const callTool = async (client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> => {
  const r = await client.callTool({ name, arguments: args }).catch((e: unknown) => { throw new Error(`${name} ${JSON.stringify(args)}: ${String(e)}`) })
  const content = (r.content ?? []) as ReadonlyArray<{ readonly type: string; readonly text?: string }>
  return {
    isError: r.isError === true,
    text: content.map((c) => c.text ?? "").join("\n"),
    value: r.structuredContent as Record<string, unknown> | undefined
  }
}

/** A trajectory without its clock readings (the only thing two runs of the same turns may differ in). */
export const timeless = (t: Trajectory): unknown => JSON.parse(ServedEpisode.timeless(t))

/** The layers of a task's gold DAG: layer = 1 + the deepest layer among its deps. */
export const goldLayers = (task: Task): Array<Array<Task["gold"][number]>> => {
  const depth = new Map<string, number>()
  for (const c of task.gold) depth.set(c.id, 1 + Math.max(0, ...c.deps.map((d) => depth.get(d) ?? 0)))
  const out: Array<Array<Task["gold"][number]>> = []
  for (const c of task.gold) (out[(depth.get(c.id) ?? 1) - 1] ??= []).push(c)
  return out
}
