// Writes ts/protocol/messages: one TypeScript codec per Kafka message schema of the pinned jars
// (every request, response, header and data message of kafka-clients; the coordinators' log
// records), and api-message-type.ts, the ApiKeys with their two messages (Kafka's
// ApiMessageType). The output is straight-line code over ts/protocol's Reader and Writer, gated by
// version as Kafka's MessageDataGenerator gates its Java; nothing interprets a schema at run time.
//
//   node scripts/protocol/generate.mjs           (npm run generate:protocol)
//
// The rules it follows (MessageDataGenerator, FieldSpec in Kafka's generator module):
// - A field is regular in its versions minus its taggedVersions, tagged in its taggedVersions,
//   absent otherwise. Absent and tagged fields decode to their default.
// - Writing: a regular field is written; a tagged field is written when not at its default; an
//   absent field that is not ignorable must be at its default, else UnsupportedVersionError.
// - string and bytes use the compact form in the field's flexible versions (its own
//   flexibleVersions, else the message's); arrays likewise; a struct ends with tagged fields in
//   the message's flexible versions.
// - A nullable struct is prefixed by an int8 (-1 null, 1 present); tagged, by a varint (0 null).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { OPEN, intersect, kebab, loadSchemas, minusTagged } from './kafka-schemas.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const OUT = join(root, 'ts', 'protocol', 'messages')

// ---------------------------------------------------------------------------------------------
// Version conditions

/** A TypeScript condition that `version` (known to be in `ctx`) is in `range`: 'true', 'false' or an expression. */
function cond(range, ctx) {
  const r = intersect(range, ctx)
  if (r === null) return 'false'
  const parts = []
  if (r.lo > ctx.lo) parts.push(`version >= ${r.lo}`)
  if (r.hi < ctx.hi) parts.push(`version <= ${r.hi}`)
  return parts.length === 0 ? 'true' : parts.join(' && ')
}

/** `a ? b : c` folded when `a` is constant. */
function ternary(c, yes, no) {
  if (c === 'true') return yes
  if (c === 'false') return no
  return `(${c} ? ${yes} : ${no})`
}

/** Kafka's field ranges within the struct's versions `ctx`. */
function modes(field, ctx) {
  const present = intersect(field.versions, ctx)
  const tagged = intersect(field.tagged, ctx)
  const regular = present === null ? null : minusTagged(present, field.tagged)
  return { present, tagged, regular }
}

/** The versions in `ctx` outside `range`, as one range or two. */
function complement(range, ctx) {
  if (range === null) return [ctx]
  const out = []
  if (range.lo > ctx.lo) out.push({ lo: ctx.lo, hi: range.lo - 1 })
  if (range.hi < ctx.hi) out.push({ lo: range.hi + 1, hi: ctx.hi })
  return out
}

function condAny(ranges, ctx) {
  const cs = ranges.map((r) => cond(r, ctx)).filter((c) => c !== 'false')
  if (cs.includes('true')) return 'true'
  if (cs.length === 0) return 'false'
  return cs.map((c) => (cs.length > 1 ? `(${c})` : c)).join(' || ')
}

// ---------------------------------------------------------------------------------------------
// Types and defaults

const NUMERIC = new Set(['int8', 'int16', 'uint16', 'int32', 'uint32', 'float64'])

function canBeNull(field) {
  return field.nullable !== null
}

/** Struct names that hold a records field, directly or below: their types take `R`. */
function recordsStructs(model) {
  const holds = new Set()
  let changed = true
  while (changed) {
    changed = false
    for (const s of model.structs.values()) {
      if (holds.has(s.name)) continue
      for (const f of s.fields) {
        const t = f.type.kind === 'array' ? f.type.element : f.type
        if (t.kind === 'records' || (t.kind === 'struct' && holds.has(t.struct))) {
          holds.add(s.name)
          changed = true
          break
        }
      }
    }
  }
  return holds
}

