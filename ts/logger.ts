/**
 * A small structured logger: one JSON line per event on stderr, with a level threshold.
 * `FERROLOG_LOG_LEVEL` (error, warn, info, debug) sets the default threshold.
 */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug'

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 }

export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  debug(msg: string, fields?: Record<string, unknown>): void
  child(fields: Record<string, unknown>): Logger
}

function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value
}

export function createLogger(options: { level?: LogLevel; fields?: Record<string, unknown>; write?: (line: string) => void } = {}): Logger {
  const envLevel = process.env.FERROLOG_LOG_LEVEL as LogLevel | undefined
  const threshold = RANK[options.level ?? (envLevel && envLevel in RANK ? envLevel : 'info')]
  const base = options.fields ?? {}
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'))
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[level] > threshold) return
    write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...base, ...fields }, jsonSafe))
  }
  return {
    error: (msg, fields) => emit('error', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    debug: (msg, fields) => emit('debug', msg, fields),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  }
}

/** A logger that drops everything (tests and embedded users who want silence). */
export const silentLogger: Logger = {
  error() {},
  warn() {},
  info() {},
  debug() {},
  child() {
    return silentLogger
  },
}

/**
 * The call shape of pino (and bunyan and most Node loggers): fields first, then the message.
 * `child`, when present, is pino's: the same shape with these fields bound.
 */
export interface PinoLikeLogger {
  error(fields: Record<string, unknown>, msg: string): void
  warn(fields: Record<string, unknown>, msg: string): void
  info(fields: Record<string, unknown>, msg: string): void
  debug?(fields: Record<string, unknown>, msg: string): void
  child?(fields: Record<string, unknown>): PinoLikeLogger
}

/** bigint fields (offsets, producer ids) as strings: not every logger can serialise them. */
function plainFields(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!fields) return {}
  let out: Record<string, unknown> | undefined
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value !== 'bigint') continue
    out ??= { ...fields }
    out[key] = value.toString()
  }
  return out ?? fields
}

/** A ferrolog Logger writing to a pino-shaped one (`logger.info(fields, msg)`). */
export function fromPinoLogger(target: PinoLikeLogger, bound: Record<string, unknown> = {}): Logger {
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    const method = target[level]
    if (typeof method !== 'function') return
    method.call(target, Object.keys(bound).length === 0 ? plainFields(fields) : { ...bound, ...plainFields(fields) }, msg)
  }
  return {
    error: (msg, fields) => emit('error', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    debug: (msg, fields) => emit('debug', msg, fields),
    child: (fields) => (typeof target.child === 'function' ? fromPinoLogger(target.child(plainFields(fields)), bound) : fromPinoLogger(target, { ...bound, ...fields })),
  }
}
