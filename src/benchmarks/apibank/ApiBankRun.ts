/**
 * Runs any Policy through API-Bank level 1 / level 2: each step's dialogue becomes a policy context (the transcript
 * as the request, earlier API events as executed steps, the given or found APIs as tools), the turn is read as a
 * call or a ToolSearcher search, and the search runs through our Retriever over the API-Bank library.
 */
import { Effect, Layer, Result } from "effect"
import * as nodePath from "node:path"
import { Policy, type PolicyContext, type PolicyOutput } from "../../agent/Policy.ts"
import type { Observation } from "../../domain/Call.ts"
import { callId, taskId, toolName } from "../../domain/Ids.ts"
import type { Json, JsonObject } from "../../domain/Json.ts"
import type { Task } from "../../domain/Task.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { type Step as TrajectoryStep, validStep } from "../../domain/Trajectory.ts"
import type { Turn } from "../../domain/Turn.ts"
import * as Controller from "../../math/Controller.ts"
import * as History from "../../math/History.ts"
import * as ParaAct from "../../protocol/ParaAct.ts"
import * as Refs from "../../protocol/Refs.ts"
import { Retriever } from "../../retrieval/Retriever.ts"
import * as ApiBankImport from "../../toolenv/importers/ApiBank.ts"
import { ImportError } from "../../toolenv/importers/ImportReport.ts"
import { listDir, readText } from "../../toolenv/importers/Read.ts"
import type { Library } from "../../toolenv/Library.ts"
import * as DepGraph from "../../toolenv/DepGraph.ts"
import { makeLibrary } from "../../toolenv/ToolLibrary.ts"
import * as ApiBankScore from "./ApiBankScore.ts"

/** The API-Bank library: every API the importer reads from the data folder (ToolSearcher left out: it is our search). */
export interface ApiBankLibrary {
  readonly library: Library
  /** The APIs API-Bank's ToolSearcher searches (those its level-1/2 prompts describe): the retriever's corpus. */
  readonly searchable: Library
  /** Looks an API up by its API-Bank name. */
  readonly byApiName: (name: string) => ToolSpec | undefined
}

/** Loads the API-Bank library of a data folder (`test-data/*-api.json` and `data/all_apis.csv`). */
export const loadLibrary = Effect.fn("ApiBankRun.loadLibrary")(function*(dir: string) {
  const imported = yield* ApiBankImport.loadDirectory(dir, { training: false })
  const byApi = new Map(imported.tools.map((t) => [t.apiName ?? (t.name as string), t]))
  const searchableTools = imported.tools.filter((t) => t.source.ref.startsWith("test-data/"))
  return {
    library: makeLibrary(`api-bank:${dir}`, imported.tools, DepGraph.make([])),
    searchable: makeLibrary(`api-bank-searchable:${dir}`, searchableTools.length > 0 ? searchableTools : imported.tools, DepGraph.make([])),
    byApiName: (name: string) => byApi.get(name)
  } satisfies ApiBankLibrary
})

/** A level's dialogues and evaluation steps, with every record left out. */
export interface LevelData {
  readonly level: ApiBankScore.Level
  readonly dir: string
  readonly files: number
  /** The dialogue files read, sorted by name. */
  readonly fileNames: ReadonlyArray<string>
  readonly steps: ReadonlyArray<ApiBankScore.Step>
  readonly unresolved: ReadonlyArray<ApiBankScore.Unresolved>
}

/** Reads the `*.jsonl` dialogues of one level folder (sorted by name) and cuts them into steps. */
export const loadLevel = Effect.fn("ApiBankRun.loadLevel")(function*(samplesDir: string, level: ApiBankScore.Level, api: ApiBankLibrary) {
  const dir = nodePath.join(samplesDir, ApiBankScore.levelFolder[level])
  const entries = yield* listDir(dir)
  const files = entries.filter((e) => e.kind === "file" && e.name.endsWith(".jsonl")).map((e) => e.name).sort()
  if (files.length === 0) return yield* new ImportError({ source: dir, message: `${dir}: no *.jsonl dialogue file` })
  const steps: Array<ApiBankScore.Step> = []
  const unresolved: Array<ApiBankScore.Unresolved> = []
  const known = (name: string) => api.byApiName(name) !== undefined
  for (const file of files) {
    const text = yield* readText(nodePath.join(dir, file))
    const decoded = ApiBankScore.decodeDialogue(file, level, text)
    unresolved.push(...decoded.unresolved)
    const cut = ApiBankScore.stepsOf(decoded.dialogue, known)
    steps.push(...cut.steps)
    unresolved.push(...cut.unresolved)
  }
  return { level, dir, files: files.length, fileNames: files, steps, unresolved } satisfies LevelData
})

