// The base of every command of the connection-model test, and what commands share: act on
// the real server and the model, then read what the connections saw and check every
// invariant (model.ts).
import type fc from 'fast-check';
import {
  InvariantError,
  checkDeadlines,
  checkHealth,
  checkSafety,
  observe,
  type Client,
  type Model,
  type Real,
} from './model';

export type Cmd = fc.AsyncCommand<Model, Real, false>;

export function fail(message: string): never {
  throw new InvariantError(message);
}

/** Turns a bounded wait that ran out into an invariant failure naming what was expected. */
export const expectWithin = <T>(p: Promise<T>): Promise<T> =>
  p.catch((err: Error) => fail(err.message));

/** Every command: act, then read what the connections saw and check the invariants. */
export abstract class Step implements Cmd {
  abstract check(m: Readonly<Model>): boolean;
  abstract act(m: Model, r: Real): Promise<void>;
  abstract toString(): string;

  async run(m: Model, r: Real): Promise<void> {
    observe(m);
    await this.act(m, r);
    observe(m);
    checkSafety(m, r);
    checkDeadlines(m);
    await checkHealth(m, r);
  }
}

/**
 * Picks the `pick`-th (modulo) of the candidates; undefined when none is left (a connection
 * can close between `check()` and `run()`; the command then does nothing).
 */
export function choose<T>(list: T[], pick: number): T | undefined {
  return list.length === 0 ? undefined : list[pick % list.length];
}

export const live = (m: Readonly<Model>): Client[] => m.clients.filter((c) => c.phase !== 'closed');
export const open = (m: Readonly<Model>): Client[] => m.clients.filter((c) => c.phase === 'open');

/** Sends `echo` from a connection (with a fresh id unless `withId` is false); the id. */
export function sendEcho(c: Client, withId = true): number | undefined {
  const data = { tag: c.tag, k: c.nextId };
  if (c.phase !== 'open') c.earlyMessages += 1;
  if (!withId) {
    c.nextId += 1;
    c.conn.send({ event: 'echo', data });
    return undefined;
  }
  const id = c.nextId++;
  // Only a request that left the client can be owed an answer.
  if (c.conn.send({ event: 'echo', data, id })) c.requests.set(id, Date.now());
  return id;
}
