// Writes what the config table (ts/config) gives into the Rust engine's config and the docs:
// crates/storage/src/config/generated.rs and the generated section of docs/configs.md.
// Reads the compiled table from dist/ (run after `node scripts/build.mjs ts`).
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { rustLogConfig, withConfigDocs, RUST_CONFIG_FILE, CONFIG_DOCS_FILE } = await import(join(root, 'dist/ts/config/generate.js'))

writeFileSync(join(root, RUST_CONFIG_FILE), rustLogConfig())
const docs = join(root, CONFIG_DOCS_FILE)
writeFileSync(docs, withConfigDocs(readFileSync(docs, 'utf8')))
console.log(`wrote ${RUST_CONFIG_FILE} and ${CONFIG_DOCS_FILE}`)