// ---------------------------------------------------------------------------------------------------------------
// The policy's context
// ---------------------------------------------------------------------------------------------------------------

const outputText = (output: Json | undefined): string => JSON.stringify(output ?? null)

/** The transcript line of one event (API events as API-Bank's evaluator writes them into the chat history). */
export const transcriptLine = (event: ApiBankScore.Event): string =>
  event.role === "API"
    ? `API: ${ApiBankScore.formatApiCall(event.api_name, event.param_dict)} Response: ${outputText(event.result.output)}`
    : `${event.role}: ${event.text}`

/** The request a policy gets for a step: the dialogue so far, and what is asked. */
export const requestOf = (step: ApiBankScore.Step): string =>
  [
    ...step.history.map(transcriptLine),
    "",
    "Make the API request the AI should make next, written as [ApiName(key='value', ...)] or as a tool call."
  ].join("\n")

/** The names a recorded ToolSearcher event found (every record of its output). */
const foundBy = (event: ApiBankScore.ApiEvent): ReadonlyArray<string> => ApiBankScore.searchOutputNames(event.result.output) ?? []

/** The slot and query of the level-1 step that stands for the prompt's "API descriptions" block. */
export const givenSlot = { slot: "given", query: "API descriptions of this dialogue" } as const

/**
 * Earlier API events as executed steps: ToolSearcher events as searches with their hits, others as calls. At level 1
 * a first step shows the given APIs as the hits of a search: in a ParaAgent context tools become visible through a
 * search result, and API-Bank's level-1 prompt shows their descriptions before the dialogue.
 */
export const historySteps = (step: ApiBankScore.Step, api: ApiBankLibrary): ReadonlyArray<TrajectoryStep> => {
  const out: Array<TrajectoryStep> = []
  let calls = 0
  if (step.level === 1) {
    const hits = toolsOf(step, api).map((t) => ({ tool: t.name, score: 1 }))
    const turn: Turn = { searches: [givenSlot], calls: [] }
    out.push({
      index: 0,
      raw: ParaAct.printTurn(turn),
      turn,
      validation: validStep,
      controller: Controller.stateBefore([]).state,
      phase: "explore",
      searches: [{ ...givenSlot, hits, startMs: 0, endMs: 0 }],
      observations: [],
      startMs: 0,
      policyMs: 0,
      endMs: 0,
      usage: { promptTokens: 0, completionTokens: 0 }
    })
  }
  for (const event of step.history) {
    if (event.role !== "API") continue
    const index = out.length
    const base = {
      index,
      validation: validStep,
      controller: Controller.stateBefore(out).state,
      startMs: 0,
      policyMs: 0,
      endMs: 0,
      usage: { promptTokens: 0, completionTokens: 0 }
    }
    if (event.api_name === ApiBankScore.toolSearcher) {
      const query = typeof event.param_dict["keywords"] === "string" ? event.param_dict["keywords"] : JSON.stringify(event.param_dict)
      const hits = foundBy(event).flatMap((name) => {
        const spec = api.byApiName(name)
        return spec === undefined ? [] : [{ tool: spec.name, score: 1 }]
      })
      const turn: Turn = { searches: [{ slot: `s${index + 1}`, query }], calls: [] }
      out.push({ ...base, raw: ParaAct.printTurn(turn), turn, phase: "explore", searches: [{ slot: `s${index + 1}`, query, hits, startMs: 0, endMs: 0 }], observations: [] })
      continue
    }
    calls++
    const id = callId(`c${calls}`)
    const tool = toolName(api.byApiName(event.api_name)?.name ?? event.api_name)
    const turn: Turn = { searches: [], calls: [{ id, tool, arguments: event.param_dict }] }
    const exception = event.result.exception
    const observation: Observation = {
      callId: id,
      tool,
      arguments: event.param_dict,
      outcome: exception === undefined || exception === null
        ? { _tag: "ok", payload: event.result.output ?? null }
        : { _tag: "error", error: { kind: "invalid_arguments", status: 400, message: exception } },
      refs: [],
      attempts: 1,
      startMs: 0,
      endMs: 0
    }
    out.push({ ...base, raw: ParaAct.printTurn(turn), turn, phase: "execute", searches: [], observations: [observation] })
  }
  return out
}

