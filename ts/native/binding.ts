/**
 * The native binding, loaded on first use instead of at import: the pure-TypeScript engine (the
 * twin, ts/storage/js) and copy transfer serve without it, so `import 'ferrolog'`, the CLI and
 * a broker on the `js` backend work where the `.node` file is missing or fails to load (another
 * platform, a build without Rust).
 *
 * Every runtime use of the binding goes through `loadNative()` (null without it) or
 * `requireNative(what)` (throws `NativeUnavailableError`, code NATIVE_UNAVAILABLE, naming what
 * needed it and why the binding did not load). Types come from ./index.js with `import type`,
 * which loads nothing.
 *
 * `FERROLOG_NATIVE=0` in the environment hides the binding, as if it were absent: tests use it,
 * and so can anyone who wants the TypeScript engine throughout.
 *
 * Where the `.node` file comes from (napi-rs's generated loader, ./index.js, tries them in this
 * order): `ferrolog.<platform>.node` beside the loader, which `node scripts/build.mjs` puts there
 * in a git checkout (built from source); else the platform package `ferrolog-<platform>` (an
 * optionalDependency of the published package, npm/<platform>/ here; scripts/pack.mjs packs it).
 * `nativeOrigin()` says which one loaded.
 */
import { existsSync, readFileSync } from 'node:fs'
import { basename, dirname, join, sep } from 'node:path'
import type * as Binding from './index.js'

export type NativeBinding = typeof Binding

/** Which storage engine and transfer a process without a choice of its own gets. */
export type EngineName = 'native' | 'js'

let loaded: { binding: NativeBinding | null; error: Error | null } | undefined

function load(): { binding: NativeBinding | null; error: Error | null } {
  if (process.env.FERROLOG_NATIVE === '0') return { binding: null, error: new Error('hidden by FERROLOG_NATIVE=0') }
  try {
    // A CommonJS require, so that the load happens here and only once it is asked for.
    return { binding: require('./index.js') as NativeBinding, error: null }
  } catch (err) {
    return { binding: null, error: err instanceof Error ? err : new Error(String(err)) }
  }
}

/** The binding, or null when it cannot load (the reason: `nativeLoadError()`). Loaded once. */
export function loadNative(): NativeBinding | null {
  loaded ??= load()
  return loaded.binding
}

/** Why the binding did not load (its first line), or null when it did. */
export function nativeLoadError(): string | null {
  loadNative()
  const error = loaded!.error
  return error === null ? null : error.message.split('\n')[0]!
}

/**
 * Which `.node` file the loaded binding is: `ferrolog-linux-x64-gnu 0.1.0 (platform package)`
 * or `ferrolog.linux-x64-gnu.node (built from source)`, or null without the binding. Found by
 * identity in the module cache: the loader exports the object the `.node` module loaded as.
 */
export function nativeOrigin(): string | null {
  const binding = loadNative()
  if (binding === null) return null
  const cache = require.cache
  const file = Object.keys(cache).find((key) => key.endsWith('.node') && cache[key]?.exports === binding)
  if (file === undefined) return 'unknown file'
  const dir = dirname(file)
  // A platform package: node_modules/ferrolog-<platform>/ferrolog.<platform>.node.
  if (dir.split(sep).at(-2) === 'node_modules' && basename(dir).startsWith('ferrolog-')) {
    const manifest = join(dir, 'package.json')
    const version = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version : undefined
    return `${basename(dir)} ${version ?? '?'} (platform package)`
  }
  if (dir === __dirname) return `${basename(file)} (built from source)`
  return file
}

/** `native` when the binding loads, else `js`: the default backend, and what the version line names. */
export function defaultEngine(): EngineName {
  return loadNative() ? 'native' : 'js'
}

export class NativeUnavailableError extends Error {
  readonly code = 'NATIVE_UNAVAILABLE' as const
  constructor(what: string, cause: string) {
    super(`${what} needs the native binding, which is not available (${cause}); use the js backend and transfer.mode=copy`)
    this.name = 'NativeUnavailableError'
  }
}

/** The binding, or a NativeUnavailableError saying that `what` needs it and why it did not load. */
export function requireNative(what: string): NativeBinding {
  const binding = loadNative()
  if (binding === null) throw new NativeUnavailableError(what, nativeLoadError()!)
  return binding
}
