import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as Groups from "../../integrations/verl/fixtures/groups.ts"
import { repoRoot } from "../../src/io/DataPath.ts"

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
})
