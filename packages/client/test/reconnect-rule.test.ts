// The reconnect rule of every close code (the table of @pkg/wire and the client README), on
// a fake clock with a scripted WebSocket: after a close that means "go away" the client
// never opens another connection and says why; after any other close it retries with
// backoff, and the backoff starts over only after a connection stayed up `stableAfter` ms.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { closeCodes, reconnectsAfter } from '@pkg/wire';
import {
  Client,
  type ClientOptions,
  type DisconnectInfo,
  type StopInfo,
  type WebSocketConstructor,
} from '../src/index';

/** A WebSocket whose server side the test plays by hand. */
class ScriptedSocket {
  static made: ScriptedSocket[] = [];
  readyState = 0;
  protocol = '';
  readonly sent: string[] = [];
  readonly #listeners = new Map<string, Array<(event: never) => void>>();

  constructor(readonly url: string) {
    ScriptedSocket.made.push(this);
  }

  addEventListener(type: string, listener: (event: never) => void): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }

  send(text: string): void {
    this.sent.push(text);
  }

  close(): void {
    this.serverClose(1005, '');
  }

  open(): void {
    this.readyState = 1;
    this.#fire('open', {});
  }

  serverClose(code: number, reason: string): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.#fire('close', { code, reason });
  }

  #fire(type: string, event: object): void {
    for (const l of this.#listeners.get(type) ?? []) l(event as never);
  }
}

const last = (): ScriptedSocket => ScriptedSocket.made[ScriptedSocket.made.length - 1]!;

function client(options: ClientOptions = {}): Client {
  return new Client('ws://server.test', {
    WebSocket: ScriptedSocket as unknown as WebSocketConstructor,
    protocol: 'basic', // version 0: connected as soon as the socket opens
    network: null,
    reconnectionDelay: 100,
    reconnectionDelayMax: 10_000,
    random: () => 0.999,
    ...options,
  });
}

/** Lets the client's async connection set-up run. */
const settle = (): Promise<void> => jest.advanceTimersByTimeAsync(0);

beforeEach(() => {
  jest.useFakeTimers();
  ScriptedSocket.made = [];
});
afterEach(() => {
  jest.useRealTimers();
});

const table = Object.keys(closeCodes).map(Number);
// A close code the protocol does not define (another application's): treated as a loss.
const codes = [...table, 4999];

describe('the reconnect rule of every close code', () => {
  it.each(codes)('close %i from the server', async (code) => {
    const c = client();
    const disconnects: DisconnectInfo[] = [];
    const stops: StopInfo[] = [];
    c.on('disconnect', (info) => disconnects.push(info));
    c.on('reconnect_stopped', (info) => stops.push(info));
    const connected = c.connect();
    await settle();
    last().open();
    await connected;

    last().serverClose(code, 'bye');
    await jest.advanceTimersByTimeAsync(60_000);
    const reconnects = reconnectsAfter(code);
    expect(disconnects).toEqual([
      reconnects
        ? { code, reason: 'bye', willReconnect: true }
        : { code, reason: 'bye', willReconnect: false, cause: expect.any(String) },
    ]);
    // One socket, or a second one opened by the retry: never more without an open.
    expect(ScriptedSocket.made).toHaveLength(reconnects ? 2 : 1);
    expect(c.status).toBe(reconnects ? 'connecting' : 'idle');
    expect(stops.map((s) => s.code)).toEqual(reconnects ? [] : [code]);
    if (!reconnects) {
      expect(stops[0]!.cause).toBe(
        {
          1000: 'server_disconnect',
          1008: 'policy_violation',
          4401: 'unauthorized',
          4403: 'forbidden',
          4409: 'session_taken_over',
        }[code],
      );
      expect(stops[0]!.error.closeCode).toBe(code);
    }
    c.disconnect();
  });

  it('the "go away" codes are exactly 1000, 1008, 4401, 4403 and 4409', () => {
    expect(codes.filter((code) => !reconnectsAfter(code))).toEqual([1000, 1008, 4401, 4403, 4409]);
  });

  it('connect() after a stop opens a new connection', async () => {
    const c = client();
    const first = c.connect();
    await settle();
    last().open();
    await first;
    last().serverClose(4409, 'taken over');
    await settle();
    expect(c.status).toBe('idle');

    const again = c.connect();
    await settle();
    expect(ScriptedSocket.made).toHaveLength(2);
    last().open();
    await again;
    expect(c.connected).toBe(true);
    c.disconnect();
  });

  it('a stop before the connection was established rejects connect() with the reason', async () => {
    const c = client();
    const errors: string[] = [];
    c.on('connect_error', (err) => errors.push(err.code));
    const attempt = c.connect();
    const rejected = attempt.catch((err: unknown) => err);
    await settle();
    last().serverClose(1008, 'policy');
    expect(await rejected).toMatchObject({
      code: 'PKG_ERR_CLIENT_SENT_AWAY',
      closeCode: 1008,
      reason: 'policy',
    });
    expect(errors).toEqual(['PKG_ERR_CLIENT_SENT_AWAY']);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(ScriptedSocket.made).toHaveLength(1);
  });
});

