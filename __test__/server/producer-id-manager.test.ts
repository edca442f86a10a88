/**
 * ProducerIdManager: ids come in blocks reserved before use, so no id is handed out twice,
 * across restarts of a data dir (the file source) and across brokers sharing a source.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PRODUCER_ID_BLOCK_SIZE, PRODUCER_IDS_FILE, ProducerIdManager, type ProducerIdBlockSource } from '../../ts/server/producer-id-manager.js'
import { tempDir } from '../helpers/tmp.js'

describe('ProducerIdManager', () => {
  it('reserves a block in the data dir before handing out its ids; a restart starts at the next block', async () => {
    const dir = tempDir('ferrolog-pids-')
    const first = await ProducerIdManager.load(dir)
    const ids = [await first.generateProducerId(), await first.generateProducerId()]
    expect(ids).toEqual([0n, 1n])
    expect(JSON.parse(readFileSync(join(dir, PRODUCER_IDS_FILE), 'utf8'))).toEqual({ version: 1, nextBlockStart: String(PRODUCER_ID_BLOCK_SIZE) })
    const again = await ProducerIdManager.load(dir)
    expect(await again.generateProducerId()).toBe(PRODUCER_ID_BLOCK_SIZE)
  })

  it('takes a new block from its source when one runs out, and never hands out an id twice under concurrent calls', async () => {
    let next = 0n
    const reserved: bigint[] = []
    const source: ProducerIdBlockSource = {
      async reserveBlock(size) {
        await new Promise((r) => setTimeout(r, 1))
        reserved.push(next)
        next += size * 2n // another broker took the block in between
        return next - size * 2n
      },
    }
    const manager = new ProducerIdManager(source)
    const ids = await Promise.all(Array.from({ length: 2500 }, () => manager.generateProducerId()))
    expect(new Set(ids).size).toBe(2500)
    expect(reserved).toEqual([0n, 2000n, 4000n])
    expect(ids[999]).toBe(999n)
    expect(ids[1000]).toBe(2000n)
    expect(ids[2499]).toBe(4499n)
  })
})
