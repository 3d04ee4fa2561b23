// The README's presence example, run as written against the real server with presence on:
// the client joins the lobby and logs who came in and who is there.
import { afterEach, describe, expect, it } from '@jest/globals';
import { RoomsController } from '@pkg/core';
import { cleanup, startCoreServer } from './helpers';
import { runReadmeExample } from './readme-example';

afterEach(cleanup);

describe('README presence example', () => {
  it('logs the arrival and the list of the lobby', async () => {
    const { url, server } = await startCoreServer(() => [new RoomsController()], undefined, {
      presence: [{ match: 'lobby' }],
    });
    server.onPresence(() => ({ name: 'Ada' }));
    await runReadmeExample('presence', url, async (lines) => {
      expect(await lines.waitFor(2)).toEqual(['Ada came in', 'in the lobby: Ada (1)']);
    });
  });
});
