/**
 * A plain round-robin HTTP proxy on loopback: each request goes to the next upstream in turn (no stickiness), the way
 * a load balancer in front of stateless replicas would send it. Records which upstream served each request.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** A running proxy. */
export interface Proxy {
  readonly url: string
  /** The upstream index that served each request, in order. */
  readonly served: ReadonlyArray<number>
  readonly close: () => Promise<void>
}

/** Starts a proxy over `upstreams` (`http://host:port`). */
export const start = (upstreams: ReadonlyArray<string>): Promise<Proxy> =>
  new Promise((resolve) => {
    let next = 0
    const served: Array<number> = []
    const agent = new http.Agent({ keepAlive: true })
    const server = http.createServer((req, res) => {
      const which = next++ % upstreams.length
      served.push(which)
      const target = new URL(req.url ?? "/", upstreams[which])
      const forward = http.request(target, { method: req.method, headers: req.headers, agent }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      })
      forward.on("error", (e) => {
        res.writeHead(502, { "content-type": "text/plain" })
        res.end(`proxy: ${e.message}`)
      })
      req.pipe(forward)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        served,
        close: () => new Promise((done) => {
          agent.destroy()
          server.close(() => done())
        })
      })
    })
  })
