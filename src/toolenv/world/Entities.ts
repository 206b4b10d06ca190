/**
 * Every entity type of the generated world, plus the record types that actions create (bookings, messages ...),
 * indexed by type name.
 */
import type { ActionDef, EntityDef } from "./Model.ts"
import { standaloneActions } from "./entities/Actions.ts"
import { businessTypes } from "./entities/Business.ts"
import { commerceTypes } from "./entities/Commerce.ts"
import { mediaTypes } from "./entities/Media.ts"
import { places } from "./entities/Places.ts"
import { sportsTypes } from "./entities/Sports.ts"
import { techTypes } from "./entities/Tech.ts"

/** The entity types that exist from the start (they have a universe). */
export const baseTypes: ReadonlyArray<EntityDef> = [...places, ...sportsTypes, ...businessTypes, ...mediaTypes, ...commerceTypes, ...techTypes]

/** Every action: those on entity types (with a target) and the standalone ones. */
export const allActions: ReadonlyArray<{ readonly action: ActionDef; readonly target?: string }> = [
  ...baseTypes.flatMap((d) => (d.actions ?? []).map((action) => ({ action, target: d.type }))),
  ...standaloneActions.map((action) => ({ action }))
]

/**
 * The action an action endpoint performs, found by its key and the record type it creates: keys alone are not unique
 * (a flight and a hotel are both booked with "book").
 */
export const actionFor = (key: string | undefined, creates: string): (typeof allActions)[number] | undefined =>
  allActions.find((a) => a.action.key === key && a.action.creates === creates)

const recordType = (a: ActionDef): EntityDef => {
  const noun = a.creates.replace(/_/g, " ")
  return {
    type: a.creates, noun, plural: `${noun}s`, synonyms: [], size: 0, createdOnly: true, nameLabel: "reference",
    id: { label: `${noun} ID`, example: a.recordId(20240415), make: () => "" },
    name: () => "",
    attrs: a.recordAttrs.map((r) => ({ ...r, gen: () => null }))
  }
}

/** The record types created by actions. */
export const recordTypes: ReadonlyArray<EntityDef> = allActions.map((a) => recordType(a.action))

/** All definitions by type name. */
export const entityDefs: ReadonlyMap<string, EntityDef> = new Map([...baseTypes, ...recordTypes].map((d) => [d.type, d] as const))
