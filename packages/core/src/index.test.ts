import { describe, expect, it } from '@jest/globals';
import * as decorators from '@pkg/decorators';
import * as http from '@pkg/http';
import * as logger from '@pkg/logger';
import * as wsProtocol from '@pkg/ws-protocol';
import * as core from './index';

// The runtime exports of @pkg/core, sorted. Adding or removing one is a change of the public
// API: update this list, the README's "Public exports" and a changeset together.
const RUNTIME_EXPORTS = [
  'AbstractLogger',
  'CLIENT_ID_ATTRIBUTE',
  'CoreEventErrorCode',
  'CorsConfig',
  'DEFAULT_NAMESPACE',
  'HttpError',
  'HttpHandler',
  'HttpRoute',
  'LocalAdapter',
  'LogLevel',
  'Logger',
  'MAX_KEPT_EXCEPT',
  'MemoryHistoryStore',
  'MemoryRateLimitStore',
  'Middleware',
  'NamespaceManager',
  'NullLogger',
  'OnConnect',
  'OnDisconnect',
  'REQUEST_ID_ATTRIBUTE',
  'RateLimit',
  'RateLimiter',
  'Request',
  'Response',
  'RoomsController',
  'Router',
  'SERVER_CONFIG_DEFAULTS',
  'Server',
  'ServerConfig',
  'SocketController',
  'SocketOn',
  'WebSocketHandler',
  'WsCloseCode',
  'WsEventErrorCode',
  'bytesSchema',
  'coreErrorCodes',
  'createAccessCheck',
  'currentLogContext',
  'fillTemplate',
  'isBinaryTemplate',
  'runWithLogContext',
];

describe('@pkg/core entry', () => {
  it('exports exactly the pinned runtime names', () => {
    expect(Object.keys(core).sort()).toEqual(RUNTIME_EXPORTS);
  });

  it('re-exports the names of the other packages unchanged (same objects)', () => {
    const sources: Record<string, unknown>[] = [logger, http, wsProtocol, decorators];
    const exports = core as Record<string, unknown>;
    for (const name of RUNTIME_EXPORTS) {
      const source = sources.find((mod) => Object.hasOwn(mod, name));
      if (source !== undefined) expect([name, exports[name]]).toEqual([name, source[name]]);
    }
    expect(exports['Request']).toBe(http.Request);
    expect(exports['SocketOn']).toBe(decorators.SocketOn);
  });

  it('keeps internal helpers off the public surface', () => {
    for (const name of [
      'RouteTable',
      'parseRoutePath',
      'splitRequestPath',
      'extractPathParameters',
      'formatUptime',
      'buildHealthDocument',
      'allowHeader',
      'parseRequestTarget',
      'normalizeIp',
      'parseHost',
      'parseForwardedHeader',
      'compileTrustProxy',
      'getControllerMetadata',
      'SocketContext',
      'createCoreError',
    ]) {
      expect([name, Object.hasOwn(core, name)]).toEqual([name, false]);
    }
  });
});
