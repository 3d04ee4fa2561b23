// What an instance does with the admin's cluster query when another instance (or anything
// else on the request channel) sends it odd payloads: an error answer, never a crash, and
// nothing changed.
import { describe, expect, it } from '@jest/globals';
import { NullLogger, Server, ServerConfig } from '@pkg/core';
import { LocalViews } from './local-views';
import { resolveAdminOptions } from './options';
import { ConnectionTraces } from './trace';

function views(actions = {}): LocalViews {
  const server = new Server(new ServerConfig({ port: 0 }), undefined, undefined, undefined, new NullLogger()); // prettier-ignore
  const options = resolveAdminOptions({ actions });
  return new LocalViews(server, options, new ConnectionTraces(options.trace));
}

describe('LocalViews.answer', () => {
  it('throws on payloads that are not an admin query, or not of its shape', () => {
    const v = views();
    const odd: unknown[] = [
      null,
      7,
      'nodes',
      [],
      { view: 'delete' },
      { view: 'connections', search: 5, sort: 'age', after: null, limit: 10 },
      { view: 'connections', search: '', sort: 'size', after: null, limit: 10 },
      { view: 'connections', search: '', sort: 'age', after: null, limit: 0 },
      { view: 'rooms', search: null, after: null, limit: 10 },
    ];
    for (const payload of odd) expect(() => v.answer(payload)).toThrow();
  });

  it('answers its own questions on a server that holds nothing', () => {
    const v = views();
    expect(v.answer({ view: 'connections', search: '', sort: 'age', after: null, limit: 5 })).toEqual({ rows: [], total: 0, next: null }); // prettier-ignore
    expect(v.answer({ view: 'rooms', search: '', after: null, limit: 5 })).toEqual({ rows: [], total: 0, more: false }); // prettier-ignore
    expect(v.answer({ view: 'trace', op: 'read', id: 'x', since: 0 })).toEqual({ found: false });
    expect(v.answer({ view: 'nodes' })).toMatchObject({ connections: 0, adapter: 'local' });
  });

  it('refuses a disconnect asked by another instance when this one does not enable it', () => {
    expect(() => views().answer({ view: 'disconnect', id: 'x' })).toThrow(/not enabled here/);
    expect(views({ disconnect: true }).answer({ view: 'disconnect', id: 'x' })).toEqual({ found: false }); // prettier-ignore
  });
});
