/**
 * The ParaAct instructions a model is given: the protocol in words and the example turns, printed by the
 * canonical printer so that the prompt and the parser never disagree.
 */
import type { CallId, ToolName } from "../domain/Ids.ts"
import type { Turn } from "../domain/Turn.ts"
import { printTurn } from "./ParaActPrinter.ts"

const exampleExplore: Turn = {
  think: "I need the team's id before I can list its players, and a weather forecast for the match city.",
  plan: {
    nodes: [
      { id: "c1" as CallId, slot: "find a sports team by name", deps: [] },
      { id: "c2" as CallId, slot: "list the players of a team", deps: ["c1" as CallId] },
      { id: "c3" as CallId, slot: "weather forecast for a city", deps: [] }
    ]
  },
  searches: [
    { slot: "c1", query: "search sports team by name" },
    { slot: "c2", query: "team roster players list" },
    { slot: "c3", query: "weather forecast city" }
  ],
  calls: []
}

const exampleExecute: Turn = {
  think: "team_search and forecast are independent, so they run together; roster needs the team id from c1.",
  searches: [],
  calls: [
    { id: "c1" as CallId, tool: "team_search" as ToolName, arguments: { name: "Lakers" } },
    { id: "c3" as CallId, tool: "forecast" as ToolName, arguments: { city: "Los Angeles", days: 1 } }
  ]
}

const exampleRef: Turn = {
  searches: [],
  calls: [{ id: "c2" as CallId, tool: "team_roster" as ToolName, arguments: { team_id: { $ref: "c1.results.0.id" } } }]
}

const exampleAnswer: Turn = {
  think: "I have the roster and the forecast.",
  searches: [],
  calls: [],
  answer: "The Lakers' roster is ... Tomorrow in Los Angeles: sunny, 24 °C."
}

/** The example turns shown in {@link instructions} (each one parses). */
export const examples: ReadonlyArray<Turn> = [exampleExplore, exampleExecute, exampleRef, exampleAnswer]

/** The protocol as a model's system prompt gives it: the single source of truth the LLM policies put in their prompt. */
export const instructions = `You solve the user's request in rounds. In each round you write one turn made of tags, in this order, each at most once:

<think>...</think>    optional. Your reasoning, free text.
<plan>...</plan>      optional. The dependency graph of the request as JSON:
                      {"nodes":[{"id":"c1","tool":"<tool name, once known>","slot":"<capability in words>","deps":["<ids this node needs first>"]}]}
                      A node's id is the id of the call that will carry it out. Nodes whose deps are done can run together.
<search>...</search>  explore: a JSON list of tool-retrieval queries, one per capability slot:
                      [{"slot":"c1","query":"<what the tool must do>"}]
<call>...</call>      execute: a JSON list of tool calls; all calls of a turn run at the same time:
                      [{"id":"c1","name":"<tool name>","arguments":{...}}]
<answer>...</answer>  the final answer to the user, in plain text. It ends the episode.

Rules:
- Each turn has exactly one action: <search>, <call> or <answer>. Write a <plan> when you start and whenever an observation shows the plan must change; otherwise leave it out.
- Write nothing outside the tags. The content of <plan>, <search> and <call> is strict JSON (double quotes, no comments, no trailing commas).
- Call ids are unique in the whole episode: c1, c2, ... never reuse one. Call only tools that a search returned or that you already called, with arguments that match their parameters.
- To pass a value from the output of an earlier call, write {"$ref":"<call id>.<field>.<field>"} as the argument value; array items by index, e.g. {"$ref":"c1.results.0.id"}. A call cannot use the output of a call in the same turn.
- After each round you get an <observation>: the tools each search found (name, description, parameters; a query searched again shows its next tools, "page": 2, 3, ...), or each call's result (its output, or an error such as not_found or rate_limited; a rate-limited or failed call may be retried with a new id).

Example: a first turn that plans and explores
${printTurn(exampleExplore)}

Example: a turn that executes independent calls in parallel
${printTurn(exampleExecute)}

Example: a call that uses a field of an earlier call's output
${printTurn(exampleRef)}

Example: the final turn
${printTurn(exampleAnswer)}`
