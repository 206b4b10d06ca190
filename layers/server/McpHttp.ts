/**
 * ToolEnv's MCP server over streamable HTTP: an HttpRouter layer serving the MCP endpoint at `/mcp` (one MCP session
 * per `Mcp-Session-Id`, each acting in its own episode), for the ToolEnv HTTP server to mount. Authentication is the
 * mounting server's: its router middleware (bearer auth) runs in front of these routes as of any other.
 */
import { Layer } from "effect"
import { McpServer } from "effect/ai"
import type { HttpRouter } from "effect/http"
import type { McpEpisodes } from "../../src/service/McpEpisodes.ts"
import * as McpTools from "../../src/service/McpTools.ts"

/** Where the endpoint is served, and which browser origins may call it (none by default: non-browser clients only). */
export interface McpHttpOptions {
  readonly path?: HttpRouter.PathInput
  readonly allowedOrigins?: ReadonlyArray<string>
}

/** The default path of the MCP endpoint. */
export const defaultPath = "/mcp"

/**
 * The MCP endpoint as routes of the HttpRouter in context (POST for JSON-RPC, DELETE ends a session), over the
 * episodes in context.
 */
export const layer = (options: McpHttpOptions = {}): Layer.Layer<McpServer.McpServer, never, HttpRouter.HttpRouter | McpEpisodes> =>
  McpServer.layerHttp({
    ...McpTools.serverInfo,
    instructions: McpTools.instructions,
    protocols: McpTools.protocols,
    path: options.path ?? defaultPath,
    allowSessionTermination: true,
    ...(options.allowedOrigins !== undefined ? { allowedOrigins: options.allowedOrigins } : {}),
    registrations: McpTools.registrations
  }).pipe(Layer.orDie)
