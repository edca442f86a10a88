/**
 * kcat (librdkafka) as a group member (-G): it joins, consumes every message, commits; run again
 * in the same group it resumes after what it committed.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { runKcat } from '../helpers/kcat.js'

let broker: Broker | undefined

afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

const kcat = (args: string[], input?: string) => runKcat(broker!.port, args, input)

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
