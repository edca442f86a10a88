/**
 * ClientQuotaControlManager (Kafka's controller class of that name): AlterClientQuotas validated
 * as Kafka's controller validates it, turned into the quota changes to store. Per entry, in
 * request order:
 *
 * - the entity is the request's entity list as a map (a type named twice keeps its last name);
 *   an empty entity, a type other than user / client-id / ip and an empty name are
 *   INVALID_REQUEST; so is ip beside user or client-id, and an ip name that is neither an IP
 *   address nor a resolvable host;
 * - a key named twice, or an entity altered a second time in the request, answers "Ignoring
 *   duplicate entity" for that entity (what an earlier entry of it changed is still applied, as
 *   Kafka's atomic batch applies it);
 * - a key the entity's types do not have ("Invalid configuration key"), a value not above 0, a
 *   fractional value for a LONG or INT key, or one too large for its type is INVALID_REQUEST, and
 *   nothing of that entry is applied;
 * - a removal of a key that is not set, or a value equal to the stored one, changes nothing.
 *
 * The response lists each entity once, in the order of Kafka's HashMap of results, with its
 * entries in the order of Kafka's entity map (client-quota-entity.ts).
 */
import type { AlterClientQuotasRequest } from '../protocol/messages/alter-client-quotas-request.js'
import type { AlterClientQuotasResponse, EntryData } from '../protocol/messages/alter-client-quotas-response.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { CLIENT_ID, entityFromRequest, entityHash, entityKey, entityToString, IP, javaHashMapOrder, javaStringHash, nameOf, USER, type ClientQuotaEntity } from './client-quota-entity.js'
import type { ClientQuotaChange, ClientQuotasImage } from './client-quotas-image.js'
import { IP_QUOTA_KEYS, USER_AND_CLIENT_QUOTA_KEYS, type QuotaValueType } from './quota-config.js'

interface ApiError {
  errorCode: number
  errorMessage: string | null
}

const NONE: ApiError = { errorCode: ErrorCode.NONE, errorMessage: null }
const invalid = (errorMessage: string): ApiError => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage })

/** Long.MAX_VALUE as the double Kafka compares with: 2^63. */
const LONG_MAX = 2 ** 63
const INT_MAX = 2147483647

function validateEntity(entity: ClientQuotaEntity): ApiError {
  if (entity.length === 0) return invalid('Invalid empty client quota entity')
  for (const [type, name] of entity) {
    if (type !== USER && type !== CLIENT_ID && type !== IP) return invalid(`Unhandled client quota entity type: ${type}`)
    if (name !== null && name.length === 0) return invalid(`Empty ${type} not supported`)
  }
  return NONE
}

function configKeysFor(entity: ClientQuotaEntity, validIp: (name: string) => boolean): ApiError | ReadonlyMap<string, QuotaValueType> {
  const ip = nameOf(entity, IP)
  const hasUserOrClient = nameOf(entity, USER) !== undefined || nameOf(entity, CLIENT_ID) !== undefined
  if (ip !== undefined) {
    // Kafka's message, its missing space included.
    if (hasUserOrClient) return invalid('Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId')
    if (ip !== null && !validIp(ip)) return invalid(`${ip} is not a valid IP or resolvable host.`)
    return IP_QUOTA_KEYS
  }
  if (hasUserOrClient) return USER_AND_CLIENT_QUOTA_KEYS
  return invalid('Invalid empty client quota entity')
}

function validateKeyValue(keys: ReadonlyMap<string, QuotaValueType>, key: string, value: number): ApiError {
  const type = keys.get(key)
  if (type === undefined) return invalid(`Invalid configuration key ${key}`)
  if (!(value > 0)) return invalid(`Quota ${key} must be greater than 0`)
  if (type === 'DOUBLE') return NONE
  if (type === 'INT' && value > INT_MAX) return invalid(`Proposed value for ${key} is too large for an INT.`)
  if (type === 'LONG' && value > LONG_MAX) return invalid(`Proposed value for ${key} is too large for a LONG.`)
  if (Math.abs(value % 1) > 1e-6) return invalid(`${key} cannot be a fractional value.`)
  return NONE
}

/**
 * Validates `request` against the quotas stored (`current`); `validIp(name)` says whether an ip
 * entity's name is an address or a resolvable host. Returns the response and the changes to
 * store (none for validateOnly).
 */
export function alterClientQuotas(
  request: AlterClientQuotasRequest,
  current: ClientQuotasImage,
  validIp: (name: string) => boolean,
): { response: AlterClientQuotasResponse; changes: ClientQuotaChange[] } {
  const results = new Map<string, { entity: ClientQuotaEntity; error: ApiError }>()
  const changes: ClientQuotaChange[] = []
  for (const entry of request.entries) {
    const entity = entityFromRequest(entry.entity)
    const key = entityKey(entity)
    const put = (error: ApiError) => {
      const known = results.get(key)
      if (known) known.error = error
      else results.set(key, { entity, error })
    }
    const alterations = new Map<string, number | null>()
    for (const op of entry.ops) {
      if (alterations.has(op.key)) put(invalid(`Duplicate quota key ${op.key} not updating quota for this entity ${entityToString(entity)}`))
      else alterations.set(op.key, op.remove ? null : op.value)
    }
    if (results.has(key)) {
      put(invalid(`Ignoring duplicate entity ${entityToString(entity)}`))
      continue
    }
    let error = validateEntity(entity)
    const keys = error.errorCode === ErrorCode.NONE ? configKeysFor(entity, validIp) : error
    if ('errorCode' in keys) {
      put(keys)
      continue
    }
    const stored = current.quotas(entity)
    const entryChanges: ClientQuotaChange[] = []
    for (const quotaKey of javaHashMapOrder([...alterations.keys()], javaStringHash, entry.ops.length)) {
      const value = alterations.get(quotaKey)!
      if (value === null) {
        if (stored?.has(quotaKey)) entryChanges.push({ entity, key: quotaKey, value: null })
        continue
      }
      error = validateKeyValue(keys, quotaKey, value)
      if (error.errorCode !== ErrorCode.NONE) break
      if (stored?.get(quotaKey) !== value) entryChanges.push({ entity, key: quotaKey, value })
    }
    put(error)
    if (error.errorCode === ErrorCode.NONE) changes.push(...entryChanges)
  }
  const ordered = javaHashMapOrder([...results.values()], (r) => entityHash(r.entity))
  const entries: EntryData[] = ordered.map(({ entity, error }) => ({
    errorCode: error.errorCode,
    errorMessage: error.errorMessage,
    entity: entity.map(([entityType, entityName]) => ({ entityType, entityName })),
  }))
  return { response: { throttleTimeMs: 0, entries }, changes: request.validateOnly ? [] : changes }
}
