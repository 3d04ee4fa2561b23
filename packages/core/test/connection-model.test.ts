// Model-based test of the connection protocol (fast-check `fc.commands`): random sequences
// of client and server actions against a real Server over real sockets, checked against a
// model of which connections should be open. After every step: no handler runs for and no
// delivery reaches a connection that is not open; no request id is answered twice (and,
// once everything is quiet, every owed one exactly once); OnConnect / OnDisconnect at most
// once each, in order, only for accepted connections; the auth handlers run once per
// check (a refused message is never replayed) and meet auth_timeout; `/health` answers
// within 100 ms (two slow answers in a row fail). At the end `close()`, then OnConnect /
// OnDisconnect pair exactly once per started client and `getLoad()` is empty. See
// test/model/ for the harness, the model and the commands.
//
// Environment: FC_SEED (base seed, default below), FC_RUNS (default 25), FC_PATH and
// FC_REPLAY (the `path` and `replayPath` a failure prints, to replay it), FC_COMMANDS
// (comma-separated command names, to look for one kind of failure), FC_DEBUG (print each
// run's commands), MODEL_AUTH_RESULT=boolean (auth handlers accept with `true` instead of
// `{identity}`, for a server that predates identities).
import { it } from '@jest/globals';
import fc from 'fast-check';
import { commandArbitraries } from './model/commands';
import { WAIT, healthSamples, startModelServer, type Received } from './model/harness';
import {
  InvariantError,
  checkCounts,
  checkSafety,
  newModel,
  observe,
  quiesce,
  type Model,
  type Real,
} from './model/model';

const SEED = Number(process.env['FC_SEED'] ?? 20261125);
const RUNS = Number(process.env['FC_RUNS'] ?? 25);
const PATH = process.env['FC_PATH'];
const REPLAY = process.env['FC_REPLAY'];

function fail(message: string): never {
  throw new InvariantError(message);
}

const withTimeout = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new InvariantError(`${what} within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });

/** After the commands: quiet, counts, `close()`, then pairing and empty tables. */
async function finish(model: Model, real: Real): Promise<void> {
  await quiesce(model);
  observe(model);
  checkSafety(model, real);
  await checkCounts(model, real);

  for (const c of model.clients) if (c.phase === 'open') c.closedBy = 'server';
  await withTimeout(real.server.close(), 5000, 'server.close() did not resolve');
  for (const c of model.clients) {
    if (c.conn.closed !== undefined && c.phase !== 'open') continue;
    const closed = await c.conn
      .whenClosed(WAIT, `${c.tag}: still open after close()`)
      .catch((err: Error) => fail(err.message));
    if (c.phase === 'open' && closed.code !== 1012) {
      fail(`${c.tag}: close() closed it with ${closed.code}, not 1012`);
    }
    c.phase = 'closed';
  }
  const log = real.recorder.log;
  for (const e of log.filter((x) => x.kind === 'connect')) {
    await real.recorder
      .waitFor(
        (x) => x.kind === 'disconnect' && x.id === e.id,
        WAIT,
        `OnDisconnect of ${e.id} (${e.tag})`,
      )
      .catch((err: Error) => fail(err.message));
  }
  checkSafety(model, real);
  // close() may resolve before the last sockets' 'close' events; no event says when the
  // tables are empty, so they are read every 5 ms for at most WAIT ms.
  const nonZero = (): Array<[string, unknown]> =>
    Object.entries(real.server.getLoad() as unknown as Record<string, unknown>).filter(
      ([, value]) => typeof value === 'number' && value !== 0,
    );
  const until = Date.now() + WAIT;
  while (nonZero().length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  if (nonZero().length > 0) {
    fail(
      `getLoad() is not empty ${WAIT} ms after close(): ${JSON.stringify(real.server.getLoad())}`,
    );
  }
  if (real.server.getClientCount() !== 0) fail('getClientCount() is not 0 after close()');
}

/** Closes whatever a failed run left open. */
async function teardown(model: Model, real: Real): Promise<void> {
  for (const c of model.clients) c.conn.ws.terminate();
  await withTimeout(real.server.close(), 5000, 'server.close()').catch(() => undefined);
}

/** A one-line account of what each connection received, for a failure message. */
function transcript(model: Model): string {
  const short = (m: Received): string =>
    `${m.event}${m.id !== undefined ? `#${String(m.id)}` : ''}${m.seq !== undefined ? `@${m.seq}` : ''}`;
  return model.clients
    .map(
      (c) =>
        `  ${c.tag} v${c.version} ${c.fate} ${c.phase}${c.clientId ? ` ${c.clientId}` : ''}: ` +
        `${c.conn.received.map(short).join(' ')}${c.conn.closed ? ` [closed ${c.conn.closed.code}]` : ''}`,
    )
    .join('\n');
}

it(`keeps the connection invariants over ${RUNS} random runs (seed ${SEED})`, async () => {
  const started = Date.now();
  const property = fc.asyncProperty(
    fc.commands(commandArbitraries(process.env['FC_COMMANDS']), {
      maxCommands: 50,
      size: 'max',
      ...(REPLAY === undefined ? {} : { replayPath: REPLAY }),
    }),
    async (commands) => {
      const real = await startModelServer();
      const model = newModel();
      try {
        await fc.asyncModelRun(() => ({ model, real }), commands);
        await finish(model, real);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw new InvariantError(`${message}\nconnections:\n${transcript(model)}`);
      } finally {
        if (process.env['FC_DEBUG'] !== undefined) process.stdout.write(`${String(commands)}\n`);
        await teardown(model, real);
      }
    },
  );
  await fc.assert(property, {
    numRuns: RUNS,
    seed: SEED,
    ...(PATH === undefined ? {} : { path: PATH }),
    interruptAfterTimeLimit: 240_000,
    markInterruptAsFailure: true,
  });
  // Printed so CI logs show the cost of the test and the /health latencies it saw.
  const sorted = [...healthSamples].sort((a, b) => a - b);
  const at = (q: number): string => (sorted[Math.floor(q * (sorted.length - 1))] ?? 0).toFixed(1);
  process.stdout.write(
    `connection model: ${RUNS} runs in ${Date.now() - started} ms; /health over ${sorted.length} steps: ` +
      `median ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms\n`,
  );
}, 300_000);
