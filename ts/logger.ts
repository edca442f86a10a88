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

export function createLogger(
  options: { level?: LogLevel; fields?: Record<string, unknown>; write?: (line: string) => void } = {},
): Logger {
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
