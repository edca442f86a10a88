// npm's `install` hook of the git tree. In a git checkout (the Rust sources are here) it builds
// everything from source, as `npm install` and `npm ci` always have (.ci/run relies on it). Where
// the Rust sources are not (a tarball made with a plain `npm pack`, which ships dist/ only) it
// builds nothing: the binding is the platform package npm installed (ferrolog-<platform>), or
// the TypeScript engine serves. The packages scripts/pack.mjs makes carry no install hook at all.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

if (existsSync(join(root, 'crates', 'binding', 'Cargo.toml')) && existsSync(join(root, 'scripts', 'build.mjs'))) {
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' })
}
