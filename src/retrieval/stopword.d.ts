/**
 * Types for the part of the `stopword` package (plain JavaScript, no bundled types) that ParaAgent uses.
 */
declare module "stopword" {
  /** The English stop-word list. */
  export const eng: ReadonlyArray<string>
}
