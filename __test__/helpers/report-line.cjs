// How the crash tests' child processes report a line to their parent before going on.
// Their stdout is a pipe the parent drains, and Node makes it non-blocking: when the parent is
// slow (a loaded machine) the pipe fills and writeSync throws EAGAIN. Wait a millisecond and
// write again; a line shorter than PIPE_BUF (4 KiB) is written whole or not at all.
const { writeSync } = require('node:fs')

const pause = new Int32Array(new SharedArrayBuffer(4))

function reportLine(line) {
  for (;;) {
    try {
      writeSync(1, line)
      return
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err
      Atomics.wait(pause, 0, 0, 1)
    }
  }
}

module.exports = { reportLine }
