/**
 * `KafkaApis` (Kafka's class of that name, its `handle`): the request dispatcher. It reads the
 * header, finds the ApiKey's codec and handler (ts/server/handlers, one file per ApiKey), checks
 * the version, decodes, runs the handler, encodes the response with the header its version needs.
 *
 * Faults, as Kafka treats them: an unknown ApiKey, an unsupported version (except ApiVersions,
 * which is answered with UNSUPPORTED_VERSION in its v0 shape) or a body that does not decode
 * close that one connection with a log line; nothing else is touched.
 *
 * Request quotas (request_percentage, ts/quota/client-quota-manager.ts): the time a request held
 * the event loop (its decoding and its handler's synchronous part: what a Kafka request handler
 * thread spends on it, parked waits excluded) is recorded as a percentage of a second against the
 * client's quota; over it, the response carries the larger of that throttle and its own
 * (Produce's and Fetch's byte quotas) in throttle_time_ms, and the connection is muted that long.
 * A follower's Fetch is exempt, as Kafka exempts replication.
 *
 * With a fault injector (an embedded broker started with `faultInjection: true`,
 * fault-injector.ts), each decoded request is first offered to its rules: one may replace the
 * handler's answer with an error, delay or hold the answer, or close the connection.
 */
import type { Connection } from '../network/connection.js'
import type { Response } from '../network/response-writer.js'
import type { FileRecords } from '../network/transfer.js'
import type { ApiCodec } from '../protocol/apis/api.js'
import { ApiKey } from '../protocol/apis/api.js'
import { writeUnsupportedApiVersionsResponse } from '../protocol/apis/api-versions.js'
import { readRequestHeaderRest, readRequestHeaderStart, writeResponseHeader, type RequestHeader } from '../protocol/header.js'
import { ProtocolError } from '../protocol/protocol-error.js'
import { Reader } from '../protocol/reader.js'
import { Writer } from '../protocol/writer.js'
import type { Logger } from '../logger.js'
import type { FaultInjector } from './fault-injector.js'
import type { ClientQuotaManager } from '../quota/client-quota-manager.js'
import { quotaNowMs } from '../quota/client-quota-managers.js'
import { setTimeout as sleep } from 'node:timers/promises'

/** The lowest Produce version ApiVersions advertises (Kafka's constant of that name). */
export const PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION = 0

export interface RequestContext {
  header: RequestHeader
  connection: Connection
  /** The request's size in bytes, header included (Kafka's request.sizeInBytes; Produce quotas count it). */
  requestSize?: number
}

/** Answers one decoded request; `null` sends no response (Produce with acks=0). */
export type ApiHandler<Req, Res> = (request: Req, context: RequestContext) => Res | null | Promise<Res | null>

interface Route {
  codec: ApiCodec<any, any> // eslint-disable-line @typescript-eslint/no-explicit-any
  handle: ApiHandler<any, any> // eslint-disable-line @typescript-eslint/no-explicit-any
}

export class KafkaApis {
  private readonly routes = new Map<number, Route>()
  private readonly logger: Logger
  /** Fault injection's rules (tests only), or null: no request is ever touched. */
  faults: FaultInjector | null = null
  /** The request quotas (request_percentage), or null: none recorded. */
  requestQuota: ClientQuotaManager | null = null

  constructor(logger: Logger) {
    this.logger = logger
  }

  register<Req, Res>(codec: ApiCodec<Req, Res>, handle: ApiHandler<Req, Res>): this {
    this.routes.set(codec.apiKey, { codec, handle })
    return this
  }

  /**
   * The served version ranges, for ApiVersions. Produce is advertised from v0 although v0-2 are
   * refused (the connection is closed, as for any unsupported version): Kafka 4.x does the same
   * (ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION, KAFKA-18659) because librdkafka's feature
   * detection fails compressed produce against a broker whose Produce range does not start at 0.
   */
  supportedApis(): Array<{ apiKey: number; minVersion: number; maxVersion: number }> {
    return [...this.routes.values()]
      .map(({ codec }) => ({ apiKey: codec.apiKey, minVersion: codec.apiKey === ApiKey.Produce ? PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION : codec.minVersion, maxVersion: codec.maxVersion }))
      .sort((a, b) => a.apiKey - b.apiKey)
  }

