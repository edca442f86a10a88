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
 * Standard input is streamed: each line is sent (ts/client/producer.ts) as it is read, and reading
 * waits while the producer's buffer.memory is full, so input of any size runs in bounded memory.
 * With --key-separator each line is KEY SEP VALUE (split at the first SEP; at a line without it,
 * as Kafka's console producer, the command stops: the lines before it are sent, and it exits 2);
 * otherwise the line is the value and the key is null. --header adds a header to every record. A
 * final newline ends the last line; it does not make an empty record. Records are partitioned as
 * Kafka's default partitioner does (murmur2 of the key; keyless records stick to a partition for
 * batch.size bytes), unless --partition. acks default -1 (all, idempotent).
 *
 * Exit status: 0 every record acknowledged; 1 any record not (each one named on stderr, with
 * Kafka's error); 2 bad usage.
 */
import type { CompressionType } from '../protocol/record-types.js'
import { COMPRESSION_TYPES } from '../protocol/compression.js'
import { StringDecoder } from 'node:string_decoder'
import { Producer } from '../client/producer.js'
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

/** The lines of `input` as they arrive, split at \n (UTF-8 decoded across chunk boundaries); a final newline ends the last line. */
async function* lines(input: NodeJS.ReadableStream): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8')
  let rest = ''
  for await (const chunk of input) {
    rest += typeof chunk === 'string' ? chunk : decoder.write(chunk)
    let at: number
    let from = 0
    while ((at = rest.indexOf('\n', from)) >= 0) {
      yield rest.slice(from, at)
      from = at + 1
    }
    rest = rest.slice(from)
  }
  rest += decoder.end()
  if (rest !== '') yield rest
}

/** Runs `ferrolog produce ...`; resolves to the exit status. */
export async function produceCommand(
  args: string[],
  io: { input: NodeJS.ReadableStream; err: (line: string) => void } = { input: process.stdin, err: (line) => process.stderr.write(line + '\n') },
): Promise<number> {
  const p = parse(args)
  const producer = new Producer({
    bootstrapServers: p.bootstrap,
    clientId: 'ferrolog-produce',
    acks: p.acks,
    'compression.type': p.compression,
    security: p.security,
  })
  const failures: Array<{ line: number; partition: number | undefined; error: Error }> = []
  let count = 0
  let usageError: ProduceUsageError | null = null
  try {
    for await (const line of lines(io.input)) {
      const n = ++count
      let key: string | null = null
      let value = line
      if (p.keySeparator !== undefined) {
        const at = line.indexOf(p.keySeparator)
        if (at < 0) {
          usageError = new ProduceUsageError(`no key separator "${p.keySeparator}" on line ${n}`)
          count--
          break
        }
        key = line.slice(0, at)
        value = line.slice(at + p.keySeparator.length)
      }
      producer.send({ topic: p.topic, partition: p.partition, key, value, headers: p.headers }).catch((error: Error) => failures.push({ line: n, partition: p.partition, error }))
      // held back while buffer.memory is full, as Kafka's console producer is by a blocking send
      await producer.waitForBufferSpace()
    }
    await producer.flush()
  } finally {
    await producer.close()
  }
  if (usageError !== null) throw usageError
  if (failures.length === 0) return 0
  failures.sort((a, b) => a.line - b.line)
  io.err(`ferrolog produce: ${failures.length} of ${count} records were not acknowledged:`)
  for (const f of failures.slice(0, 20)) io.err(`  line ${f.line}${f.partition === undefined ? '' : ` (partition ${f.partition})`}: ${f.error.message}`)
  if (failures.length > 20) io.err(`  ... and ${failures.length - 20} more`)
  return 1
}
