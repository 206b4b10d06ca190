/**
 * The main job. Until the rollout runtime lands it only checks that the domain schemas load and decode,
 * which is the smallest end-to-end thing the project has.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Schema } from "effect"
import { ToolSpec } from "../src/domain/index.ts"

const example = {
  id: "generated:sports/team_roster",
  name: "team_roster",
  group: "Team Roster",
  apiName: "team_roster",
  category: "Sports",
  description: "Lists the players of a team.",
  parameters: { type: "object", properties: { team_id: { type: "string" } }, required: ["team_id"] },
  source: { kind: "generated", ref: "example" }
}

const program = Effect.gen(function*() {
  const spec = yield* Schema.decodeUnknownEffect(ToolSpec)(example)
  yield* Console.log(`decoded tool ${spec.name} (${spec.category})`)
})

NodeRuntime.runMain(program)
