import { describe, expect, it } from '@jest/globals';
import * as Y from 'yjs';
import { MAX_DOC_LENGTH, MAX_DOC_UPDATE_BYTES } from './doc-rules';

/** Whole numbers below `n` from a seed (a linear congruential generator): runs repeat. */
function numbers(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return Math.floor((state / 2147483648) * n);
  };
}

/**
 * A document typed as people do: the caret put somewhere, a run of 1-60 characters typed one
 * at a time (each its own Yjs change, as the textarea makes them), now and then a few
 * deleted, until it holds MAX_DOC_LENGTH characters.
 */
function typed(seed: number): Y.Doc {
  const next = numbers(seed);
  const doc = new Y.Doc();
  const text = doc.getText('text');
  while (text.length < MAX_DOC_LENGTH) {
    let at = next(text.length + 1);
    if (text.length > 10 && next(5) === 0) {
      const n = 1 + next(5);
      text.delete(Math.min(at, text.length - n), n);
      continue;
    }
    for (let k = 1 + next(60); k > 0; k -= 1) text.insert(at++, String.fromCharCode(97 + next(26)));
  }
  return doc;
}

describe('the shared document limits', () => {
  it('let a page send a document at the textarea limit whole, typed as people type', () => {
    const whole = Y.encodeStateAsUpdate(typed(20261128));
    // About 45 KB, a third of MAX_DOC_UPDATE_BYTES: room for more scattered editing.
    expect(whole.length).toBeLessThanOrEqual(MAX_DOC_UPDATE_BYTES / 2);
  });
});
