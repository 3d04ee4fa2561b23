import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { CredentialRefresh, type RefreshHost } from './refresh';

const T0 = 1_000_000;

interface Rig {
  refresh: CredentialRefresh;
  sent: string[];
  answers: Array<(value: unknown) => void>;
  refusals: Array<(error: Error) => void>;
  refreshed: Array<number | null>;
  failed: Array<number | null>;
}

function rig(token: RefreshHost['token'] | null = () => 'tok'): Rig {
  const r: Omit<Rig, 'refresh'> = {
    sent: [],
    answers: [],
    refusals: [],
    refreshed: [],
    failed: [],
  };
  const refresh = new CredentialRefresh({
    token: token ?? undefined,
    random: () => 0,
    request: (_event, data) => {
      r.sent.push(data.auth);
      return new Promise((resolve, reject) => {
        r.answers.push(resolve);
        r.refusals.push(reject);
      });
    },
    refreshed: (expiresAt) => r.refreshed.push(expiresAt),
    failed: (_error, retryIn) => r.failed.push(retryIn),
  });
  return { refresh, ...r };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
};

beforeEach(() => {
  jest.useFakeTimers({ now: T0 });
});
afterEach(() => {
  jest.useRealTimers();
});

describe('CredentialRefresh', () => {
  it('plans a refresh before the expiry, then the next from the answer', async () => {
    const r = rig();
    r.refresh.start(T0 + 100_000);
    expect(r.refresh.state).toBe('scheduled');
    jest.advanceTimersByTime(69_999);
    await flush();
    expect(r.sent).toEqual([]);
    jest.advanceTimersByTime(1);
    await flush();
    expect(r.sent).toEqual(['tok']);
    expect(r.refresh.state).toBe('refreshing');
    r.answers[0]!({ expiresAt: T0 + 300_000 });
    await flush();
    expect(r.refreshed).toEqual([T0 + 300_000]);
    expect(r.refresh.state).toBe('scheduled');
    expect(r.refresh.expiresAt).toBe(T0 + 300_000);
  });

  it('does nothing without an expiry or without a token function; a null answer stops it', async () => {
    const none = rig(null);
    none.refresh.start(T0 + 100_000);
    expect(none.refresh.state).toBe('off');
    const r = rig();
    r.refresh.start(undefined);
    expect(r.refresh.state).toBe('off');
    r.refresh.start(T0 + 10_000);
    jest.advanceTimersByTime(10_000);
    await flush();
    r.answers[0]!({ expiresAt: null });
    await flush();
    expect(r.refreshed).toEqual([null]);
    expect(r.refresh.state).toBe('off');
  });

  it('a connection that closes during a refresh drops its answer: never doubled on the next one', async () => {
    const r = rig();
    r.refresh.start(T0 + 10_000);
    jest.advanceTimersByTime(10_000);
    await flush();
    expect(r.sent).toHaveLength(1);
    r.refresh.stop(); // the connection closed
    r.refresh.start(T0 + 60_000); // the next connection's welcome
    r.answers[0]!({ expiresAt: T0 + 999_999 }); // the old answer, late
    await flush();
    expect(r.refreshed).toEqual([]);
    expect(r.refresh.expiresAt).toBe(T0 + 60_000);
    expect(r.refresh.state).toBe('scheduled');
    expect(r.sent).toHaveLength(1);
  });

  it('a token still being fetched when the connection closes is never sent', async () => {
    let give!: (t: string) => void;
    const r = rig(() => new Promise<string>((resolve) => (give = resolve)));
    r.refresh.start(T0 + 10_000);
    jest.advanceTimersByTime(10_000);
    await flush();
    r.refresh.stop();
    give('late');
    await flush();
    expect(r.sent).toEqual([]);
  });

  it('retries a failed refresh after 1 s, 2 s, 4 s (with jitter) while time is left, then gives up', async () => {
    const r = rig();
    r.refresh.start(T0 + 4_000);
    jest.advanceTimersByTime(2_000);
    await flush();
    r.refusals[0]!(new Error('refused'));
    await flush();
    expect(r.failed).toEqual([500]);
    expect(r.refresh.state).toBe('retrying');
    jest.advanceTimersByTime(500);
    await flush();
    expect(r.sent).toHaveLength(2);
    r.refusals[1]!(new Error('refused'));
    await flush();
    expect(r.failed).toEqual([500, 1000]);
    // A token function that throws counts as a failure too.
    const throwing = rig(() => {
      throw new Error('no token');
    });
    throwing.refresh.start(Date.now() + 1_000);
    jest.advanceTimersByTime(500);
    await flush();
    expect(throwing.failed).toEqual([500]);
    // Past the expiry and the grace: no retry is planned.
    const late = rig();
    late.refresh.start(Date.now() + 1_000);
    jest.advanceTimersByTime(500);
    await flush();
    jest.setSystemTime(Date.now() + 20_000);
    late.refusals[0]!(new Error('refused'));
    await flush();
    expect(late.failed).toEqual([null]);
    expect(late.refresh.state).toBe('off');
  });

  it('refuses an empty token from the function as a failure, without sending it', async () => {
    const r = rig(() => '');
    r.refresh.start(T0 + 10_000);
    jest.advanceTimersByTime(10_000);
    await flush();
    expect(r.sent).toEqual([]);
    expect(r.failed).toHaveLength(1);
  });
});
