import { describe, expect, it } from '@jest/globals';
import { answerRequest, type LocalOperations } from './answer-request';

function local(here: string[]): { ops: LocalOperations; log: string[] } {
  const log: string[] = [];
  const ops: LocalOperations = {
    count: (t) => (t.room === null ? here.length : 1),
    ids: () => [...here],
    hasClient: (id) => here.includes(id),
    deliver: (id, text) => {
      log.push(`deliver ${id} ${text}`);
      return true;
    },
    disconnect: (id) => {
      log.push(`disconnect ${id}`);
      return here.includes(id);
    },
    joinRoom: (id, room, ns) => void log.push(`join ${id} ${room} ${ns}`),
    leaveRoom: (id, room, ns) => void log.push(`leave ${id} ${room} ${ns}`),
    revoke: (identity, room, ns) => {
      log.push(`revoke ${identity} ${room} ${ns}`);
      return identity === 'ann' ? 2 : 0;
    },
  };
  return { ops, log };
}

describe('answerRequest', () => {
  it('answers counts and ids from local membership', () => {
    const { ops } = local(['a', 'b']);
    expect(answerRequest({ kind: 'count', target: { namespace: null, room: null } }, ops)).toEqual({
      count: 2,
    });
    expect(answerRequest({ kind: 'ids', target: { namespace: '/', room: null } }, ops)).toEqual({
      ids: ['a', 'b'],
    });
  });

  it('answers a revocation with how many local connections it reached', () => {
    const { ops, log } = local([]);
    expect(answerRequest({ kind: 'revoke', identity: 'ann', room: 'r', namespace: '/' }, ops)).toEqual({ count: 2 }); // prettier-ignore
    expect(answerRequest({ kind: 'revoke', identity: 'bob', room: null, namespace: null }, ops)).toEqual({ count: 0 }); // prettier-ignore
    expect(log).toEqual(['revoke ann r /', 'revoke bob null null']);
  });

  it('acts only on clients that are here, and says whether it found them', () => {
    const { ops, log } = local(['a']);
    expect(answerRequest({ kind: 'send', clientId: 'a', text: 'T' }, ops)).toEqual({ found: true });
    expect(answerRequest({ kind: 'send', clientId: 'z', text: 'T' }, ops)).toEqual({
      found: false,
    });
    expect(
      answerRequest({ kind: 'joinRoom', clientId: 'a', room: 'r', namespace: '/' }, ops),
    ).toEqual({ found: true });
    expect(
      answerRequest({ kind: 'leaveRoom', clientId: 'z', room: 'r', namespace: '/' }, ops),
    ).toEqual({ found: false });
    expect(answerRequest({ kind: 'disconnect', clientId: 'a' }, ops)).toEqual({ found: true });
    expect(log).toEqual(['deliver a T', 'join a r /', 'disconnect a']);
  });
});