describe('the backoff starts over only after a stable connection', () => {
  /** Opens each new socket and closes it `upFor` ms later with 1013; returns the delays. */
  async function churn(c: Client, rounds: number, upFor: number): Promise<number[]> {
    const delays: number[] = [];
    c.on('reconnecting', ({ delay }) => delays.push(delay));
    const first = c.connect();
    await settle();
    for (let i = 0; i < rounds; i++) {
      const socket = last();
      socket.open();
      if (i === 0) await first;
      await jest.advanceTimersByTimeAsync(upFor);
      socket.serverClose(1013, 'try again later');
      // Run the retry timer, whatever its delay.
      await jest.advanceTimersByTimeAsync(20_000);
    }
    return delays;
  }

  it('a server that closes every connection at once sees growing delays (default stableAfter 5000)', async () => {
    const c = client();
    const delays = await churn(c, 6, 10);
    expect(delays).toEqual([99, 199, 399, 799, 1598, 3196]);
    c.disconnect();
  });

  it('after a connection that stayed up stableAfter ms, the next delay is the first step again', async () => {
    const c = client({ stableAfter: 1000 });
    const delays = await churn(c, 4, 1000);
    expect(delays).toEqual([99, 99, 99, 99]);
    c.disconnect();
  });

  it('stableAfter 0 resets the backoff as soon as a connection is established (the old rule)', async () => {
    const c = client({ stableAfter: 0 });
    expect(await churn(c, 3, 0)).toEqual([99, 99, 99]);
    c.disconnect();
  });

  it('reconnectionAttempts counts attempts across connections that closed at once', async () => {
    const c = client({ reconnectionAttempts: 3 });
    const failed: number[] = [];
    c.on('reconnect_failed', ({ attempts }) => failed.push(attempts));
    const delays = await churn(c, 4, 10);
    expect(delays).toHaveLength(3);
    expect(failed).toEqual([3]);
    expect(c.status).toBe('idle');
  });
});

describe('the 1012 restart hint', () => {
  /** Connects, lets the server close with 1012 and `reason`; returns the next retry delay. */
  async function delayAfter(c: Client, reason: string, code = 1012): Promise<number> {
    const delays: number[] = [];
    c.on('reconnecting', ({ delay }) => delays.push(delay));
    const first = c.connect();
    await settle();
    last().open();
    await first;
    last().serverClose(code, reason);
    return delays[0]!;
  }

  it('waits the hinted delay plus a jitter of up to reconnectionDelay, then reconnects', async () => {
    const c = client({ random: () => 0.5 });
    expect(await delayAfter(c, 'restart; retry after 1234 ms')).toBe(1234 + 50);
    const opened = ScriptedSocket.made.length;
    await jest.advanceTimersByTimeAsync(1283);
    expect(ScriptedSocket.made).toHaveLength(opened);
    await jest.advanceTimersByTimeAsync(1);
    expect(ScriptedSocket.made).toHaveLength(opened + 1);
    c.disconnect();
  });

  it('the jitter spans [0, reconnectionDelay) whatever the random source gives', async () => {
    const low = client({ random: () => 0 });
    expect(await delayAfter(low, 'restart; retry after 0 ms')).toBe(0);
    low.disconnect();
    const high = client({ random: () => 0.999 });
    expect(await delayAfter(high, 'restart; retry after 5000 ms')).toBe(5000 + 99);
    high.disconnect();
  });

  it('a 1012 without a readable hint, or a hint on another code, uses the ordinary backoff', async () => {
    for (const [code, reason] of [
      [1012, 'Service Restart'],
      [1012, 'restart; retry after -5 ms'],
      [1012, 'restart; retry after 99999999999 ms'],
      [1001, 'restart; retry after 3000 ms'],
    ] as const) {
      const c = client();
      expect(await delayAfter(c, reason, code)).toBe(99);
      c.disconnect();
    }
  });

  it('caps a hint at 10 minutes', async () => {
    const c = client({ random: () => 0 });
    expect(await delayAfter(c, 'restart; retry after 999999999 ms')).toBe(600_000);
    c.disconnect();
  });
});

describe('the README', () => {
  it('states the rule of every close code exactly as the client applies it', async () => {
    const { readFileSync } = await import('node:fs');
    const path = await import('node:path');
    const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('## The reconnect rule'),
      readme.indexOf('## Options'),
    );
    for (const code of table) {
      const row = new RegExp(
        `^\\| \`${code}\`[^|]*\\|[^|]*\\| ${reconnectsAfter(code) ? 'yes' : 'no'} `,
        'm',
      );
      expect({ code, documented: row.test(section) }).toEqual({ code, documented: true });
    }
  });
});
