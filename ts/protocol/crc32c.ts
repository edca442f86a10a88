/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) in pure TypeScript, slicing-by-8.
 * The native engine uses the CPU's crc32 instruction instead; this is the twin's.
 */
const POLY = 0x82f63b78

/** Slicing-by-8 tables: `TABLES[t][n]` is the CRC of byte n followed by t zero bytes. */
type Tables = readonly [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array]

const TABLES: Tables = (() => {
  const t0 = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1
    t0[n] = c >>> 0
  }
  const tables: Tables = [t0, new Uint32Array(256), new Uint32Array(256), new Uint32Array(256), new Uint32Array(256), new Uint32Array(256), new Uint32Array(256), new Uint32Array(256)]
  for (let n = 0; n < 256; n++) {
    let c = t0[n]!
    for (let t = 1; t < 8; t++) {
      c = t0[c & 0xff]! ^ (c >>> 8)
      tables[t]![n] = c >>> 0
    }
  }
  return tables
})()

/** CRC-32C of `buf[start, end)`. Table lookups are by a byte (< 256) and `end <= buf.length`. */
export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES
  let crc = 0xffffffff
  let i = start
  for (; i + 8 <= end; i += 8) {
    const a = (crc ^ (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24))) >>> 0
    crc = t7[a & 0xff]! ^ t6[(a >>> 8) & 0xff]! ^ t5[(a >>> 16) & 0xff]! ^ t4[a >>> 24]! ^ t3[buf[i + 4]!]! ^ t2[buf[i + 5]!]! ^ t1[buf[i + 6]!]! ^ t0[buf[i + 7]!]!
  }
  for (; i < end; i++) crc = t0[(crc ^ buf[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}
