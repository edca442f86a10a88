/**
 * Request and response headers.
 *
 *   request header v0: apiKey int16, apiVersion int16, correlationId int32
 *   request header v1: + clientId nullable string (int16 length, also in v2)
 *   request header v2: + tagged fields                     (flexible request versions)
 *   response header v0: correlationId int32
 *   response header v1: + tagged fields                    (flexible response versions)
 *
 * Every request the broker understands uses header v1 or v2 (v0 was only ControlledShutdown v0).
 */
import { ProtocolError } from './protocol-error.js'
import type { Reader } from './reader.js'
import type { Writer } from './writer.js'

export interface RequestHeader {
  apiKey: number
  apiVersion: number
  correlationId: number
  clientId: string | null
}

/** Reads apiKey, apiVersion and correlationId: enough to answer even an unsupported version. */
export function readRequestHeaderStart(r: Reader): Omit<RequestHeader, 'clientId'> {
  if (r.remaining < 8) throw new ProtocolError(`request of ${r.remaining} bytes has no header`)
  return { apiKey: r.int16(), apiVersion: r.int16(), correlationId: r.int32() }
}

/** Reads the rest of the header: clientId, and tagged fields when `flexible`. */
export function readRequestHeaderRest(r: Reader, flexible: boolean): string | null {
  const clientId = r.nullableString()
  if (flexible) r.skipTaggedFields()
  return clientId
}

export function writeRequestHeader(w: Writer, header: RequestHeader, flexible: boolean): void {
  w.int16(header.apiKey).int16(header.apiVersion).int32(header.correlationId).nullableString(header.clientId)
  if (flexible) w.taggedFields()
}

export function writeResponseHeader(w: Writer, correlationId: number, flexible: boolean): void {
  w.int32(correlationId)
  if (flexible) w.taggedFields()
}

export function readResponseHeader(r: Reader, flexible: boolean): number {
  const correlationId = r.int32()
  if (flexible) r.skipTaggedFields()
  return correlationId
}
