import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as DenseWordNet from "../../src/retrieval/DenseWordNet.ts"

/** A one-synset WordNet dict folder as file name → text. */
const dict: ReadonlyMap<string, string> = new Map([
  ["data.noun", "  license header line\n02958343 06 n 02 car 0 auto 0 000 | a motor vehicle; \"he parked the car\"\n"],
  ["index.noun", "auto n 1 0 1 0 02958343\ncar n 1 0 1 0 02958343\n"],
  ["index.sense", "car%1:06:00:: 02958343 1 40\nauto%1:06:00:: 02958343 2 3\n"]
])

describe("DenseWordNet.load", () => {
  it.effect("reads each part of speech's data and index file, then index.sense, and parses them", () =>
    Effect.gen(function*() {
      const read: Array<string> = []
      const wordnet = yield* DenseWordNet.load((file) =>
        Effect.sync(() => {
          read.push(file)
          return dict.get(file) ?? ""
        })
      )
      expect(read).toEqual([
        "data.noun", "index.noun", "data.verb", "index.verb", "data.adj", "index.adj", "data.adv", "index.adv", "index.sense"
      ])
      expect([...wordnet.synsets.keys()]).toEqual(["n:02958343"])
      expect(wordnet.synsets.get("n:02958343")?.definition).toBe("a motor vehicle")
      expect(DenseWordNet.synonyms(wordnet, "car")).toEqual(["auto"])
      const files = (name: string) => dict.get(name) ?? ""
      expect(wordnet).toEqual(DenseWordNet.parse({
        pos: {
          n: { data: files("data.noun"), index: files("index.noun") },
          v: { data: "", index: "" },
          a: { data: "", index: "" },
          r: { data: "", index: "" }
        },
        senseIndex: files("index.sense")
      }))
    }))

  it.effect("stops at the first file it cannot read, with that error", () =>
    Effect.gen(function*() {
      const error = yield* DenseWordNet.load((file) => (file === "index.noun" ? Effect.fail(`no ${file}`) : Effect.succeed(""))).pipe(Effect.flip)
      expect(error).toBe("no index.noun")
    }))
})
