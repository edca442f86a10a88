import { spawn } from 'node:child_process'

export interface RunResult {
  status: number | null
  stdout: string
  stderr: string
}

/**
 * Runs a command asynchronously (the broker shares the test's event loop, so a synchronous spawn
 * would block it), feeding `input` on stdin; killed after `timeoutMs`.
 */
export function runProcess(command: string, args: string[], input: string, timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
    child.stdin.end(input)
  })
}
