// The differential check of the generated codecs (ts/protocol/messages) against Kafka's own
// serializer (tools/kafka/MessageDifferential.java over the kafka-clients and coordinator jars),
// shared by the CI test (__test__/protocol/messages/differential.test.ts, a few messages per
// version) and the long run (scripts/protocol-differential.mjs).
//
// For every message and version: random field values from the schema (test code may interpret
// the schema; the codecs do not), then
//   1. Java reads them through <Class>JsonConverter and serializes them: ferrolog's bytes of the
//      same values must be equal, and ferrolog must decode Java's bytes to the same values and
//      encode those to the same bytes again;
//   2. Java reads ferrolog's bytes (Message.read): it must decode all of them to the same values;
//   3. values made for one version, written at another: Kafka and ferrolog both refuse
//      (UnsupportedVersionException / UnsupportedVersionError) or both write the same bytes.
// Values are compared in the JsonConverter form (every field of the version, tagged ones only
// when not at their default, int64 as decimal strings); records, which that form leaves empty,
// are compared through the bytes.
import { spawn, execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { OPEN, contains, jarsDir, kebab } from './kafka-schemas.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const SOURCE = join(root, 'tools', 'kafka', 'MessageDifferential.java')

// ---------------------------------------------------------------------------------------------
// The Java side

/** Compiles MessageDifferential.java against the jars (once per content) and returns its class dir. */
export function compileJava() {
  const jars = jarsDir()
  const hash = createHash('sha256').update(readFileSync(SOURCE)).digest('hex').slice(0, 16)
  const dir = join(tmpdir(), `ferrolog-message-differential-${hash}`)
  if (!existsSync(join(dir, 'MessageDifferential.class'))) {
    const tmp = `${dir}.${process.pid}.tmp`
    mkdirSync(tmp, { recursive: true })
    // javac through the runtime's jdk.compiler module: a JRE has it without the `javac` command.
    const cp = readdirSync(jars)
      .filter((f) => f.endsWith('.jar'))
      .map((f) => join(jars, f))
    execFileSync('java', ['-m', 'jdk.compiler/com.sun.tools.javac.Main', '-nowarn', '-cp', cp.join(':'), '-d', tmp, SOURCE], { stdio: 'pipe' })
    rmSync(dir, { recursive: true, force: true })
    renameSync(tmp, dir)
  }
  return dir
}

/** One JVM answering requests in order; `close()` ends it. */
export function startKafkaSerializer() {
  const classes = compileJava()
  const child = spawn('java', ['-Xshare:auto', '-XX:TieredStopAtLevel=1', '-cp', `${classes}:${jarsDir()}/*`, 'MessageDifferential'], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const waiting = new Map()
  let nextId = 1
  createInterface({ input: child.stdout }).on('line', (line) => {
    const answer = JSON.parse(line)
    const w = waiting.get(answer.id)
    waiting.delete(answer.id)
    w?.resolve(answer)
  })
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`MessageDifferential exited (${code}): ${stderr}`))
    waiting.clear()
  })
  return {
    /** `request` without id; int64 values must already be JSON numbers in `text`. */
    ask(requestText) {
      const id = nextId++
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        child.stdin.write(`{"id":${id},${requestText.slice(1)}\n`)
      })
    },
    close() {
      child.stdin.end()
      return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on('exit', () => resolve())))
    },
  }
}

/** The Java class Kafka generates for a message. */
export function javaClass(entry) {
  const { model, jar } = entry
  if (jar.file.startsWith('kafka-clients')) {
    const data = ['request', 'response', 'header'].includes(model.type) ? `${model.name}Data` : model.name
    return `org.apache.kafka.common.message.${data}`
  }
  const pkg = jar.file.startsWith('kafka-group-coordinator') ? 'group' : jar.file.startsWith('kafka-transaction-coordinator') ? 'transaction' : 'share'
  return `org.apache.kafka.coordinator.${pkg}.generated.${model.name}`
}

// ---------------------------------------------------------------------------------------------
// Random values

