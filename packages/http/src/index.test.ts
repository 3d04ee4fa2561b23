import { describe, expect, it } from '@jest/globals';
import * as http from './index';

describe('@pkg/http entry', () => {
  it('exports exactly its public API (a new export is a deliberate change)', () => {
    expect(Object.keys(http).sort()).toEqual([
      'CorsConfig',
      'HttpError',
      'HttpHandler',
      'MemoryRateLimitStore',
      'RateLimiter',
      'Request',
      'Response',
      'addressGroup',
      'compileTrustProxy',
      'httpErrorBody',
      'httpErrorCodes',
      'httpHandlerDefaults',
      'normalizeOriginEntry',
      'resolveClientAddress',
      'resolveForwarded',
      'serializeOrigin',
    ]);
  });
});
