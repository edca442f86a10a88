/**
 * What the served API codecs share beyond the generated ones (ts/protocol/message-codec.ts): the
 * guard of the versions served, and Kafka's "no topic id".
 */
import { ProtocolError } from '../protocol-error.js'

/** The all-zero uuid: Kafka's default and "no topic id". Shared; never write into it. */
export const ZERO_UUID: Buffer = Buffer.alloc(16)

/** Refuses a version outside the served range, on either side. */
export function checkVersion(api: string, version: number, min: number, max: number): void {
  if (!(Number.isInteger(version) && version >= min && version <= max)) {
    throw new ProtocolError(`${api} v${version} is not one of v${min}-v${max}`)
  }
}
