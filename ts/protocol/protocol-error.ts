/**
 * A request that does not decode. The broker answers what it can (or closes that one
 * connection) and logs it; nothing else is touched.
 */
export class ProtocolError extends Error {
  readonly code = 'INVALID_REQUEST' as const

  constructor(message: string) {
    super(message)
    this.name = 'ProtocolError'
  }
}
