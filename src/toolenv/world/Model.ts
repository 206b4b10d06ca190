/**
 * The vocabulary in which the generated world is declared: entity types, their attributes, relations, time series
 * and the actions that create new records. Entities.ts declares the world in these terms; Universe.ts evaluates it.
 */
import type { Json } from "../../domain/Json.ts"

/** The JSON type of an attribute value. */
export type AttrType = "string" | "integer" | "number" | "boolean" | "string[]"

/** A handle on one entity, given to generators: a value is a pure function of (world seed, type, index, label). */
export interface EntityCore {
  readonly type: string
  readonly index: number
  /** The entity's hash: mixes world seed, type and index. */
  readonly hash: number
  /** Index of the parent entity (block relation), -1 when the type has none. */
  readonly parent: number
  /** Position among the parent's children (0-based), -1 when the type has no parent. */
  readonly position: number
  /** An independent hash for a label (one per attribute, so attributes do not correlate). */
  readonly h: (label: string) => number
  /** Another attribute of the same entity. */
  readonly get: (key: string) => Json
  /** The world the entity lives in. */
  readonly world: WorldView
}

/** A handle on one entity with its id and name (available once the type's table is built). */
export interface Entity extends EntityCore {
  readonly id: string
  readonly name: string
}

/** What generators may ask of the world (other entities' ids, names and attributes). */
export interface WorldView {
  readonly size: (type: string) => number
  readonly id: (type: string, index: number) => string
  readonly name: (type: string, index: number) => string
  readonly attr: (type: string, index: number, key: string) => Json
  readonly entity: (type: string, index: number) => Entity
  /** Children of a parent through the block relation of `childType`: indexes [start, start + count). */
  readonly children: (childType: string, parentIndex: number) => { readonly start: number; readonly count: number }
  /** A value computed once per world (a league's standings): `compute` must be a pure function of the world. */
  readonly memo: <A>(key: string, compute: () => A) => A
}

/** A reference from an attribute to another entity: the attribute's value is that entity's id. */
export interface RefTarget {
  readonly type: string
  /** Index of the referenced entity (pure; also used to build the inverse index). */
  readonly index: (e: EntityCore) => number
  /** Name of the inverse relation seen from the target (`matches` of a team); attributes sharing a name are unioned. */
  readonly inverse?: string
  /** Label of the inverse relation in prose (`home and away matches`). */
  readonly inverseLabel?: string
}

/** One attribute of an entity type. */
export interface Attr {
  /** Canonical key (snake_case); response fields carry `x-entity: "<type>.<key>"`. */
  readonly key: string
  /** A noun phrase for descriptions and requests (`head coach`). */
  readonly label: string
  readonly type: AttrType
  readonly format?: "date" | "date-time" | "email" | "uri"
  /** The entity this attribute identifies (its value is that entity's id). */
  readonly ref?: RefTarget
  /** The finite domain of a categorical attribute (tools may filter on it by equality). */
  readonly values?: ReadonlyArray<string>
  readonly unit?: string
  /** Whether tools may filter on it: equality (categorical, refs) or a numeric/date range. */
  readonly filter?: "eq" | "range"
  /** Whether a request may ask for it as a fact (default true). */
  readonly fact?: boolean
  /** The type whose name this attribute carries (`city` beside `city_id` carries a city's name). */
  readonly names?: string
  /** The child type this attribute counts (`squad_size` counts a team's players). */
  readonly counts?: string
  readonly gen: (e: Entity) => Json
}

/** A daily time series of an entity (prices, temperatures, views). */
export interface SeriesDef {
  readonly key: string
  readonly label: string
  readonly unit?: string
  readonly type: "number" | "integer"
  /** The value on a day (day number since 1970-01-01); `h` is the series' own hash for the entity. */
  readonly value: (e: EntityCore, day: number, h: number) => number
  /** The values of days `from`..`to` (same as `value` day by day; a faster path when given). */
  readonly range?: (e: EntityCore, from: number, to: number, h: number) => Array<number>
}

/** An input of an action (what the caller must send besides the target id). */
export interface ActionInput {
  readonly key: string
  readonly label: string
  readonly type: "string" | "integer" | "number" | "boolean"
  readonly format?: "date" | "email" | "uri"
  readonly values?: ReadonlyArray<string>
  readonly minimum?: number
  readonly maximum?: number
  readonly required: boolean
  /** A plausible value for examples and tasks. */
  readonly example: (h: number) => Json
}

/** An action that creates a record (a booking, a message, a ticket). */
export interface ActionDef {
  /** Verb key (`book`, `send`, `reserve`). */
  readonly key: string
  /** Imperative phrase with the target (`book a room at a hotel`). */
  readonly label: string
  /** The type of the created record. */
  readonly creates: string
  /** The record's id prefix and shape: a function of the action's arguments hash. */
  readonly recordId: (h: number) => string
  readonly inputs: ReadonlyArray<ActionInput>
  /** The record's attributes (without its id), from the target and the arguments. */
  readonly compute: (target: Entity | undefined, args: { readonly [key: string]: Json }, h: number) => { readonly [key: string]: Json }
  /** The attributes of the created record, for response schemas and status tools. */
  readonly recordAttrs: ReadonlyArray<Pick<Attr, "key" | "label" | "type" | "format" | "ref" | "values" | "unit">>
}

/** A block relation: each parent owns a contiguous run of children (a team's players). */
export interface ParentDef {
  readonly type: string
  /** Key of the child attribute holding the parent id (`team_id`). */
  readonly key: string
  readonly label: string
  /** Children per parent, drawn in [min, max]. */
  readonly min: number
  readonly max: number
  /** Name of the relation seen from the parent (`players`). */
  readonly relation: string
}

/** An identifier scheme. `make` may be called again with a higher attempt number when a value collides. */
export interface IdScheme {
  /** How a request or parameter description names the id (`team ID`, `ticker symbol`, `IATA code`). */
  readonly label: string
  readonly make: (e: EntityCore & { readonly name: string }, attempt: number) => string
  /** An example value for descriptions. */
  readonly example: string
}

/** An entity type of the world. */
export interface EntityDef {
  readonly type: string
  readonly noun: string
  readonly plural: string
  /** Other words for the type, used to vary descriptions (`club`, `squad`). */
  readonly synonyms: ReadonlyArray<string>
  /** Universe size (for a child type: ignored, the size follows from the parent's children). */
  readonly size: number
  readonly id: IdScheme
  /**
   * The entity's display name; may read attributes that do not depend on the name. `attempt` (0, 1, ...) asks for
   * another draw when the type wants unique names and the previous draw was taken (see {@link uniqueNames}).
   */
  readonly name: (e: EntityCore, attempt: number) => string
  /** Redraw a name already taken (up to 16 times), so most entities can be found by name alone. */
  readonly uniqueNames?: boolean
  /** What the name is called in parameters (`name`, `title`, `headline`). */
  readonly nameLabel: string
  readonly parent?: ParentDef
  readonly attrs: ReadonlyArray<Attr>
  readonly series?: ReadonlyArray<SeriesDef>
  readonly actions?: ReadonlyArray<ActionDef>
  /** Whether tools can search it by name (default true). */
  readonly searchable?: boolean
  /** Types whose entities exist only once an action creates them have size 0. */
  readonly createdOnly?: boolean
  /** Ids that are public knowledge (ISO currency and country codes): a call may use them without having seen them. */
  readonly publicIds?: boolean
}
