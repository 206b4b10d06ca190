import { describe, expect, it } from "@effect/vitest"
import { toolId, toolName } from "../../src/domain/Ids.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import { fromTool, groupDocument, groupDocuments, groups, plainFields, text, type ToolDocument, toolText } from "../../src/retrieval/Document.ts"

const spec: ToolSpec = {
  id: toolId("toolbench:Data/random_word_api/get_word_by_length"),
  name: toolName("get_word_by_length_for_random_word_api"),
  group: "Random Word API",
  apiName: "Get Word by Length",
  category: "Data",
  description: "Returns a random word of the given length.",
  groupDescription: "Random words for games.",
  parameters: {
    type: "object",
    properties: {
      length: { type: "integer", description: "number of letters" },
      filter: { type: "object", properties: { startsWith: { type: "string", description: " prefix " } } },
      tags: { type: "array", items: { type: "object", properties: { tag: { type: "string" } } } }
    },
    required: ["length"]
  },
  source: { kind: "toolbench", ref: "Data/random_word_api.json" }
}

describe("Document", () => {
  it("takes each field from the spec, parameters with nested names and descriptions", () => {
    const doc = fromTool(spec)
    expect(doc.tool).toBe("get_word_by_length_for_random_word_api")
    expect(doc.fields).toEqual({
      group: "Random Word API",
      api: "Get Word by Length",
      description: "Returns a random word of the given length.",
      groupDescription: "Random words for games.",
      category: "Data",
      parameters: "length. number of letters. filter. startsWith. prefix. tags. tag"
    })
  })

  it("does not repeat the group as the API name, and treats a missing group description as empty", () => {
    const { groupDescription: _, ...rest } = spec
    const doc = fromTool({ ...rest, apiName: "Random Word API" })
    expect(doc.fields.api).toBe("")
    expect(doc.fields.groupDescription).toBe("")
    expect(text(doc, plainFields)).toBe("Random Word API. Returns a random word of the given length. Data")
  })

  it("joins the chosen fields in the order given", () => {
    expect(text(fromTool(spec), ["api", "group"])).toBe("Get Word by Length. Random Word API")
    expect(toolText(spec)).toBe(
      "Random Word API. Get Word by Length. Returns a random word of the given length. Random words for games. Data. " +
        "length. number of letters. filter. startsWith. prefix. tags. tag"
    )
  })

  it("builds one group document per provider, from its members in library order", () => {
    const other: ToolSpec = { ...spec, name: toolName("other_api"), group: "Other API", apiName: "Other" }
    const second: ToolSpec = { ...spec, name: toolName("get_letters_for_random_word_api"), apiName: "Get Letters" }
    const tools = [spec, other, second]
    const [wordDoc, otherDoc, lettersDoc] = [spec, other, second].map(fromTool) as [ToolDocument, ToolDocument, ToolDocument]
    const grouped = groupDocuments([wordDoc, otherDoc, lettersDoc], groups(tools))
    expect(grouped).toEqual([groupDocument([wordDoc, lettersDoc]), groupDocument([otherDoc])])
    expect(grouped[0]?.api).toBe("Get Word by Length. Get Letters")
  })
})
