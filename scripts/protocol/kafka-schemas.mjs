// Apache Kafka's message schemas (`common/message/*.json`), read from the jars tools/kafka pins:
// kafka-clients for the requests, responses, headers and data messages, and the group,
// transaction and share coordinator jars for the records the coordinators keep in their logs.
// They are read here, at generation (and test) time, and never copied into the repository.
//
// The JSON files carry `//` comments; `stripComments` removes them outside strings. A spec is
// turned into a small model (versions as ranges, field names in camelCase, the struct each
// struct-typed field names) that the generator and the differential test share.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The jars whose `common/message` schemas ferrolog generates code from, and where it goes. */
export const SCHEMA_JARS = [
  { artifact: 'kafka-clients', folder: '' },
  { artifact: 'kafka-group-coordinator', folder: 'coordinator' },
  { artifact: 'kafka-transaction-coordinator', folder: 'coordinator' },
  { artifact: 'kafka-share-coordinator', folder: 'coordinator' },
]

/** The highest version a "N+" range reaches, as in Kafka's Versions (Short.MAX_VALUE). */
export const OPEN = 32767

/** tools/kafka/.jars, or KAFKA_JARS_DIR. */
export function jarsDir() {
  return process.env.KAFKA_JARS_DIR ?? join(root, 'tools', 'kafka', '.jars')
}

/** The path of the pinned jar of `artifact` (exactly one version is expected). */
export function findJar(artifact, dir = jarsDir()) {
  const re = new RegExp(`^${artifact}-(\\d+\\.\\d+\\.\\d+[^/]*)\\.jar$`)
  const found = existsSync(dir) ? readdirSync(dir).filter((f) => re.test(f) && !f.includes('-test')) : []
  if (found.length !== 1) {
    throw new Error(`expected one ${artifact}-<version>.jar in ${dir}, found ${found.length}: run tools/kafka/fetch-jars.sh`)
  }
  return { path: join(dir, found[0]), file: found[0], version: re.exec(found[0])[1] }
}

function has(command) {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Unpacks a jar's common/message into `into`, with unzip (.ci/run installs it) or the JDK's jar. */
function unpack(jarPath, into) {
  mkdirSync(into, { recursive: true })
  if (has('unzip')) execFileSync('unzip', ['-q', '-o', jarPath, 'common/message/*', '-d', into])
  else if (has('jar')) execFileSync('jar', ['xf', jarPath, 'common/message'], { cwd: into })
  else throw new Error("reading the schemas in Kafka's jars needs unzip (apt-get install unzip) or a JDK's jar")
}

/** Removes `//` comments (to the end of the line) outside JSON strings. */
export function stripComments(text) {
  let out = ''
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      out += c
      if (c === '\\') out += text[++i]
      else if (c === '"') inString = false
    } else if (c === '"') {
      inString = true
      out += c
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++
      out += '\n'
    } else {
      out += c
    }
  }
  return out
}

/** Kafka's Versions: "none", "N", "N-M", "N+"; null for none. */
export function parseVersions(text, fallback) {
  if (text === undefined || text === null) {
    if (fallback === undefined) throw new Error('versions missing')
    return fallback
  }
  const s = String(text).trim()
  if (s === 'none') return null
  let m
  if ((m = /^(\d+)\+$/.exec(s))) return { lo: Number(m[1]), hi: OPEN }
  if ((m = /^(\d+)-(\d+)$/.exec(s))) return { lo: Number(m[1]), hi: Number(m[2]) }
  if ((m = /^(\d+)$/.exec(s))) return { lo: Number(m[1]), hi: Number(m[1]) }
  throw new Error(`bad versions "${s}"`)
}

export function intersect(a, b) {
  if (a === null || b === null) return null
  const lo = Math.max(a.lo, b.lo)
  const hi = Math.min(a.hi, b.hi)
  return lo <= hi ? { lo, hi } : null
}

export function contains(range, v) {
  return range !== null && v >= range.lo && v <= range.hi
}

/** `range` minus the open-ended `tagged` range (Kafka requires taggedVersions to be "N+"). */
export function minusTagged(range, tagged) {
  if (tagged === null) return range
  return intersect(range, { lo: 0, hi: tagged.lo - 1 })
}

