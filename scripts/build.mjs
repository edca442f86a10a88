// Builds ferrolog from source: the Rust binding (cargo, through napi-rs's CLI when it is
// installed, so that the committed loader and .d.ts in ts/native are regenerated) and then the
// TypeScript (tsc into dist/). No prebuilt binary is ever downloaded. `npm install` in the git tree
// runs it through scripts/install.mjs; the packages of scripts/pack.mjs carry what it builds.
//
//   node scripts/build.mjs          both
//   node scripts/build.mjs native   the binding only
//   node scripts/build.mjs ts       the TypeScript only
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const nativeDir = join(root, 'ts', 'native')
const what = process.argv[2] ?? 'all'
const require = createRequire(import.meta.url)

function run(cmd, args) {
  execFileSync(cmd, args, { cwd: root, stdio: 'inherit' })
}

// A new file renamed into place, never rewritten in place: a running process that has the old
// .node loaded keeps its (unlinked) copy, where truncating and rewriting it would crash it.
function replaceFile(from, to) {
  const tmp = `${to}.${process.pid}.tmp`
  copyFileSync(from, tmp)
  renameSync(tmp, to)
}

function resolveBin(pkg, bin) {
  try {
    return join(dirname(require.resolve(`${pkg}/package.json`)), bin)
  } catch {
    return null
  }
}

function buildNative() {
  const napi = resolveBin('@napi-rs/cli', 'dist/cli.js')
  const profile = process.env.FERROLOG_DEBUG_BUILD ? [] : ['--release']
  if (napi && existsSync(napi)) {
    // Built aside, then renamed into ts/native (see replaceFile).
    const staging = join(root, 'target', 'napi-out')
    rmSync(staging, { recursive: true, force: true })
    mkdirSync(staging, { recursive: true })
    run(process.execPath, [
      napi,
      'build',
      '--platform',
      ...profile,
      '--manifest-path',
      'crates/binding/Cargo.toml',
      '--package-json-path',
      'package.json',
      '--output-dir',
      staging,
      '--js',
      'index.js',
      '--dts',
      'index.d.ts',
    ])
    for (const f of readdirSync(staging)) replaceFile(join(staging, f), join(nativeDir, f))
    return
  }
  // Without @napi-rs/cli (a git-URL install, where npm skips dev dependencies): plain cargo, then place the library where the
  // committed loader looks for it.
  run('cargo', ['build', ...profile, '-p', 'ferrolog-binding'])
  const built = join(root, 'target', profile.length ? 'release' : 'debug', 'libferrolog_binding.so')
  replaceFile(built, join(nativeDir, `ferrolog.${process.platform}-${process.arch}-gnu.node`))
}

function buildTs() {
  const tsc = resolveBin('typescript', 'bin/tsc')
  if (!tsc) {
    console.warn('typescript is not installed: keeping the shipped dist/')
    return
  }
  run(process.execPath, [tsc, '-p', 'tsconfig.json'])
  const out = join(root, 'dist', 'ts', 'native')
  mkdirSync(out, { recursive: true })
  for (const f of readdirSync(nativeDir)) {
    if (f.endsWith('.node') || f === 'index.js' || f === 'index.d.ts') replaceFile(join(nativeDir, f), join(out, f))
  }
}

if (what === 'all' || what === 'native') buildNative()
if (what === 'all' || what === 'ts') buildTs()
