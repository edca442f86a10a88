#!/usr/bin/env node
/**
 * Runs other clients' own test suites against ferrolog and against Apache Kafka 4.4, and prints
 * pass/fail counts for each: kafkajs's jest suite and @platformatic/kafka's node:test suite.
 * Not a CI test: a tool for comparing, see README.md beside it.
 *
 *   KAFKAJS_SRC=/path/to/kafkajs.git PLATFORMATIC_KAFKA_SRC=/path/to/platformatic-kafka.git \
 *     node tools/client-suites/run.mjs [--suite kafkajs|platformatic|all] [--broker ferrolog|kafka|both]
 *                                       [--tests PATTERN]... [--work DIR]
 *
 * The npm tarballs of kafkajs and @platformatic/kafka hold no tests, so the sources come from a
 * git clone of each (github.com/tulios/kafkajs, github.com/platformatic/kafka), bare or not,
 * named by KAFKAJS_SRC and PLATFORMATIC_KAFKA_SRC; the tag tested is KAFKAJS_REF (default
 * v2.2.4) and PLATFORMATIC_KAFKA_REF (default v1.34.0). Each is exported with `git archive`
 * into WORK/<suite>/src (default WORK: tools/client-suites/.work, git-ignored) and its
 * devDependencies installed there from npm (`npm install --ignore-scripts`), once.
 *
 * --tests narrows the run: for kafkajs a jest path pattern (e.g. src/admin), for platformatic
 * test files or globs under the checkout (e.g. 'test/clients/admin/*.test.ts'); default: every
 * integration test of the suite. The two broker kinds run one after the other (same ports).
 * Per run, WORK/results/<suite>-<broker>.json holds every test's name and outcome; a summary
 * table ends the output, and WORK/results/<suite>-diff.txt lists the tests whose outcome
 * differs between ferrolog and Kafka (the latest run of each, this one or an earlier).
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startFerrolog, startKafka } from './brokers.mjs'

const here = new URL('.', import.meta.url).pathname
const repoRoot = resolve(here, '../..')

const { values } = parseArgs({
  options: {
    suite: { type: 'string', default: 'all' },
    broker: { type: 'string', default: 'both' },
    tests: { type: 'string', multiple: true },
    work: { type: 'string', default: join(here, '.work') },
  },
})

const SUITES = {
  kafkajs: {
    srcEnv: 'KAFKAJS_SRC',
    ref: process.env.KAFKAJS_REF ?? 'v2.2.4',
    // Its groups as its package.json runs them in CI (all but the OAUTHBEARER group, which needs
    // another compose file); the unit tests under the same paths run too.
    defaultTests: ['src/'],
    run: runKafkajs,
  },
  platformatic: {
    srcEnv: 'PLATFORMATIC_KAFKA_SRC',
    ref: process.env.PLATFORMATIC_KAFKA_REF ?? 'v1.34.0',
    // package.json's `test` globs.
    defaultTests: ['test/*.test.ts', 'test/*/*.test.ts', 'test/*/*/*.test.ts'],
    run: runPlatformatic,
  },
}

/** Exports the suite's sources at its ref and installs its devDependencies, once per ref. */
function prepare(name) {
  const suite = SUITES[name]
  const src = process.env[suite.srcEnv]
  if (!src) throw new Error(`${suite.srcEnv} must name a git clone of ${name}'s repository (its npm tarball has no tests); see tools/client-suites/README.md`)
  const dir = join(values.work, name, 'src')
  const marker = join(dir, '.client-suites-ref')
  const commit = execFileSync('git', ['-C', src, 'rev-parse', `${suite.ref}^{commit}`])
    .toString()
    .trim()
  if (existsSync(marker) && readFileSync(marker, 'utf8') === commit) return dir
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  execFileSync('bash', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'archive', src, commit, dir], { stdio: 'inherit' })
  console.log(`${name}: ${suite.ref} (${commit}) in ${dir}; npm install ...`)
  execFileSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' })
  writeFileSync(marker, commit)
  return dir
}

function spawnTests(command, args, options) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', ...options })
    child.on('error', reject)
    child.on('exit', (code, signal) => resolvePromise({ code, signal }))
  })
}

/** kafkajs: jest with its config, one worker at a time, a JSON report. */
async function runKafkajs(dir, tests, reportFile) {
  const jsonFile = `${reportFile}.jest.json`
  rmSync(jsonFile, { force: true })
  await spawnTests(
    join(dir, 'node_modules/.bin/jest'),
    [...tests, '--ci', '--runInBand', '--forceExit', '--no-watchman', '--json', `--outputFile=${jsonFile}`, '--reporters=default'],
    // KAFKA_VERSION: the newest its suite knows (docker-compose.2_4.yml); it gates version tests.
    { cwd: dir, env: { ...process.env, KAFKA_VERSION: '2.4', KAFKAJS_DEBUG_PROTOCOL_BUFFERS: '1', NODE_ENV: 'test' } },
  )
  const report = JSON.parse(readFileSync(jsonFile, 'utf8'))
  const results = []
  for (const file of report.testResults) {
    const rel = file.name.slice(dir.length + 1)
    if (file.assertionResults.length === 0) results.push({ name: `${rel} (file)`, status: 'failed', message: (file.message ?? '').slice(0, 2000) })
    for (const t of file.assertionResults) {
      results.push({ name: `${rel} > ${t.fullName}`, status: t.status, message: (t.failureMessages ?? []).join('\n').slice(0, 2000) })
    }
  }
  return results
}

