import { runProcess, type RunResult } from './process.js'

/** Runs kcat against the broker on 127.0.0.1:`port` (asynchronously: the broker shares the test's event loop). */
export function runKcat(port: number, args: string[], input = ''): Promise<RunResult> {
  return runProcess('kcat', ['-b', `127.0.0.1:${port}`, ...args], input, 30_000)
}
