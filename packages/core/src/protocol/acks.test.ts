import { describe, expect, it } from '@jest/globals';
import { PendingRequests, ServerRequests } from './acks';

describe('ServerRequests', () => {
  it('resolves with the $ack data (null for none) and ignores unknown or repeated rids', async () => {
    const requests = new ServerRequests({ maxPerClient: 4, defaultTimeout: 60_000 });
    const c1 = new PendingRequests();
    const c2 = new PendingRequests();
    const rids: string[] = [];
    const a = requests.request(c1, 'c1', 'q', undefined, (rid) => (rids.push(rid), true));
    const b = requests.request(c1, 'c1', 'q', undefined, (rid) => (rids.push(rid), true));
    expect(new Set(rids).size).toBe(2);
    requests.settle(c1, 'c1', 'nope', true, 1);
    requests.settle(c2, 'c2', rids[0]!, true, 1);
    requests.settle(c1, 'c1', rids[0]!, true, { ok: 1 });
    requests.settle(c1, 'c1', rids[0]!, true, 'again');
    requests.settle(c1, 'c1', rids[1]!, true, undefined);
    await expect(a).resolves.toEqual({ ok: 1 });
    await expect(b).resolves.toBeNull();
    expect(c2.size).toBe(0);
    expect(c1.size).toBe(0);
  });

  it('refuses past the limit with a RangeError and without sending, and rejects on $nack', async () => {
    const requests = new ServerRequests({ maxPerClient: 1, defaultTimeout: 60_000 });
    const c1 = new PendingRequests();
    let sent = 0;
    let rid = '';
    const first = requests.request(c1, 'c1', 'q', undefined, (r) => ((rid = r), (sent += 1), true));
    const second = requests.request(c1, 'c1', 'q', undefined, () => ((sent += 1), true));
    await expect(second).rejects.toMatchObject({
      name: 'RangeError',
      code: 'PKG_ERR_CORE_TOO_MANY_PENDING',
    });
    expect(sent).toBe(1);
    requests.settle(c1, 'c1', rid, false, { code: 'unknown_event', message: 'no handler' });
    await expect(first).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_ACK_REFUSED',
      remoteCode: 'unknown_event',
    });
  });

  it('rejects on timeout, when the send fails, and every pending request of a client that leaves', async () => {
    const requests = new ServerRequests({ maxPerClient: 8, defaultTimeout: 60_000 });
    const c1 = new PendingRequests();
    await expect(requests.request(c1, 'c1', 'late', 5, () => true)).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_ACK_TIMEOUT',
      message: expect.stringContaining('client c1'),
    });
    await expect(requests.request(c1, 'c1', 'q', undefined, () => false)).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_CLIENT_GONE',
    });
    const pending = [1, 2].map(() => requests.request(c1, 'c1', 'q', undefined, () => true));
    expect(c1.size).toBe(2);
    c1.rejectAll('c1');
    for (const p of pending)
      await expect(p).rejects.toMatchObject({ code: 'PKG_ERR_CORE_CLIENT_GONE' });
    expect(c1.size).toBe(0);
    await expect(requests.request(c1, 'c1', 'q', 0, () => true)).rejects.toMatchObject({
      name: 'RangeError',
      code: 'PKG_ERR_CORE_INVALID_ARGUMENT',
    });
  });
});