  /**
   * Handles one request frame; resolves to the response frame (bytes, or bytes and the file
   * ranges of a Fetch response's records), or null for none.
   */
  async handle(frame: Buffer, connection: Connection): Promise<Response | null> {
    const startedAt = performance.now()
    const r = new Reader(frame)
    let start: ReturnType<typeof readRequestHeaderStart>
    try {
      start = readRequestHeaderStart(r)
    } catch (err) {
      connection.close(`unreadable request header: ${(err as Error).message}`)
      return null
    }
    const { apiKey, apiVersion, correlationId } = start
    const route = this.routes.get(apiKey)
    if (!route) {
      connection.close(`unknown ApiKey ${apiKey}`)
      return null
    }
    const { codec } = route
    if (apiVersion < codec.minVersion || apiVersion > codec.maxVersion) {
      if (apiKey === ApiKey.ApiVersions) {
        const w = new Writer()
        writeUnsupportedApiVersionsResponse(w, correlationId)
        return w.finish()
      }
      connection.close(`unsupported version ${apiVersion} of ${codec.name} (serves ${codec.minVersion}-${codec.maxVersion})`)
      return null
    }
    const flexible = apiVersion >= codec.flexibleFrom
    let header: RequestHeader
    let request: unknown
    try {
      header = { apiKey, apiVersion, correlationId, clientId: readRequestHeaderRest(r, flexible) }
      request = codec.decodeRequest(r, apiVersion)
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err
      connection.close(`malformed ${codec.name} v${apiVersion} request: ${err.message}`)
      return null
    }
    this.logger.debug('request', { api: codec.name, version: apiVersion, correlationId, clientId: header.clientId, connection: connection.id })
    const fault = this.faults?.faultFor(header, request, connection) ?? null
    if (fault?.closeBefore) {
      connection.close(`fault injection rule ${fault.rule}: closed before handling ${codec.name}`)
      return null
    }
    const handled = fault?.response !== undefined ? fault.response : route.handle(request, { header, connection, requestSize: frame.length })
    const threadMs = performance.now() - startedAt
    const response = await handled
    if (this.requestQuota?.quotasEnabled && !isFollowerFetch(apiKey, apiVersion, request)) {
      // Kafka's nanosToPercentage: a second of thread time is 100 (percent) for the rate.
      const throttleTimeMs = this.requestQuota.maybeRecordAndGetThrottleTimeMs(connection.principal.name, header.clientId ?? '', threadMs / 10, quotaNowMs())
      if (throttleTimeMs > 0) {
        connection.throttle(throttleTimeMs)
        const res = response as { throttleTimeMs?: number } | null
        if (res && typeof res.throttleTimeMs === 'number' && res.throttleTimeMs < throttleTimeMs) res.throttleTimeMs = throttleTimeMs
      }
    }
    if (fault) {
      if (fault.latencyMs > 0) await sleep(fault.latencyMs)
      if (fault.hold) await fault.hold
      if (fault.closeAfter) {
        connection.close(`fault injection rule ${fault.rule}: closed after handling ${codec.name}, instead of answering`)
        return null
      }
    }
    if (response === null) return null
    const w = new Writer()
    // ApiVersions responses always use header v0: the client reads them before it knows more.
    writeResponseHeader(w, correlationId, flexible && apiKey !== ApiKey.ApiVersions)
    if (!codec.encodeResponseCuts) {
      codec.encodeResponse(w, apiVersion, response)
      return w.finish()
    }
    const cuts = codec.encodeResponseCuts(w, apiVersion, response)
    const bytes = w.finish()
    if (cuts.length === 0) return bytes
    // bytes[0, cut0) records0 bytes[cut0, cut1) records1 ... bytes[cutN-1, end)
    const parts: Array<Buffer | FileRecords> = []
    let from = 0
    let size = bytes.length
    for (const cut of cuts) {
      if (cut.at > from) parts.push(bytes.subarray(from, cut.at))
      parts.push(cut.records as FileRecords)
      size += cut.size
      from = cut.at
    }
    if (from < bytes.length) parts.push(bytes.subarray(from))
    return { parts, size }
  }
}

/** A follower's Fetch (replica id set): exempt from request quotas. */
function isFollowerFetch(apiKey: number, version: number, request: unknown): boolean {
  if (apiKey !== ApiKey.Fetch) return false
  const r = request as { replicaId?: number; replicaState?: { replicaId: number } }
  return (version >= 15 ? (r.replicaState?.replicaId ?? -1) : (r.replicaId ?? -1)) >= 0
}
