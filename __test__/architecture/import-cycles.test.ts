/**
 * No runtime import cycle in ts/: a module graph that loops makes load order decide which
 * bindings are still undefined when a module's top level runs. Type-only imports are fine (they
 * vanish at compile time), and the check sees exactly what compiles to an import.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { importCycles, runtimeImports } from '../helpers/import-graph.js'
import { tempDir } from '../helpers/tmp.js'

describe('the import graph of ts/', () => {
  it('has no runtime import cycle', () => {
    const graph = runtimeImports(join(__dirname, '../../ts'))
    expect(graph.size).toBeGreaterThan(100)
    expect(importCycles(graph)).toEqual([])
  })

  it('the check finds a cycle through a value import and ignores type-only ones', () => {
    const root = tempDir('import-graph-')
    mkdirSync(join(root, 'sub'))
    writeFileSync(join(root, 'a.ts'), "import { b } from './sub/b.js'\nexport const a = () => b\n")
    writeFileSync(join(root, 'sub/b.ts'), "import { a } from '../a.js'\nexport const b = () => a\n")
    writeFileSync(join(root, 'c.ts'), "import type { D } from './d.js'\nimport { unusedAsValue } from './d.js'\nexport type C = D | typeof unusedAsValue\nexport const c = 1\n")
    writeFileSync(join(root, 'd.ts'), "import { c } from './c.js'\nexport type D = number\nexport const unusedAsValue = c\n")
    writeFileSync(join(root, 'e.ts'), "export { a } from './a.js'\nimport './f.js'\n")
    writeFileSync(join(root, 'f.ts'), "export * from './e.js'\n")
    expect(importCycles(runtimeImports(root))).toEqual([
      ['a.ts', 'sub/b.ts'],
      ['e.ts', 'f.ts'],
    ])
  })
})
