import { assert, describe, it } from "@effect/vitest"
import type { Observation } from "../../../src/domain/Call.ts"
import { callId, toolName } from "../../../src/domain/Ids.ts"
import type { Json, JsonObject } from "../../../src/domain/Json.ts"
import type { ToolSpec } from "../../../src/domain/Tool.ts"
import { validStep } from "../../../src/domain/Trajectory.ts"
import type { Step } from "../../../src/domain/Trajectory.ts"
import * as ActionSpace from "../../../src/agent/ActionSpace.ts"
import { tool } from "../../support/RolloutKit.ts"

// the fact columns of a candidate row, by name (so the test reads what the schema says)
const column = (name: string): number => {
  const at = (ActionSpace.featureSchema.fact as ReadonlyArray<string>).indexOf(name)
  assert.isAtLeast(at, 0, `no fact column "${name}"`)
  return at
}
const carriedOwn = column("call carried the clause's literal (½: none named)")
const carriedForeign = column("call carried only another clause's literal")
const recordHolds = column("record holds the clause's literal")
const bestKey = column("best key of the clause")
const furtherAttribute = column("a further attribute of the clause")

const request = "Find the number of posts and trending rank of the hashtag \"#sustainabilityhacks\". Also, what is the rating of the restaurant \"Bluly Brasserie\"? And name the dataset with the most columns."

const hashtag = tool("hashtag_stats")
const trending = tool("trending_hashtags")
const restaurant = tool("restaurant_lookup")
const datasets = tool("top_datasets")

const observation = (id: string, t: ToolSpec, args: JsonObject, payload: Json, refs: ReadonlyArray<string> = []): Observation => ({
  callId: callId(id),
  tool: t.name,
  arguments: args,
  outcome: { _tag: "ok", payload },
  refs: refs.map(callId),
  attempts: 1,
  startMs: 0,
  endMs: 1
})

const step = (index: number, searches: Step["searches"], observations: ReadonlyArray<Observation>): Step => ({
  index,
  raw: "",
  validation: validStep,
  controller: "May",
  phase: observations.length > 0 ? "execute" : "explore",
  searches,
  observations,
  startMs: 0,
  policyMs: 0,
  endMs: 1,
  usage: { promptTokens: 0, completionTokens: 0 }
})

const search = (slot: string, tools: ReadonlyArray<ToolSpec>): Step["searches"][number] => ({
  slot,
  query: slot,
  hits: tools.map((t, i) => ({ tool: toolName(t.name), score: 1 - i / 10 })),
  startMs: 0,
  endMs: 1
})

// clause 0 (the hashtag) found hashtag_stats and trending_hashtags; clause 1 (the restaurant) restaurant_lookup
const history: ReadonlyArray<Step> = [
  step(0, [search("s1", [hashtag, trending]), search("s2", [restaurant]), search("s3", [datasets])], []),
  step(1, [], [
    // the hashtag asked for, and another hashtag (a distractor the features must tell apart)
    observation("c1", hashtag, { q: "#sustainabilityhacks" }, { tag_id: "H-1", trend_rank: 107, posts_count: 8221511 }),
    observation("c2", hashtag, { q: "#other" }, { tag_id: "H-2", trend_rank: 97, posts_count: 12 }),
    // a list: only its second item is the hashtag asked for
    observation("c3", trending, { q: "today" }, { items: [{ tag: "#cozy", trend_rank: 1 }, { tag: "#sustainabilityhacks", trend_rank: 107 }] }),
    // a tool of the hashtag clause given the other clause's name
    observation("c4", hashtag, { q: "Bluly Brasserie" }, { tag_id: "H-3", trend_rank: 5 }),
    // a clause that names no literal
    observation("c6", datasets, { q: "columns" }, { items: [{ title: "Weather", columns: 40 }] })
  ]),
  // a second hop: reads c1's output, so it carries the literal through the `$ref`
  step(2, [], [observation("c5", hashtag, { q: "H-1" }, { followers: 10 }, ["c1"])])
]

const space = ActionSpace.build({
  request,
  paradigm: "ParaAct",
  round: 3,
  maxRounds: 12,
  controller: "May",
  history,
  tools: [hashtag, trending, restaurant, datasets]
})

const fact = (call: string, ...path: ReadonlyArray<string | number>): Float64Array => {
  const j = space.facts.findIndex((f) => f.callId === call && f.path.join(".") === path.join("."))
  assert.isAtLeast(j, 0, `no fact ${call} ${path.join(".")}`)
  const slot = space.layout.kinds[space.kinds.indexOf("answer")] as { start: number }
  const row = slot.start + j
  return space.features.subarray(row * ActionSpace.width + ActionSpace.candidateOffset, (row + 1) * ActionSpace.width)
}

describe("fact candidates read against their call and their clause", () => {
  it("marks the call that carried its clause's literal, directly or through a $ref, and not another entity's call", () => {
    assert.strictEqual(fact("c1", "trend_rank")[carriedOwn], 1)
    assert.strictEqual(fact("c5", "followers")[carriedOwn], 1)
    assert.strictEqual(fact("c2", "trend_rank")[carriedOwn], 0)
    assert.strictEqual(fact("c3", "items", 1, "trend_rank")[carriedOwn], 0)
    // a clause naming no literal: neither carried nor missed
    assert.strictEqual(fact("c6", "items", 0, "title")[carriedOwn], 0.5)
  })

  it("marks a call that carried only another clause's literal", () => {
    assert.strictEqual(fact("c4", "trend_rank")[carriedForeign], 1)
    assert.strictEqual(fact("c2", "trend_rank")[carriedForeign], 0)
    assert.strictEqual(fact("c1", "trend_rank")[carriedForeign], 0)
  })

  it("marks the facts of the list item (or object) holding the clause's literal", () => {
    assert.strictEqual(fact("c3", "items", 1, "trend_rank")[recordHolds], 1)
    assert.strictEqual(fact("c3", "items", 0, "trend_rank")[recordHolds], 0)
    assert.strictEqual(fact("c1", "trend_rank")[recordHolds], 0)
  })

  it("marks the clause's best key over every call, and a key naming a further attribute of the clause", () => {
    // "trending rank" is named whole by trend_rank; posts_count names "posts", which trend_rank does not
    assert.strictEqual(fact("c1", "trend_rank")[bestKey], 1)
    assert.strictEqual(fact("c2", "trend_rank")[bestKey], 1)
    assert.strictEqual(fact("c1", "posts_count")[bestKey], 0)
    assert.strictEqual(fact("c1", "posts_count")[furtherAttribute], 1)
    assert.strictEqual(fact("c1", "trend_rank")[furtherAttribute], 0)
    // a key naming no word of the clause is neither
    assert.strictEqual(fact("c5", "followers")[bestKey], 0)
    assert.strictEqual(fact("c5", "followers")[furtherAttribute], 0)
  })
})
