/**
 * `ferrolog broker` as the built command: its usage, and clear refusals of bad options.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')

describe('ferrolog broker', () => {
  it('prints its options with --help, --transfer among them', async () => {
    const r = await runProcess(process.execPath, [CLI, 'broker', '--help'], '', 10_000)
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^usage: ferrolog broker/)
    for (const option of ['--data-dir', '--listen', '--backend', '--metrics-listen', '--transfer zero-copy|copy']) expect(r.stdout).toContain(option)
  })

  it('refuses an unknown option and a bad transfer mode, starting nothing', async () => {
    const unknown = await runProcess(process.execPath, [CLI, 'broker', '--frobnicate', '1'], '', 10_000)
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toContain('unknown option --frobnicate')
    const dataDir = tempDir('ferrolog-cli-')
    const bad = await runProcess(process.execPath, [CLI, 'broker', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--transfer', 'sendfile'], '', 10_000)
    expect(bad.status).toBe(1)
    expect(bad.stderr).toContain('transfer.mode must be zero-copy or copy, not "sendfile"')
  })
})
