// The log scope: values opened with runWithLogContext appear on every line a Logger writes
// while that work runs, also after an await, and never on lines of other work.
import { afterEach, describe, expect, it } from '@jest/globals';
import { Logger, currentLogContext, runWithLogContext, withLogScope } from '@pkg/logger';
import { CaptureStream, untimed } from './support';

const loggers: Logger[] = [];
afterEach(async () => {
  await Promise.all(loggers.splice(0).map((l) => l.close()));
});

function capture(): { logger: Logger; out: CaptureStream } {
  const out = new CaptureStream(false);
  const logger = new Logger({ minLogLevel: 'debug', logToConsole: true, logToFile: false });
  logger.setConsoleStream(out);
  loggers.push(logger);
  return { logger, out };
}

describe('runWithLogContext', () => {
  it('adds the scope to every line of the work, across awaits, and only to it', async () => {
    const { logger, out } = capture();
    const work = (id: string) =>
      runWithLogContext({ requestId: id, clientId: `c${id}` }, async () => {
        logger.info('start');
        await new Promise((resolve) => setTimeout(resolve, 5));
        logger.info('after {step}', { step: 'wait', requestId: 'own' });
      });
    await Promise.all([work('1'), work('2')]);
    logger.info('outside');
    await logger.close();
    const lines = out.lines.map(untimed).sort();
    expect(lines).toEqual([
      '[INFO] after wait {"requestId":"own","clientId":"c1"}',
      '[INFO] after wait {"requestId":"own","clientId":"c2"}',
      '[INFO] outside',
      '[INFO] start {"requestId":"1","clientId":"c1"}',
      '[INFO] start {"requestId":"2","clientId":"c2"}',
    ]);
  });

  it('nests (the inner scope replaces the outer one), and leaves undefined values out', () => {
    expect(currentLogContext()).toBeUndefined();
    runWithLogContext({ requestId: 'a' }, () => {
      expect(currentLogContext()).toEqual({ requestId: 'a' });
      runWithLogContext({ requestId: 'b', traceId: undefined }, () => {
        expect(withLogScope({ x: 1 })).toEqual({ requestId: 'b', x: 1 });
      });
      expect(currentLogContext()).toEqual({ requestId: 'a' });
    });
    const same = { x: 1 };
    expect(withLogScope(same)).toBe(same);
  });
});
