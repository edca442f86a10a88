/**
 * The Consumer against a real Apache Kafka broker (tools/kafka/run-broker.sh, one for the file):
 * the same scenarios as against ferrolog (consumer-scenarios.ts): a group of three joining and
 * leaving over 12 partitions reads every record exactly once with its offsets committed to the
 * log ends, with each assignor; seek; pause/resume; a pattern subscription picking up a topic
 * created later.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runProcess } from '../helpers/process.js'
import { groupJoinLeaveScenario, pauseResumeScenario, regexScenario, seekScenario } from './consumer-scenarios.js'

const ROOT = join(__dirname, '../..')
let dir: string
let bootstrap: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-consumer-'))
  const out = await runProcess('bash', [join(ROOT, 'tools/kafka/run-broker.sh'), '--data-dir', dir], '', 120_000)
  if (out.status !== 0) throw new Error(`run-broker.sh: ${out.stdout}\n${out.stderr}`)
  bootstrap = /bootstrap=(\S+)/.exec(out.stdout)![1]
}, 150_000)

afterAll(() => {
  if (!dir) return
  execFileSync('bash', [join(ROOT, 'tools/kafka/stop-broker.sh'), dir], { stdio: 'ignore' })
  rmSync(dir, { recursive: true, force: true })
}, 90_000)

describe('Consumer against Apache Kafka', () => {
  it('a group of 3 over 12 partitions, members joining and leaving: every record exactly once, commits at the log ends', async () => {
    const { rebalances, perMember } = await groupJoinLeaveScenario(bootstrap, 'group-join-leave', 24_000)
    expect(rebalances).toBeGreaterThanOrEqual(4)
    expect(perMember.every((n) => n > 0)).toBe(true)
  }, 150_000)

  it('the same with the roundrobin assignor', async () => {
    await groupJoinLeaveScenario(bootstrap, 'group-roundrobin', 12_000, { 'partition.assignment.strategy': 'roundrobin' })
  }, 150_000)

  it('seek: back, forward, and to an offset given to assign', async () => {
    await seekScenario(bootstrap, 'seek-topic')
  }, 60_000)

  it('pause returns nothing of a partition until resume', async () => {
    await pauseResumeScenario(bootstrap, 'pause-topic')
  }, 60_000)

  it('a RegExp subscription picks up a topic created later', async () => {
    await regexScenario(bootstrap, 'regex')
  }, 60_000)
})