const lowerFirst = (s) => s[0].toLowerCase() + s.slice(1)

/** "FetchRequest" -> "fetch-request". */
export function kebab(name) {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase()
}

const PRIMITIVES = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'uuid', 'string', 'bytes', 'records'])

function parseType(text) {
  if (text.startsWith('[]')) return { kind: 'array', element: parseType(text.slice(2)) }
  if (PRIMITIVES.has(text)) return { kind: text }
  if (/^[A-Z][A-Za-z0-9]*$/.test(text)) return { kind: 'struct', struct: text }
  throw new Error(`unknown type ${text}`)
}

/**
 * The model of one spec:
 *   { name, type, apiKey, valid, flexible, latestVersionUnstable, listeners, structs, source }
 * `structs` maps each struct's name to { name, versions, fields }, the message itself first.
 * A field: { name (camelCase), kafkaName, type, versions, tagged (range|null), tag, nullable,
 * ignorable, default (the schema's string, '' when absent), flexible (its own flexibleVersions or
 * the message's), about }.
 */
export function modelOf(spec, source) {
  const valid = parseVersions(spec.validVersions)
  const flexible = parseVersions(spec.flexibleVersions ?? 'none')
  const structs = new Map()
  const addStruct = (name, versions, fields) => {
    if (structs.has(name)) throw new Error(`${spec.name}: struct ${name} defined twice`)
    const struct = { name, versions, fields: [] }
    structs.set(name, struct)
    struct.fields = fields.map((f) => fieldOf(f))
    return struct
  }
  const fieldOf = (f) => {
    const tagged = parseVersions(f.taggedVersions ?? 'none')
    const versions = parseVersions(f.versions, tagged ?? undefined)
    const type = parseType(f.type)
    const field = {
      name: lowerFirst(f.name),
      kafkaName: f.name,
      type,
      versions,
      tagged,
      tag: f.tag ?? null,
      nullable: parseVersions(f.nullableVersions ?? 'none'),
      ignorable: f.ignorable === true,
      // As Kafka's FieldSpec (a Java String bound by Jackson): a JSON null default is no default
      // (""), not "null" (ConsumerGroupCurrentMemberAssignmentValue's AssignmentEpochs).
      default: f.default === undefined || f.default === null ? '' : String(f.default),
      flexible: f.flexibleVersions !== undefined ? parseVersions(f.flexibleVersions) : flexible,
      about: f.about ?? '',
    }
    const structName = type.kind === 'struct' ? type.struct : type.kind === 'array' && type.element.kind === 'struct' ? type.element.struct : null
    if (structName !== null && f.fields !== undefined) addStruct(structName, versions, f.fields)
    return field
  }
  addStruct(spec.name, valid, spec.fields ?? [])
  for (const c of spec.commonStructs ?? []) addStruct(c.name, parseVersions(c.versions ?? '0+'), c.fields)
  return {
    name: spec.name,
    type: spec.type,
    apiKey: spec.apiKey ?? null,
    valid,
    flexible,
    latestVersionUnstable: spec.latestVersionUnstable === true,
    listeners: spec.listeners ?? [],
    structs,
    source,
  }
}

/**
 * Every spec of the pinned jars: [{ model, jar, folder }], sorted by folder then name. The jars are
 * unpacked into a temporary directory that is removed afterwards.
 */
export function loadSchemas(dir = jarsDir()) {
  const out = []
  const tmp = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-schemas-'))
  try {
    for (const { artifact, folder } of SCHEMA_JARS) {
      const jar = findJar(artifact, dir)
      const into = join(tmp, artifact)
      unpack(jar.path, into)
      const msgDir = join(into, 'common', 'message')
      for (const file of readdirSync(msgDir)
        .filter((f) => f.endsWith('.json'))
        .sort()) {
        const spec = JSON.parse(stripComments(readFileSync(join(msgDir, file), 'utf8')))
        out.push({ model: modelOf(spec, `common/message/${file} in ${jar.file}`), jar, folder })
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  out.sort((a, b) => a.folder.localeCompare(b.folder) || a.model.name.localeCompare(b.model.name))
  return out
}
