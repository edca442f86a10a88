/**
 * `ferrolog consume`: prints the records of a topic, over ferrolog's own client (ts/client), for
 * what one would otherwise do with `kcat -C`:
 *
 *   ferrolog consume --bootstrap-server HOST:PORT --topic T [--partition N]
 *                    [--offset earliest|latest|N] [--max-messages N] [--exit-at-end]
 *                    [--format FMT] [--isolation-level read_committed|read_uncommitted]
 *                    [--command-config FILE] [-X KEY=VALUE]...
 *
 * --command-config and -X secure the connection (TLS, SASL) as Kafka's tools and kcat do
 * (client-properties.ts).
 *
 * Every partition of the topic is assigned (or just --partition), from --offset (default
 * latest, as Kafka's console consumer; N is an offset in each partition), and fetched with one
 * incremental fetch session per broker (FetchSessionHandler). Each record is printed as FMT and a
 * newline: %k key, %v value, %p partition, %o offset, %t timestamp (ms), %h headers
 * (key=value,... ), %T topic, %% a %; \\n and \\t in FMT are a newline and a tab. A null key or
 * value prints as "null" (Kafka's console consumer). Default FMT is %v.
 *
 * --exit-at-end stops once every partition reached its end (the high watermark, or the last
 * stable offset with read_committed, as the last fetch told); --max-messages after N records.
 * Otherwise it runs until SIGINT or SIGTERM, then closes its sessions.
 * Exit status: 0 done, 1 a broker error (on stderr), 2 bad usage.
 */
import type { RecordHeader } from '../protocol/record-types.js'
import { Fetcher, type ConsumerRecord, type OffsetSpec } from '../client/fetcher.js'
import { NetworkClient } from '../client/network-client.js'
import type { ClientSecurity } from '../client/client-security.js'
import { securityArgs } from './client-properties.js'

export const CONSUME_USAGE = `usage: ferrolog consume --bootstrap-server HOST:PORT --topic T [--partition N]
                        [--offset earliest|latest|N] [--max-messages N] [--exit-at-end]
                        [--format FMT] [--isolation-level read_committed|read_uncommitted]
                        [--command-config FILE] [-X KEY=VALUE]...
FMT: %k key, %v value, %p partition, %o offset, %t timestamp, %h headers, %T topic (default %v)
`

export class ConsumeUsageError extends Error {}

interface Parsed {
  bootstrap: string
  topic: string
  partition?: number
  offset: OffsetSpec
  maxMessages?: number
  exitAtEnd: boolean
  format: string
  isolationLevel: number
  security: ClientSecurity
}

function parse(all: string[]): Parsed {
  const { rest: args, security } = securityArgs(all, (m) => new ConsumeUsageError(m))
  const p: Partial<Parsed> = { offset: 'latest', exitAtEnd: false, format: '%v', isolationLevel: 0, security }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--exit-at-end') {
      p.exitAtEnd = true
      continue
    }
    const eq = arg.indexOf('=')
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg
    const value = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : args[++i]
    if (!flag.startsWith('--')) throw new ConsumeUsageError(`unexpected argument ${arg}`)
    if (value === undefined) throw new ConsumeUsageError(`${flag} needs a value`)
    const count = () => {
      const n = Number(value)
      if (!Number.isInteger(n) || n < 0) throw new ConsumeUsageError(`${flag} needs a number, not "${value}"`)
      return n
    }
    switch (flag) {
      case '--bootstrap-server':
        p.bootstrap = value
        break
      case '--topic':
        p.topic = value
        break
      case '--partition':
        p.partition = count()
        break
      case '--offset':
        if (value === 'earliest' || value === 'beginning') p.offset = 'earliest'
        else if (value === 'latest' || value === 'end') p.offset = 'latest'
        else if (/^\d+$/.test(value)) p.offset = BigInt(value)
        else throw new ConsumeUsageError(`--offset takes earliest, latest or an offset, not "${value}"`)
        break
      case '--max-messages':
        p.maxMessages = count()
        break
      case '--format':
        p.format = value
        break
      case '--isolation-level':
        if (value !== 'read_committed' && value !== 'read_uncommitted') throw new ConsumeUsageError(`--isolation-level takes read_committed or read_uncommitted, not "${value}"`)
        p.isolationLevel = value === 'read_committed' ? 1 : 0
        break
      default:
        throw new ConsumeUsageError(`unknown option ${flag}`)
    }
  }
  if (!p.bootstrap) throw new ConsumeUsageError('--bootstrap-server is required')
  if (!p.topic) throw new ConsumeUsageError('--topic is required')
  return p as Parsed
}

const text = (b: Buffer | null): string => (b === null ? 'null' : b.toString('utf8'))
const headersText = (headers: RecordHeader[]): string => headers.map((h) => `${h.key}=${text(h.value)}`).join(',')

/** Formats one record by FMT (see the module comment). */
export function formatRecord(format: string, r: ConsumerRecord): string {
  return format.replace(/%[kvpothT%]|\\[nt\\]/g, (m) => {
    switch (m) {
      case '%k':
        return text(r.key)
      case '%v':
        return text(r.value)
      case '%p':
        return String(r.partition)
      case '%o':
        return String(r.offset)
      case '%t':
        return String(r.timestamp)
      case '%h':
        return headersText(r.headers)
      case '%T':
        return r.topic
      case '%%':
        return '%'
      case '\\n':
        return '\n'
      case '\\t':
        return '\t'
      default:
        return '\\'
    }
  })
}

/** Runs `ferrolog consume ...`; resolves to the exit status. */
export async function consumeCommand(args: string[], io: { out: (text: string) => void } = { out: (t) => process.stdout.write(t) }): Promise<number> {
  const p = parse(args)
  const client = new NetworkClient({ bootstrapServers: p.bootstrap, clientId: 'ferrolog-consume', security: p.security })
  const fetcher = new Fetcher(client, { isolationLevel: p.isolationLevel })
  let stopping = false
  const stop = () => (stopping = true)
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  try {
    await fetcher.assign(p.topic, p.partition === undefined ? null : [p.partition], p.offset)
    let printed = 0
    while (!stopping) {
      if (p.maxMessages !== undefined && printed >= p.maxMessages) break
      const records = await fetcher.poll()
      let chunk = ''
      for (const r of records) {
        if (p.maxMessages !== undefined && printed >= p.maxMessages) break
        chunk += formatRecord(p.format, r) + '\n'
        printed++
      }
      if (chunk) io.out(chunk)
      if (p.exitAtEnd && fetcher.atEnd()) break
    }
    return 0
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
    await fetcher.close()
    await client.close()
  }
}
