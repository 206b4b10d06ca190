/**
 * MCP episodes: each MCP client session acts in one ToolEnv episode at a time. Every action goes through
 * `Session.step` with a structured turn (a search round, a parallel call round, an answer), so the episode an MCP
 * client produces is an ordinary trajectory; at its end the judge and the rewards score it.
 */
import { Context, Effect, Layer, Option, Schema, Semaphore } from "effect"
import { Plan } from "../domain/Plan.ts"
import { callId, taskId, toolName } from "../domain/Ids.ts"
import { JsonObject } from "../domain/Json.ts"
import type { Json } from "../domain/Json.ts"
import { Level, Split } from "../domain/Task.ts"
import type { Task } from "../domain/Task.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import { Paradigm } from "../domain/Trajectory.ts"
import type { PhaseReward, Step, StepReward, Trajectory, Verdict } from "../domain/Trajectory.ts"
import type { Turn } from "../domain/Turn.ts"
import { IntIn, caps } from "../eval/RunConfig.ts"
import * as Scoring from "../eval/Scoring.ts"
import * as EpisodeScore from "./EpisodeScore.ts"
import { Judge } from "../judge/Judge.ts"
import * as Redaction from "../judge/Redaction.ts"
import * as Facts from "../math/TrajectoryFacts.ts"
import * as Reward from "../math/Reward.ts"
import * as ParaAct from "../protocol/ParaAct.ts"
import type { Retriever } from "../retrieval/Retriever.ts"
import * as Session from "../runtime/Session.ts"
import type { Simulator } from "../toolenv/Simulator.ts"
import { TaskSource } from "../toolenv/TaskSource.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"

// ---------------------------------------------------------------------------------------------------------------
// Inputs: one schema per MCP tool (McpTools turns them into the tools' JSON Schemas)
// ---------------------------------------------------------------------------------------------------------------

const Text = (max: number, description: string) =>
  Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max)).annotate({ description })

/** The largest task index `start_episode` resolves (the task stream is drawn up to it). */
export const maxTaskIndex = caps.index.maximum

/** `start_episode`: which task (a task id, a split/level/index of the task stream, or the client's own request). */
export const StartInput = Schema.Struct({
  taskId: Schema.optionalKey(Text(200, "a task id of the task source (e.g. gen-7-test-I2-3, as the server's task list gives it)")),
  split: Schema.optionalKey(Split.annotate({ description: "split of the task stream (default test)" })),
  level: Schema.optionalKey(Level.annotate({ description: "task level: I1 one tool, I2 several tools of a category, I3 across categories (default I1)" })),
  index: Schema.optionalKey(IntIn({ minimum: 0, maximum: maxTaskIndex }).annotate({ description: "position in the (split, level) task stream (default 0)" })),
  request: Schema.optionalKey(Text(4000, "your own user request instead of a task of the source (it has no gold facts: the judge grades without them)")),
  seed: Schema.optionalKey(IntIn(caps.seed).annotate({ description: "episode seed: the simulator's world state and faults derive from it (default 1)" })),
  paradigm: Schema.optionalKey(Paradigm.annotate({ description: "agent paradigm whose rules the runtime applies (default ParaAct: parallel searches and calls per round)" })),
  maxRounds: Schema.optionalKey(IntIn(caps.maxRounds).annotate({ description: "T_max, the round limit (default: the server's, 12)" }))
})
/** `start_episode` input. */
export type StartInput = typeof StartInput.Type

/** `search_tools`: one exploration round of up to 16 queries, run concurrently. */
export const SearchInput = Schema.Struct({
  queries: Schema.Array(Schema.Struct({
    query: Text(500, "what the tool should do, in words"),
    slot: Schema.optionalKey(Text(64, "the capability slot this query serves (default s1, s2, ...); unique within the round"))
  })).check(Schema.isMinLength(1), Schema.isMaxLength(16)).annotate({ description: "the round's searches (1 to 16)" }),
  think: Schema.optionalKey(Text(8000, "your reasoning for this round (recorded in the trajectory)"))
})
/** `search_tools` input. */
export type SearchInput = typeof SearchInput.Type

const CallItem = Schema.Struct({
  tool: Text(128, "the callable name of a tool this episode has retrieved"),
  arguments: Schema.optionalKey(JsonObject.annotate({ description: "the call's arguments (default {}); a value may be {\"$ref\": \"c1.path.to.field\"} to use an earlier call's output" })),
  id: Schema.optionalKey(Text(64, "call id (a letter or _ then letters, digits, _; default c1, c2, ...), unique in the episode; $refs name it"))
})

