/**
 * A current librdkafka (built from source by tools/librdkafka/build.sh into a cache outside the
 * clone) and the kcat linked with it: Debian 12's kcat links librdkafka 2.0.2.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { runProcess, type RunResult } from './process.js'

const BUILD = join(__dirname, '../../tools/librdkafka/build.sh')

/** The built kcat's path; builds it the first time (minutes; .ci/run builds it before the tests). */
export function librdkafkaKcat(): string {
  return execFileSync('bash', [BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim()
}

/** Runs `kcat` against 127.0.0.1:`port` with librdkafka properties as -X options. */
export function runKcatWith(kcat: string, port: number, config: Record<string, string>, args: string[], input = ''): Promise<RunResult> {
  const x = Object.entries(config).flatMap(([k, v]) => ['-X', `${k}=${v}`])
  return runProcess(kcat, ['-b', `127.0.0.1:${port}`, ...x, ...args], input, 60_000)
}
