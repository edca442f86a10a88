/**
 * What several API codecs share beyond the Reader/Writer primitives: the version guard and the
 * refusal to encode a field a version cannot carry.
 *
 * The classic-or-compact choice itself lives on Reader and Writer (`flexString`, `flexArray`,
 * `endStruct`, ...), so a codec reads as one chain of calls on its reader or writer.
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

/**
 * Kafka's UnsupportedVersionException: encoding a version that lacks a non-ignorable field whose
 * value is not the default. `what` names the field or the case ("a null topics array").
 */
export function cannotCarry(api: string, version: number, what: string): never {
  throw new Error(`${api} v${version} cannot carry ${what}`)
}
