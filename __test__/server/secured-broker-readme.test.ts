/**
 * README.md "A secured broker in a few commands", run as written: its openssl commands, its
 * server.properties and admin.properties, and its commands (the broker, kafka-configs.sh adding a
 * SCRAM user, kafka-acls.sh its ACLs, ferrolog's CLI producing and consuming as that user, and a
 * topic creation the ACLs refuse with the error the README shows). `npx`, `kafka-configs.sh` and
 * `kafka-acls.sh` are small wrappers on the PATH (this checkout's CLI; Kafka's tool classes from
 * tools/kafka/.jars); the port is a free one instead of 9094.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const ROOT = join(__dirname, '../..')
const CLI = join(ROOT, 'dist/ts/cli/main.js')
const JARS = join(ROOT, 'tools/kafka/.jars')
const LOG4J = join(ROOT, 'tools/kafka/log4j2-tools.properties')

/** The README section's code blocks, in order, with their languages. */
function readmeBlocks(): Array<{ lang: string; text: string }> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const start = readme.indexOf('## A secured broker in a few commands\n')
  expect(start).toBeGreaterThan(0)
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1))
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```\n/g)].map((m) => ({ lang: m[1], text: m[2] }))
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

let dir: string

beforeAll(() => {
  dir = tempDir('ferrolog-readme-secured-')
})

afterAll(() => {
  // The broker the README starts in the background: stopped by the script, or here if it was not.
  try {
    process.kill(Number(readFileSync(join(dir, 'broker.pid'), 'utf8')), 'SIGKILL')
  } catch {
    // already gone
  }
  rmSync(dir, { recursive: true, force: true })
})

it('runs as written: certificates, a SASL_SSL broker with ACLs, a SCRAM user, its produce and consume, a refusal', async () => {
  const blocks = readmeBlocks()
  expect(blocks.map((b) => b.lang)).toEqual(['sh', 'properties', 'properties', 'sh'])
  const [certificates, serverProperties, adminProperties, commands] = blocks.map((b) => b.text)
  const port = await freePort()
  const local = (text: string) => text.replaceAll('127.0.0.1:9094', `127.0.0.1:${port}`)

  const bin = join(dir, 'bin')
  mkdirSync(bin)
  const wrapper = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`)
    chmodSync(join(bin, name), 0o755)
  }
  // `npx ferrolog ...` is this checkout's CLI; the broker's pid is kept for afterAll.
  wrapper('npx', `[ "$1" = ferrolog ] || exit 127\nshift\n[ "$1" = broker ] && echo $$ > ${join(dir, 'broker.pid')}\nexec node ${CLI} "$@"`)
  const java = (mainClass: string) => `exec java -Dlog4j2.configurationFile=${LOG4J} -cp '${JARS}/*' ${mainClass} "$@"`
  wrapper('kafka-configs.sh', java('org.apache.kafka.tools.ConfigCommand'))
  wrapper('kafka-acls.sh', java('org.apache.kafka.tools.AclCommand'))

  writeFileSync(join(dir, 'server.properties'), local(serverProperties))
  writeFileSync(join(dir, 'admin.properties'), adminProperties)
  const script = [`cd ${dir}`, `export PATH=${bin}:$PATH`, certificates, local(commands), 'kill %1', 'wait %1'].join('\n')
  const run = await runProcess('bash', ['-c', script], '', 150_000)

  // The consumer printed the record; the last command failed as the README's comment says.
  expect(run.stdout.split('\n')).toContain('hello')
  const refusal = /^# (ferrolog topics: .*)$/m.exec(commands)![1]
  expect(refusal).toContain('TOPIC_AUTHORIZATION_FAILED')
  expect(run.stderr).toContain(refusal)
  expect(run.stdout).toContain('Completed updating config for user alice.')
  expect(run.stdout).toContain('(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)')
  expect(run.stderr).not.toMatch(/Error while executing|ferrolog broker:/)
}, 180_000)
