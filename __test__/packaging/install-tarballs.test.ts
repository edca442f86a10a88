/**
 * The packages as a user installs them, with no Rust toolchain: scripts/pack.mjs packs ferrolog
 * and this machine's platform package (ferrolog-linux-x64-gnu), an empty project npm-installs
 * the two tarballs with a PATH that has node and npm and no cargo, and there `npx ferrolog
 * --version` names the platform package's binding and `npx ferrolog broker` serves kcat.
 *
 * Needs dist/ and ts/native/ferrolog.linux-x64-gnu.node built (`npm ci` in the git tree does both).
 * The install reads the registry's packages (etcd3, cockatiel) from the npm cache (--offline, so
 * the other platforms' packages, not installed here, are not looked up either); an empty cache
 * falls back to the registry.
 */
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { spawnBroker } from '../helpers/broker-process.js'
import { runKcat } from '../helpers/kcat.js'
import { tempDir } from '../helpers/tmp.js'

const ROOT = join(__dirname, '..', '..')
const PLATFORM = 'linux-x64-gnu'

/** This environment without the npm_* variables of an enclosing `npm test`, PATH without cargo. */
function environmentWithoutRust(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) if (!key.toLowerCase().startsWith('npm_')) env[key] = value
  const dirs = [dirname(process.execPath), '/usr/bin', '/bin'].filter((dir) => !existsSync(join(dir, 'cargo')) && !existsSync(join(dir, 'rustc')))
  env.PATH = [...new Set(dirs)].join(delimiter)
  return env
}

