/**
 * The parts every config key is made of, as Kafka's `ConfigDef`: a type (Kafka's
 * `ConfigDef.Type`, whose DescribeConfigs code is `ConfigType`), a validator (the range or set of
 * values accepted, written as Kafka's docs print it) and how a value is read from and written to
 * text. The keys themselves are in topic-configs.ts and broker-configs.ts.
 *
 * This module and its folder import nothing from the rest of ferrolog: storage, server and the
 * generators all read the config keys from here.
 */

/** Kafka's DescribeConfigsResponse ConfigType codes (Kafka's `ConfigDef.Type`). */
export const ConfigType = { UNKNOWN: 0, BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7, CLASS: 8, PASSWORD: 9 } as const

export type ConfigTypeName = Exclude<keyof typeof ConfigType, 'UNKNOWN'>

/** A config value that cannot be used (unknown name, wrong type, out of range). */
export class ConfigError extends Error {
  readonly code = 'INVALID_CONFIG' as const
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

/** How a value of one config is typed, checked and written. */
export interface ValueType<T> {
  type: ConfigTypeName
  /** The validator as Kafka's docs print it (`[0,...]`, `[CreateTime, LogAppendTime]`); '' for none. */
  valid: string
  /** The value of `text` for config `name`, or a ConfigError. */
  parse(text: string, name: string): T
  /** The value as DescribeConfigs answers it. */
  format(value: T): string
}

/** Kafka's Long.MAX_VALUE as text: "never" for LONG configs. */
export const LONG_MAX_TEXT = '9223372036854775807'

/**
 * A whole number of at least `min` (at most `max`). Kafka's LONG configs hold values JavaScript's
 * numbers cannot: ferrolog's "never" is Number.MAX_SAFE_INTEGER, Kafka's Long.MAX_VALUE, which is
 * accepted for it and written for it.
 */
function whole(type: 'INT' | 'LONG' | 'SHORT', min: number | null, max?: number): ValueType<number> {
  const valid = min === null ? '' : max === undefined ? `[${min},...]` : `[${min},...,${max}]`
  return {
    type,
    valid,
    parse(text, name) {
      if (type === 'LONG' && text.trim() === LONG_MAX_TEXT) return Number.MAX_SAFE_INTEGER
      const n = Number(text.trim())
      if (text.trim() === '' || !Number.isSafeInteger(n) || (min !== null && n < min) || (max !== undefined && n > max)) {
        throw new ConfigError(min === null ? `${name} must be an integer, not "${text}"` : `${name} must be an integer >= ${min}${max === undefined ? '' : ` and <= ${max}`}, not "${text}"`)
      }
      return n
    },
    format: (n) => (type === 'LONG' && n === Number.MAX_SAFE_INTEGER ? LONG_MAX_TEXT : String(n)),
  }
}

/** Kafka's INT, at least `min` (at most `max`); null: any. */
export const int = (min: number | null, max?: number): ValueType<number> => whole('INT', min, max)
/** Kafka's LONG, at least `min`; null: any. */
export const long = (min: number | null): ValueType<number> => whole('LONG', min)

/** Kafka's DOUBLE between `min` and `max`. */
export function double(min: number, max: number): ValueType<number> {
  return {
    type: 'DOUBLE',
    valid: `[${min},...,${max}]`,
    parse(text, name) {
      const n = Number(text.trim())
      if (text.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new ConfigError(`Invalid value ${text} for configuration ${name}: Value must be between ${min} and ${max}`)
      return n
    },
    format: (n) => String(n),
  }
}

/** Kafka's BOOLEAN: true or false, any case. */
export const bool: ValueType<boolean> = {
  type: 'BOOLEAN',
  valid: '',
  parse(text, name) {
    const t = text.trim().toLowerCase()
    if (t !== 'true' && t !== 'false') throw new ConfigError(`${name} must be true or false, not "${text}"`)
    return t === 'true'
  },
  format: (b) => String(b),
}

/** Kafka's STRING, any text. */
export const string: ValueType<string> = { type: 'STRING', valid: '', parse: (text) => text.trim(), format: (s) => s }

/** Kafka's STRING (or CLASS) with Kafka's `ValidString.in(...)`: one of `values`. */
export function oneOf<V extends string>(values: readonly V[], type: 'STRING' | 'CLASS' = 'STRING'): ValueType<V> {
  return {
    type,
    valid: `[${values.join(', ')}]`,
    parse(text, name) {
      const t = text.trim()
      if (!(values as readonly string[]).includes(t)) throw new ConfigError(`${name} must be ${values.join(' or ')}, not "${text}"`)
      return t as V
    },
    format: (v) => v,
  }
}

/**
 * Kafka's LIST with `ValidList.in(...)`: items of `values`, comma separated, any order, trimmed,
 * each once; an empty list is allowed (cleanup.policy= keeps the log whole, as Kafka does).
 */
export function listOf<V extends string>(values: readonly V[]): ValueType<readonly V[]> {
  return {
    type: 'LIST',
    valid: `[${values.join(', ')}]`,
    parse(text, name) {
      const items = text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
      for (const item of items) {
        if (!(values as readonly string[]).includes(item)) throw new ConfigError(`Invalid value ${item} for configuration ${name}: String must be one of: ${values.join(', ')}`)
      }
      return [...new Set(items as V[])]
    },
    format: (v) => v.join(','),
  }
}

/** Kafka's PASSWORD: any text, never shown (DescribeConfigs answers null and isSensitive). */
export const password: ValueType<string> = { type: 'PASSWORD', valid: '', parse: (text) => text, format: (s) => s }

/** A value of `type` that may be absent (Kafka's null default): '' and absence are null. */
export function optional<T>(type: ValueType<T>): ValueType<T | null> {
  return {
    type: type.type,
    valid: type.valid,
    parse: (text, name) => (text.trim() === '' ? null : type.parse(text, name)),
    format: (v) => (v === null ? '' : type.format(v)),
  }
}

/** Whether and how a broker config changes while the broker runs (Kafka's `DynamicBrokerConfig` update modes). */
export type UpdateMode = 'read-only' | 'per-broker' | 'cluster-wide'
