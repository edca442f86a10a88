/**
 * What the config table writes into other files: the Rust engine's log defaults and ranges
 * (crates/storage/src/config/generated.rs) and the config list of docs/configs.md. Run
 * `npm run generate:configs` (scripts/generate-configs.mjs) after changing a key; a test
 * (__test__/config/generated-files.test.ts) fails while a written file differs from what the
 * table gives.
 */
import { BROKER_CONFIG_KEYS } from './broker-configs.js'
import { LOG_CONFIG_KEYS, TOPIC_CONFIG_KEYS, type TopicConfigKey } from './topic-configs.js'

export const RUST_CONFIG_FILE = 'crates/storage/src/config/generated.rs'
export const CONFIG_DOCS_FILE = 'docs/configs.md'
export const DOCS_BEGIN = '<!-- generated from ts/config by scripts/generate-configs.mjs: begin -->'
export const DOCS_END = '<!-- generated: end -->'

/** The smallest value a whole-number validator allows (`[14,...]` -> 14), or null. */
function smallest(valid: string): number | null {
  const m = /^\[(-?\d+),\.\.\./.exec(valid)
  return m ? Number(m[1]) : null
}

/** crates/storage/src/config/generated.rs: `LogConfig::default()` and the ranges `validate` checks. */
export function rustLogConfig(): string {
  const keys = Object.values(LOG_CONFIG_KEYS) as TopicConfigKey<unknown>[]
  const rust = keys.filter((k) => k.rust !== null)
  const upper = (k: TopicConfigKey<unknown>) => k.rust!.field.toUpperCase()
  const out: string[] = [
    '//! Generated from ts/config/topic-configs.ts by `npm run generate:configs`: do not edit.',
    "//! The defaults (Kafka's) and the smallest values of the log settings the Rust engine",
    '//! reads; __test__/config/generated-files.test.ts fails when this file and the table differ.',
    'use super::{LogConfig, TimestampType};',
    'use crate::error::{Result, StorageError};',
    '',
  ]
  for (const k of rust) {
    const r = k.rust!
    const value = r.rust ? r.rust(k.default) : String(k.default)
    out.push(`/// ${k.name}: ${k.doc}`, `pub const DEFAULT_${upper(k)}: ${r.type} = ${value};`)
    const min = smallest(k.value.valid)
    if (min !== null) out.push(`/// The smallest ${k.name}.`, `pub const MIN_${upper(k)}: ${r.type} = ${min};`)
  }
  out.push('', 'impl Default for LogConfig {', '    fn default() -> LogConfig {', '        LogConfig {')
  for (const k of rust) out.push(`            ${k.rust!.field}: DEFAULT_${upper(k)},`)
  out.push('        }', '    }', '}', '')
  out.push('impl LogConfig {', "    /// Checks the ranges of the config table (Kafka's validators, ts/config/topic-configs.ts).", '    pub fn validate(&self) -> Result<()> {')
  for (const k of rust) {
    const min = smallest(k.value.valid)
    if (min === null) continue
    const f = k.rust!.field
    out.push(
      `        if self.${f} < MIN_${upper(k)} {`,
      `            return Err(StorageError::InvalidArgument(format!(`,
      `                "${k.name} = {}: must be >= {}",`,
      `                self.${f}, MIN_${upper(k)}`,
      '            )));',
      '        }',
    )
  }
  out.push('        Ok(())', '    }', '}', '')
  return out.join('\n')
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|')
}

/** The generated section of docs/configs.md: every topic and broker key with its type, default, validator and update mode. */
export function configDocs(): string {
  const out: string[] = [DOCS_BEGIN, '', '### Topic configs', '', '| Name | Type | Default | Valid values | Broker default | Description |', '| --- | --- | --- | --- | --- | --- |']
  for (const k of TOPIC_CONFIG_KEYS) {
    const note = k.differs ? ` ferrolog: ${k.differs}.` : ''
    out.push(`| \`${k.name}\` | ${k.value.type} | \`${cell(k.value.format(k.default))}\` | ${cell(k.value.valid)} | \`${k.brokerName}\` | ${cell(k.doc + note)} |`)
  }
  out.push('', '### Broker configs', '', '| Name | Type | Default | Valid values | Dynamic | Description |', '| --- | --- | --- | --- | --- | --- |')
  for (const k of BROKER_CONFIG_KEYS) {
    const shown = k.default === null ? '' : k.value.format(k.default)
    const notes = [
      k.ferrologOnly ? " ferrolog's own." : '',
      k.internal ? " Internal in Kafka (not in Kafka's docs; DescribeConfigs lists it only when set)." : '',
      k.differs ? ` ferrolog: ${k.differs}.` : '',
      k.synonyms ? ` Also read: ${k.synonyms.map((s) => `\`${s.name}\``).join(', ')}.` : '',
    ].join('')
    out.push(`| \`${k.name}\` | ${k.value.type} | ${shown === '' ? 'none' : `\`${cell(shown)}\``} | ${cell(k.value.valid)} | ${k.dynamic} | ${cell(k.doc + notes)} |`)
  }
  out.push('', DOCS_END)
  return out.join('\n')
}

/** docs/configs.md with its generated section replaced by `configDocs()`. */
export function withConfigDocs(markdown: string): string {
  const begin = markdown.indexOf(DOCS_BEGIN)
  const end = markdown.indexOf(DOCS_END)
  if (begin < 0 || end < begin) throw new Error(`${CONFIG_DOCS_FILE} has no generated section (${DOCS_BEGIN} ... ${DOCS_END})`)
  return markdown.slice(0, begin) + configDocs() + markdown.slice(end + DOCS_END.length)
}
