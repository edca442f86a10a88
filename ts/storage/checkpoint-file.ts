/**
 * Kafka's offset checkpoint files of a log directory, `recovery-point-offset-checkpoint` and
 * `log-start-offset-checkpoint`:
 *
 *   0                      version
 *   2                      number of entries
 *   orders 0 1234          topic, partition, offset
 *   orders 1 99
 *
 * Written to `<file>.tmp`, fsynced, renamed over the old file, as Kafka's CheckpointFile does.
 */
import { open, readFile, rename } from 'node:fs/promises'
import { StorageError } from './errors.js'

export const CHECKPOINT_VERSION = 0

export type TopicPartitionKey = string

/** `topic-partition`, the name of a partition's directory. */
export function topicPartitionKey(topic: string, partition: number): TopicPartitionKey {
  return `${topic}-${partition}`
}

export function formatOffsetCheckpoint(entries: Map<TopicPartitionKey, bigint>): string {
  const lines = [String(CHECKPOINT_VERSION), String(entries.size)]
  for (const [key, offset] of entries) {
    const dash = key.lastIndexOf('-')
    lines.push(`${key.slice(0, dash)} ${key.slice(dash + 1)} ${offset}`)
  }
  return lines.join('\n') + '\n'
}

export function parseOffsetCheckpoint(text: string, file: string): Map<TopicPartitionKey, bigint> {
  const lines = text.split('\n').filter((l) => l.length > 0)
  function fail(why: string): never {
    throw new StorageError('STORAGE_ERROR', `malformed checkpoint file ${file}: ${why}`)
  }
  if (lines.length < 2) fail('missing version or count line')
  if (Number(lines[0]) !== CHECKPOINT_VERSION) fail(`unknown version ${lines[0]}`)
  const count = Number(lines[1])
  if (!Number.isInteger(count) || count !== lines.length - 2) fail(`expected ${lines[1]} entries, found ${lines.length - 2}`)
  const entries = new Map<TopicPartitionKey, bigint>()
  for (const line of lines.slice(2)) {
    const [topic, partition, offset, ...extra] = line.split(' ')
    if (topic === undefined || partition === undefined || offset === undefined || extra.length > 0 || !/^\d+$/.test(partition) || !/^-?\d+$/.test(offset)) {
      fail(`bad entry "${line}"`)
    }
    entries.set(topicPartitionKey(topic, Number(partition)), BigInt(offset))
  }
  return entries
}

export async function readOffsetCheckpoint(file: string): Promise<Map<TopicPartitionKey, bigint>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map()
    throw new StorageError('STORAGE_ERROR', `cannot read ${file}: ${(err as Error).message}`, { cause: err })
  }
  return parseOffsetCheckpoint(text, file)
}

/**
 * Writes `text` to `file` atomically and durably: tmp file, fsync, rename. `mode` 0o600 for a file
 * of secrets (the tmp file is given it before a byte is written, even when left by a crash).
 */
export async function writeFileDurably(file: string, text: string, mode = 0o644): Promise<void> {
  const tmp = `${file}.tmp`
  try {
    const handle = await open(tmp, 'w', mode)
    try {
      await handle.chmod(mode)
      await handle.writeFile(text, 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(tmp, file)
  } catch (err) {
    throw new StorageError('STORAGE_ERROR', `cannot write ${file}: ${(err as Error).message}`, { cause: err })
  }
}

export async function writeOffsetCheckpoint(file: string, entries: Map<TopicPartitionKey, bigint>): Promise<void> {
  await writeFileDurably(file, formatOffsetCheckpoint(entries))
}
