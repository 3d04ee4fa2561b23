// The line protocol every bench server speaks with the runner, on stdin/stdout:
//   the server prints `PORT <n>` once listening;
//   `cpu`   -> `CPU <µs>`    this process's CPU time so far (user + system);
//   `mem`   -> `MEM <json>`  process.memoryUsage() after full garbage collections
//                            (the runner starts servers with --expose-gc);
//   `memnow` -> `MEM <json>` process.memoryUsage() as it is, without collecting first;
//   `snapshot <file>` -> `SNAPSHOT <file>`  a V8 heap snapshot written to that file, after
//                            full garbage collections;
//   `count` -> `COUNT <n>`   WebSocket connections the server holds now;
//   any other line goes to the server's own `command(line)`, when it has one (a workload's
//   server may take orders this way, e.g. `B <json>` to broadcast in cross-instance).
// SIGTERM runs the server's own graceful close, then exits 0 (as an application would);
// the end of stdin (the runner went away) exits at once.
import { createInterface } from 'node:readline';
import { writeHeapSnapshot } from 'node:v8';

async function collect() {
  const gc = globalThis.gc;
  if (typeof gc !== 'function') return;
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export function serve({ port, count, close, command }) {
  process.stdout.write(`PORT ${port}\n`);
  const lines = createInterface({ input: process.stdin });
  lines.on('line', async (line) => {
    const cmd = line.trim();
    if (cmd === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.stdout.write(`CPU ${user + system}\n`);
    } else if (cmd === 'mem') {
      await collect();
      process.stdout.write(`MEM ${JSON.stringify(process.memoryUsage())}\n`);
    } else if (cmd === 'memnow') {
      process.stdout.write(`MEM ${JSON.stringify(process.memoryUsage())}\n`);
    } else if (cmd.startsWith('snapshot ')) {
      await collect();
      const file = writeHeapSnapshot(cmd.slice('snapshot '.length));
      process.stdout.write(`SNAPSHOT ${file}\n`);
    } else if (cmd === 'count') {
      process.stdout.write(`COUNT ${count()}\n`);
    } else if (command) {
      command(line);
    }
  });
  lines.on('close', () => process.exit(0));
  process.once('SIGTERM', () => {
    Promise.resolve()
      .then(close)
      .then(
        () => process.exit(0),
        (err) => {
          process.stderr.write(`close failed: ${err?.stack ?? err}\n`);
          process.exit(1);
        },
      );
  });
}
