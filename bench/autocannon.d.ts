// The part of autocannon 9's API the load bench uses (the package ships no types, and @types/autocannon is not a
// dependency): requests with per-connection context, and the result's counts and latency percentiles.
declare module "autocannon" {
  namespace autocannon {
    interface Request {
      readonly method?: string
      readonly path?: string
      readonly headers?: Readonly<Record<string, string>>
      readonly body?: string
      readonly setupRequest?: (request: Readonly<Record<string, unknown>>, context: Record<string, unknown>) => Readonly<Record<string, unknown>>
      readonly onResponse?: (status: number, body: string, context: Record<string, unknown>) => void
    }
    interface Options {
      readonly url: string
      readonly connections?: number
      readonly amount?: number
      readonly duration?: number
      readonly requests?: ReadonlyArray<Request>
    }
    interface Result {
      readonly duration: number
      readonly non2xx: number
      readonly errors: number
      readonly timeouts: number
      readonly requests: { readonly average: number; readonly total: number }
      readonly latency: { readonly p50: number; readonly p99: number; readonly average: number }
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>
  export default autocannon
}
