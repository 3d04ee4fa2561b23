// How the HTTP workloads read wrk's report (lib/wrk.mjs): the rate and total, and every kind
// of failure, which must fail the workload rather than pass as a slower figure.
// lib/wrk.mjs is an ES module: it runs in a child Node process.
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const lib = pathToFileURL(path.join(__dirname, '..', 'lib', 'wrk.mjs')).href;

function parse(text: string): Record<string, number> {
  const script = `import(${JSON.stringify(lib)}).then((m) => process.stdout.write(JSON.stringify(m.parseWrk(${JSON.stringify(text)}))))`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as Record<string, number>;
}

const CLEAN = `Running 5s test @ http://127.0.0.1:40000/json
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.10ms  310.00us   9.00ms   90.00%
    Req/Sec    23.70k     1.20k   25.10k    80.00%
  118012 requests in 5.00s, 21.50MB read
Requests/sec:  23598.41
Transfer/sec:      4.30MB
`;

describe("wrk's report", () => {
  test('gives the rate and the total of a clean run', () => {
    expect(parse(CLEAN)).toEqual({
      rate: 23598.41,
      total: 118012,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
    });
  });

  test('counts non-2xx answers, socket errors and timeouts', () => {
    const failing = CLEAN.replace(
      'Requests/sec',
      '  Socket errors: connect 1, read 2, write 3, timeout 4\n  Non-2xx or 3xx responses: 7\nRequests/sec',
    );
    expect(parse(failing)).toMatchObject({ non2xx: 7, errors: 6, timeouts: 4, total: 118012 });
  });
});
