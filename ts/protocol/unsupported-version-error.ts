/**
 * Kafka's UnsupportedVersionException, raised by the generated codecs (ts/protocol/messages):
 * encoding a version that lacks a non-ignorable field whose value is not the default, a null
 * where the version cannot carry one, or reading or writing a version the message does not
 * define. A fault of the caller, never of the bytes received (those are ProtocolErrors).
 */
export class UnsupportedVersionError extends Error {
  readonly code = 'UNSUPPORTED_VERSION' as const

  constructor(message: string) {
    super(message)
    this.name = 'UnsupportedVersionError'
  }
}
