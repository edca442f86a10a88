#!/usr/bin/env node
/**
 * The `ferrolog` command.
 *
 *   ferrolog dump-log [--records] <segment.log>...   batches (and records) of segment files
 */
import { dumpLogSegment } from './dump-log.js'

const USAGE = `usage: ferrolog <command>

commands:
  dump-log [--records] <file.log>...   print the record batches of segment files (CRC checked)
`

function main(argv: string[]): number {
  const [command, ...rest] = argv
  switch (command) {
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

process.exitCode = main(process.argv.slice(2))
