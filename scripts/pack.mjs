// Packs ferrolog for installation without Rust, in napi-rs's layout: the main package `ferrolog`
// (compiled JavaScript and .d.ts, no Rust sources, no .node file, no install hook) whose
// optionalDependencies name one package per platform, `ferrolog-<platform>`, each holding that
// platform's `ferrolog.<platform>.node` (npm/<platform>/package.json, from `napi create-npm-dirs`:
// its os/cpu/libc fields let npm install only the one that fits). The loader (ts/native/index.js)
// takes the platform package when no `.node` sits beside it, which is the case once installed.
//
//   node scripts/pack.mjs [--out DIR] [--no-build]
//
// Builds from source first (scripts/build.mjs: the binding for this machine and dist/), unless
// --no-build (dist/ and ts/native/*.node as they are). Writes into DIR (default target/packages):
// ferrolog-<version>.tgz and ferrolog-<platform>-<version>.tgz for each platform whose `.node`
// is at hand: this machine's from ts/native, the others' where CI elsewhere put them
// (npm/<platform>/ferrolog.<platform>.node, as `napi artifacts` places them). The platforms
// without a binary are listed and skipped: their packages are built and published elsewhere.
// The last line of stdout is a JSON summary: { main, platforms: { <platform>: file | null } }.
import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const outFlag = args.indexOf('--out')
const out = resolve(outFlag >= 0 ? args[outFlag + 1] : join(root, 'target', 'packages'))
const build = !args.includes('--no-build')

function npmPack(dir) {
  // npm pack of a directory: its `files` decide the contents; the JSON names the tarball.
  const json = execFileSync('npm', ['pack', dir, '--pack-destination', out, '--ignore-scripts', '--json'], { cwd: out, encoding: 'utf8' })
  return join(out, JSON.parse(json)[0].filename)
}

if (build) execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' })
if (!existsSync(join(root, 'dist', 'ts', 'cli', 'main.js'))) throw new Error('dist/ is not built: run `node scripts/build.mjs ts` (or drop --no-build)')

mkdirSync(out, { recursive: true })
const stage = join(out, '.stage')
rmSync(stage, { recursive: true, force: true })

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const { binaryName } = manifest.napi
const platforms = readdirSync(join(root, 'npm'))
  .filter((p) => existsSync(join(root, 'npm', p, 'package.json')))
  .sort()

// The platform packages, each staged with its binary.
const packed = {}
for (const platform of platforms) {
  const binary = `${binaryName}.${platform}.node`
  const from = [join(root, 'npm', platform, binary), join(root, 'ts', 'native', binary)].find((f) => existsSync(f))
  if (from === undefined) {
    packed[platform] = null
    continue
  }
  const dir = join(stage, platform)
  cpSync(join(root, 'npm', platform), dir, { recursive: true, filter: (f) => !f.endsWith('.node') })
  const platformManifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  if (platformManifest.version !== manifest.version) {
    throw new Error(`npm/${platform}/package.json has version ${platformManifest.version}, ferrolog ${manifest.version}: run \`npx napi version\``)
  }
  copyFileSync(from, join(dir, binary))
  packed[platform] = npmPack(dir)
}

// The main package: what an installed user runs, nothing to build. The manifest as published:
// no install hook (npm runs nothing; pnpm and yarn have no build script to ask about), no dev
// tools, and every platform package as an optionalDependency at this exact version.
const main = join(stage, 'ferrolog')
mkdirSync(main, { recursive: true })
cpSync(join(root, 'dist', 'ts'), join(main, 'dist', 'ts'), {
  recursive: true,
  // The binding comes from the platform package; a .node here would be taken before it.
  filter: (f) => !f.endsWith('.node') && !f.endsWith('.map'),
})
copyFileSync(join(root, 'README.md'), join(main, 'README.md'))
const published = { ...manifest }
delete published.scripts
delete published.devDependencies
published.files = manifest.files.filter((f) => !f.startsWith('scripts/'))
published.optionalDependencies = Object.fromEntries(platforms.map((p) => [`${manifest.name}-${p}`, manifest.version]))
writeFileSync(join(main, 'package.json'), JSON.stringify(published, null, 2) + '\n')
const mainTarball = npmPack(main)
rmSync(stage, { recursive: true, force: true })

console.error(`packed into ${out}:`)
console.error(`  ${mainTarball}`)
for (const [platform, file] of Object.entries(packed)) {
  console.error(`  ${file ?? `ferrolog-${platform}: no ${binaryName}.${platform}.node here (built and packed by CI on that platform)`}`)
}
console.log(JSON.stringify({ main: mainTarball, platforms: packed }))