function tsType(type, gen) {
  switch (type.kind) {
    case 'bool':
      return 'boolean'
    case 'int64':
      return 'bigint'
    case 'uuid':
    case 'bytes':
      return 'Buffer'
    case 'string':
      return 'string'
    case 'records':
      return gen.reading ? 'Buffer | null' : 'R'
    case 'struct':
      return gen.records.has(type.struct) && !gen.reading ? `${type.struct}<R>` : type.struct
    case 'array': {
      const e = tsType(type.element, gen)
      return /[ |]/.test(e) ? `Array<${e}>` : `${e}[]`
    }
    default:
      if (NUMERIC.has(type.kind)) return 'number'
      throw new Error(`type ${type.kind}`)
  }
}

function fieldType(field, gen) {
  const t = tsType(field.type, gen)
  // records carry their nullability in R (Buffer | null by default).
  return canBeNull(field) && field.type.kind !== 'records' ? `${t} | null` : t
}

function parseIntDefault(text) {
  const neg = text.startsWith('-')
  const body = neg ? text.slice(1) : text
  const v = body.startsWith('0x') ? BigInt(body) : BigInt(body)
  return neg ? -v : v
}

/** The default of a field as a TypeScript expression (a new value each time for arrays and structs). */
function defaultExpr(field, gen) {
  const d = field.default
  const t = field.type
  if (d === 'null') return 'null'
  switch (t.kind) {
    case 'bool':
      return d === '' ? 'false' : String(d.toLowerCase() === 'true')
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
      return d === '' ? '0' : String(parseIntDefault(d))
    case 'int64':
      return d === '' ? '0n' : `${parseIntDefault(d)}n`
    case 'float64':
      return d === '' ? '0' : String(Number(d))
    case 'string':
      return JSON.stringify(d)
    case 'uuid':
      if (d === '') return 'ZERO_UUID'
      return `Buffer.from(${JSON.stringify(Buffer.from(d, 'base64url').toString('hex'))}, 'hex')`
    case 'bytes':
      if (d !== '') throw new Error(`bytes default ${d}`)
      return 'EMPTY_BYTES'
    case 'records':
      return gen.reading ? 'null' : 'null as R'
    case 'array':
      return '[]'
    case 'struct':
      return `default${t.struct}()`
    default:
      throw new Error(`default of ${t.kind}`)
  }
}

