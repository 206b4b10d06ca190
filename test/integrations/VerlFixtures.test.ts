import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as Groups from "../../integrations/verl/fixtures/groups.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import type { Step } from "../../src/domain/Trajectory.ts"
import { repoRoot } from "../../src/io/DataPath.ts"
import { renderObservation } from "../../src/protocol/OpenAiFormat.ts"

describe("integrations/verl fixtures", () => {
  it("the committed advantage fixture is what src/math/Advantage.ts gives now (else: npm run verl-fixtures)", () => {
    const built = Groups.fixture()
    assert.isTrue(Result.isSuccess(built))
    const committed = readFileSync(join(repoRoot, "integrations", "verl", "fixtures", "advantage_groups.json"), "utf8")
    assert.strictEqual(committed, Groups.render(Result.getOrThrow(built)), "the fixture is stale: run npm run verl-fixtures and commit it")
  })

  it("the spread puts each step's combined advantage on its generated tokens only", () => {
    const layout = { response_length: 7, response_mask: [1, 1, 0, 0, 1, 1, 0], spans: [[0, 2], [2, 2], [4, 9]] as const }
    assert.deepStrictEqual(Groups.spread(layout, [1, 5, -2]), [1, 1, 0, 0, -2, -2, 0])
  })

  it("the committed observation fixture is what renderObservation gives now (else: npx tsx integrations/verl/fixtures/observations.ts)", () => {
    const file = join(repoRoot, "integrations", "verl", "fixtures", "observations.json")
    const data = JSON.parse(readFileSync(file, "utf8")) as {
      steps: Array<Step>
      tools: Record<string, ToolSpec>
      expected: Array<{ plain: string | null; lookup4000: string | null; cut200: string | null }>
    }
    const lookupTool = (name: string): ToolSpec | undefined => data.tools[name]
    assert.strictEqual(data.expected.length, data.steps.length)
    data.steps.forEach((step, i) => {
      assert.deepStrictEqual(data.expected[i], {
        plain: renderObservation(step) ?? null,
        lookup4000: renderObservation(step, { lookupTool, maxPayloadChars: 4000 }) ?? null,
        cut200: renderObservation(step, { maxPayloadChars: 200 }) ?? null
      }, `step ${i}: the fixture is stale`)
    })
  })
})