/**
 * node:test waits for ever by default; a test that hangs (a broker that never answers what it
 * waits for) would stop the run, so each test gets this long and then fails as timed out.
 */
const PLATFORMATIC_TEST_TIMEOUT_MS = 120_000

/** @platformatic/kafka: node:test (its scripts/node adds the TypeScript loader on Node 20), a JUnit report. */
async function runPlatformatic(dir, tests, reportFile) {
  const xmlFile = `${reportFile}.junit.xml`
  rmSync(xmlFile, { force: true })
  await spawnTests(
    join(dir, 'scripts/node'),
    [
      '--test',
      '--test-concurrency=1',
      `--test-timeout=${PLATFORMATIC_TEST_TIMEOUT_MS}`,
      '--test-reporter=dot',
      '--test-reporter-destination=stdout',
      '--test-reporter=junit',
      `--test-reporter-destination=${xmlFile}`,
      ...tests,
    ],
    { cwd: dir, env: { ...process.env, PATH: `${join(dir, 'node_modules/.bin')}:${process.env.PATH}` } },
  )
  return parseJunit(readFileSync(xmlFile, 'utf8'))
}

/** The leaf test cases of node:test's JUnit report: failed, skipped or passed. */
function parseJunit(xml) {
  const results = []
  const suites = []
  const re = /<testsuite\s+name="([^"]*)"[^>]*>|<\/testsuite>|<testcase\s+name="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g
  for (let m; (m = re.exec(xml));) {
    if (m[1] !== undefined) suites.push(m[1])
    else if (m[0] === '</testsuite>') suites.pop()
    else {
      const body = m[4] ?? ''
      const status = /<failure/.test(body) ? 'failed' : /<skipped/.test(body) ? 'skipped' : 'passed'
      const message =
        status === 'failed'
          ? unescapeXml(body.replace(/<[^>]*>/g, ' '))
              .trim()
              .slice(0, 4000)
          : ''
      results.push({ name: [...suites, m[2]].join(' > '), status, message })
    }
  }
  return results
}

function unescapeXml(text) {
  return text.replace(/&(lt|gt|quot|apos|amp|#\d+);/g, (_, e) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e] ?? String.fromCharCode(Number(e.slice(1))))
}

function count(results) {
  const c = { passed: 0, failed: 0, skipped: 0 }
  for (const r of results) c[r.status === 'passed' ? 'passed' : r.status === 'failed' ? 'failed' : 'skipped']++
  return c
}

const suites = values.suite === 'all' ? Object.keys(SUITES) : [values.suite]
const brokers = values.broker === 'both' ? ['ferrolog', 'kafka'] : [values.broker]
for (const s of suites) if (!SUITES[s]) throw new Error(`unknown suite ${s} (kafkajs, platformatic)`)
for (const b of brokers) if (b !== 'ferrolog' && b !== 'kafka') throw new Error(`unknown broker ${b} (ferrolog, kafka)`)
const resultsDir = join(values.work, 'results')
mkdirSync(resultsDir, { recursive: true })

const summary = []
for (const name of suites) {
  const suite = SUITES[name]
  const dir = prepare(name)
  const tests = values.tests ?? suite.defaultTests
  const outcomes = {}
  for (const broker of brokers) {
    console.log(`\n=== ${name} against ${broker === 'kafka' ? 'Apache Kafka 4.4' : 'ferrolog'}: ${tests.join(' ')}`)
    const stop = broker === 'ferrolog' ? await startFerrolog(name, repoRoot) : await startKafka(name, join(values.work, 'kafka-data', name))
    const reportFile = join(resultsDir, `${name}-${broker}`)
    let results
    try {
      results = await suite.run(dir, tests, reportFile)
    } finally {
      await stop()
    }
    writeFileSync(`${reportFile}.json`, JSON.stringify(results, null, 1))
    outcomes[broker] = new Map(results.map((r) => [r.name, r.status]))
    summary.push({ suite: name, broker, ...count(results) })
  }
  // The other broker's results may come from an earlier run (one broker kind per run is allowed).
  for (const broker of ['ferrolog', 'kafka']) {
    const file = join(resultsDir, `${name}-${broker}.json`)
    if (!outcomes[broker] && existsSync(file)) outcomes[broker] = new Map(JSON.parse(readFileSync(file, 'utf8')).map((r) => [r.name, r.status]))
  }
  if (outcomes.ferrolog && outcomes.kafka) {
    const names = new Set([...outcomes.ferrolog.keys(), ...outcomes.kafka.keys()])
    const diff = [...names].filter((n) => outcomes.ferrolog.get(n) !== outcomes.kafka.get(n)).sort()
    const lines = diff.map((n) => `ferrolog=${outcomes.ferrolog.get(n) ?? 'absent'} kafka=${outcomes.kafka.get(n) ?? 'absent'}  ${n}`)
    writeFileSync(join(resultsDir, `${name}-diff.txt`), lines.join('\n') + '\n')
    console.log(`\n${name}: ${diff.length} tests differ between ferrolog and Kafka (${join(resultsDir, `${name}-diff.txt`)})`)
  }
}

console.log('\nsuite         broker    passed  failed  skipped')
for (const s of summary) console.log(`${s.suite.padEnd(13)} ${s.broker.padEnd(9)} ${String(s.passed).padStart(6)}  ${String(s.failed).padStart(6)}  ${String(s.skipped).padStart(7)}`)
// Test runners leave the brokers' sockets behind when they fail hard; the brokers are stopped.
process.exit(0)
