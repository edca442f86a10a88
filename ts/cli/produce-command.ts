/**
 * `ferrolog produce`: one record per line of standard input to a topic, over ferrolog's own
 * client (ts/client), for what one would otherwise do with `kcat -P`:
 *
 *   ferrolog produce --bootstrap-server HOST:PORT --topic T [--key-separator SEP]
 *                    [--acks 0|1|-1|all] [--compression none|gzip|snappy|lz4|zstd]
 *                    [--partition N] [--header KEY=VALUE]...
 *                    [--command-config FILE] [-X KEY=VALUE]...
 *
 * --command-config and -X secure the connection (TLS, SASL) as Kafka's tools and kcat do
 * (client-properties.ts).
 *
 * With --key-separator each line is KEY SEP VALUE (split at the first SEP; a line without it is
 * refused before anything is sent, as Kafka's console producer does); otherwise the line is the
 * value and the key is null. --header adds a header to every record. A final newline ends the
 * last line; it does not make an empty record. Records are partitioned as Kafka's default
 * partitioner does (murmur2 of the key; batches of keyless records move round robin), unless
 * --partition. acks default -1 (all, idempotent).
 *
 * Exit status: 0 every record acknowledged; 1 any record not (each one named on stderr, with
 * Kafka's error); 2 bad usage.
 */
import type { CompressionType } from '../protocol/record-types.js'
import { COMPRESSION_TYPES } from '../protocol/compression.js'
import { NetworkClient } from '../client/network-client.js'
import { ProduceError, produce } from '../client/produce.js'
import type { ClientSecurity } from '../client/client-security.js'
import { securityArgs } from './client-properties.js'

export const PRODUCE_USAGE = `usage: ferrolog produce --bootstrap-server HOST:PORT --topic T [--key-separator SEP]
                        [--acks 0|1|-1|all] [--compression none|gzip|snappy|lz4|zstd]
                        [--partition N] [--header KEY=VALUE]...
                        [--command-config FILE] [-X KEY=VALUE]...
one record per line of standard input
`

export class ProduceUsageError extends Error {}

interface Parsed {
  bootstrap: string
  topic: string
  keySeparator?: string
  acks: 0 | 1 | -1
  compression: CompressionType
  partition?: number
  headers: Array<{ key: string; value: string }>
  security: ClientSecurity
}

function parse(all: string[]): Parsed {
  const { rest: args, security } = securityArgs(all, (m) => new ProduceUsageError(m))
  const p: Partial<Parsed> & { headers: Parsed['headers'] } = { headers: [], acks: -1, compression: 'none', security }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const eq = arg.indexOf('=')
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg
    const value = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : args[++i]
    if (!flag.startsWith('--')) throw new ProduceUsageError(`unexpected argument ${arg}`)
    if (value === undefined) throw new ProduceUsageError(`${flag} needs a value`)
    switch (flag) {
      case '--bootstrap-server':
        p.bootstrap = value
        break
      case '--topic':
        p.topic = value
        break
      case '--key-separator':
        if (value === '') throw new ProduceUsageError('--key-separator cannot be empty')
        p.keySeparator = value
        break
      case '--acks':
        if (!['0', '1', '-1', 'all'].includes(value)) throw new ProduceUsageError(`--acks takes 0, 1, -1 or all, not "${value}"`)
        p.acks = value === 'all' ? -1 : (Number(value) as 0 | 1 | -1)
        break
      case '--compression':
        if (!COMPRESSION_TYPES.includes(value as CompressionType)) throw new ProduceUsageError(`--compression takes ${COMPRESSION_TYPES.join(', ')}, not "${value}"`)
        p.compression = value as CompressionType
        break
      case '--partition': {
        const n = Number(value)
        if (!Number.isInteger(n) || n < 0) throw new ProduceUsageError(`--partition needs a partition number, not "${value}"`)
        p.partition = n
        break
      }
      case '--header': {
        const at = value.indexOf('=')
        if (at <= 0) throw new ProduceUsageError(`--header needs KEY=VALUE, not "${value}"`)
        p.headers.push({ key: value.slice(0, at), value: value.slice(at + 1) })
        break
      }
      default:
        throw new ProduceUsageError(`unknown option ${flag}`)
    }
  }
  if (!p.bootstrap) throw new ProduceUsageError('--bootstrap-server is required')
  if (!p.topic) throw new ProduceUsageError('--topic is required')
  return p as Parsed
}

async function readAll(input: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  return Buffer.concat(chunks).toString('utf8')
}

/** Runs `ferrolog produce ...`; resolves to the exit status. */
export async function produceCommand(
  args: string[],
  io: { input: NodeJS.ReadableStream; err: (line: string) => void } = { input: process.stdin, err: (line) => process.stderr.write(line + '\n') },
): Promise<number> {
  const p = parse(args)
  const text = await readAll(io.input)
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  const records = lines.map((line, i) => {
    if (p.keySeparator === undefined) return { key: null, value: line, headers: p.headers }
    const at = line.indexOf(p.keySeparator)
    if (at < 0) throw new ProduceUsageError(`no key separator "${p.keySeparator}" on line ${i + 1}`)
    return { key: line.slice(0, at), value: line.slice(at + p.keySeparator.length), headers: p.headers }
  })
  if (records.length === 0) return 0
  const client = new NetworkClient({ bootstrapServers: p.bootstrap, clientId: 'ferrolog-produce', security: p.security })
  try {
    await produce(client, p.topic, records, { acks: p.acks, compression: p.compression, partition: p.partition })
    return 0
  } catch (err) {
    if (!(err instanceof ProduceError)) throw err
    io.err(`ferrolog produce: ${err.unacknowledged.length} of ${records.length} records were not acknowledged:`)
    const shown = err.unacknowledged.slice(0, 20)
    for (const u of shown) io.err(`  line ${u.index + 1} (partition ${u.partition}): ${u.error.message}`)
    if (err.unacknowledged.length > shown.length) io.err(`  ... and ${err.unacknowledged.length - shown.length} more`)
    return 1
  } finally {
    await client.close()
  }
}
