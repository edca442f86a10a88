/**
 * `partition.metadata`, Kafka's record of a partition directory's topic id:
 *
 *   version: 0
 *   topic_id: <the 16-byte Uuid in URL-safe base64 without padding, 22 characters>
 *
 * A file that does not parse as this (truncated, garbage, empty, another version) refuses the
 * open with a StorageError naming the file and saying how to repair it; nothing is deleted.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { writeFileDurably } from './checkpoint-file.js'
import { StorageError } from './errors.js'

export const PARTITION_METADATA_FILE = 'partition.metadata'

/** Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, no padding. */
export function uuidToString(id: Buffer): string {
  if (id.length !== 16) throw new StorageError('INVALID_ARGUMENT', `a topic id has 16 bytes, not ${id.length}`)
  return id.toString('base64url')
}

export function uuidFromString(text: string): Buffer {
  const id = Buffer.from(text, 'base64url')
  if (id.length !== 16 || id.toString('base64url') !== text) {
    throw new StorageError('INVALID_ARGUMENT', `"${text}" is not a topic id`)
  }
  return id
}

export async function writePartitionMetadata(dir: string, topicId: Buffer): Promise<void> {
  await writeFileDurably(join(dir, PARTITION_METADATA_FILE), `version: 0\ntopic_id: ${uuidToString(topicId)}\n`)
}

/** The topic id of a partition directory, or null when it has no partition.metadata. */
export async function readPartitionMetadata(dir: string): Promise<Buffer | null> {
  const file = join(dir, PARTITION_METADATA_FILE)
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new StorageError('STORAGE_ERROR', `cannot read ${file}: ${(err as Error).message}`, { cause: err })
  }
  function fail(why: string): never {
    throw new StorageError(
      'STORAGE_ERROR',
      `${file} is not a valid partition.metadata file (${why}). It records the partition's topic id: repair it by hand ` +
        `("version: 0" and "topic_id: <the topic's id>" on two lines; ferrolog-topics.json lists each topic's id). No data was touched.`,
    )
  }
  if (text.trim() === '') fail('it is empty')
  const version = /^version: (\d+)$/m.exec(text)?.[1]
  const topicId = /^topic_id: (\S+)$/m.exec(text)?.[1]
  if (version === undefined) fail('no "version:" line')
  if (version !== '0') fail(`unknown version ${version}`)
  if (topicId === undefined) fail('no "topic_id:" line')
  try {
    return uuidFromString(topicId)
  } catch {
    return fail(`"${topicId}" is not a topic id`)
  }
}
