import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as Y from 'yjs';
import { diffText, shiftIndex, type TextEdit } from './text-binding';

const applyEdit = (text: string, { index, remove, insert }: TextEdit): string =>
  text.slice(0, index) + insert + text.slice(index + remove);

/** The delta Y.Text reports for `edit` applied to a text holding `before`. */
function deltaOf(before: string, edit: TextEdit): Y.YTextEvent['delta'] {
  const doc = new Y.Doc();
  const text = doc.getText('t');
  text.insert(0, before);
  let delta: Y.YTextEvent['delta'] = [];
  text.observe((event) => {
    delta = event.delta;
  });
  doc.transact(() => {
    if (edit.remove > 0) text.delete(edit.index, edit.remove);
    if (edit.insert !== '') text.insert(edit.index, edit.insert);
  });
  expect(text.toString()).toBe(applyEdit(before, edit));
  return delta;
}

describe('diffText', () => {
  it('finds the one edit between two texts', () => {
    expect(diffText('hello world', 'hello brave world')).toEqual({
      index: 6,
      remove: 0,
      insert: 'brave ',
    });
    expect(diffText('hello world', 'hello')).toEqual({ index: 5, remove: 6, insert: '' });
    expect(diffText('abc', 'aXc')).toEqual({ index: 1, remove: 1, insert: 'X' });
    expect(diffText('same', 'same')).toEqual({ index: 4, remove: 0, insert: '' });
    // A repeated letter: the edit is found after the common prefix, never overlapping it.
    expect(diffText('aa', 'aaa')).toEqual({ index: 2, remove: 0, insert: 'a' });
  });

  it('turns any text into any other (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (before, after) => {
        const edit = diffText(before, after);
        expect(applyEdit(before, edit)).toBe(after);
        expect(edit.index + edit.remove).toBeLessThanOrEqual(before.length);
      }),
    );
  });
});

describe('shiftIndex', () => {
  it('keeps a caret on its character across a change elsewhere', () => {
    // "hello world", caret before "w" (6); someone inserts "big " at 6 and deletes "hello ".
    expect(shiftIndex(6, deltaOf('hello world', { index: 0, remove: 6, insert: '' }))).toBe(0);
    expect(shiftIndex(8, deltaOf('hello world', { index: 0, remove: 0, insert: '>> ' }))).toBe(11);
    expect(shiftIndex(2, deltaOf('hello world', { index: 6, remove: 0, insert: 'big ' }))).toBe(2);
    // Inside deleted text: to where the deletion was.
    expect(shiftIndex(3, deltaOf('hello world', { index: 1, remove: 4, insert: '' }))).toBe(1);
    // Text inserted right at the caret goes before it, and so does a replacement.
    expect(shiftIndex(6, deltaOf('hello world', { index: 6, remove: 0, insert: 'big ' }))).toBe(10);
    expect(shiftIndex(5, deltaOf('hello world', { index: 0, remove: 5, insert: 'hi' }))).toBe(2);
  });

  it('moves every position to the same character in the new text (property)', () => {
    const letters = fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 12 });
    fc.assert(
      fc.property(letters, letters, fc.nat(), (before, after, caret) => {
        const index = caret % (before.length + 1);
        const edit = diffText(before, after);
        const moved = shiftIndex(index, deltaOf(before, edit));
        expect(moved).toBeGreaterThanOrEqual(0);
        expect(moved).toBeLessThanOrEqual(after.length);
        // A caret before the edit stays; one after it keeps its distance to the end; one
        // in deleted text goes to where the deletion was.
        if (index < edit.index) expect(moved).toBe(index);
        else if (index >= edit.index + edit.remove) {
          expect(after.length - moved).toBe(before.length - index);
        } else expect(moved).toBe(edit.index);
      }),
    );
  });
});
