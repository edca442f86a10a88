// Module hooks for scripts/ts-worker.mjs: a relative `.js` import that does not exist resolves
// to its `.ts` source (the sources import each other as `.js`, as tsc wants), and `.ts` files
// load as ES modules through esbuild's transform (types stripped, nothing bundled).
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { transform } from 'esbuild'

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context)
  } catch (err) {
    if (specifier.endsWith('.js') && (specifier.startsWith('.') || specifier.startsWith('file:'))) {
      return next(`${specifier.slice(0, -3)}.ts`, context)
    }
    throw err
  }
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context)
  const file = fileURLToPath(url)
  const { code } = await transform(await readFile(file, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20', sourcefile: file, sourcemap: 'inline' })
  return { format: 'module', source: code, shortCircuit: true }
}