/** `call_tool`: a round with one call. */
export const CallInput = Schema.Struct({
  ...CallItem.fields,
  think: Schema.optionalKey(Text(8000, "your reasoning for this round (recorded in the trajectory)"))
})
/** `call_tool` input. */
export type CallInput = typeof CallInput.Type

/** `call_tools`: one parallel round of up to 32 calls, executed concurrently. */
export const CallsInput = Schema.Struct({
  calls: Schema.Array(CallItem).check(Schema.isMinLength(1), Schema.isMaxLength(32)).annotate({ description: "the round's calls (1 to 32), run concurrently; a $ref may only name a call of an earlier round" }),
  plan: Schema.optionalKey(Plan.annotate({ description: "optional plan DAG: nodes {id, tool?, slot?, deps} over call ids (rewarded when the calls follow it)" })),
  think: Schema.optionalKey(Text(8000, "your reasoning for this round (recorded in the trajectory)"))
})
/** `call_tools` input. */
export type CallsInput = typeof CallsInput.Type

/** `answer`: the final round. */
export const AnswerInput = Schema.Struct({
  answer: Text(20_000, "the final answer to the user's request, stating the facts the calls returned"),
  think: Schema.optionalKey(Text(8000, "your reasoning for this round (recorded in the trajectory)"))
})
/** `answer` input. */
export type AnswerInput = typeof AnswerInput.Type

/** `describe_tool`. */
export const DescribeInput = Schema.Struct({ name: Text(128, "the tool's callable name, as a search hit gave it") })
/** `describe_tool` input. */
export type DescribeInput = typeof DescribeInput.Type

/** `episode_state`. */
export const StateInput = Schema.Struct({
  trajectory: Schema.optionalKey(Schema.Boolean.annotate({ description: "include the whole trajectory (every step, observation and timing)" }))
})
/** `episode_state` input. */
export type StateInput = typeof StateInput.Type

// ---------------------------------------------------------------------------------------------------------------
// Errors and views
// ---------------------------------------------------------------------------------------------------------------

/** A request the episode cannot serve: `field` names what was wrong (an argument, or `episode`). */
export class McpEpisodeError extends Schema.TaggedError<McpEpisodeError>()("McpEpisodeError", {
  field: Schema.String,
  message: Schema.String
}) {}

/** How an ended episode was scored: the judge's verdict, R_ans, and the step and phase rewards. */
export interface ScoringView {
  /** Absent when the judge gave none. */
  readonly verdict?: Verdict
  /** Set when the judge failed: the trajectory is unjudged (R_ans 0 under the default masking). */
  readonly judgeError?: string
  readonly answerReward: { readonly pattern: string; readonly rAns: number }
  readonly stepRewards: ReadonlyArray<StepReward & { readonly round: number }>
  readonly phaseRewards: ReadonlyArray<PhaseReward & { readonly kind: string; readonly start: number; readonly end: number }>
}

/** What a round returns to the client. */
export interface RoundView {
  readonly round: number
  readonly searches: ReadonlyArray<{
    readonly slot: string
    readonly query: string
    readonly hits: ReadonlyArray<{ readonly tool: string; readonly score: number; readonly category: string; readonly description: string }>
    readonly error?: string
    /** A query searched again: which page of its ranking these hits are (2, 3, ...). */
    readonly page?: number
  }>
  readonly observations: ReadonlyArray<{
    readonly id: string
    readonly tool: string
    readonly arguments: JsonObject
    readonly status: number
    readonly output?: Json
    readonly error?: string
    readonly message?: string
  }>
  /** The runtime's objections to the round (unseen tools, invalid arguments, repeats, unresolved refs, dropped actions). */
  readonly issues: ReadonlyArray<string>
  readonly done: boolean
  readonly stop?: string
  /** The next round, while the episode runs. */
  readonly next?: { readonly round: number; readonly roundsLeft: number; readonly controller: string }
  readonly scoring?: ScoringView
}

/** `start_episode`'s answer. */
export interface StartView {
  readonly taskId: string
  readonly request: string
  readonly level?: string
  readonly paradigm: string
  readonly seed: number
  readonly maxRounds: number
  readonly next: { readonly round: number; readonly roundsLeft: number; readonly controller: string }
  /** The episode this one replaced, when the client had one running. */
  readonly replaced?: { readonly taskId: string; readonly rounds: number; readonly done: boolean }
}