/** A small seeded PRNG (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    bytes: (n) => Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256))),
  }
}

const STRING_PIECES = ['a', 'b', 'z', '0', '-', '.', '_', ' ', 'é', 'ß', '中', '🦀', 'ол', '\u0000', '"', '\\']

function randomString(r) {
  const n = r.int(0, 10)
  let s = ''
  for (let i = 0; i < n; i++) s += STRING_PIECES[r.int(0, STRING_PIECES.length - 1)]
  return s
}

const INT_RANGES = { int8: [-128, 127], int16: [-32768, 32767], uint16: [0, 65535], int32: [-2147483648, 2147483647], uint32: [0, 4294967295] }

function randomInt(kind, r) {
  const [lo, hi] = INT_RANGES[kind]
  const pick = r.int(0, 4)
  if (pick === 0) return lo
  if (pick === 1) return hi
  if (pick === 2) return Math.max(lo, Math.min(hi, r.int(-2, 2)))
  return r.int(lo, hi)
}

function randomInt64(r) {
  switch (r.int(0, 4)) {
    case 0:
      return -(2n ** 63n)
    case 1:
      return 2n ** 63n - 1n
    case 2:
      return BigInt(r.int(-2, 2))
    default:
      return BigInt.asIntN(64, (BigInt(r.int(0, 0xffffffff)) << 32n) | BigInt(r.int(0, 0xffffffff)))
  }
}

function randomFloat(r) {
  const specials = [0, 1, -1.5, 5e-324, 1.7976931348623157e308, 0.1, -123456.789]
  return r.chance(0.5) ? specials[r.int(0, specials.length - 1)] : (r.next() - 0.5) * 10 ** r.int(-10, 10)
}

/** The default of `field` as a value of the generated types (mirrors the generator's defaultExpr). */
export function defaultValue(model, field) {
  const d = field.default
  const t = field.type
  if (d === 'null') return null
  switch (t.kind) {
    case 'bool':
      return d.toLowerCase() === 'true'
    case 'int64':
      return d === '' ? 0n : BigInt(d.startsWith('-') ? -BigInt(d.slice(1)) : BigInt(d))
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
      return d === '' ? 0 : Number(d.startsWith('-') ? -Number(d.slice(1)) : Number(d))
    case 'float64':
      return d === '' ? 0 : Number(d)
    case 'string':
      return d
    case 'uuid':
      return d === '' ? Buffer.alloc(16) : Buffer.from(d, 'base64url')
    case 'bytes':
      return Buffer.alloc(0)
    case 'records':
      return null
    case 'array':
      return []
    case 'struct':
      return structDefault(model, t.struct)
    default:
      throw new Error(t.kind)
  }
}

function structDefault(model, name) {
  const out = {}
  for (const f of model.structs.get(name).fields) out[f.name] = defaultValue(model, f)
  return out
}

/** `value` of `field` equals its default, as Kafka's generated equals() sees it. */
export function isDefault(model, field, value) {
  const d = defaultValue(model, field)
  return valuesEqual(model, field.type, value, d)
}

function valuesEqual(model, type, a, b) {
  if (a === null || b === null) return a === b
  switch (type.kind) {
    case 'uuid':
    case 'bytes':
    case 'records':
      return Buffer.compare(a, b) === 0
    case 'array':
      return a.length === b.length && a.every((x, i) => valuesEqual(model, type.element, x, b[i]))
    case 'struct':
      return model.structs.get(type.struct).fields.every((f) => valuesEqual(model, f.type, a[f.name], b[f.name]))
    default:
      return a === b
  }
}

function fieldMode(field, version) {
  if (!contains(field.versions, version)) return 'absent'
  if (contains(field.tagged, version)) return 'tagged'
  return 'regular'
}

