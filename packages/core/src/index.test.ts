import { describe, expect, it } from '@jest/globals';
import * as decorators from '@pkg/decorators';
import * as http from '@pkg/http';
import * as logger from '@pkg/logger';
import * as wsProtocol from '@pkg/ws-protocol';
import * as core from './index';

describe('@pkg/core entry', () => {
  it.each([
    ['@pkg/logger', logger],
    ['@pkg/http', http],
    ['@pkg/ws-protocol', wsProtocol],
    ['@pkg/decorators', decorators],
  ])('re-exports every runtime export of %s unchanged', (_name, mod) => {
    for (const [key, value] of Object.entries(mod)) {
      expect([key, (core as Record<string, unknown>)[key]]).toEqual([key, value]);
    }
  });

  it('exports its own API', () => {
    for (const name of [
      'Server',
      'ServerConfig',
      'Router',
      'Middleware',
      'NamespaceManager',
      'SocketController',
      'RoomsController',
      'LocalAdapter',
      'coreErrorCodes',
      'buildHealthDocument',
    ]) {
      expect(typeof (core as Record<string, unknown>)[name]).not.toBe('undefined');
    }
  });
});
