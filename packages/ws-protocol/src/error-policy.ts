/**
 * How an `error` code is spaced and counted, read from `@pkg/wire`'s error table: one row per
 * code the protocol defines. A code the table does not know (an application's own, sent with
 * `refuse()` or core's `sendEventError`) is neither throttled nor a protocol error.
 */
import { wireErrors, type WireErrorCodeValue } from '@pkg/wire';

export interface ErrorPolicy {
  readonly throttled: boolean;
  readonly protocolError: boolean;
}

const NEITHER: ErrorPolicy = { throttled: false, protocolError: false };

export function errorPolicy(code: string): ErrorPolicy {
  return Object.hasOwn(wireErrors, code) ? wireErrors[code as WireErrorCodeValue] : NEITHER;
}
