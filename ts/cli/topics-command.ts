/**
 * `ferrolog topics`: Kafka's kafka-topics.sh for any Kafka-compatible broker, over our own client
 * (ts/client/network-client.ts). Versions are negotiated with ApiVersions: the highest both sides serve.
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
import { ZERO_UUID } from '../protocol/apis/common.js'
import type { ApiCodec } from '../protocol/apis/api.js'
import { createTopicsCodec } from '../protocol/apis/create-topics.js'
import { deleteTopicsCodec } from '../protocol/apis/delete-topics.js'
import { ConfigResourceType, describeConfigsCodec, type DescribeConfigsResult } from '../protocol/apis/describe-configs.js'
import { metadataCodec, type MetadataResponseTopic } from '../protocol/apis/metadata.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { uuidToString } from '../storage/partition-metadata.js'
import { KafkaClientError } from '../client/errors.js'
import { NetworkClient } from '../client/network-client.js'
import type { ClientSecurity } from '../client/client-security.js'
import { securityArgs } from './client-properties.js'

/** DescribeConfigs' source of a topic's own value. */
const DYNAMIC_TOPIC_CONFIG = 1

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

const ERROR_NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]))

function refused(what: string, errorCode: number, message: string | null): BrokerRefused {
  const name = ERROR_NAMES.get(errorCode) ?? `error ${errorCode}`
  return new BrokerRefused(`${what}: ${name}${message ? ` (${message})` : ''}`)
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
  const client = await NetworkClient.connect(p.bootstrap, { clientId: 'ferrolog-topics', security: p.security })
  const node = client.bootstrapNodes[0]!.nodeId
  /** At the highest version both sides serve (the client's ApiVersions negotiation). */
  const versionFor = (codec: ApiCodec<unknown, unknown>) => {
    try {
      return client.versionFor(node, codec)
    } catch (err) {
      if (err instanceof KafkaClientError && err.code === 'UNSUPPORTED_VERSION') throw new BrokerRefused(`the broker does not serve a version of ${codec.name} this client speaks`)
      throw err
    }
  }
  try {
    const send = <Req, Res>(codec: ApiCodec<Req, Res>, request: Req) => client.send(codec, versionFor(codec as ApiCodec<unknown, unknown>), request)

    const metadata = async (topics: string[] | null) =>
      send(metadataCodec, {
        topics: topics === null ? null : topics.map((name) => ({ name, topicId: ZERO_UUID })),
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      })

    switch (p.action) {
      case 'create': {
        const r = await send(createTopicsCodec, {
          topics: [
            {
              name: p.topic!,
              numPartitions: p.partitions ?? -1,
              replicationFactor: p.replicationFactor ?? -1,
              assignments: [],
              configs: p.configs.map(([name, value]) => ({ name, value })),
            },
          ],
          timeoutMs: 30_000,
          validateOnly: false,
        })
        const t = r.topics[0]
        if (t === undefined) throw new BrokerRefused(`cannot create topic ${p.topic}: the broker's answer names no topic`)
        if (t.errorCode !== ErrorCode.NONE) throw refused(`cannot create topic ${p.topic}`, t.errorCode, t.errorMessage)
        io.out(`Created topic ${p.topic}.`)
        return 0
      }
      case 'list': {
        const r = await metadata(null)
        const listed = r.topics.filter((t) => !(p.excludeInternal && t.isInternal))
        for (const name of listed.map((t) => t.name ?? '').sort()) io.out(name)
        return 0
      }
      case 'describe': {
        const r = await metadata(p.topic ? [p.topic] : null)
        const topics = r.topics.filter((t) => t.name !== null && !(p.excludeInternal && t.isInternal)).sort((a, b) => a.name!.localeCompare(b.name!))
        for (const t of topics) if (t.errorCode !== ErrorCode.NONE) throw refused(`cannot describe topic ${t.name}`, t.errorCode, null)
        let configs: DescribeConfigsResult[] = []
        if (topics.length > 0) {
          const described = await send(describeConfigsCodec, {
            resources: topics.map((t) => ({ resourceType: ConfigResourceType.TOPIC, resourceName: t.name!, configurationKeys: null })),
            includeSynonyms: false,
            includeDocumentation: false,
          })
          configs = described.results
        }
        for (const t of topics) {
          const own = configs.find((c) => c.resourceName === t.name)?.configs.filter((c) => c.configSource === DYNAMIC_TOPIC_CONFIG) ?? []
          describeTopic(t, own.map((c) => `${c.name}=${c.value ?? ''}`).join(','), io)
        }
        return 0
      }
      case 'delete': {
        const version = versionFor(deleteTopicsCodec)
        // v6 names topics in `topics` (by name or id), older versions in `topicNames`.
        const byName = version >= 6 ? { topics: [{ name: p.topic!, topicId: ZERO_UUID }], topicNames: [] } : { topics: [], topicNames: [p.topic!] }
        const r = await client.send(deleteTopicsCodec, version, { ...byName, timeoutMs: 30_000 })
        const t = r.responses[0]
        if (t === undefined) throw new BrokerRefused(`cannot delete topic ${p.topic}: the broker's answer names no topic`)
        if (t.errorCode !== ErrorCode.NONE) throw refused(`cannot delete topic ${p.topic}`, t.errorCode, t.errorMessage)
        io.out(`Deleted topic ${p.topic}.`)
        return 0
      }
    }
    return 2
  } finally {
    await client.close()
  }
}

function describeTopic(t: MetadataResponseTopic, configs: string, io: Out): void {
  const replicationFactor = t.partitions[0]?.replicaNodes.length ?? 0
  const id = t.topicId.equals(ZERO_UUID) ? '' : `\tTopicId: ${uuidToString(t.topicId)}`
  io.out(`Topic: ${t.name}${id}\tPartitionCount: ${t.partitions.length}\tReplicationFactor: ${replicationFactor}\tConfigs: ${configs}`)
  for (const part of [...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex)) {
    io.out(`\tTopic: ${t.name}\tPartition: ${part.partitionIndex}\tLeader: ${part.leaderId}\tReplicas: ${part.replicaNodes.join(',')}\tIsr: ${part.isrNodes.join(',')}`)
  }
}
