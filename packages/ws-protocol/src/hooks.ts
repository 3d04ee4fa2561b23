/** Runs the handshake hooks in order, with a time limit, and turns their answers into refusals. */
import type { LoggerInterface } from '@pkg/logger';
import { refusalStatus } from './handshake';
import type { HandshakeContext, HandshakeFailure, HandshakeHook } from './handshake';

/** A hook's return value as a refusal, or undefined when it accepts. */
function toFailure(result: unknown): HandshakeFailure | undefined {
  if (result === false) {
    return { status: 403, code: 'PKG_ERR_WS_HANDSHAKE_REFUSED', message: 'Forbidden' };
  }
  if (typeof result !== 'object' || result === null || !('status' in result)) return undefined;
  const refusal = result as { status: unknown; message?: unknown; headers?: unknown };
  const headers =
    typeof refusal.headers === 'object' && refusal.headers !== null
      ? (refusal.headers as Record<string, string>)
      : undefined;
  return {
    status: refusalStatus(refusal.status),
    code: 'PKG_ERR_WS_HANDSHAKE_REFUSED',
    message: typeof refusal.message === 'string' ? refusal.message : 'Refused',
    ...(headers ? { headers } : {}),
  };
}

async function runInOrder(
  hooks: readonly HandshakeHook[],
  context: HandshakeContext,
  log: LoggerInterface,
): Promise<HandshakeFailure | undefined> {
  for (const hook of hooks) {
    let result: unknown;
    try {
      result = await hook(context);
    } catch (err) {
      log.exception(err, { code: 'PKG_ERR_WS_HANDSHAKE_HOOK_FAILED', clientId: context.clientId });
      return {
        status: 500,
        code: 'PKG_ERR_WS_HANDSHAKE_HOOK_FAILED',
        message: 'Internal Server Error',
      };
    }
    const failure = toFailure(result);
    if (failure) return failure;
  }
  return undefined;
}

/**
 * Runs `hooks` one after the other; the first refusal (a `{status, message}` object, or
 * `false`) stops the run. A hook that throws gives 500, a run longer than `timeoutMs` 503
 * (`0` = no limit; a hook still running then is left to finish, its answer ignored).
 */
export async function runHandshakeHooks(
  hooks: readonly HandshakeHook[],
  context: HandshakeContext,
  timeoutMs: number,
  log: LoggerInterface,
): Promise<HandshakeFailure | undefined> {
  if (timeoutMs === 0) return runInOrder(hooks, context, log);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<HandshakeFailure>((resolve) => {
    timer = setTimeout(() => {
      resolve({
        status: 503,
        code: 'PKG_ERR_WS_HANDSHAKE_TIMEOUT',
        message: 'Handshake timed out.',
      });
    }, timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([runInOrder(hooks, context, log), expired]);
  } finally {
    clearTimeout(timer);
  }
}
