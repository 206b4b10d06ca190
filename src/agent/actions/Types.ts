/**
 * The action space's vocabulary: the context it is built from, its bounds, and the candidate records of each kind.
 * Types only (and the default bounds), shared by the enumerators of `src/agent/actions/` and `ActionSpace.ts`.
 */
import type { CallId } from "../../domain/Ids.ts"
import type { JsonObject } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import type { Paradigm, Step } from "../../domain/Trajectory.ts"

/** The action kinds a turn can take. */
export type Kind = "search" | "call" | "answer"

/** What the space is built from: the policy's context (the fields of `PolicyContext` it reads). */
export interface SpaceContext {
  readonly request: string
  readonly paradigm: Paradigm
  readonly round: number
  readonly maxRounds: number
  readonly controller: Step["controller"]
  readonly history: ReadonlyArray<Step>
  readonly tools: ReadonlyArray<ToolSpec>
}

/** Bounds of the enumeration (what keeps a round's matrix small). */
export interface SpaceOptions {
  /** Argument fillings per tool (best first, then variants). */
  readonly fillingsPerTool: number
  /** Answer facts per successful call, and in all. */
  readonly factsPerCall: number
  readonly factsTotal: number
  /** Array items looked at per array when enumerating facts and `$ref` sources. */
  readonly itemsPerArray: number
}

/** Defaults of the embedded policy. */
export const defaultSpaceOptions: SpaceOptions = { fillingsPerTool: 3, factsPerCall: 12, factsTotal: 60, itemsPerArray: 5 }

/** A search candidate: a capability clause of the request (or a re-search for a missing input). */
export interface SearchCandidate {
  readonly slot: string
  readonly query: string
  readonly clause: number
  readonly reason: "clause" | "phrase" | "entity_hop" | "provider" | "missing_input"
}

/** Where one argument value came from. */
export type FillSource = "literal" | "enum" | "default" | "ref"

/** A call candidate: a seen tool with one argument filling. */
export interface CallCandidate {
  readonly tool: ToolSpec
  readonly arguments: JsonObject
  readonly sources: ReadonlyArray<FillSource>
  /** The clause the tool was retrieved for (-1: unknown). */
  readonly clause: number
  /**
   * Whether a successful earlier call did the same operation (`Seen.operationKey`: the same words of the tool's name
   * without its provider, the same argument values): another provider's copy of a call already made.
   */
  readonly repeats: boolean
  /**
   * Whether the call would open its clause: the clause (≥ 0) has no successful call yet, and the call is ready —
   * every required parameter filled, the arguments valid (`$ref`s resolved), not settled before.
   */
  readonly opensClause: boolean
}

/** An answer fact: one leaf of a successful observation. */
export interface FactCandidate {
  readonly callId: CallId
  readonly path: ReadonlyArray<string | number>
  readonly label: string
  readonly value: string
  /** The request clause the fact's call served (-1: none); facts compete within a clause. */
  readonly clause?: number
}

/** Width of the context block and of the candidate block of a feature row. */
export const contextWidth = 24
export const candidateWidth = 28
