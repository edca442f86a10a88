/**
 * `ferrolog topics`: Kafka's kafka-topics.sh for any Kafka-compatible broker, over the client's
 * Admin (ts/client/admin.ts), which routes and retries each call as Kafka's AdminClient does.
 *
 *   ferrolog topics --bootstrap-server HOST:PORT create --topic NAME [--partitions N]
 *                   [--replication-factor N] [--config KEY=VALUE]...
 *   ferrolog topics --bootstrap-server HOST:PORT list [--exclude-internal]
 *   ferrolog topics --bootstrap-server HOST:PORT describe [--topic NAME] [--exclude-internal]
 *   ferrolog topics --bootstrap-server HOST:PORT delete --topic NAME
 *
 * --command-config FILE (Kafka's client properties) and -X KEY=VALUE (librdkafka's) secure the
 * connection with TLS and SASL (client-properties.ts).
 *
 * The output follows kafka-topics.sh ("Created topic x.", the describe lines with tabs); as there,
 * internal topics (__consumer_offsets) are listed unless --exclude-internal.
 * Exit status: 0 done, 1 the broker refused (its error on stderr), 2 bad usage.
 */
import { Admin, type TopicDescription } from '../client/admin.js'
import { KafkaClientError } from '../client/errors.js'
import type { Node } from '../client/metadata.js'
import type { ClientSecurity } from '../client/client-security.js'
import { securityArgs } from './client-properties.js'

export const TOPICS_USAGE = `usage: ferrolog topics --bootstrap-server HOST:PORT [--command-config FILE] [-X KEY=VALUE]... <action>

actions:
  create --topic NAME [--partitions N] [--replication-factor N] [--config KEY=VALUE]...
  list [--exclude-internal]
  describe [--topic NAME] [--exclude-internal]
  delete --topic NAME
`

export class UsageError extends Error {}

/** The broker refused: the message names Kafka's error. */
export class BrokerRefused extends Error {}

interface Out {
  out: (line: string) => void
}

interface Parsed {
  bootstrap: string
  action: string
  topic?: string
  partitions?: number
  replicationFactor?: number
  configs: Array<[string, string]>
  excludeInternal?: boolean
  security: ClientSecurity
}

function parse(all: string[]): Parsed {
  const { rest: args, security } = securityArgs(all, (m) => new UsageError(m))
  const parsed: Partial<Parsed> & { configs: Array<[string, string]> } = { configs: [], security }
  const integer = (flag: string, v: string) => {
    const n = Number(v)
    if (!Number.isInteger(n)) throw new UsageError(`${flag} needs an integer, not "${v}"`)
    return n
  }
  for (let i = 0; i < args.length; i++) {
    const [flag = '', inline] = args[i]!.split(/=(.*)/s, 2)
    if (!flag.startsWith('--')) {
      if (parsed.action !== undefined) throw new UsageError(`unexpected argument ${args[i]}`)
      parsed.action = args[i]
      continue
    }
    if (flag === '--exclude-internal') {
      parsed.excludeInternal = true
      continue
    }
    const value = inline ?? args[++i]
    if (value === undefined) throw new UsageError(`${flag} needs a value`)
    switch (flag) {
      case '--bootstrap-server':
        parsed.bootstrap = value
        break
      case '--topic':
        parsed.topic = value
        break
      case '--partitions':
        parsed.partitions = integer(flag, value)
        break
      case '--replication-factor':
        parsed.replicationFactor = integer(flag, value)
        break
      case '--config': {
        const eq = value.indexOf('=')
        if (eq <= 0) throw new UsageError(`--config needs KEY=VALUE, not "${value}"`)
        parsed.configs.push([value.slice(0, eq), value.slice(eq + 1)])
        break
      }
      default:
        throw new UsageError(`unknown option ${flag}`)
    }
  }
  if (!parsed.bootstrap) throw new UsageError('--bootstrap-server is required')
  if (!parsed.action) throw new UsageError('an action is required (create, list, describe, delete)')
  return parsed as Parsed
}

