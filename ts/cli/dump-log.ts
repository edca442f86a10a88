/**
 * `ferrolog dump-log <file.log>...`: what Kafka's kafka-dump-log prints, for operators: each
 * batch's offsets, position, size, codec, leader epoch and CRC validity, and with `--records`
 * each record. Reads the file with the TypeScript codecs, so it works without the native binding.
 * Damage is reported, never thrown: a bad batch ends the walk with a line saying where and why.
 */
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { crc32c } from '../protocol/crc32c.js'
import { ATTRIBUTES_OFFSET, lastOffsetOf } from '../protocol/batch-header.js'
import { compressionTypeOf } from '../protocol/compression.js'
import { BatchIterator, decodeBatch } from '../protocol/records.js'

/** Writes the dump of one segment file through `out`; returns false if it found damage. */
export function dumpLogSegment(file: string, options: { records?: boolean }, out: (line: string) => void): boolean {
  const bytes = readFileSync(file)
  const base = /^(\d{20})\.log$/.exec(basename(file))
  out(`Dumping ${file}`)
  if (base) out(`Log starting offset: ${BigInt(base[1]!)}`)
  const batches = new BatchIterator(bytes)
  let clean = true
  try {
    for (const { position, size, header: h } of batches) {
      const valid = crc32c(bytes, position + ATTRIBUTES_OFFSET, position + size) === h.crc
      clean &&= valid
      out(
        `baseOffset: ${h.baseOffset} lastOffset: ${lastOffsetOf(h)} count: ${h.recordsCount} ` +
          `producerId: ${h.producerId} producerEpoch: ${h.producerEpoch} partitionLeaderEpoch: ${h.partitionLeaderEpoch} ` +
          `isTransactional: ${(h.attributes & 0x10) !== 0} isControl: ${(h.attributes & 0x20) !== 0} ` +
          `position: ${position} ${(h.attributes & 0x08) !== 0 ? 'LogAppendTime' : 'CreateTime'}: ${h.maxTimestamp} ` +
          `size: ${size} magic: ${h.magic} compresscodec: ${safeCodec(h.attributes)} crc: ${h.crc} isvalid: ${valid}`,
      )
      if (options.records && valid) {
        for (const r of decodeBatch(bytes, position).records) {
          out(
            `| offset: ${r.offset} timestamp: ${r.timestamp} keySize: ${r.key?.length ?? -1} valueSize: ${r.value?.length ?? -1} ` +
              `headerKeys: [${r.headers.map((x) => x.key).join(',')}]` +
              (r.key ? ` key: ${r.key.toString('utf8')}` : '') +
              (r.value ? ` payload: ${r.value.toString('utf8')}` : ''),
          )
        }
      }
    }
    if (batches.partial) {
      clean = false
      out(`Found ${bytes.length - batches.position} invalid bytes at the end of ${basename(file)}`)
    }
  } catch (err) {
    clean = false
    out(`Stopped at position ${batches.position}: ${(err as Error).message}`)
  }
  return clean
}

function safeCodec(attributes: number): string {
  try {
    return compressionTypeOf(attributes)
  } catch {
    return `unknown(${attributes & 0x07})`
  }
}