/** `episode_state`'s answer. */
export interface StateView {
  readonly taskId: string
  readonly request: string
  readonly paradigm: string
  readonly seed: number
  readonly maxRounds: number
  readonly rounds: number
  readonly done: boolean
  readonly stop?: string
  readonly answer?: string
  readonly next?: { readonly round: number; readonly roundsLeft: number; readonly controller: string }
  /** Tools the next round may call (retrieved so far), by name. */
  readonly tools: ReadonlyArray<string>
  readonly scoring?: ScoringView
  readonly trajectory?: Trajectory
}

// ---------------------------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------------------------

/**
 * Who is acting: the key of its MCP session (the `Mcp-Session-Id` over HTTP, where every POST has its own transport
 * client id; the transport's client id on stdio) and the client's name (recorded as the trajectory's policy).
 */
export interface Client {
  readonly id: string
  readonly name: string
}

/** The episodes of the MCP clients of one server. */
export class McpEpisodes extends Context.Service<McpEpisodes, {
  readonly start: (client: Client, input: StartInput) => Effect.Effect<StartView, McpEpisodeError>
  readonly search: (client: Client, input: SearchInput) => Effect.Effect<RoundView, McpEpisodeError>
  readonly call: (client: Client, input: CallsInput) => Effect.Effect<RoundView, McpEpisodeError>
  readonly answer: (client: Client, input: AnswerInput) => Effect.Effect<RoundView, McpEpisodeError>
  readonly describe: (client: Client, input: DescribeInput) => Effect.Effect<ToolSpec, McpEpisodeError>
  readonly state: (client: Client, input: StateInput) => Effect.Effect<StateView, McpEpisodeError>
  /** Clients holding an episode now. */
  readonly size: Effect.Effect<number>
}>()("paraagent/McpEpisodes") {
  /** Episodes over the environment in context, with the defaults of {@link defaultOptions}. */
  static readonly layer = (options: Partial<McpEpisodesOptions> = {}) => layer(options)
}

/** How the episodes run. */
export interface McpEpisodesOptions {
  /** Runtime settings of every episode (T_max default, faults, timeouts); `maxRounds` may be lowered per episode. */
  readonly rollout: Partial<Session.RolloutConfig>
  /** Clients whose episodes are kept; past it, the least recently used client's episode is dropped. */
  readonly maxClients: number
  /** Default episode seed. */
  readonly seed: number
}

/** 1,024 clients, faults on, seed 1. */
export const defaultOptions: McpEpisodesOptions = { rollout: {}, maxClients: 1024, seed: 1 }

/** What the episodes need: the environment (tools, simulator, retriever), the judge; the task source when there is one. */
export type Requirements = ToolLibrary | Simulator | Retriever | Judge

interface Episode {
  readonly task: Task
  readonly session: Session.Session
  /** Every call id of the episode (the turn checks refuse a reused one). */
  readonly usedIds: Set<string>
  /** Every tool a search of the episode returned. */
  readonly retrieved: Set<string>
  scoring: ScoringView | undefined
  scored: Trajectory | undefined
}

interface Entry {
  readonly lock: Semaphore.Semaphore
  episode: Episode | undefined
}

const generatedTaskId = /^gen-(-?\d+)-(train|validation|test)-(I[123])-(\d+)$/

const short = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

const round3 = (x: number): number => Math.round(x * 1000) / 1000

/** The runtime's objections to a step, one line each. */
export const issuesOf = (step: Step): ReadonlyArray<string> => {
  const v = step.validation
  return [
    ...(step.protocolError !== undefined ? [`malformed turn: ${step.protocolError.message}`] : []),
    ...v.unseenTools.map((id) => `${id}: the tool has not been retrieved in this episode (search_tools for it first)`),
    ...v.invalidArguments.map((x) => `${x.callId}: arguments do not match the tool's schema: ${x.message}`),
    ...v.repeatedCalls.map((id) => `${id}: repeats an earlier call with the same arguments`),
    ...[...Facts.inTurnRepeats(step)].filter((id) => !v.repeatedCalls.some((r) => r === id)).map((id) => `${id}: repeats another call of this turn with the same arguments`),
    ...v.unresolvedRefs.map((x) => `${x.callId}: unresolved $ref ${x.ref}`),
    ...(v.planError !== undefined ? [`plan: ${v.planError}`] : []),
    ...(v.dropped ?? []).map((a) => `${a}: not allowed by the paradigm this round; it did not run`)
  ]
}

