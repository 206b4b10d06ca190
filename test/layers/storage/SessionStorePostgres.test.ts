import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as SessionStorePostgres from "../../../layers/storage/SessionStorePostgres.ts"
import { SessionStore } from "../../../src/service/SessionStore.ts"
import * as Postgres from "../../support/Postgres.ts"
import { sessionStoreContract } from "../../support/SessionStoreContract.ts"

const pg = Postgres.available()

if (pg.url === undefined) {
  describe.skip(`PostgreSQL session store: ${pg.reason}`, () => {
    it("skipped", () => {})
  })
} else {
  const url = pg.url
  sessionStoreContract({
    name: "PostgreSQL (layers/storage/SessionStorePostgres.ts)",
    newLog: () => {
      const schema = Postgres.freshSchema("contract")
      return { open: () => SessionStorePostgres.layer({ url, schema, pool: 4 }), dispose: () => Postgres.dropSchema(url, schema) }
    },
    shared: true
  })

  /** Opens the store and reports how it failed (the one line the server prints). */
  const openError = (options: SessionStorePostgres.PostgresOptions) =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(SessionStorePostgres.layer(options))))
      assert.strictEqual(exit._tag, "Failure")
      const message = exit._tag === "Failure" ? String(exit.cause) : ""
      return message
    })

  describe("PostgreSQL session store: opening", () => {
    it.effect("migrations are applied once by replicas that start together; a second open finds the schema ready", () =>
      Effect.gen(function*() {
        const schema = Postgres.freshSchema("mig")
        try {
          const open = () => Effect.scoped(Effect.flatMap(Layer.build(SessionStorePostgres.layer({ url, schema, pool: 2 })), (ctx) => Effect.succeed(ctx.mapUnsafe.size)))
          yield* Effect.all([open(), open(), open()], { concurrency: "unbounded" })
          const applied = Postgres.runSql(url, `SELECT string_agg(migration_id::text || ':' || name, ',') FROM "${schema}".${SessionStorePostgres.migrationsTable}`).trim()
          assert.strictEqual(applied, "1:session_log")
          yield* Effect.scoped(Effect.flatMap(Layer.build(SessionStorePostgres.layer({ url, schema })), (ctx) => Effect.sync(() => assert.isTrue(ctx.mapUnsafe.has(SessionStore.key)))))
        } finally {
          Postgres.dropSchema(url, schema)
        }
      }), 60_000)

    it.effect("one-line refusals: an unreachable database (no password in it), a schema of another application, a newer log", () =>
      Effect.gen(function*() {
        const closed = new URL(url)
        closed.port = "1"
        closed.password = "hunter2-secret"
        const unreachable = yield* openError({ url: closed.toString(), schema: "x", connectTimeout: "3 seconds" })
        assert.match(unreachable, /unreachable/)
        assert.match(unreachable, /127\.0\.0\.1:1\//)
        assert.notInclude(unreachable, "hunter2-secret")

        const foreign = Postgres.freshSchema("foreign")
        const newer = Postgres.freshSchema("newer")
        try {
          Postgres.runSql(url, `CREATE SCHEMA "${foreign}"; CREATE TABLE "${foreign}".invoices (id int)`)
          const refusedForeign = yield* openError({ url, schema: foreign })
          assert.match(refusedForeign, /holds tables of another application \(invoices\)/)
          assert.strictEqual(Postgres.runSql(url, `SELECT count(*) FROM information_schema.tables WHERE table_schema = '${foreign}'`).trim(), "1")

          yield* Effect.scoped(Layer.build(SessionStorePostgres.layer({ url, schema: newer })))
          Postgres.runSql(url, `INSERT INTO "${newer}".${SessionStorePostgres.migrationsTable} (migration_id, name) VALUES (99, 'future')`)
          const refusedNewer = yield* openError({ url, schema: newer })
          assert.match(refusedNewer, /schema version 99/)
          const badName = yield* openError({ url, schema: "Robert'); DROP" })
          assert.match(badName, /not a plain identifier/)
        } finally {
          Postgres.dropSchema(url, foreign)
          Postgres.dropSchema(url, newer)
        }
      }), 60_000)
  })
}
