import { type ChildProcess, execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import KeyvRedis, { createClient, Keyv } from '@keyv/redis'
import { freePort } from '../../bench/lib/free-port.mjs'
import { type AdminClient, killOwnRedis, startOwnRedis } from './redis.js'

/** Which server family a test starts: its server and its command-line client. */
export const FLAVOURS = {
  redis: { server: 'redis-server', cli: 'redis-cli' },
  valkey: { server: 'valkey-server', cli: 'valkey-cli' },
} as const

/** A server family of `FLAVOURS`. */
export type Flavour = keyof typeof FLAVOURS

/** One node as CLUSTER NODES describes it. */
export interface ClusterNode {
  id: string
  port: number
  role: 'master' | 'replica'
  /** The master's id, for a replica. */
  masterId: string | undefined
  /** The slot ranges a master serves (inclusive). */
  slots: Array<[number, number]>
}

/** A local Redis Cluster a test started itself. */
export interface OwnCluster {
  /** Every node's port. */
  ports: number[]
  /** The seed nodes to give a cluster client. */
  rootNodes: Array<{ url: string }>
  /** Each node's role as the cluster sees it now. */
  nodes(): Promise<ClusterNode[]>
  /** Resolves once every slot is served, every node agrees, and every replica is in sync with its master. */
  settled(): Promise<void>
  /** Kills every node (by its process) and removes their files. */
  stop(): Promise<void>
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A free port whose cluster bus port (+10 000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort()
    const bus = port + 10_000
    if (bus <= 65_535 && !taken.has(port) && !taken.has(bus) && (await canListen(bus))) return port
  }
}

/** What INFO-style text says for `field`. */
const field = (text: string, name: string): string | undefined => new RegExp(`^${name}:(\\S+)`, 'm').exec(text)?.[1]

/** Runs `work` on a fresh connection to one node. */
export async function onNode<T>(port: number, work: (client: AdminClient) => Promise<T>): Promise<T> {
  const client: AdminClient = createClient({ url: `redis://127.0.0.1:${port}`, socket: { connectTimeout: 1000, reconnectStrategy: false } })
  client.on('error', () => {})
  await client.connect()
  try {
    return await work(client)
  } finally {
    client.destroy()
  }
}

/**
 * Starts a cluster of `masters` masters with `replicas` replicas each on free loopback ports, forms it with
 * `<cli> --cluster create`, and waits until it serves every slot. Persistence is off; node files live in a temp dir.
 */
export async function startOwnCluster(options: { masters?: number; replicas?: number; flavour?: Flavour } = {}): Promise<OwnCluster> {
  const { masters = 3, replicas = 0, flavour = 'redis' } = options
  const { server, cli } = FLAVOURS[flavour]
  const dir = await mkdtemp(join(tmpdir(), 'mg-cluster-'))
  const taken = new Set<number>()
  const ports: number[] = []
  for (let i = 0; i < masters * (1 + replicas); i++) {
    const port = await freeClusterPort(taken)
    taken.add(port).add(port + 10_000)
    ports.push(port)
  }
  const children: ChildProcess[] = []
  const stop = async () => {
    await Promise.all(children.map(killOwnRedis))
    await rm(dir, { recursive: true, force: true })
  }
  try {
    for (const port of ports) {
      const args = ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000']
      children.push(await startOwnRedis(port, { program: server, args: [...args, '--dir', dir], cwd: dir }))
    }
    const addresses = ports.map((port) => `127.0.0.1:${port}`)
    await promisify(execFile)(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'], {
      timeout: 60_000,
    })
  } catch (error) {
    await stop()
    throw error
  }

  const nodes = async (): Promise<ClusterNode[]> => {
    const text = await onNode(ports[0] as number, (client) => client.clusterNodes())
    return text
      .trim()
      .split('\n')
      .map((line) => {
        const [id, address, flags, master, , , , , ...ranges] = line.split(' ')
        const role: ClusterNode['role'] = flags?.includes('master') ? 'master' : 'replica'
        const slots = ranges
          .filter((range) => /^\d+(-\d+)?$/.test(range))
          .map((range): [number, number] => {
            const [from = 0, to = from] = range.split('-').map(Number)
            return [from, to]
          })
        return {
          id: id as string,
          port: Number(address?.split('@')[0]?.split(':')[1]),
          role,
          masterId: role === 'replica' ? master : undefined,
          slots,
        }
      })
  }

  const settled = async () => {
    for (let attempt = 0; ; attempt++) {
      const ok = await Promise.all(
        ports.map((port) =>
          onNode(port, async (client) => {
            const info = await client.clusterInfo()
            if (field(info, 'cluster_state') !== 'ok' || field(info, 'cluster_slots_ok') !== '16384') return false
            if (field(info, 'cluster_known_nodes') !== String(ports.length)) return false
            const replication = await client.info('replication')
            return field(replication, 'role') === 'master' || field(replication, 'master_link_status') === 'up'
          }).catch(() => false),
        ),
      )
      if (ok.every(Boolean)) return
      if (attempt > 300) throw new Error(`the cluster on ports ${ports.join(', ')} did not settle`)
      await sleep(100)
    }
  }

  try {
    await settled()
  } catch (error) {
    await stop()
    throw error
  }
  return { ports, rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })), nodes, settled, stop }
}

/**
 * A Keyv on a cluster with the settings the README recommends for one, built as `createKeyv` builds it (whose types
 * take a single client's options only).
 */
export function clusterKeyv(cluster: Pick<OwnCluster, 'rootNodes'>, namespace: string): Keyv {
  const adapter = new KeyvRedis(
    {
      rootNodes: cluster.rootNodes,
      defaults: {
        disableOfflineQueue: true,
        socket: {
          connectTimeout: 2000,
          reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 500) + Math.floor(Math.random() * 100),
        },
      },
    },
    { namespace, connectionTimeout: 2000 },
  )
  return new Keyv(adapter, { namespace, useKeyPrefix: false })
}
