// Times the two ways @pkg/http splits a request-target (one pass over the characters, or the
// engine's searches and a regular expression) on targets of growing length, to check where
// `SCAN_LIMIT` sits: the scan should be the cheaper of the two up to it and the searches past
// it. Run `pnpm build` first, then, on a quiet machine:
//
//   node tools/bench/dist/target-split.js
//
// Each target is made fresh for every call, as Node's parser makes `req.url`; the cost of
// making it is timed on its own and taken off. Figures are the median of 5 rounds of
// 1,000,000 calls, in nanoseconds per call.
import { SCAN_LIMIT, scanTarget, searchTarget } from '../../../packages/http/src/target';

const TARGETS = [
  '/json',
  '/users/42',
  '/api/rooms/lobby',
  '/items?page=2&sort=name',
  '/api/rooms/lobby/presence',
  '/api/v1/users/1234/settings/mail',
  '/api/v1/users/1234/settings/notify',
  '/search?q=websocket+server&page=2&lang=en',
  '/api/v1/organisations/1234/projects/5678/members',
  '/api/v1/organisations/1234/projects/5678/members?role=admin&page=3',
];
const CALLS = 1_000_000;
const ROUNDS = 5;

type Split = (target: string) => number;

function time(split: Split, bytes: Buffer): number {
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) sink += split(bytes.toString('latin1'));
  const elapsed = Number(process.hrtime.bigint() - started) / CALLS;
  if (sink < 0) throw new Error('unreachable');
  return elapsed;
}

const median = (values: number[]): number => values.sort((a, b) => a - b)[values.length >> 1]!;

const ways: Record<string, Split> = {
  fresh: (target) => target.length,
  scan: (target) => scanTarget(target, target).path.length,
  search: (target) => searchTarget(target, target).path.length,
};

const rows: string[] = [];
for (const target of TARGETS) {
  const bytes = Buffer.from(target, 'latin1');
  const samples: Record<string, number[]> = { fresh: [], scan: [], search: [] };
  for (const split of Object.values(ways)) time(split, bytes); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, split] of Object.entries(ways)) samples[name]!.push(time(split, bytes));
  }
  const fresh = median(samples.fresh!);
  const scan = median(samples.scan!) - fresh;
  const search = median(samples.search!) - fresh;
  const used = target.length <= SCAN_LIMIT ? 'scan' : 'search';
  rows.push(
    `| ${target.length} | \`${target}\` | ${scan.toFixed(0)} | ${search.toFixed(0)} | ${scan <= search ? 'scan' : 'search'} | ${used} |`,
  );
}
process.stdout.write(
  [
    `# Splitting a request-target (ns per call, median of ${ROUNDS} rounds of ${CALLS.toLocaleString('en')}; SCAN_LIMIT ${SCAN_LIMIT})`,
    '',
    '| length | target | scan | search | cheaper | used |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
