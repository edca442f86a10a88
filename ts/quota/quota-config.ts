/**
 * The quota keys an entity may set (Kafka's QuotaConfig.userAndClientQuotaConfigs and
 * ipConfigs) and their ConfigDef types, which bound the values AlterClientQuotas accepts.
 * Windows: quota.window.num samples of quota.window.size.seconds each (Kafka's defaults, 11 and
 * 1), the rate being measured over them (sampled-rate.ts).
 */

export type QuotaValueType = 'LONG' | 'INT' | 'DOUBLE'

export const PRODUCER_BYTE_RATE = 'producer_byte_rate'
export const CONSUMER_BYTE_RATE = 'consumer_byte_rate'
export const REQUEST_PERCENTAGE = 'request_percentage'
export const CONTROLLER_MUTATION_RATE = 'controller_mutation_rate'
export const CONNECTION_CREATION_RATE = 'connection_creation_rate'

/** Keys of a user, client-id or user and client-id entity. */
export const USER_AND_CLIENT_QUOTA_KEYS: ReadonlyMap<string, QuotaValueType> = new Map([
  [PRODUCER_BYTE_RATE, 'LONG'],
  [CONSUMER_BYTE_RATE, 'LONG'],
  [REQUEST_PERCENTAGE, 'DOUBLE'],
  [CONTROLLER_MUTATION_RATE, 'DOUBLE'],
])

/** Keys of an ip entity. */
export const IP_QUOTA_KEYS: ReadonlyMap<string, QuotaValueType> = new Map([[CONNECTION_CREATION_RATE, 'INT']])

/** quota.window.num (Kafka's default). */
export const QUOTA_WINDOW_NUM = 11
/** quota.window.size.seconds (Kafka's default). */
export const QUOTA_WINDOW_SIZE_SECONDS = 1
