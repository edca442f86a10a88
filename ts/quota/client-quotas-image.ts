/**
 * ClientQuotasImage (Kafka's metadata image class of that name): every entity's quotas, as the
 * broker stores and enforces them. Immutable: `apply` returns the image after a batch of changes.
 * `describe` answers DescribeClientQuotas as Kafka's ClientQuotasImage.describe does: the filter
 * validated with Kafka's errors and messages (an empty or repeated entity type, a match string
 * where the match type wants none or none where it wants one, an IP component beside a user or
 * client-id one: INVALID_REQUEST; a type other than user / client-id / ip: UNSUPPORTED_VERSION),
 * then each entity matched against the components (an exact name, the default entity, or any
 * name of the type), `strict` asking for entities with no other types.
 *
 * Stored (the data dir's file, or etcd in a cluster) as UTF-8 JSON, one entry per entity with at
 * least one quota, a null entity name being the default entity:
 *
 *   { "version": 1,
 *     "quotas": [ { "entity": [["user", "alice"], ["client-id", null]], "values": { "producer_byte_rate": 1024 } } ] }
 */
import { ErrorCode } from '../protocol/error-codes.js'
import { MatchType, type DescribeClientQuotasRequest, type DescribeClientQuotasResponse } from '../protocol/apis/describe-client-quotas.js'
import { CLIENT_ID, entityKey, IP, javaHashMapOrder, javaStringHash, nameOf, USER, type ClientQuotaEntity } from './client-quota-entity.js'

/**
 * The order Kafka's DescribeClientQuotas lists an entity's values in: its image's map, made by
 * ClientQuotaDelta.apply putting the delta's changes (a default HashMap) into a HashMap sized to
 * the previous image (empty for a new entity). Clients' own tests compare the list as it comes.
 */
function describeOrder(keys: string[]): string[] {
  return javaHashMapOrder(javaHashMapOrder(keys, javaStringHash), javaStringHash, 0)
}

/** One quota key of one entity set (value) or removed (null). */
export interface ClientQuotaChange {
  entity: ClientQuotaEntity
  key: string
  value: number | null
}

interface EntityQuotas {
  entity: ClientQuotaEntity
  values: ReadonlyMap<string, number>
}

export class ClientQuotasImage {
  static readonly EMPTY = new ClientQuotasImage(new Map())
  private readonly entities: ReadonlyMap<string, EntityQuotas>

  private constructor(entities: ReadonlyMap<string, EntityQuotas>) {
    this.entities = entities
  }

  get isEmpty(): boolean {
    return this.entities.size === 0
  }

  /** The quotas of exactly this entity, or undefined. */
  quotas(entity: ClientQuotaEntity): ReadonlyMap<string, number> | undefined {
    return this.entities.get(entityKey(entity))?.values
  }

  /** The image after `changes`; an entity left without quotas is dropped. */
  apply(changes: readonly ClientQuotaChange[]): ClientQuotasImage {
    if (changes.length === 0) return this
    const next = new Map(this.entities)
    for (const { entity, key, value } of changes) {
      const k = entityKey(entity)
      const values = new Map(next.get(k)?.values ?? [])
      if (value === null) values.delete(key)
      else values.set(key, value)
      if (values.size === 0) next.delete(k)
      else next.set(k, { entity: next.get(k)?.entity ?? entity, values })
    }
    return new ClientQuotasImage(next)
  }

  describe(request: DescribeClientQuotasRequest): DescribeClientQuotasResponse {
    const fail = (errorCode: number, errorMessage: string): DescribeClientQuotasResponse => ({ throttleTimeMs: 0, errorCode, errorMessage, entries: null })
    const exact = new Map<string, string | null>()
    const anyOf = new Set<string>()
    for (const c of request.components) {
      if (c.entityType === '') return fail(ErrorCode.INVALID_REQUEST, 'Invalid empty entity type.')
      if (exact.has(c.entityType) || anyOf.has(c.entityType)) return fail(ErrorCode.INVALID_REQUEST, `Entity type ${c.entityType} cannot appear more than once in the filter.`)
      if (c.entityType !== IP && c.entityType !== USER && c.entityType !== CLIENT_ID) return fail(ErrorCode.UNSUPPORTED_VERSION, `Unsupported entity type ${c.entityType}`)
      if (c.matchType === MatchType.EXACT) {
        if (c.match === null) return fail(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_EXACT, but set match string to null.')
        exact.set(c.entityType, c.match)
      } else if (c.matchType === MatchType.DEFAULT) {
        if (c.match !== null) return fail(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_DEFAULT, but also specified a match string.')
        exact.set(c.entityType, null)
      } else if (c.matchType === MatchType.SPECIFIED) {
        if (c.match !== null) return fail(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.')
        anyOf.add(c.entityType)
      } else {
        return fail(ErrorCode.INVALID_REQUEST, `Unknown match type ${c.matchType}`)
      }
    }
    const has = (t: string) => exact.has(t) || anyOf.has(t)
    if (has(IP) && (has(USER) || has(CLIENT_ID))) {
      return fail(ErrorCode.INVALID_REQUEST, 'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.')
    }
    const matches = (entity: ClientQuotaEntity): boolean => {
      if (request.strict && entity.length !== exact.size + anyOf.size) return false
      for (const [type, name] of exact) if (nameOf(entity, type) !== name) return false
      for (const type of anyOf) if (nameOf(entity, type) === undefined) return false
      return true
    }
    const entries = [...this.entities.values()]
      .filter((e) => matches(e.entity))
      .map((e) => ({
        entity: e.entity.map(([entityType, entityName]) => ({ entityType, entityName })),
        values: describeOrder([...e.values.keys()]).map((key) => ({ key, value: e.values.get(key)! })),
      }))
    // Kafka's DescribeClientQuotasResponseData default: an empty message, not null.
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: '', entries }
  }

  /** The stored form (module comment). */
  format(): string {
    const quotas = [...this.entities.values()].map((e) => ({ entity: e.entity.map(([t, n]) => [t, n]), values: Object.fromEntries(e.values) }))
    return JSON.stringify({ version: 1, quotas }, null, 2) + '\n'
  }

  /** Parses the stored form; throws an Error naming `where` when it is not that. */
  static parse(text: string, where: string): ClientQuotasImage {
    const bad = (why: string) => new Error(`${where} is not a valid client quotas file (${why})`)
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw bad('not JSON')
    }
    const root = parsed as { version?: unknown; quotas?: unknown }
    if (typeof root !== 'object' || root === null || root.version !== 1 || !Array.isArray(root.quotas)) throw bad('no version 1 quotas')
    const changes: ClientQuotaChange[] = []
    for (const q of root.quotas as Array<{ entity?: unknown; values?: unknown }>) {
      const entity = q?.entity
      if (!Array.isArray(entity) || !entity.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && (p[1] === null || typeof p[1] === 'string'))) {
        throw bad('an entity is not a list of [type, name]')
      }
      if (typeof q.values !== 'object' || q.values === null) throw bad('an entity has no values')
      for (const [key, value] of Object.entries(q.values)) {
        if (typeof value !== 'number' || !Number.isFinite(value)) throw bad(`the value of ${key} is not a number`)
        changes.push({ entity: entity as Array<[string, string | null]>, key, value })
      }
    }
    return ClientQuotasImage.EMPTY.apply(changes)
  }

  /** Every entity and its quotas, for enforcement (client-quota-manager.ts). */
  all(): Iterable<EntityQuotas> {
    return this.entities.values()
  }
}