function randomOf(model, field, type, version, r, depth, nullableHere) {
  if (nullableHere && r.chance(0.15)) return null
  switch (type.kind) {
    case 'bool':
      return r.chance(0.5)
    case 'int64':
      return randomInt64(r)
    case 'float64':
      return randomFloat(r)
    case 'string':
      return randomString(r)
    case 'uuid':
      return r.bytes(16)
    case 'bytes':
      return r.bytes(r.int(0, 8))
    case 'records':
      return r.bytes(r.int(0, 24))
    case 'array': {
      const n = depth > 3 ? 0 : r.int(0, 3)
      return Array.from({ length: n }, () => randomOf(model, field, type.element, version, r, depth + 1, false))
    }
    case 'struct':
      return randomStruct(model, type.struct, version, r, depth + 1)
    default:
      return randomInt(type.kind, r)
  }
}

/** A random value of struct `name` for `version`: fields the version lacks at their defaults. */
export function randomStruct(model, name, version, r, depth = 0) {
  const out = {}
  for (const f of model.structs.get(name).fields) {
    const mode = fieldMode(f, version)
    if (mode === 'absent' || (mode === 'tagged' && r.chance(0.4))) out[f.name] = defaultValue(model, f)
    else out[f.name] = randomOf(model, f, f.type, version, r, depth, contains(f.nullable, version))
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Kafka's JsonConverter form

const BIG = '\u0001int64:'
const FLOAT = '\u0001float64:'

/**
 * The JsonConverter form of a struct at `version`. `forJava`: int64 become JSON numbers (after
 * `stringify`) and records their bytes; otherwise int64 and uint32 are decimal strings and records
 * "" (as MessageDifferential.java answers).
 */
export function toKafkaJson(model, name, value, version, forJava) {
  const out = {}
  for (const f of model.structs.get(name).fields) {
    const mode = fieldMode(f, version)
    if (mode === 'absent') continue
    if (mode === 'tagged' && isDefault(model, f, value[f.name])) continue
    out[f.name] = jsonOf(model, f.type, value[f.name], version, forJava)
  }
  return out
}

function jsonOf(model, type, v, version, forJava) {
  if (v === null) return null
  switch (type.kind) {
    case 'int64':
      return forJava ? `${BIG}${v}` : String(v)
    case 'uint32':
      return forJava ? v : String(v)
    case 'float64':
      // Kafka's JsonConverter wants a floating point literal ("1.0", not "1").
      return forJava ? `${FLOAT}${Number.isInteger(v) ? v.toFixed(1) : String(v)}` : v
    case 'uuid':
      return v.toString('base64url')
    case 'bytes':
      return v.toString('base64')
    case 'records':
      return forJava ? v.toString('base64') : ''
    case 'array':
      return v.map((x) => jsonOf(model, type.element, x, version, forJava))
    case 'struct':
      return toKafkaJson(model, type.struct, v, version, forJava)
    default:
      return v
  }
}

/** JSON text in which the int64 markers of `toKafkaJson(..., true)` are bare numbers. */
export function stringify(json) {
  return JSON.stringify(json)
    .replace(/"\\u0001int64:(-?\d+)"/g, '$1')
    .replace(/"\\u0001float64:([-+.\deE]+)"/g, '$1')
}

// ---------------------------------------------------------------------------------------------
// The check

function deepEqual(a, b) {
  return JSON.stringify(a) === JSON.stringify(b) || isDeepStrictEqualJson(a, b)
}

function isDeepStrictEqualJson(a, b) {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Object.is(a, b)
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  return ka.every((k) => Object.hasOwn(b, k) && isDeepStrictEqualJson(a[k], b[k]))
}

/**
 * Runs `count` random messages of every version of `entry` through both sides. `codec` is the
 * generated MessageCodec, `Reader`/`Writer` ts/protocol's. Returns { checked, failures: [text] }.
 */
export async function checkMessage(entry, codec, io, kafka, { count, seed }) {
  const { model } = entry
  const cls = javaClass(entry)
  const failures = []
  let checked = 0
  const fail = (version, what, detail) => failures.push(`${model.name} v${version}: ${what}${detail ? `\n    ${detail}` : ''}`)
  const versions = []
  for (let v = model.valid.lo; v <= Math.min(model.valid.hi, OPEN); v++) versions.push(v)
  const tasks = []
  for (const version of versions) {
    for (let i = 0; i < count; i++) {
      const r = rng(seed ^ (version * 7919 + i * 104729 + hashName(model.name)))
      const value = randomStruct(model, model.name, version, r)
      tasks.push(checkOne(version, value, r))
    }
  }

  async function checkOne(version, value, r) {
    const expected = toKafkaJson(model, model.name, value, version, false)
    let ours
    try {
      ours = io.encode(codec, version, value)
    } catch (e) {
      fail(version, `ferrolog cannot encode values valid for the version: ${e.message}`)
      return
    }
    const fromJson = await kafka.ask(stringify({ class: cls, version, json: toKafkaJson(model, model.name, value, version, true) }))
    const fromBytes = await kafka.ask(JSON.stringify({ class: cls, version, bytes: ours.toString('base64') }))
    checked++
    if (fromJson.error) return fail(version, `Kafka cannot read the values: ${fromJson.error}`, JSON.stringify(expected))
    if (!deepEqual(fromJson.json, expected)) return fail(version, 'Kafka read other values than written', `${JSON.stringify(fromJson.json)}\n    ${JSON.stringify(expected)}`)
    const theirs = Buffer.from(fromJson.bytes, 'base64')
    if (!theirs.equals(ours)) return fail(version, 'the bytes differ', `kafka    ${theirs.toString('hex')}\n    ferrolog ${ours.toString('hex')}`)
    let decoded
    try {
      decoded = io.decode(codec, version, theirs)
    } catch (e) {
      return fail(version, `ferrolog cannot decode Kafka's bytes: ${e.message}`, theirs.toString('hex'))
    }
    if (!deepEqual(toKafkaJson(model, model.name, decoded, version, false), expected)) return fail(version, "ferrolog decoded other values from Kafka's bytes")
    if (!io.encode(codec, version, decoded).equals(theirs)) return fail(version, 'ferrolog re-encoded other bytes')
    if (fromBytes.error) return fail(version, `Kafka cannot read ferrolog's bytes: ${fromBytes.error}`, ours.toString('hex'))
    if (!deepEqual(fromBytes.json, expected)) return fail(version, "Kafka read other values from ferrolog's bytes")
    if (!Buffer.from(fromBytes.bytes, 'base64').equals(ours)) return fail(version, "Kafka re-encoded ferrolog's bytes differently")

    // Values of this version written at another: both refuse, or both write the same bytes.
    if (versions.length > 1) {
      const other = versions[r.int(0, versions.length - 1)]
      let oursOther = null
      let ourError = null
      try {
        oursOther = io.encode(codec, other, value)
      } catch (e) {
        ourError = e
      }
      const answer = await kafka.ask(stringify({ class: cls, version, writeVersion: other, json: toKafkaJson(model, model.name, value, version, true) }))
      checked++
      if (ourError !== null && ourError.code !== 'UNSUPPORTED_VERSION') return fail(other, `ferrolog threw ${ourError.message} (not UnsupportedVersionError)`)
      const kafkaRefused = answer.error !== undefined
      if (kafkaRefused !== (ourError !== null)) {
        return fail(other, `values of v${version}: ${kafkaRefused ? `Kafka refused (${answer.error}), ferrolog wrote` : `ferrolog refused (${ourError.message}), Kafka wrote`}`)
      }
      if (!kafkaRefused && !Buffer.from(answer.bytes, 'base64').equals(oursOther)) return fail(other, `values of v${version}: the bytes differ`)
    }
  }

  await Promise.all(tasks)
  return { checked, failures }
}

function hashName(name) {
  let h = 0
  for (const c of name) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0
  return h
}

/** The module of a generated codec, relative to ts/protocol/messages (or dist/ts/...). */
export function codecModule(entry) {
  return `${entry.folder === '' ? '' : `${entry.folder}/`}${kebab(entry.model.name)}`
}

export function codecExport(entry) {
  return `${entry.model.name[0].toLowerCase()}${entry.model.name.slice(1)}Codec`
}
