/**
 * The ParaAct turn protocol: the one text format of a model turn. This module is its public face; the parts live in
 * ParaActScanner (tags), ParaActWire (tag JSON), ParaActParser, ParaActPrinter and ParaActInstructions (docs/protocol.md).
 */

/** The tag vocabulary, the scanner's position helpers and the located failure. */
export { closeTag, fail, findTag, hasTags, isTagName, openTag, type TagName, tagNames, textTags } from "./ParaActScanner.ts"
/** The JSON schemas inside `<plan>`, `<search>`, `<call>` and their located decoding. */
export { decodeItem, formatPath, type Located, WireCall, WireCallId, WirePlan, WirePlanNode, WireSearch } from "./ParaActWire.ts"
/** Text → Turn, the turn-level rules, id and slot generation, and the check of a turn built in code. */
export {
  type ActionOffsets,
  assignCallIds,
  assignSlots,
  checkActions,
  type DraftCall,
  lastTagOf,
  parseTags,
  type ParseOptions,
  parseTurn,
  partsToTurn,
  type TagParts,
  validateTurn
} from "./ParaActParser.ts"
/** Turn → canonical text. */
export { printCalls, printPlan, printSearches, printTurn } from "./ParaActPrinter.ts"
/** The protocol as a model's system prompt gives it, and its example turns. */
export { examples, instructions } from "./ParaActInstructions.ts"