/** Runs `ferrolog topics ...`; resolves to the exit status. */
export async function topicsCommand(args: string[], io: Out = { out: (line) => process.stdout.write(line + '\n') }): Promise<number> {
  const p = parse(args)
  if (!['create', 'list', 'describe', 'delete'].includes(p.action)) throw new UsageError(`unknown action ${p.action}`)
  if ((p.action === 'create' || p.action === 'delete') && !p.topic) throw new UsageError(`${p.action} needs --topic`)
  const admin = new Admin({ bootstrapServers: p.bootstrap, clientId: 'ferrolog-topics', security: p.security })
  /** The broker's refusal of `what`, with Kafka's error name. */
  const refusing = async <V>(what: string, promise: Promise<V>): Promise<V> => {
    try {
      return await promise
    } catch (err) {
      if (err instanceof KafkaClientError) {
        // The Admin's message names its call and item ("createTopics payments: CODE (...)"); `what` says that already.
        const at = err.message.indexOf(`: ${err.code}`)
        throw new BrokerRefused(`${what}: ${at >= 0 ? err.message.slice(at + 2) : err.message}`)
      }
      throw err
    }
  }
  try {
    switch (p.action) {
      case 'create': {
        const topic = { name: p.topic!, numPartitions: p.partitions ?? -1, replicationFactor: p.replicationFactor ?? -1, configs: Object.fromEntries(p.configs) }
        await refusing(`cannot create topic ${p.topic}`, admin.createTopics([topic]).value(p.topic!))
        io.out(`Created topic ${p.topic}.`)
        return 0
      }
      case 'list': {
        for (const t of await refusing('cannot list topics', admin.listTopics({ listInternal: !p.excludeInternal }))) io.out(t.name)
        return 0
      }
      case 'describe': {
        const names = p.topic ? [p.topic] : (await refusing('cannot list topics', admin.listTopics({ listInternal: !p.excludeInternal }))).map((t) => t.name)
        const described = await refusing('cannot describe topics', admin.describeTopics(names).all())
        const topics = [...described.values()].filter((t) => !(p.excludeInternal && t.isInternal)).sort((a, b) => a.name.localeCompare(b.name))
        // a topic whose configs the broker does not describe is printed without them, as before
        const configs = admin.describeConfigs(topics.map((t) => ({ type: 'TOPIC', name: t.name })))
        for (const t of topics) {
          const config = await configs.value(`TOPIC:${t.name}`).catch(() => undefined)
          const own = config?.entries.filter((c) => c.source === 'DYNAMIC_TOPIC_CONFIG') ?? []
          describeTopic(t, own.map((c) => `${c.name}=${c.value ?? ''}`).join(','), io)
        }
        return 0
      }
      case 'delete': {
        await refusing(`cannot delete topic ${p.topic}`, admin.deleteTopics([p.topic!]).value(p.topic!))
        io.out(`Deleted topic ${p.topic}.`)
        return 0
      }
    }
    return 2
  } finally {
    await admin.close()
  }
}

function describeTopic(t: TopicDescription, configs: string, io: Out): void {
  const replicationFactor = t.partitions[0]?.replicas.length ?? 0
  const id = t.topicId === '' ? '' : `\tTopicId: ${t.topicId}`
  io.out(`Topic: ${t.name}${id}\tPartitionCount: ${t.partitions.length}\tReplicationFactor: ${replicationFactor}\tConfigs: ${configs}`)
  for (const part of t.partitions) {
    const ids = (nodes: Node[]) => nodes.map((n) => n.nodeId).join(',')
    io.out(`\tTopic: ${t.name}\tPartition: ${part.partition}\tLeader: ${part.leader?.nodeId ?? -1}\tReplicas: ${ids(part.replicas)}\tIsr: ${ids(part.isr)}`)
  }
}
