/** What a broker's data directory holds of its topics: ferrolog-topics.json and the partition directories. */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { TOPICS_FILE } from '../../ts/server/topic-store.js'

/** The topics ferrolog-topics.json holds, by name -> [topicId, partitions] (it must parse). */
export function storedTopics(dataDir: string): Map<string, [string, number]> {
  const stored = JSON.parse(readFileSync(join(dataDir, TOPICS_FILE), 'utf8')) as { topics: Array<{ name: string; topicId: string; partitions: number }> }
  return new Map(stored.topics.map((t) => [t.name, [t.topicId, t.partitions]]))
}

/** The partition directories (`<topic>-<n>`) of the data directory, sorted. */
export function partitionDirs(dataDir: string): string[] {
  return readdirSync(dataDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /-\d+$/.test(e.name))
    .map((e) => e.name)
    .sort()
}

/**
 * The data directory agrees with the topic store: one directory per partition of each stored
 * topic (and the offsets topic's), whose partition.metadata carries the stored topic id.
 */
export function expectConsistent(dataDir: string): void {
  const stored = storedTopics(dataDir)
  const expected = [...stored].flatMap(([name, [, partitions]]) => Array.from({ length: partitions }, (_, p) => `${name}-${p}`))
  expect(partitionDirs(dataDir).filter((d) => !d.startsWith('__consumer_offsets-') && !d.startsWith('__transaction_state-'))).toEqual(expected.sort())
  for (const [name, [topicId, partitions]] of stored) {
    for (let p = 0; p < partitions; p++) {
      expect(readFileSync(join(dataDir, `${name}-${p}`, 'partition.metadata'), 'utf8')).toContain(`topic_id: ${topicId}`)
    }
  }
}
