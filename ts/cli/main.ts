#!/usr/bin/env node
/**
 * The `ferrolog` command.
 *
 *   ferrolog broker [options]                          a broker (see broker-command.ts)
 *   ferrolog dump-log [--records] <segment.log>...   batches (and records) of segment files
 *   ferrolog topics --bootstrap-server H:P <action>   create, list, describe, delete topics
 *   ferrolog produce --bootstrap-server H:P --topic T  stdin lines to a topic (produce-command.ts)
 *   ferrolog consume --bootstrap-server H:P --topic T  a topic's records to stdout (consume-command.ts)
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadNative, nativeLoadError, nativeOrigin } from '../native/binding.js'
import { brokerCommand } from './broker-command.js'
import { dumpLogSegment } from './dump-log.js'
import { TOPICS_USAGE, topicsCommand, UsageError } from './topics-command.js'
import { CONSUME_USAGE, ConsumeUsageError, consumeCommand } from './consume-command.js'
import { PRODUCE_USAGE, ProduceUsageError, produceCommand } from './produce-command.js'

const USAGE = `usage: ferrolog <command>
       ferrolog --version             the version and which storage engine loads here

commands:
  broker [--data-dir DIR] [--listen HOST:PORT] [--advertised-listener HOST:PORT]
         [--node-id N] [--config FILE] [--backend native|js]
         [--metrics-listen HOST:PORT] [--transfer zero-copy|copy]
                                      run a broker (default ./data, 127.0.0.1:9092)
  dump-log [--records] <file.log>...   print the record batches of segment files (CRC checked)
  topics --bootstrap-server HOST:PORT create|list|describe|delete [--topic NAME] ...
                                      manage topics on a broker (see \`ferrolog topics --help\`)
  produce --bootstrap-server HOST:PORT --topic T [--key-separator SEP] [--acks 0|1|-1]
          [--compression none|gzip|snappy|lz4|zstd] [--partition N] [--header K=V]...
                                      one record per line of stdin
  consume --bootstrap-server HOST:PORT --topic T [--partition N] [--offset earliest|latest|N]
          [--max-messages N] [--exit-at-end] [--format FMT] [--isolation-level LEVEL]
                                      print a topic's records (FMT: %k %v %p %o %t %h)
  topics, produce and consume also take --command-config FILE (Kafka's client properties) and
  -X KEY=VALUE (as kcat): security.protocol, ssl.ca.location, sasl.mechanism, sasl.username, ...
`

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  switch (command) {
    case 'broker':
      try {
        return await brokerCommand(rest)
      } catch (err) {
        process.stderr.write(`ferrolog broker: ${(err as Error).message}\n`)
        return 1
      }
    case 'dump-log': {
      const records = rest.includes('--records')
      const files = rest.filter((a) => a !== '--records')
      if (files.length === 0) {
        process.stderr.write(USAGE)
        return 2
      }
      let clean = true
      for (const file of files) {
        try {
          clean = dumpLogSegment(file, { records }, (line) => process.stdout.write(line + '\n')) && clean
        } catch (err) {
          process.stderr.write(`ferrolog dump-log: ${(err as Error).message}\n`)
          clean = false
        }
      }
      return clean ? 0 : 1
    }
    case 'topics':
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(TOPICS_USAGE)
        return 0
      }
      try {
        return await topicsCommand(rest)
      } catch (err) {
        if (err instanceof UsageError) {
          process.stderr.write(`ferrolog topics: ${err.message}\n${TOPICS_USAGE}`)
          return 2
        }
        process.stderr.write(`ferrolog topics: ${(err as Error).message}\n`)
        return 1
      }
    case 'produce':
    case 'consume': {
      const [usage, run, Usage] = command === 'produce' ? ([PRODUCE_USAGE, produceCommand, ProduceUsageError] as const) : ([CONSUME_USAGE, consumeCommand, ConsumeUsageError] as const)
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(usage)
        return 0
      }
      try {
        return await run(rest)
      } catch (err) {
        if (err instanceof Usage) {
          process.stderr.write(`ferrolog ${command}: ${err.message}\n${usage}`)
          return 2
        }
        process.stderr.write(`ferrolog ${command}: ${(err as Error).message}\n`)
        return 1
      }
    }
    case '--version':
    case '-v':
      process.stdout.write(versionLine())
      return 0
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE)
      return command === undefined ? 2 : 0
    default:
      process.stderr.write(`ferrolog: unknown command "${command}"\n${USAGE}`)
      return 2
  }
}

/** `ferrolog 0.1.0 (engine: native ...; binding: <which .node file>)` or `(engine: js ..., native binding not available: why)`. */
function versionLine(): string {
  // dist/ts/cli/main.js and ts/cli/main.ts both sit three levels below package.json.
  const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string }
  const engine = loadNative() ? `native (Rust core, zero-copy transfer; binding: ${nativeOrigin()})` : `js (TypeScript, copy transfer; native binding not available: ${nativeLoadError()})`
  return `ferrolog ${version} (engine: ${engine})\n`
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    // each command answers its own errors; this is one none of them expected
    process.stderr.write(`ferrolog: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exitCode = 1
  },
)
