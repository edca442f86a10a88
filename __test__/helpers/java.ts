/**
 * Java programs in the tests: the tests' own Java sources (__test__/interop/java, tools/kafka/*.java)
 * and Kafka's classes by name, on the jars of tools/kafka/.jars (see fetch-jars.sh).
 *
 * `java File.java` (the source launcher) compiles the file at every launch, about 1.5 CPU-seconds
 * against these jars; here a source is compiled once per content, through the runtime's own
 * jdk.compiler module (a JRE such as CI's openjdk-17-jre-headless has it without a `javac`
 * command), into a directory under the OS temp dir named by the content's hash, shared by the test
 * workers (made under a temporary name and renamed). Its main class is the file's name.
 *
 * The JVMs here live seconds to a minute on two shared cores: C1 only (no C2 compiler threads),
 * the serial GC, no perf data file; log4j as Kafka's tools (warnings to stderr).
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { runProcess, type RunResult } from './process.js'

export const KAFKA_TOOLS = join(__dirname, '../../tools/kafka')
export const JARS = join(KAFKA_TOOLS, '.jars')

/** Options for a short-lived JVM. */
export const SHORT_JVM = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-XX:-UsePerfData', `-Dlog4j2.configurationFile=${join(KAFKA_TOOLS, 'log4j2-tools.properties')}`]

const compiled = new Map<string, Promise<string>>()
const ready = new Map<string, string>()

/** The directory of `source`'s classes, compiled the first time (per content). */
export function compileJava(source: string): Promise<string> {
  let dir = compiled.get(source)
  if (!dir) {
    dir = compile(source)
    compiled.set(source, dir)
    dir.then((d) => ready.set(source, d)).catch(() => undefined)
    dir.catch(() => compiled.delete(source))
  }
  return dir
}

/** The directory of `source`'s classes, for a caller that awaited compileJava(source) before. */
export function compiledJava(source: string): string {
  const dir = ready.get(source)
  if (dir === undefined) throw new Error(`${source}: not compiled yet (await compileJava first)`)
  return dir
}

async function compile(source: string): Promise<string> {
  const hash = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 16)
  const dir = join(tmpdir(), `ferrolog-java-${basename(source, '.java')}-${hash}`)
  if (existsSync(join(dir, `${basename(source, '.java')}.class`))) return dir
  const tmp = `${dir}.${process.pid}.tmp`
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(tmp, { recursive: true })
  // javac's class path takes no wildcard: the jars by name.
  const jars = readdirSync(JARS)
    .filter((f) => f.endsWith('.jar'))
    .map((f) => join(JARS, f))
  const r = await runProcess('java', ['-m', 'jdk.compiler/com.sun.tools.javac.Main', '-nowarn', '-cp', jars.join(':'), '-d', tmp, source], '', 180_000)
  if (r.status !== 0) {
    rmSync(tmp, { recursive: true, force: true })
    throw new Error(`javac ${source}: ${r.status}\n${r.stdout}\n${r.stderr}`)
  }
  try {
    renameSync(tmp, dir)
  } catch (e) {
    // Another worker compiled the same content first: its classes serve.
    rmSync(tmp, { recursive: true, force: true })
    if (!existsSync(dir)) throw e
  }
  return dir
}

/**
 * The arguments of `java` running `main` (a .java source's path, or a class name in the jars)
 * with `args`, after the JVM options `jvm` (system properties, heap).
 */
export async function javaArgs(main: string, args: string[], jvm: string[] = []): Promise<string[]> {
  if (main.endsWith('.java')) return [...SHORT_JVM, ...jvm, '-cp', `${await compileJava(main)}:${JARS}/*`, basename(main, '.java'), ...args]
  return [...SHORT_JVM, ...jvm, '-cp', `${JARS}/*`, main, ...args]
}

/** Runs `main` (see javaArgs) to its end, killed after `timeoutMs`. */
export async function runJava(main: string, args: string[], options: { input?: string; timeoutMs?: number; jvm?: string[] } = {}): Promise<RunResult> {
  return runProcess('java', await javaArgs(main, args, options.jvm), options.input ?? '', options.timeoutMs ?? 120_000)
}
