/**
 * The one wall-clock bound of the suite: a safety net against a hang, never a speed check. A test waits on an event
 * (a line, a file, a port, a process's exit); this bound only stops a run that would otherwise never end, and is set so
 * a machine many times slower than a quiet 2-core one still finishes (vitest.config.ts uses the same value).
 */

/** How long a test, a hook or a spawned program may run before it is taken for hung: 20 minutes. */
export const safetyBoundMs = 20 * 60_000
