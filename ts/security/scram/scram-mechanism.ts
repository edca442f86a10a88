/**
 * ScramMechanism (Kafka's org.apache.kafka.common.security.scram.internals.ScramMechanism): the
 * SCRAM mechanisms Kafka knows, each with its hash, its type byte and its iteration bounds. The
 * type byte is the one AlterUserScramCredentials and DescribeUserScramCredentials carry (Kafka's
 * admin ScramMechanism: 0 UNKNOWN, 1 SCRAM-SHA-256, 2 SCRAM-SHA-512); it never changes.
 */

export interface ScramMechanism {
  /** `SCRAM-SHA-256`: the SASL mechanism name. */
  readonly mechanismName: string
  /** The type byte on the wire (AlterUserScramCredentials, DescribeUserScramCredentials). */
  readonly type: number
  /** node:crypto's name of the hash H (`sha256`), for createHash, createHmac and pbkdf2. */
  readonly hashAlgorithm: string
  /** The length of H's output in bytes: the length of StoredKey, ServerKey and a client proof. */
  readonly hashLength: number
  /** Fewer iterations are refused (Kafka's minIterations). */
  readonly minIterations: number
  /** More iterations are refused by AlterUserScramCredentials (Kafka's ScramControlManager.MAX_ITERATIONS). */
  readonly maxIterations: number
}

/** Kafka's `ScramMechanism.UNKNOWN` type byte: a mechanism this broker does not know. */
export const UNKNOWN_SCRAM_TYPE = 0

export const SCRAM_SHA_256: ScramMechanism = Object.freeze({
  mechanismName: 'SCRAM-SHA-256',
  type: 1,
  hashAlgorithm: 'sha256',
  hashLength: 32,
  minIterations: 4096,
  maxIterations: 16384,
})

export const SCRAM_SHA_512: ScramMechanism = Object.freeze({
  mechanismName: 'SCRAM-SHA-512',
  type: 2,
  hashAlgorithm: 'sha512',
  hashLength: 64,
  minIterations: 4096,
  maxIterations: 16384,
})

export const SCRAM_MECHANISMS: readonly ScramMechanism[] = Object.freeze([SCRAM_SHA_256, SCRAM_SHA_512])

export function scramMechanismForName(mechanismName: string): ScramMechanism | undefined {
  return SCRAM_MECHANISMS.find((m) => m.mechanismName === mechanismName)
}

export function scramMechanismForType(type: number): ScramMechanism | undefined {
  return SCRAM_MECHANISMS.find((m) => m.type === type)
}

export function isScram(mechanismName: string): boolean {
  return scramMechanismForName(mechanismName) !== undefined
}
