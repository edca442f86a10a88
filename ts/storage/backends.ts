/** The two storage backends by name. */
import type { StorageBackend } from './types.js'
import { jsBackend } from './js/index.js'
import { nativeBackend } from './native-backend.js'

export type BackendName = 'native' | 'js'

export const BACKENDS: Readonly<Record<BackendName, StorageBackend>> = Object.freeze({
  native: nativeBackend,
  js: jsBackend,
})

export function backendNamed(name: BackendName): StorageBackend {
  const backend = BACKENDS[name]
  if (!backend) throw new Error(`unknown storage backend "${String(name)}" (native or js)`)
  return backend
}
