/**
 * The advantage-estimator registry as a value in the Effect context: scoring, the trainer, the comparison job and
 * the server read the registry from here, so an estimator a program registers is the one they use. Unprovided, it
 * is the built-in registry (`Advantage.estimators`).
 */
import { Context, Effect, Layer } from "effect"
import * as Advantage from "../math/Advantage.ts"

/** The registry in use (a `Context.Reference`: the built-in estimators unless a layer provides another). */
export const Estimators = Context.Reference<Advantage.Registry>("paraagent/Estimators", { defaultValue: () => Advantage.estimators })

/** A layer providing exactly this registry. */
export const layer = (registry: Advantage.Registry): Layer.Layer<never> => Layer.succeed(Estimators, registry)

/**
 * A layer adding (or replacing) one estimator in the registry it is built over — the built-ins, or what an outer
 * layer provided: `Layer.provide(Estimators.register("mine", mine))` under the programs' layer.
 */
export const register = (name: string, estimator: Advantage.Estimator): Layer.Layer<never> =>
  Layer.effect(Estimators, Effect.map(Effect.service(Estimators), (registry) => Advantage.register(registry, name, estimator)))

/** The registry in the current context. */
export const current: Effect.Effect<Advantage.Registry> = Effect.service(Estimators)

/** Looks a name up in the current registry: the estimator, or the typed miss naming the known ones. */
export const lookup = (name: string) => Effect.map(current, (registry) => Advantage.lookup(name, registry))