/** An expression true when `expr` (the value of `field`) is not the field's default. */
function nonDefault(field, expr, gen) {
  const d = field.default
  const t = field.type
  if (d === 'null') return `${expr} !== null`
  switch (t.kind) {
    case 'bool':
      return d.toLowerCase() === 'true' ? `!${expr}` : expr
    case 'uuid':
      return `!uuidEquals(${expr}, ${defaultExpr(field, gen)})`
    case 'bytes':
    case 'array':
      return canBeNull(field) ? `(${expr} === null || ${expr}.length !== 0)` : `${expr}.length !== 0`
    case 'records':
      return `${expr} !== null`
    case 'struct':
      gen.needIsDefault.add(t.struct)
      return canBeNull(field) ? `(${expr} === null || !is${t.struct}Default(${expr}))` : `!is${t.struct}Default(${expr})`
    default:
      return `${expr} !== ${defaultExpr(field, gen)}`
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

function readPrimitive(kind) {
  switch (kind) {
    case 'bool':
      return 'r.bool()'
    case 'int8':
      return 'r.int8()'
    case 'int16':
      return 'r.int16()'
    case 'uint16':
      return 'r.uint16()'
    case 'int32':
      return 'r.int32()'
    case 'uint32':
      return 'r.uint32()'
    case 'int64':
      return 'r.int64()'
    case 'float64':
      return 'r.float64()'
    case 'uuid':
      return 'r.uuid()'
    default:
      throw new Error(kind)
  }
}

/** Read of a string/bytes value given the flexible and nullable conditions. */
function readVarLength(kind, flex, nullable) {
  const pick = (f, n) => {
    if (kind === 'string') return f ? (n ? 'r.compactNullableString()' : 'r.compactString()') : n ? 'r.nullableString()' : 'r.string()'
    return f ? (n ? 'r.compactNullableBytes()' : 'r.compactBytes()') : n ? 'r.nullableBytes()' : 'r.bytes()'
  }
  const byNull = (f) => (nullable === 'true' ? pick(f, true) : nullable === 'false' ? pick(f, false) : `(${nullable} ? ${pick(f, true)} : ${pick(f, false)})`)
  return ternary(flex, byNull(true), byNull(false))
}

/**
 * Lines that read `field` (regular, in versions `ctx`) into a new local `local`. `taggedForm`
 * reads the tagged encoding (always compact; a nullable struct behind a varint).
 */
function readFieldLines(field, local, ctx, gen, msg, taggedForm) {
  const t = field.type
  const flex = taggedForm ? 'true' : cond(field.flexible, ctx)
  const nullable = cond(field.nullable, ctx)
  const lines = []
  switch (t.kind) {
    case 'string':
    case 'bytes':
      lines.push(`const ${local} = ${readVarLength(t.kind, flex, nullable)}`)
      break
    case 'records':
      lines.push(`const ${local} = ${readVarLength('bytes', flex, nullable)}`)
      break
    case 'struct':
      if (nullable === 'false') lines.push(`const ${local} = read${t.struct}(r, version)`)
      else {
        const isNull = taggedForm ? 'r.unsignedVarint() <= 0' : 'r.int8() < 0'
        const read = `${isNull} ? null : read${t.struct}(r, version)`
        lines.push(`const ${local} = ${nullable === 'true' ? read : `${nullable} ? (${read}) : read${t.struct}(r, version)`}`)
      }
      break
    case 'array': {
      const n = `${local}Length`
      const e = t.element
      const elemType = tsType(e, gen)
      lines.push(`const ${n} = readArrayLength(r, ${flex})`)
      const typeDecl = nullable === 'false' ? `${elemType}[]` : `${elemType}[] | null`
      if (nullable === 'false') {
        lines.push(`if (${n} < 0) throw nullNotAllowed('${msg}', '${field.name}')`)
      } else if (nullable !== 'true') {
        lines.push(`if (${n} < 0 && !(${nullable})) throw nullNotAllowed('${msg}', '${field.name}')`)
      }
      lines.push(
        `const ${local}: ${typeDecl.replace(/^(.*)\[\]/, (m, x) => (/[ |]/.test(x) ? `Array<${x}>` : `${x}[]`))} = ${nullable === 'false' ? `new Array(${n})` : `${n} < 0 ? null : new Array(${n})`}`,
      )
      let elemRead
      if (e.kind === 'struct') elemRead = `read${e.struct}(r, version)`
      else if (e.kind === 'string' || e.kind === 'bytes') elemRead = readVarLength(e.kind, flex, 'false')
      else elemRead = readPrimitive(e.kind)
      const target = nullable === 'false' ? local : `${local}!`
      lines.push(`for (let i = 0; i < ${n}; i++) ${target}[i] = ${elemRead}`)
      break
    }
    default:
      lines.push(`const ${local} = ${readPrimitive(t.kind)}`)
  }
  return lines
}

/** A function's lines with its `version` parameter named `_version` when no line uses it (tsc's noUnusedParameters). */
function unusedVersion(lines) {
  if (lines.slice(1).some((l) => /\bversion\b/.test(l))) return lines
  return [lines[0].replace('version: number', '_version: number'), ...lines.slice(1)]
}

function genRead(struct, model, gen) {
  const ctx = gen.ctxOf(struct)
  const msg = model.name
  const flexible = intersect(model.flexible, ctx)
  const typeParams = ''
  const typeName = struct.name
  gen.reading = true
  const body = []
  const props = []
  for (const f of struct.fields) {
    const m = modes(f, ctx)
    const local = `_${f.name}`
    const c = cond(m.regular, ctx)
    if (c === 'false') {
      props.push(`${JSON.stringify(f.name)}: ${defaultExpr(f, gen)}`)
      continue
    }
    if (c === 'true') {
      body.push(...readFieldLines(f, local, ctx, gen, msg, false))
      props.push(`${JSON.stringify(f.name)}: ${local}`)
      continue
    }
    // Read only in some versions: read into a block, else the default.
    const inner = readFieldLines(f, `${local}Read`, intersect(m.regular, ctx), gen, msg, false)
    body.push(`let ${local}: ${fieldType(f, gen)}`)
    body.push(`if (${c}) {`, ...inner.map((l) => `  ${l}`), `  ${local} = ${local}Read`, `} else {`, `  ${local} = ${defaultExpr(f, gen)}`, `}`)
    props.push(`${JSON.stringify(f.name)}: ${local}`)
  }
  const lines = []
  lines.push(`export function read${struct.name}${typeParams}(r: Reader, version: number): ${typeName} {`)
  if (struct.name === model.name) lines.push(`  versionCheck('${msg}', version, ${model.valid.lo}, ${model.valid.hi})`)
  lines.push(...body.map((l) => `  ${l}`))
  lines.push(`  const _out: ${typeName} = {`, ...props.map((p) => `    ${p},`), '  }')
  const taggedFields = struct.fields.filter((f) => modes(f, ctx).tagged !== null)
  const fc = cond(flexible, ctx)
  if (fc !== 'false') {
    lines.push(`  if (${fc}) {`)
    lines.push(`    const _count = r.unsignedVarint()`)
    lines.push(`    for (let i = 0; i < _count; i++) {`)
    lines.push(`      const _tag = r.unsignedVarint()`)
    lines.push(`      const _end = taggedFieldEnd(r, _tag)`)
    if (taggedFields.length > 0) {
      lines.push(`      switch (_tag) {`)
      for (const f of taggedFields) {
        const m = modes(f, ctx)
        const tc = cond(m.tagged, ctx)
        const inner = readFieldLines(f, `_v`, intersect(m.tagged, ctx), gen, msg, true)
        lines.push(`        case ${f.tag}:`)
        lines.push(`          if (${tc}) {`)
        lines.push(...inner.map((l) => `            ${l}`))
        lines.push(`            _out.${f.name} = _v`)
        lines.push(`            endTaggedField(r, _tag, _end)`)
        lines.push(`          } else r.pos = _end`)
        lines.push(`          break`)
      }
      lines.push(`        default:`, `          r.pos = _end`, `      }`)
    } else {
      lines.push(`      r.pos = _end`)
    }
    lines.push(`    }`, `  }`)
  }
  lines.push(`  return _out`, `}`)
  gen.reading = false
  return unusedVersion(lines)
}

// ---------------------------------------------------------------------------------------------
// Writing

function writePrimitive(kind, expr) {
  switch (kind) {
    case 'bool':
      return `w.bool(${expr})`
    case 'int8':
      return `w.int8(${expr})`
    case 'int16':
      return `w.int16(${expr})`
    case 'uint16':
      return `w.uint16(${expr})`
    case 'int32':
      return `w.int32(${expr})`
    case 'uint32':
      return `w.uint32(${expr})`
    case 'int64':
      return `w.int64(${expr})`
    case 'float64':
      return `w.float64(${expr})`
    case 'uuid':
      return `w.uuid(${expr})`
    default:
      throw new Error(kind)
  }
}

function writeVarLength(kind, flex, expr) {
  const pick = (f) => (kind === 'string' ? (f ? `w.compactNullableString(${expr})` : `w.nullableString(${expr})`) : f ? `w.compactNullableBytes(${expr})` : `w.nullableBytes(${expr})`)
  if (flex === 'true') return pick(true)
  if (flex === 'false') return pick(false)
  return `if (${flex}) ${pick(true)}\nelse ${pick(false)}`
}

/** Lines that write `expr`, the value of `field`, in versions `ctx` (`w` is the writer). */
function writeFieldLines(field, expr, ctx, gen, msg, taggedForm) {
  const t = field.type
  const flex = taggedForm ? 'true' : cond(field.flexible, ctx)
  const nullable = cond(field.nullable, ctx)
  const lines = []
  const nullCheck = () => {
    if (canBeNull(field) && nullable !== 'true' && t.kind !== 'records') {
      lines.push(`if (${expr} === null${nullable === 'false' ? '' : ` && !(${nullable})`}) throw cannotCarryNull('${msg}', version, '${field.name}')`)
    }
  }
  switch (t.kind) {
    case 'string':
    case 'bytes':
      nullCheck()
      lines.push(...writeVarLength(t.kind, flex, expr).split('\n'))
      break
    case 'records': {
      lines.push(`{`, `  const _size = records.sizeOf(${expr})`)
      lines.push(`  ${flex === 'true' ? `w.unsignedVarint(_size + 1)` : flex === 'false' ? 'w.int32(_size)' : `writeArrayLength(w, ${flex}, _size)`}`)
      lines.push(`  if (_size >= 0) records.write(w, ${expr}, _size)`, `}`)
      break
    }
    case 'struct': {
      const call = `write${t.struct}(w, version, ${expr}${gen.records.has(t.struct) ? ', records' : ''})`
      if (!canBeNull(field)) {
        lines.push(call)
      } else {
        nullCheck()
        const nullMark = taggedForm ? 'w.unsignedVarint(0)' : 'w.int8(-1)'
        const presentMark = taggedForm ? 'w.unsignedVarint(1)' : 'w.int8(1)'
        if (nullable === 'false') lines.push(call)
        else if (nullable === 'true') lines.push(`if (${expr} === null) ${nullMark}`, `else {`, `  ${presentMark}`, `  ${call}`, `}`)
        else lines.push(`if (${nullable}) {`, `  if (${expr} === null) ${nullMark}`, `  else {`, `    ${presentMark}`, `    ${call}`, `  }`, `} else ${call}`)
      }
      break
    }
    case 'array': {
      nullCheck()
      const e = t.element
      let elemWrite
      if (e.kind === 'struct') elemWrite = (x) => `write${e.struct}(w, version, ${x}${gen.records.has(e.struct) ? ', records' : ''})`
      else if (e.kind === 'string' || e.kind === 'bytes') elemWrite = (x) => `{\n${writeVarLength(e.kind, flex, x)}\n}`
      else elemWrite = (x) => writePrimitive(e.kind, x)
      const a = `_a${gen.counter++}`
      lines.push(`{`, `  const ${a} = ${expr}`)
      if (canBeNull(field)) {
        lines.push(`  if (${a} === null) writeArrayLength(w, ${flex}, -1)`, `  else {`)
        lines.push(`    writeArrayLength(w, ${flex}, ${a}.length)`, `    for (const e of ${a}) ${elemWrite('e')}`, `  }`)
      } else {
        lines.push(`  writeArrayLength(w, ${flex}, ${a}.length)`, `  for (const e of ${a}) ${elemWrite('e')}`)
      }
      lines.push(`}`)
      break
    }
    default:
      lines.push(writePrimitive(t.kind, expr))
  }
  return lines
}

function genWrite(struct, model, gen) {
  const ctx = gen.ctxOf(struct)
  const msg = model.name
  const flexible = intersect(model.flexible, ctx)
  const hasRecords = gen.records.has(struct.name)
  const typeParams = hasRecords ? '<R>' : ''
  const typeName = hasRecords ? `${struct.name}<R>` : struct.name
  const lines = []
  lines.push(`export function write${struct.name}${typeParams}(w: Writer, version: number, v: ${typeName}${hasRecords ? ', records: RecordsWriter<R>' : ''}): void {`)
  if (struct.name === model.name) lines.push(`  versionCheck('${msg}', version, ${model.valid.lo}, ${model.valid.hi})`)
  const body = []
  for (const f of struct.fields) {
    const m = modes(f, ctx)
    const c = cond(m.regular, ctx)
    const expr = `v.${f.name}`
    if (c !== 'false') {
      const inner = writeFieldLines(f, expr, intersect(m.regular, ctx), gen, msg, false)
      if (c === 'true') body.push(...inner)
      else body.push(`if (${c}) {`, ...inner.map((l) => `  ${l}`), `}`)
    }
    if (!f.ignorable) {
      const absent = condAny(complement(m.present, ctx), ctx)
      if (absent !== 'false') {
        const check = `${nonDefault(f, expr, gen)}`
        body.push(`${absent === 'true' ? `if (${check})` : `if ((${absent}) && ${check})`} throw cannotCarry('${msg}', version, '${f.name}')`)
      }
    }
  }
  const taggedFields = struct.fields.filter((f) => modes(f, ctx).tagged !== null).sort((a, b) => a.tag - b.tag)
  const fc = cond(flexible, ctx)
  if (fc !== 'false') {
    const tl = []
    if (taggedFields.length === 0) {
      tl.push('w.unsignedVarint(0)')
    } else {
      tl.push('let _count = 0')
      for (const f of taggedFields) {
        const m = modes(f, ctx)
        const tc = cond(m.tagged, ctx)
        const check = nonDefault(f, `v.${f.name}`, gen)
        tl.push(`const _t${f.tag} = ${tc === 'true' ? check : `${tc} && ${check}`}`)
        tl.push(`if (_t${f.tag}) _count++`)
      }
      tl.push('w.unsignedVarint(_count)')
      for (const f of taggedFields) {
        const m = modes(f, ctx)
        const inner = writeFieldLines(f, `v.${f.name}`, intersect(m.tagged, ctx), gen, msg, true)
        tl.push(`if (_t${f.tag}) {`, `  const _outer = w`, `  {`, `    const w = taggedWriter()`, ...inner.map((l) => `    ${l}`), `    writeTaggedField(_outer, ${f.tag}, w)`, `  }`, `}`)
      }
    }
    if (fc === 'true') body.push(...tl)
    else body.push(`if (${fc}) {`, ...tl.map((l) => `  ${l}`), `}`)
  }
  lines.push(...body.map((l) => `  ${l}`), '}')
  return unusedVersion(lines)
}

// ---------------------------------------------------------------------------------------------
// Types, defaults, default checks

function jsdoc(text, indent) {
  const clean = text.replace(/\*\//g, '* /').trim()
  return clean === '' ? [] : [`${indent}/** ${clean} */`]
}

function versionsText(r) {
  if (r === null) return 'none'
  if (r.hi === OPEN) return `v${r.lo}+`
  return r.lo === r.hi ? `v${r.lo}` : `v${r.lo}-${r.hi}`
}

function genType(struct, gen) {
  const typeParams = gen.records.has(struct.name) ? '<R = Buffer | null>' : ''
  const lines = [`export interface ${struct.name}${typeParams} {`]
  for (const f of struct.fields) {
    const notes = [versionsText(f.versions)]
    if (f.tagged !== null) notes.push(`tag ${f.tag} ${versionsText(f.tagged)}`)
    if (f.nullable !== null) notes.push(`nullable ${versionsText(f.nullable)}`)
    if (f.ignorable) notes.push('ignorable')
    if (f.default !== '') notes.push(`default ${f.default}`)
    lines.push(...jsdoc(`${f.about} [${notes.join(', ')}]`, '  '))
    lines.push(`  ${f.name}: ${fieldType(f, gen)}`)
  }
  lines.push('}')
  return lines
}

function genDefault(struct, gen) {
  const hasRecords = gen.records.has(struct.name)
  const typeName = hasRecords ? `${struct.name}<R>` : struct.name
  const lines = [`export function default${struct.name}${hasRecords ? '<R = Buffer | null>' : ''}(): ${typeName} {`, '  return {']
  for (const f of struct.fields) lines.push(`    ${JSON.stringify(f.name)}: ${defaultExpr(f, gen)},`)
  lines.push('  }', '}')
  return lines
}

function genIsDefault(struct, gen) {
  const hasRecords = gen.records.has(struct.name)
  const lines = [`export function is${struct.name}Default${hasRecords ? '<R>' : ''}(v: ${hasRecords ? `${struct.name}<R>` : struct.name}): boolean {`]
  const checks = struct.fields.map((f) => nonDefault(f, `v.${f.name}`, gen))
  lines.push(`  return ${checks.length === 0 ? 'true' : checks.map((c) => `!(${c})`).join(' &&\n    ')}`)
  lines.push('}')
  return lines
}

// ---------------------------------------------------------------------------------------------
// One file per message

function genMessage(entry) {
  const { model, jar, folder } = entry
  const records = recordsStructs(model)
  const gen = {
    records,
    counter: 0,
    needIsDefault: new Set(),
    ctxOf: (struct) => intersect(struct.versions, model.valid) ?? model.valid,
  }
  const sections = []
  for (const s of model.structs.values()) {
    sections.push(genType(s, gen), genDefault(s, gen), genRead(s, model, gen), genWrite(s, model, gen))
  }
  // isDefault functions for the structs the default checks named (and, transitively, theirs).
  const done = new Set()
  while ([...gen.needIsDefault].some((n) => !done.has(n))) {
    for (const n of [...gen.needIsDefault]) {
      if (done.has(n)) continue
      done.add(n)
      sections.push(genIsDefault(model.structs.get(n), gen))
    }
  }
  const top = model.structs.get(model.name)
  const hasRecords = records.has(model.name)
  const camel = model.name[0].toLowerCase() + model.name.slice(1)
  const codecType = hasRecords ? `${model.name}<Buffer | null>` : model.name
  sections.push([
    `/** ${model.name}, v${model.valid.lo}-${model.valid.hi}${model.flexible ? `, flexible from v${model.flexible.lo}` : ''}. */`,
    `export const ${camel}Codec: MessageCodec<${codecType}> = {`,
    `  name: '${model.name}',`,
    `  type: '${model.type}',`,
    `  apiKey: ${model.apiKey ?? -1},`,
    `  lowestVersion: ${model.valid.lo},`,
    `  highestVersion: ${model.valid.hi},`,
    `  flexibleFrom: ${model.flexible ? model.flexible.lo : 'Infinity'},`,
    `  read: read${model.name},`,
    `  write: ${hasRecords ? `(w, version, value) => write${model.name}(w, version, value, BUFFER_RECORDS)` : `write${model.name}`},`,
    `  defaults: default${model.name},`,
    `}`,
  ])
  let code = sections.map((s) => s.join('\n')).join('\n\n')
  const up = folder === '' ? '..' : '../..'
  const runtime = [
    'MessageCodec',
    'versionCheck',
    'readArrayLength',
    'writeArrayLength',
    'nullNotAllowed',
    'cannotCarry',
    'cannotCarryNull',
    'taggedFieldEnd',
    'endTaggedField',
    'writeTaggedField',
    'taggedWriter',
    'ZERO_UUID',
    'EMPTY_BYTES',
    'uuidEquals',
    'BUFFER_RECORDS',
    'RecordsWriter',
  ]
  const used = runtime.filter((n) => new RegExp(`\\b${n}\\b`).test(code))
  const typeOnly = new Set(['MessageCodec', 'RecordsWriter'])
  const header = [
    `// Generated by scripts/protocol/generate.mjs from ${model.source} (Apache Kafka ${jar.version}).`,
    '// Do not edit: change the generator and run `npm run generate:protocol`.',
    `// ${model.type} ${model.name}${model.apiKey !== null ? ` (key ${model.apiKey})` : ''}: structs ${[...model.structs.keys()].join(', ')}.`,
    '/* eslint-disable */',
    `import type { Reader } from '${up}/reader.js'`,
    `import type { Writer } from '${up}/writer.js'`,
    `import { ${used.map((n) => (typeOnly.has(n) ? `type ${n}` : n)).join(', ')} } from '${up}/message-codec.js'`,
  ]
  code = `${header.join('\n')}\n\n${code}\n`
  void top
  return code
}

// ---------------------------------------------------------------------------------------------
// ApiMessageType

function genApiMessageTypes(entries) {
  const requests = new Map()
  const responses = new Map()
  for (const { model } of entries) {
    if (model.type === 'request') requests.set(model.apiKey, model)
    if (model.type === 'response') responses.set(model.apiKey, model)
  }
  const keys = [...requests.keys()].sort((a, b) => a - b)
  const imports = []
  const rows = []
  for (const k of keys) {
    const req = requests.get(k)
    const res = responses.get(k)
    if (res === undefined) throw new Error(`no response for ${req.name}`)
    const name = req.name.replace(/Request$/, '')
    const rc = `${req.name[0].toLowerCase()}${req.name.slice(1)}Codec`
    const sc = `${res.name[0].toLowerCase()}${res.name.slice(1)}Codec`
    imports.push(`import { ${rc} } from './${kebab(req.name)}.js'`, `import { ${sc} } from './${kebab(res.name)}.js'`)
    const reqFlex = req.flexible ? req.flexible.lo : 'Infinity'
    const resFlex = res.flexible ? res.flexible.lo : 'Infinity'
    // Kafka's ApiMessageType: header v2/v1 for flexible versions; ControlledShutdown v0 has request
    // header v0; an ApiVersions response always has header v0 (a client reads it before it knows
    // what the broker supports).
    const reqHeader = k === 7 ? `(v) => (v >= ${reqFlex} ? 2 : v === 0 ? 0 : 1)` : `(v) => (v >= ${reqFlex} ? 2 : 1)`
    const resHeader = k === 18 ? '() => 0' : `(v) => (v >= ${resFlex} ? 1 : 0)`
    rows.push(
      `  {`,
      `    apiKey: ${k},`,
      `    name: '${name}',`,
      `    lowestVersion: ${req.valid.lo},`,
      `    highestVersion: ${req.valid.hi},`,
      `    latestVersionUnstable: ${req.latestVersionUnstable},`,
      `    listeners: ${JSON.stringify(req.listeners)},`,
      `    request: ${rc},`,
      `    response: ${sc},`,
      `    requestHeaderVersion: ${reqHeader},`,
      `    responseHeaderVersion: ${resHeader},`,
      `  },`,
    )
  }
  return [
    '// Generated by scripts/protocol/generate.mjs from the request and response schemas of kafka-clients.',
    '// Do not edit: change the generator and run `npm run generate:protocol`.',
    '/* eslint-disable */',
    "import type { ApiMessageType } from '../message-codec.js'",
    ...imports,
    '',
    `/** Every ApiKey Kafka defines (${keys.length}), by key: the codecs, not what the broker serves. */`,
    'export const API_MESSAGE_TYPES: readonly ApiMessageType<any, any>[] = [',
    ...rows,
    ']',
    '',
    '/** The ApiMessageType of `apiKey`, or undefined. */',
    'export function apiMessageType(apiKey: number): ApiMessageType<any, any> | undefined {',
    '  return BY_KEY.get(apiKey)',
    '}',
    '',
    'const BY_KEY = new Map(API_MESSAGE_TYPES.map((t) => [t.apiKey, t]))',
    '',
  ].join('\n')
}

// ---------------------------------------------------------------------------------------------

export function generate() {
  // Specs with validVersions "none" (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown:
  // removed in Kafka 4.0) define nothing to read or write.
  const entries = loadSchemas().filter((e) => e.model.valid !== null)
  rmSync(OUT, { recursive: true, force: true })
  mkdirSync(join(OUT, 'coordinator'), { recursive: true })
  for (const e of entries) {
    writeFileSync(join(OUT, e.folder, `${kebab(e.model.name)}.ts`), genMessage(e))
  }
  writeFileSync(join(OUT, 'api-message-type.ts'), genApiMessageTypes(entries))
  const n = readdirSync(OUT).length + readdirSync(join(OUT, 'coordinator')).length
  return { entries, files: n }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { entries, files } = generate()
  console.log(`generated ${files} files in ts/protocol/messages from ${entries.length} schemas`)
}
