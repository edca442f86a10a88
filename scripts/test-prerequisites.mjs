#!/usr/bin/env node
// Run before `npm test` (pretest): the tests use real tools (kcat and zstd as other clients and
// codecs, etcd for cluster metadata, Java with Apache Kafka's jars as the reference broker and
// tools). Rather than let tests fail one by one with `spawn kcat ENOENT`, this stops before any
// test runs, naming what is missing and the one command that installs it. Kafka's jars are
// fetched here when Maven is there (repo-local, tools/kafka/fetch-jars.sh), and a current
// librdkafka with kcat is built once from source into ~/.cache/ferrolog (tools/librdkafka/build.sh:
// Debian 12's kcat links librdkafka 2.0.2). FERROLOG_SKIP_PREREQUISITES=1 skips the check.
import { execFileSync, spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

if (process.env.FERROLOG_SKIP_PREREQUISITES === '1') process.exit(0)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')

const has = (command, args = ['--version']) => {
  const r = spawnSync(command, args, { stdio: 'ignore' })
  return r.error === undefined && (command !== 'pkg-config' || r.status === 0)
}
const tools = [
  ['kcat', ['-V'], 'kcat'],
  ['zstd', ['--version'], 'zstd'],
  ['etcd', ['--version'], 'etcd-server'],
  ['java', ['-version'], 'openjdk-17-jre-headless'],
  ['mvn', ['-v'], 'maven'],
  // tools/librdkafka/build.sh: a C toolchain, and OpenSSL's and zlib's headers found by pkg-config
  ['cc', ['--version'], 'build-essential'],
  ['pkg-config', ['--exists', 'openssl', 'zlib'], 'pkgconf libssl-dev zlib1g-dev'],
]
const missing = tools.filter(([command, args]) => !has(command, args))
if (missing.length > 0) {
  const packages = missing.map(([, , pkg]) => pkg).join(' ')
  console.error(
    `npm test: missing ${missing.map(([c]) => c).join(', ')}, which the tests run as real components.\n` +
      `Install them with:  bash .ci/run   (sets up everything and runs the tests)\n` +
      `or on Debian:       apt-get update && apt-get install -y ${packages}`,
  )
  process.exit(1)
}
try {
  execFileSync('bash', [join(root, 'tools/kafka/fetch-jars.sh')], { stdio: ['ignore', 'ignore', 'inherit'] })
} catch {
  console.error("npm test: cannot fetch Apache Kafka's jars from Maven Central (bash tools/kafka/fetch-jars.sh failed above).")
  process.exit(1)
}
try {
  execFileSync('bash', [join(root, 'tools/librdkafka/build.sh')], { stdio: ['ignore', 'ignore', 'inherit'] })
} catch {
  console.error('npm test: cannot build librdkafka and kcat from source (bash tools/librdkafka/build.sh failed above).')
  process.exit(1)
}
