import net from 'node:net'

/**
 * A loopback port nothing listens on right now (bound, then released): for a server that must be given its
 * port, or for an upstream that cannot be reached. Shared by the tests and the benchmarks.
 * @returns {Promise<number>}
 */
export async function freePort() {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = /** @type {net.AddressInfo} */ (server.address())
  await new Promise((resolve) => server.close(resolve))
  return port
}
