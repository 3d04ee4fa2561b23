// `seq` is scoped to a session: when `$welcome` says `resumed: false` the server numbers from
// 1 again, and the client must reset the last `seq` it saw, or it drops every message of the
// new session as "already processed" (a literal reading of the old document did).
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ConnectInfo } from '../src/index';
import { Recorder, cleanup, makeClient, next, startCoreServer } from './helpers';

afterEach(cleanup);

describe('seq across sessions', () => {
  it('delivers the new session’s messages (seq from 1) after a restart refused the resume', async () => {
    const srv = await startCoreServer(() => []);
    const client = makeClient(srv.url);
    const heard = new Recorder<unknown>();
    client.on('news', heard.push);
    await client.connect();
    for (let n = 1; n <= 5; n++) srv.server.broadcast('news', { n });
    await heard.waitFor(5);

    const back = next<ConnectInfo>(client, 'connect');
    await srv.restart();
    const info = await back;
    expect(info).toMatchObject({ protocol: 1, resumed: false, freshReason: 'unknown' });
    srv.server.broadcast('news', { n: 'fresh' });
    expect(await heard.waitFor(6)).toEqual([
      { n: 1 },
      { n: 2 },
      { n: 3 },
      { n: 4 },
      { n: 5 },
      { n: 'fresh' },
    ]);
  });
});
