import { spawn } from 'node:child_process'

export interface RunResult {
  status: number | null
  stdout: string
  stderr: string
}

/**
 * Runs a command asynchronously (the broker shares the test's event loop, so a synchronous spawn
 * would block it), feeding `input` on stdin (as much as it reads); killed after `timeoutMs`.
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
    // A command that exits before reading all its input (kcat refused at authentication) closes
    // the pipe: EPIPE then is part of its answer, which the status and stderr above tell.
    child.stdin.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') reject(e)
    })
    child.stdin.end(input)
  })
}

/**
 * Runs a Node script until it first writes to stdout, waits `delayMs` more, and SIGKILLs it;
 * resolves with its stdout's lines. Rejects if it prints nothing in 20 s or ends by itself.
 */
export function runUntilKilled(script: string, args: string[], delayMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let timer: NodeJS.Timeout | undefined
    const deadline = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${script} printed nothing in 20 s: ${err}`))
    }, 20_000)
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      timer ??= setTimeout(() => child.kill('SIGKILL'), delayMs)
    })
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    child.on('exit', (code, signal) => {
      clearTimeout(deadline)
      if (timer) clearTimeout(timer)
      if (signal !== 'SIGKILL') return reject(new Error(`${script} exited with ${code}: ${err}`))
      resolve(out.split('\n'))
    })
  })
}
