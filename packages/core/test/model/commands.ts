// The command arbitraries of the connection-model test, weighted so that the commands that
// need connections and sessions find them.
import fc from 'fast-check';
import {
  Broadcast,
  Disconnect,
  Drop,
  Join,
  SecondHello,
  Send,
  SendBinary,
  type RoomName,
} from './client-commands';
import {
  ConnectV0,
  ConnectV1,
  MessageBeforeHello,
  Resume,
  type CredKind,
  type ResumeKind,
} from './connect-commands';
import type { User } from './model';
import type { Cmd } from './step';

const pick = fc.nat({ max: 7 });
const user = fc.constantFrom<User>('alice', 'bob');

/** The command arbitraries; `only` (comma-separated names) restricts them, for diagnosis. */
export function commandArbitraries(only?: string): Array<fc.Arbitrary<Cmd>> {
  const all: Record<string, fc.Arbitrary<Cmd>> = {
    ConnectV0: fc.boolean().map((key) => new ConnectV0(key)),
    ConnectV1: fc
      .tuple(
        fc.constantFrom<CredKind>('good', 'good', 'good', 'slow', 'bad', 'banned', 'none', 'never'),
        user,
        fc.constantFrom<'none' | 'with id' | 'no id'>('none', 'none', 'with id', 'no id'),
      )
      .map(([kind, u, early]) => new ConnectV1(kind, u, early)),
    MessageBeforeHello: fc.boolean().map((withId) => new MessageBeforeHello(withId)),
    Resume: fc
      .tuple(fc.constantFrom<ResumeKind>('own', 'own', 'takeover', 'foreign', 'stale'), pick)
      .map(([kind, p]) => new Resume(kind, p)),
    Send: fc.tuple(pick, fc.boolean()).map(([p, withId]) => new Send(p, withId)),
    Join: fc
      .tuple(
        pick,
        fc.constantFrom<RoomName>('lobby', 'emoji', 'empty', 'lone surrogate', 'very long'),
        fc.boolean(),
      )
      .map(([p, room, withId]) => new Join(p, room, withId)),
    SecondHello: pick.map((p) => new SecondHello(p)),
    Drop: pick.map((p) => new Drop(p)),
    Broadcast: fc
      .tuple(fc.constantFrom<'lobby' | null>(null, 'lobby'), fc.boolean())
      .map(([room, binary]) => new Broadcast(room, binary)),
    SendBinary: fc
      .tuple(pick, fc.boolean(), fc.constantFrom(0, 1, 300, 70_000))
      .map(([p, withId, size]) => new SendBinary(p, withId, size)),
    Disconnect: pick.map((p) => new Disconnect(p)),
  };
  const names = only === undefined || only === '' ? Object.keys(all) : only.split(',');
  // Weights: most commands need a connection, and resumes need sessions and drops.
  const weight: Record<string, number> = {
    ConnectV1: 4,
    ConnectV0: 2,
    Resume: 3,
    Send: 2,
    Drop: 2,
    Broadcast: 2,
    SendBinary: 2,
    Join: 2,
  };
  return names.flatMap((name) => {
    const arb = all[name.trim()];
    if (arb === undefined)
      throw new Error(`FC_COMMANDS: unknown command ${name}; use ${Object.keys(all).join(', ')}`);
    return Array.from({ length: weight[name.trim()] ?? 1 }, () => arb);
  });
}
