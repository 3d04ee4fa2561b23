import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { META_LIMITS, readEnvelopeMeta } from './envelope';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('readEnvelopeMeta', () => {
  it('keeps a traceparent and the tracestate beside it', () => {
    expect(readEnvelopeMeta({ traceparent: PARENT })).toEqual({ traceparent: PARENT });
    expect(readEnvelopeMeta({ traceparent: PARENT, tracestate: 'a=1', x: 2 })).toEqual({
      traceparent: PARENT,
      tracestate: 'a=1',
    });
  });

  it('ignores a malformed or oversized meta instead of refusing the message', () => {
    for (const meta of [
      undefined,
      null,
      'x',
      42,
      [],
      {},
      { traceparent: 7 },
      { traceparent: '' },
      { traceparent: 'x'.repeat(META_LIMITS.traceparent + 1) },
      { tracestate: 'a=1' },
    ]) {
      expect(readEnvelopeMeta(meta)).toBeUndefined();
    }
    // A bad tracestate is dropped; the traceparent still counts.
    expect(readEnvelopeMeta({ traceparent: PARENT, tracestate: 'y'.repeat(513) })).toEqual({
      traceparent: PARENT,
    });
    expect(readEnvelopeMeta({ traceparent: PARENT, tracestate: 5 })).toEqual({
      traceparent: PARENT,
    });
  });

  it('never throws and never returns more than the bounds allow, whatever it is given', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const meta = readEnvelopeMeta(value);
        if (meta === undefined) return;
        expect(meta.traceparent!.length).toBeLessThanOrEqual(META_LIMITS.traceparent);
        expect((meta.tracestate ?? '').length).toBeLessThanOrEqual(META_LIMITS.tracestate);
      }),
    );
  });
});