/**
 * The tools a step shows the policy. Level 1: every API the dialogue calls (API-Bank gives their descriptions).
 * Level 2: the APIs the earlier ToolSearcher events found (none before the first search: the policy must search).
 */
export const toolsOf = (step: ApiBankScore.Step, api: ApiBankLibrary): ReadonlyArray<ToolSpec> => {
  const names = step.level === 1
    ? step.apis.filter((n) => n !== ApiBankScore.toolSearcher)
    : step.history.flatMap((e) => (e.role === "API" && e.api_name === ApiBankScore.toolSearcher ? foundBy(e) : []))
  return [...new Set(names)].flatMap((n) => {
    const spec = api.byApiName(n)
    return spec === undefined ? [] : [spec]
  })
}

/** The id of a step's task. */
export const stepId = (step: Pick<ApiBankScore.Step, "level" | "file" | "index">): string => `api-bank:L${step.level}:${step.file}#${step.index}`

/**
 * The step as a task with its gold call: given only to a privileged policy (the teacher, the oracle). At a
 * ToolSearcher step the gold is the API the recorded search found, so a teacher searches for that API.
 */
export const taskOf = (step: ApiBankScore.Step, api: ApiBankLibrary, request: string): Task => ({
  id: taskId(stepId(step)),
  request,
  level: "I1",
  categories: [ApiBankImport.evaluationGroup],
  gold: [{
    id: callId("g1"),
    tool: toolName(api.byApiName(step.found ?? step.gold.name)?.name ?? step.found ?? step.gold.name),
    arguments: step.found === undefined ? step.gold.arguments : {},
    deps: []
  }],
  facts: [],
  split: "test",
  seed: 0,
  source: "api-bank"
})