/** Builds the service over the environment in context. */
export const make = (options: Partial<McpEpisodesOptions> = {}) =>
  Effect.gen(function*() {
    const config: McpEpisodesOptions = { ...defaultOptions, ...options }
    const library = yield* ToolLibrary
    const judge = yield* Judge
    const tasks = Option.getOrUndefined(yield* Effect.serviceOption(TaskSource))
    const environment = yield* Effect.context<ToolLibrary | Simulator | Retriever>()
    const entries = new Map<string, Entry>()
    const equivalent = yield* Scoring.equivalence

    /** The client's entry, most recently used last; the least recently used past `maxClients` is dropped. */
    const entryOf = (client: Client): Entry => {
      let entry = entries.get(client.id)
      if (entry !== undefined) entries.delete(client.id)
      else entry = { lock: Semaphore.makeUnsafe(1), episode: undefined }
      entries.set(client.id, entry)
      while (entries.size > config.maxClients) {
        const oldest = entries.keys().next()
        if (oldest.done === true) break
        entries.delete(oldest.value)
      }
      return entry
    }

    /** Runs `f` on the client's entry, one request of a client at a time (a Session takes one step at a time). */
    const locked = <A>(client: Client, f: (entry: Entry) => Effect.Effect<A, McpEpisodeError>) => {
      const entry = entryOf(client)
      return entry.lock.withPermits(1)(f(entry))
    }

    const current = (entry: Entry): Effect.Effect<Episode, McpEpisodeError> =>
      entry.episode === undefined
        ? Effect.fail(new McpEpisodeError({ field: "episode", message: "no episode is running for this client: call start_episode first" }))
        : Effect.succeed(entry.episode)

    const nextOf = (session: Session.Session) => {
      const context = session.context()
      return context === undefined
        ? undefined
        : { round: context.round, roundsLeft: context.maxRounds - context.round, controller: context.controller }
    }

    const resolveTask = (input: StartInput): Effect.Effect<Task, McpEpisodeError> => {
      if (input.request !== undefined) {
        if (input.taskId !== undefined) return Effect.fail(new McpEpisodeError({ field: "request", message: "give either taskId or request, not both" }))
        const own: Task = {
          id: taskId(`own-${hashText(input.request)}`),
          request: input.request,
          level: "I1",
          categories: [],
          gold: [],
          facts: [],
          split: "test",
          seed: 0,
          source: "mcp"
        }
        return Effect.succeed(own)
      }
      if (tasks === undefined) {
        return Effect.fail(new McpEpisodeError({ field: "taskId", message: "this server has no task source (its library is not the generated world): pass your own request" }))
      }
      let split: Split = input.split ?? "test"
      let level: Level = input.level ?? "I1"
      let index = input.index ?? 0
      let seed: number | undefined
      if (input.taskId !== undefined) {
        const m = generatedTaskId.exec(input.taskId)
        if (m === null) {
          return Effect.fail(new McpEpisodeError({ field: "taskId", message: `unknown task id ${JSON.stringify(input.taskId)}: expected gen-<seed>-<split>-<level>-<index>` }))
        }
        seed = Number(m[1])
        split = m[2] as Split
        level = m[3] as Level
        index = Number(m[4])
        if (index > maxTaskIndex) return Effect.fail(new McpEpisodeError({ field: "taskId", message: `task index ${index} is past the largest served, ${maxTaskIndex}` }))
      }
      return Effect.gen(function*() {
        const drawn = yield* tasks.sample({ split, count: index + 1, levels: [level], ...(seed !== undefined ? { seed } : {}) })
        const wanted = input.taskId
        const task = wanted !== undefined ? drawn.find((t) => t.id === wanted) : drawn[index]
        if (task === undefined) {
          return yield* new McpEpisodeError({
            field: wanted !== undefined ? "taskId" : "index",
            message: wanted !== undefined
              ? `no task ${JSON.stringify(wanted)} in the task source`
              : `the ${split}/${level} task stream has ${drawn.length} tasks within its draw budget; index ${index} is past it`
          })
        }
        return task
      })
    }

    const score = (episode: Episode) =>
      Effect.gen(function*() {
        const trajectory = yield* episode.session.trajectory
        const scored = yield* EpisodeScore.score(judge, library, equivalent, episode.task, trajectory, { taskId: episode.task.id })
        const scores = scored.rewards
        const view: ScoringView = {
          ...(scored.verdict !== undefined ? { verdict: scored.verdict } : {}),
          ...(scored.judgeError !== undefined ? { judgeError: scored.judgeError } : {}),
          answerReward: scores.answer,
          stepRewards: scores.steps.map((r, round) => ({ round, ...r })),
          phaseRewards: scores.phases.map(({ kind, start, end, l1, l2, l3, l4, rPhase }) => ({ kind, start, end, l1, l2, l3, l4, rPhase }))
        }
        episode.scored = Reward.attach(scored.judged, scores)
        episode.scoring = view
        return view
      })

    const roundView = (step: Step, episode: Episode, scoring: ScoringView | undefined): RoundView => {
      const status = episode.session.status()
      const next = nextOf(episode.session)
      return {
        round: step.index,
        searches: step.searches.map((s) => ({
          slot: s.slot,
          query: s.query,
          hits: s.hits.map((h) => {
            const spec = library.get(h.tool)
            return { tool: h.tool, score: round3(h.score), category: spec?.category ?? "", description: short(spec?.description ?? "", 240) }
          }),
          ...(s.error !== undefined ? { error: s.error } : {}),
          ...(s.page !== undefined ? { page: s.page } : {})
        })),
        observations: step.observations.map((o) => ({
          id: o.callId,
          tool: o.tool,
          arguments: o.arguments,
          ...(o.outcome._tag === "ok"
            ? { status: 200, output: o.outcome.payload }
            : { status: o.outcome.error.status, error: o.outcome.error.kind, message: o.outcome.error.message })
        })),
        issues: issuesOf(step),
        done: status.done,
        ...(status.stop !== undefined ? { stop: status.stop } : {}),
        ...(next !== undefined ? { next } : {}),
        ...(scoring !== undefined ? { scoring } : {})
      }
    }

    /** One round: the turn is checked first (a malformed one is refused without spending a round), then stepped. */
    const stepTurn = (client: Client, build: (episode: Episode) => Effect.Effect<Turn, McpEpisodeError>) =>
      locked(client, (entry) =>
        Effect.gen(function*() {
          const episode = yield* current(entry)
          const turn = yield* build(episode)
          const checked = ParaAct.validateTurn(turn, { usedCallIds: [...episode.usedIds].map(callId) })
          if (checked._tag === "Failure") {
            return yield* new McpEpisodeError({ field: checked.failure.tag, message: `${checked.failure.message} (no round was spent)` })
          }
          const step = yield* episode.session.step({ text: ParaAct.printTurn(turn), turn, usage: { promptTokens: 0, completionTokens: 0 } }).pipe(
            Effect.mapError((e) => new McpEpisodeError({ field: "episode", message: `${e.message}; start_episode begins a new one` }))
          )
          for (const c of turn.calls) episode.usedIds.add(c.id)
          for (const s of step.searches) for (const h of s.hits) episode.retrieved.add(h.tool)
          const scoring = episode.session.status().done ? yield* score(episode) : undefined
          return roundView(step, episode, scoring)
        }))

    const thinkOf = (think: string | undefined): Partial<Pick<Turn, "think">> => (think !== undefined ? { think: think.trim() } : {})

    const start = Effect.fn("McpEpisodes.start")(function*(client: Client, input: StartInput) {
      const task = yield* resolveTask(input)
      const spec: Session.SessionSpec = { task, paradigm: input.paradigm ?? "ParaAct", seed: input.seed ?? config.seed, policy: policyLabel(client) }
      const overrides: Partial<Session.RolloutConfig> = { ...config.rollout, ...(input.maxRounds !== undefined ? { maxRounds: input.maxRounds } : {}) }
      return yield* locked(client, (entry) =>
        Effect.gen(function*() {
          const session = yield* Session.open(spec, overrides).pipe(Effect.provideContext(environment))
          const previous = entry.episode
          entry.episode = { task, session, usedIds: new Set(), retrieved: new Set(), scoring: undefined, scored: undefined }
          const next = nextOf(session) ?? { round: 0, roundsLeft: session.config.maxRounds, controller: "Need" }
          const view: StartView = {
            taskId: task.id,
            request: task.request,
            ...(task.source !== "mcp" ? { level: task.level } : {}),
            paradigm: spec.paradigm,
            seed: spec.seed,
            maxRounds: session.config.maxRounds,
            next,
            ...(previous !== undefined
              ? { replaced: { taskId: previous.task.id, rounds: previous.session.status().rounds, done: previous.session.status().done } }
              : {})
          }
          return view
        }))
    })

    const search = Effect.fn("McpEpisodes.search")(function*(client: Client, input: SearchInput) {
      return yield* stepTurn(client, () => {
        const taken = new Set(input.queries.flatMap((q) => (q.slot !== undefined ? [q.slot] : [])))
        let k = 0
        const freshSlot = (): string => {
          let slot: string
          do slot = `s${++k}`
          while (taken.has(slot))
          taken.add(slot)
          return slot
        }
        const turn: Turn = {
          ...thinkOf(input.think),
          searches: input.queries.map((q) => ({ slot: q.slot ?? freshSlot(), query: q.query })),
          calls: []
        }
        return Effect.succeed(turn)
      })
    })

    const call = Effect.fn("McpEpisodes.call")(function*(client: Client, input: CallsInput) {
      return yield* stepTurn(client, (episode) => {
        const taken = new Set([...episode.usedIds, ...input.calls.flatMap((c) => (c.id !== undefined ? [c.id] : []))])
        let k = 0
        const freshId = (): string => {
          let id: string
          do id = `c${++k}`
          while (taken.has(id))
          taken.add(id)
          return id
        }
        const turn: Turn = {
          ...thinkOf(input.think),
          ...(input.plan !== undefined ? { plan: input.plan } : {}),
          searches: [],
          calls: input.calls.map((c) => ({ id: callId(c.id ?? freshId()), tool: toolName(c.tool), arguments: c.arguments ?? {} }))
        }
        return Effect.succeed(turn)
      })
    })

    const answer = Effect.fn("McpEpisodes.answer")(function*(client: Client, input: AnswerInput) {
      return yield* stepTurn(client, () => Effect.succeed<Turn>({ ...thinkOf(input.think), searches: [], calls: [], answer: input.answer.trim() }))
    })

    const describe = Effect.fn("McpEpisodes.describe")(function*(client: Client, input: DescribeInput) {
      return yield* locked(client, (entry) =>
        Effect.gen(function*() {
          const episode = yield* current(entry)
          const spec = library.get(input.name)
          if (spec === undefined) return yield* new McpEpisodeError({ field: "name", message: `no tool named ${JSON.stringify(input.name)} in the library` })
          const known = seenTools(episode)
          if (!known.has(spec.name)) {
            return yield* new McpEpisodeError({
              field: "name",
              message: `tool ${JSON.stringify(input.name)} has not been retrieved in this episode: search_tools for it first (the runtime refuses calls to tools the episode has not retrieved)`
            })
          }
          return spec
        }))
    })

    const state = Effect.fn("McpEpisodes.state")(function*(client: Client, input: StateInput) {
      return yield* locked(client, (entry) =>
        Effect.gen(function*() {
          const episode = yield* current(entry)
          const status = episode.session.status()
          const next = nextOf(episode.session)
          const full = input.trajectory === true ? (episode.scored ?? (yield* episode.session.trajectory)) : undefined
          const trajectory = full?.verdict === undefined ? full : { ...full, verdict: Redaction.forClient(episode.task, full.verdict) }
          const view: StateView = {
            taskId: episode.task.id,
            request: episode.task.request,
            paradigm: episode.session.spec.paradigm,
            seed: episode.session.spec.seed,
            maxRounds: episode.session.config.maxRounds,
            rounds: status.rounds,
            done: status.done,
            ...(status.stop !== undefined ? { stop: status.stop } : {}),
            ...(status.answer !== undefined ? { answer: status.answer } : {}),
            ...(next !== undefined ? { next } : {}),
            tools: [...seenTools(episode)],
            ...(episode.scoring !== undefined ? { scoring: episode.scoring } : {}),
            ...(trajectory !== undefined ? { trajectory } : {})
          }
          return view
        }))
    })

    return McpEpisodes.of({
      start,
      search,
      call,
      answer,
      describe,
      state,
      size: Effect.sync(() => [...entries.values()].filter((e) => e.episode !== undefined).length)
    })
  })

/** The tools the episode's next round may call (what a policy's context lists); once ended, every tool it retrieved. */
const seenTools = (episode: Episode): ReadonlySet<string> => {
  const context = episode.session.context()
  return context !== undefined ? new Set(context.tools.map((t) => t.name)) : episode.retrieved
}

/** The trajectory's policy label for an MCP client. */
export const policyLabel = (client: Client): string => `mcp/${client.name}`

/** A short stable digest of a text (FNV-1a, 32 bits, hex): the id of an own-request task. */
const hashText = (text: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, "0")
}

/** The service over the environment in context. */
export const layer = (options: Partial<McpEpisodesOptions> = {}): Layer.Layer<McpEpisodes, never, Requirements> =>
  Layer.effect(McpEpisodes, make(options))
