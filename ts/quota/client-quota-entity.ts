/**
 * A client quota entity (Kafka's org.apache.kafka.common.quota.ClientQuotaEntity): entity types
 * (`user`, `client-id`, `ip`) mapped to names, a null name being the type's default entity
 * (kafka-configs.sh --entity-default). Two entities are equal when they map the same types to the
 * same names, whatever the order.
 *
 * Kafka keeps an entity's entries in a java.util.HashMap, so its answers (AlterClientQuotas'
 * entities and the error messages that print an entity) list them in that map's iteration order;
 * `javaHashMapOrder` reproduces it for the few keys an entity has.
 */

export const USER = 'user'
export const CLIENT_ID = 'client-id'
export const IP = 'ip'

/** One entity: [type, name] pairs, no type twice; a null name is the default entity. */
export type ClientQuotaEntity = ReadonlyArray<readonly [type: string, name: string | null]>

/** A canonical string for an entity: equal entities have equal keys. */
export function entityKey(entity: ClientQuotaEntity): string {
  return JSON.stringify([...entity].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)))
}

/** The name of `type` in `entity`: a string, null (the default entity), or undefined (absent). */
export function nameOf(entity: ClientQuotaEntity, type: string): string | null | undefined {
  for (const [t, n] of entity) if (t === type) return n
  return undefined
}

/** java.lang.String#hashCode. */
export function javaStringHash(s: string): number {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0
  return h
}

/**
 * The order in which a java.util.HashMap created with `initialCapacity` (16: `new HashMap<>()`)
 * iterates `keys` put in this order, `hash` being each key's hashCode (a key put twice keeps its
 * first place): by bucket of the final table, then by insertion within a bucket.
 */
export function javaHashMapOrder<K>(keys: readonly K[], hash: (key: K) => number, initialCapacity = 16): K[] {
  // tableSizeFor(initialCapacity), then doubled while size exceeds 0.75 of the table
  let table = 1
  while (table < initialCapacity) table *= 2
  for (let size = 1; size <= keys.length; size++) while (size > Math.floor(table * 0.75)) table *= 2
  const bucket = (k: K) => {
    const h = hash(k) | 0
    return (h ^ (h >>> 16)) & (table - 1)
  }
  return keys
    .map((k, i) => ({ k, i, b: bucket(k) }))
    .sort((a, b) => a.b - b.b || a.i - b.i)
    .map((e) => e.k)
}

/** ClientQuotaEntity#hashCode: Objects.hash(entries), a map's hash being the sum of its entries' key ^ value hashes. */
export function entityHash(entity: ClientQuotaEntity): number {
  let sum = 0
  for (const [t, n] of entity) sum = (sum + (javaStringHash(t) ^ (n === null ? 0 : javaStringHash(n)))) | 0
  return (31 + sum) | 0
}

/**
 * The entity as Kafka builds it from a request's entity list (AlterClientQuotasRequest.entries:
 * a HashMap sized to the list, a later duplicate type overwriting the name), in that map's order.
 */
export function entityFromRequest(list: ReadonlyArray<{ entityType: string; entityName: string | null }>): ClientQuotaEntity {
  const names = new Map<string, string | null>()
  for (const e of list) names.set(e.entityType, e.entityName)
  return javaHashMapOrder([...names.keys()], javaStringHash, list.length).map((t) => [t, names.get(t)!] as const)
}

/** ClientQuotaEntity#toString: `ClientQuotaEntity(entries={user=alice, client-id=null})`. */
export function entityToString(entity: ClientQuotaEntity): string {
  return `ClientQuotaEntity(entries={${entity.map(([t, n]) => `${t}=${n}`).join(', ')}})`
}
