/**
 * The files the config table writes (npm run generate:configs) are what the table gives: the
 * Rust engine's defaults and ranges, whose `LogConfig::default()` is built from them (so the
 * Rust defaults cannot disagree with the table without this test failing), and the config list
 * of docs/configs.md.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { configDocs, CONFIG_DOCS_FILE, rustLogConfig, RUST_CONFIG_FILE, withConfigDocs } from '../../ts/config/generate.js'
import { BROKER_CONFIG_KEYS } from '../../ts/config/broker-configs.js'
import { DEFAULT_LOG_CONFIG, LOG_CONFIG_KEYS, TOPIC_CONFIG_KEYS } from '../../ts/config/topic-configs.js'

const root = join(__dirname, '../..')
const read = (file: string) => readFileSync(join(root, file), 'utf8')

describe('files generated from the config table', () => {
  it('crates/storage/src/config/generated.rs is what the table gives (run npm run generate:configs)', () => {
    expect(read(RUST_CONFIG_FILE)).toBe(rustLogConfig())
  })

  it("the Rust defaults are the table's: each key the Rust engine reads has its default there", () => {
    const rust = read(RUST_CONFIG_FILE)
    for (const k of Object.values(LOG_CONFIG_KEYS)) {
      if (k.rust === null) continue
      const value = k.rust.rust ? k.rust.rust(k.default as never) : String(k.default)
      expect(rust).toContain(`pub const DEFAULT_${k.rust.field.toUpperCase()}: ${k.rust.type} = ${value};`)
      expect(rust).toContain(`            ${k.rust.field}: DEFAULT_${k.rust.field.toUpperCase()},`)
    }
    expect(DEFAULT_LOG_CONFIG.indexIntervalBytes).toBe(4096)
  })

  it('docs/configs.md lists every key with its type, default and update mode (run npm run generate:configs)', () => {
    const docs = read(CONFIG_DOCS_FILE)
    expect(docs).toBe(withConfigDocs(docs))
    expect(docs).toContain(configDocs())
    for (const k of TOPIC_CONFIG_KEYS) expect(docs).toContain(`| \`${k.name}\` | ${k.value.type} |`)
    for (const k of BROKER_CONFIG_KEYS) expect(docs).toContain(`| \`${k.name}\` | ${k.value.type} |`)
    expect(docs).toContain('| `log.index.interval.bytes` | INT | `4096` | [0,...] | cluster-wide |')
  })
})
