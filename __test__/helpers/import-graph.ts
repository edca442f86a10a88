/**
 * The runtime import graph of a TypeScript source tree: each file compiled alone (TypeScript's
 * transpileModule, as tsc emits it), so imports used only as types, `import type` and
 * `export type` are gone, and what is left is what Node loads. Cycles are the graph's strongly
 * connected components of more than one file (or a file importing itself).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

const RELATIVE_SPECIFIER = /(?:^|[\s;])(?:import|export)\s*(?:[^'";]*?\sfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]/g

function sourceFiles(root: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(root)) {
    const path = join(root, name)
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path))
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path)
  }
  return out
}

/** File -> the files of `root` it loads at run time (paths relative to `root`). */
export function runtimeImports(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(root)) {
    const js = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
      fileName: file,
    }).outputText
    const deps: string[] = []
    for (const m of js.matchAll(RELATIVE_SPECIFIER)) {
      deps.push(relative(root, resolve(dirname(file), m[1].replace(/\.js$/, '.ts'))))
    }
    graph.set(relative(root, file), deps)
  }
  return graph
}

/** The import cycles: groups of files that load each other, each sorted, in a stable order. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort())
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v)
  return cycles.sort((a, b) => (a[0] < b[0] ? -1 : 1))
}