/** Runs `command` in `cwd` with `env`, asynchronously; rejects after `timeoutMs`. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${command} ${args.join(' ')} did not finish in ${timeoutMs} ms: ${stderr}`))
    }, timeoutMs)
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
}

describe('the packed tarballs', () => {
  it('install without cargo into an empty project, where the CLI and the broker run on the platform package', { timeout: 240_000 }, async () => {
    const out = tempDir('ferrolog-pack-')
    const packed = await run(process.execPath, [join(ROOT, 'scripts', 'pack.mjs'), '--no-build', '--out', out], ROOT, process.env, 120_000)
    expect(packed.status, packed.stderr).toBe(0)
    const summary = JSON.parse(packed.stdout.trim().split('\n').at(-1)!) as { main: string; platforms: Record<string, string | null> }
    expect(Object.keys(summary.platforms).sort()).toEqual(['darwin-arm64', 'darwin-x64', 'linux-arm64-gnu', 'linux-x64-gnu', 'linux-x64-musl', 'win32-x64-msvc'])
    const platformTarball = summary.platforms[PLATFORM]
    expect(platformTarball, `no ${PLATFORM} package: is ts/native/ferrolog.${PLATFORM}.node built?`).toBeTruthy()

    // The main tarball: compiled JavaScript only, no Rust sources and no binary.
    const listing = spawnSync('tar', ['-tzf', summary.main], { encoding: 'utf8' }).stdout.split('\n')
    expect(listing).toContain('package/dist/ts/cli/main.js')
    expect(listing).toContain('package/dist/ts/native/index.js')
    expect(listing.filter((f) => f.endsWith('.node') || f.includes('/crates/') || f.endsWith('.rs') || f.includes('Cargo'))).toEqual([])

    const env = environmentWithoutRust()
    for (const tool of ['cargo', 'rustc']) {
      expect(spawnSync('sh', ['-c', `command -v ${tool}`], { env }).status, `${tool} is on ${env.PATH}`).not.toBe(0)
    }

    const project = tempDir('ferrolog-user-')
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'ferrolog-user', version: '1.0.0', private: true }))
    const install = (mode: string) => run('npm', ['install', '--no-audit', '--no-fund', mode, summary.main, platformTarball!], project, env, 180_000)
    const started = performance.now()
    let installed = await install('--offline')
    if (installed.status !== 0) installed = await install('--prefer-offline')
    const seconds = (performance.now() - started) / 1000
    expect(installed.status, installed.stderr).toBe(0)
    console.log(`npm install of the two tarballs without cargo: ${seconds.toFixed(1)} s`)

    const installedFiles = readdirSync(join(project, 'node_modules', 'ferrolog'))
    expect(installedFiles.sort()).toEqual(['README.md', 'dist', 'package.json'])
    expect(existsSync(join(project, 'node_modules', `ferrolog-${PLATFORM}`, `ferrolog.${PLATFORM}.node`))).toBe(true)

    const version = await run('npx', ['ferrolog', '--version'], project, env, 60_000)
    expect(version.status, version.stderr).toBe(0)
    expect(version.stdout).toMatch(
      new RegExp(`^ferrolog \\d+\\.\\d+\\.\\d+ \\(engine: native \\(Rust core, zero-copy transfer; binding: ferrolog-${PLATFORM} \\d+\\.\\d+\\.\\d+ \\(platform package\\)\\)\\)`),
    )

    // The library too: what `import { startBroker } from 'ferrolog'` gets.
    const library = await run(process.execPath, ['-e', "process.stdout.write(typeof require('ferrolog').startBroker)"], project, env, 60_000)
    expect(library.stdout, library.stderr).toBe('function')

    // npx runs the bin through npm and a shell: the broker is a grandchild. Its own process group
    // (detached) lets the stop reach all three, and 'close' waits for the last pipe holder.
    const dataDir = tempDir('ferrolog-user-data-')
    const broker = spawn('npx', ['ferrolog', 'broker', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], {
      cwd: project,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    broker.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    broker.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const closed = new Promise<void>((resolve) => broker.on('close', () => resolve()))
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-broker.pid!, signal)
      } catch {
        // already gone
      }
    }
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`broker did not start in 30 s: ${stderr}`)), 30_000)
        broker.on('close', (code) => reject(new Error(`broker exited with ${code}: ${stderr}`)))
        broker.stdout.on('data', () => {
          const m = /listening on [^:]+:(\d+)/.exec(stdout)
          if (m) {
            clearTimeout(timer)
            resolve(Number(m[1]))
          }
        })
      })
      expect(stderr).toMatch(new RegExp(`"msg":"broker started".*"engine":"native \\(Rust core\\)","binding":"ferrolog-${PLATFORM} \\d+\\.\\d+\\.\\d+ \\(platform package\\)"`))

      const lines = Array.from({ length: 20 }, (_, i) => `key-${i}:value ${i}`)
      const produced = await runKcat(port, ['-P', '-t', 'installed', '-K', ':'], lines.join('\n') + '\n')
      expect(produced.status, produced.stderr).toBe(0)
      const consumed = await runKcat(port, ['-C', '-t', 'installed', '-o', 'beginning', '-e', '-f', '%o %k:%s\\n'])
      expect(consumed.status, consumed.stderr).toBe(0)
      expect(consumed.stdout.trim().split('\n')).toEqual(lines.map((line, i) => `${i} ${line}`))
    } finally {
      signalGroup('SIGTERM')
      const timer = setTimeout(() => signalGroup('SIGKILL'), 10_000)
      await closed
      clearTimeout(timer)
    }
    expect(stderr).toContain('"msg":"broker stopped"')
  })
})

describe('the git tree', () => {
  it('loads the binding built from source beside the loader, and says so', async () => {
    const env = { ...process.env }
    delete env.FERROLOG_NATIVE
    const version = await run(process.execPath, [join(ROOT, 'dist', 'ts', 'cli', 'main.js'), '--version'], ROOT, env, 60_000)
    expect(version.stdout).toContain(`binding: ferrolog.${PLATFORM}.node (built from source)`)
    const broker = await spawnBroker({})
    try {
      expect(broker.stderr()).toContain(`"binding":"ferrolog.${PLATFORM}.node (built from source)"`)
    } finally {
      await broker.stop()
    }
  })

  it('install hook: builds nothing where the Rust sources are not, with no cargo on PATH', async () => {
    // The layout of a tarball from a plain `npm pack` (the root manifest's `files`): dist/ and the hook.
    const installed = tempDir('ferrolog-hook-')
    mkdirSync(join(installed, 'scripts'))
    copyFileSync(join(ROOT, 'scripts', 'install.mjs'), join(installed, 'scripts', 'install.mjs'))
    const r = await run(process.execPath, [join(installed, 'scripts', 'install.mjs')], installed, environmentWithoutRust(), 30_000)
    expect(r).toEqual({ status: 0, stdout: '', stderr: '' })
  })

  it('a plain `npm pack` of the git tree ships dist/ts and the hook, no Rust sources and no binary', async () => {
    const r = await run('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], ROOT, environmentWithoutRust(), 60_000)
    expect(r.status, r.stderr).toBe(0)
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0].files.map((f) => f.path)
    expect(files).toContain('dist/ts/cli/main.js')
    expect(files).toContain('scripts/install.mjs')
    expect(files.filter((f) => !f.startsWith('dist/ts/') && !['package.json', 'README.md', 'scripts/install.mjs'].includes(f))).toEqual([])
    expect(files.filter((f) => f.endsWith('.node') || f.endsWith('.map'))).toEqual([])
  })
})
