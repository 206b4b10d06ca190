/**
 * Where a server is in its life: `starting` (the socket is open, the router not yet attached), `ready`, or `draining`
 * (SIGTERM received: no new connections, in-flight requests finishing). `GET /ready` answers 200 only when ready.
 */
import { Context, Layer, Schema } from "effect"

/** The phases of a server. */
export const Phase = Schema.Literals(["starting", "ready", "draining"])
/** The phases of a server. */
export type Phase = typeof Phase.Type

/** The server's phase as its handlers read it. */
export class Readiness extends Context.Service<Readiness, {
  readonly phase: () => Phase
}>()("paraagent/service/Readiness") {
  /** Always ready: a server without a front that tracks its phase (in-process tests, other mounts). */
  static readonly layerReady: Layer.Layer<Readiness> = Layer.succeed(Readiness, Readiness.of({ phase: () => "ready" }))
}
