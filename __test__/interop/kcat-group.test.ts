/**
 * kcat (librdkafka) as a group member (-G): it joins, consumes every message, commits; run again
 * in the same group it resumes after what it committed.
 */
import { spawn } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'

let broker: Broker | undefined

afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

function kcat(args: string[], input = ''): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', ['-b', `127.0.0.1:${broker!.port}`, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
    child.stdin.end(input)
  })
}

const lines = (text: string) => text.split('\n').filter((l) => l.length > 0)

describe('kcat -G', () => {
  it('consumes as a group member, commits, and resumes from the commit in a second run', async () => {
    broker = await startBroker({ props: { 'group.initial.rebalance.delay.ms': '0' } })
    await broker.createTopic('jobs', 2, {})
    await kcat(['-P', '-t', 'jobs', '-K', ':'], Array.from({ length: 20 }, (_, i) => `k${i}:v${i}`).join('\n') + '\n')
    // Not `-o beginning`: kcat then starts every assigned partition there, committed or not.
    const group = ['-G', 'kcat-group', '-X', 'auto.offset.reset=earliest', '-e', '-f', '%s\\n', '-X', 'session.timeout.ms=6000']
    const first = await kcat([...group, 'jobs'])
    expect(lines(first.stdout).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`).sort())
    let committed = 0n
    for (let p = 0; p < 2; p++) committed += broker.groupCoordinator.offsets.get('kcat-group', 'jobs', p)?.offset ?? 0n
    expect(committed).toBe(20n)

    await kcat(['-P', '-t', 'jobs', '-K', ':'], 'k20:v20\nk21:v21\n')
    const second = await kcat([...group, 'jobs'])
    expect(lines(second.stdout).sort()).toEqual(['v20', 'v21'])
  })
})