/** The policy's context for one step. */
export const contextOf = (step: ApiBankScore.Step, api: ApiBankLibrary, privileged: boolean, seed: number): PolicyContext => {
  const history = historySteps(step, api)
  const request = requestOf(step)
  return {
    request,
    paradigm: "ParaAct",
    round: history.length,
    maxRounds: history.length + 8,
    controller: Controller.stateBefore(history).state,
    history,
    tools: toolsOf(step, api),
    seed,
    ...(privileged ? { task: taskOf(step, api, request) } : {})
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Reading a turn
// ---------------------------------------------------------------------------------------------------------------

/** What a turn asks for, before the search runs. */
type Asked =
  | { readonly _tag: "call"; readonly name: string; readonly arguments: JsonObject; readonly via: "structured" | "paraact" | "api-bank" }
  | { readonly _tag: "search"; readonly keywords: string; readonly via: "structured" | "paraact" | "api-bank" }
  | { readonly _tag: "none"; readonly detail: string }

const clip = (text: string, n = 160): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > n ? `${flat.slice(0, n - 3)}...` : flat
}

/** The first call of a turn (API-Bank scores one call per step), else its first search as a ToolSearcher call. */
const fromTurn = (turn: Turn, via: "structured" | "paraact", api: ApiBankLibrary): Asked => {
  const call = turn.calls[0]
  if (call !== undefined) {
    const name = api.library.get(call.tool)?.apiName ?? call.tool
    return { _tag: "call", name, arguments: call.arguments, via }
  }
  const search = turn.searches[0]
  if (search !== undefined) return { _tag: "search", keywords: search.query, via }
  return { _tag: "none", detail: turn.answer !== undefined ? `answered instead of calling: ${clip(turn.answer)}` : "the turn has no call and no search" }
}

/**
 * Reads a policy's output: its structured turn when it gave one (native calls, the learned policy); else ParaAct
 * tags when the text has them; else API-Bank's `[ApiName(key='value', ...)]` format. A call of ToolSearcher is a
 * search by its `keywords`. Text that is none of these is no call (scored wrong), never a failure.
 */
export const readOutput = (output: PolicyOutput, api: ApiBankLibrary): Asked => {
  const asked = ((): Asked => {
    if (output.turn !== undefined) return fromTurn(output.turn, "structured", api)
    if (ParaAct.hasTags(output.text)) {
      const parsed = ParaAct.parseTurn(output.text, { lenient: true })
      if (Result.isSuccess(parsed)) return fromTurn(parsed.success, "paraact", api)
      const bracketed = ApiBankScore.parseApiCall(output.text)
      if (bracketed === undefined) return { _tag: "none", detail: `malformed ParaAct turn: ${clip(parsed.failure.message)}` }
    }
    const call = ApiBankScore.parseApiCall(output.text)
    if (call === undefined) return { _tag: "none", detail: output.text.trim().length === 0 ? "empty output" : `no API call found in: ${clip(output.text)}` }
    return { _tag: "call", name: call.name, arguments: call.arguments, via: "api-bank" }
  })()
  if (asked._tag === "call" && asked.name === ApiBankScore.toolSearcher) {
    const keywords = asked.arguments["keywords"]
    return { _tag: "search", keywords: typeof keywords === "string" ? keywords : JSON.stringify(asked.arguments), via: asked.via }
  }
  return asked
}

// ---------------------------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------------------------

/** Options of {@link run}. */
export interface RunOptions {
  readonly concurrency: number
  readonly seed: number
}

/** One step's verdict with the raw output the policy gave (for `--verdicts`). */
export interface StepRecord {
  readonly verdict: ApiBankScore.Verdict
  readonly output: string
}

/**
 * The ToolSearcher of level 2: the retriever's best hit for the keywords over the searchable API-Bank library
 * (API-Bank's ToolSearcher returns its one best match by embedding similarity).
 */
export const searchApi = (keywords: string, api: ApiBankLibrary) =>
  Effect.gen(function*() {
    const retriever = yield* Retriever
    const lists = yield* retriever.search([keywords], 1)
    const top = lists[0]?.[0]
    return top === undefined ? undefined : api.searchable.get(top.tool)?.apiName ?? top.tool
  })

/** Scores the Policy in context on `steps`; a failed policy call or retriever scores the step wrong and goes on. */
export const run = Effect.fn("ApiBankRun.run")(function*(steps: ReadonlyArray<ApiBankScore.Step>, api: ApiBankLibrary, options: RunOptions) {
  const policy = yield* Policy
  const retriever = yield* Retriever
  const one = (step: ApiBankScore.Step) =>
    Effect.gen(function*() {
      const context = contextOf(step, api, policy.privileged, options.seed)
      const acted = yield* policy.act(context).pipe(Effect.result)
      if (Result.isFailure(acted)) {
        const prediction: ApiBankScore.Prediction = { _tag: "policy_error", detail: clip(acted.failure.message) }
        return { verdict: ApiBankScore.score(step, prediction), output: "" } satisfies StepRecord
      }
      const read = readOutput(acted.success, api)
      // `$ref`s to earlier calls' outputs are resolved as the runtime resolves them before a call runs
      const outputs = History.of(context.history).outputs
      const asked = read._tag === "call" ? { ...read, arguments: Refs.resolveRefs(read.arguments, (id) => outputs.get(id)).arguments } : read
      const prediction: ApiBankScore.Prediction = asked._tag === "search"
        ? yield* searchApi(asked.keywords, api).pipe(
          Effect.provideService(Retriever, retriever),
          Effect.map((found): ApiBankScore.Prediction => ({ _tag: "search", keywords: asked.keywords, found, via: asked.via })),
          Effect.catchTag("RetrieverError", (e) => Effect.succeed<ApiBankScore.Prediction>({ _tag: "none", detail: `the ToolSearcher failed: ${e.message}` }))
        )
        : asked
      return { verdict: ApiBankScore.score(step, prediction), output: acted.success.text } satisfies StepRecord
    })
  return yield* Effect.forEach(steps, one, { concurrency: options.concurrency })
})

/**
 * The gold-replay oracle (privileged) over the steps it will be asked: it makes each step's recorded call, and
 * searches with the recorded ToolSearcher keywords. Its call accuracy is 100% by construction; its search steps
 * measure our retriever against the search API-Bank recorded.
 */
export const oracle = (steps: ReadonlyArray<ApiBankScore.Step>): Layer.Layer<Policy> => {
  const byId = new Map(steps.map((s) => [stepId(s), s]))
  return Layer.succeed(
    Policy,
    Policy.of({
      name: "oracle",
      privileged: true,
      act: (context) =>
        Effect.sync(() => {
          const usage = { promptTokens: 0, completionTokens: 0 }
          const step = context.task === undefined ? undefined : byId.get(context.task.id)
          if (step === undefined) return { text: "", usage }
          const keywords = step.gold.arguments["keywords"]
          const turn: Turn = step.found !== undefined
            ? { searches: [{ slot: "s1", query: typeof keywords === "string" ? keywords : "" }], calls: [] }
            : { searches: [], calls: [{ id: callId(`c${context.round + 1}`), tool: toolName(step.gold.name), arguments: step.gold.arguments }] }
          return { text: ParaAct.printTurn(turn), turn, usage }
        })
    })
  )
}
