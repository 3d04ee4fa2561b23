/**
 * A `<textarea>` bound to a `Y.Text`: what the user types becomes one Yjs change per input
 * event (the smallest delete and insert that turn the old text into the new one), and a
 * change from elsewhere rewrites the textarea's value while the caret and selection stay on
 * the same characters. Indices are UTF-16 code units on both sides, as in the DOM.
 */
import * as Y from 'yjs';

/** One edit: at `index`, delete `remove` characters, then insert `insert`. */
export interface TextEdit {
  index: number;
  remove: number;
  insert: string;
}

/** The single edit that turns `before` into `after` (common prefix and suffix kept). */
export function diffText(before: string, after: string): TextEdit {
  let start = 0;
  const shortest = Math.min(before.length, after.length);
  while (start < shortest && before[start] === after[start]) start += 1;
  let end = 0;
  while (
    end < shortest - start &&
    before[before.length - 1 - end] === after[after.length - 1 - end]
  ) {
    end += 1;
  }
  return {
    index: start,
    remove: before.length - start - end,
    insert: after.slice(start, after.length - end),
  };
}

/**
 * Where the character position `index` of the old text lands in the new one, after the
 * change `delta` (a Y.Text event's delta): it stays before the same character. A position
 * inside deleted text moves to where the deletion was; text inserted right at the position
 * goes before it.
 */
export function shiftIndex(index: number, delta: Y.YTextEvent['delta']): number {
  let before = 0; // position in the old text
  let after = 0; // the same position in the new text
  for (const op of delta) {
    if (op.retain !== undefined) {
      if (index < before + op.retain) return after + (index - before);
      before += op.retain;
      after += op.retain;
    } else if (op.delete !== undefined) {
      if (index < before + op.delete) return after;
      before += op.delete;
    } else if (op.insert !== undefined) {
      after += typeof op.insert === 'string' ? op.insert.length : 1;
    }
  }
  return after + (index - before);
}

/** Binds `area` to `text`; returns the function that unbinds them. */
export function bindTextarea(text: Y.Text, area: HTMLTextAreaElement): () => void {
  let shown = text.toString();
  area.value = shown;

  const onInput = (): void => {
    const edit = diffText(shown, area.value);
    shown = area.value;
    text.doc!.transact(() => {
      if (edit.remove > 0) text.delete(edit.index, edit.remove);
      if (edit.insert !== '') text.insert(edit.index, edit.insert);
    }, area);
  };

  const onChange = (event: Y.YTextEvent): void => {
    if (event.transaction.origin === area) return;
    const { selectionStart, selectionEnd, selectionDirection } = area;
    shown = text.toString();
    area.value = shown;
    area.setSelectionRange(
      shiftIndex(selectionStart, event.delta),
      shiftIndex(selectionEnd, event.delta),
      selectionDirection,
    );
  };

  area.addEventListener('input', onInput);
  text.observe(onChange);
  return () => {
    area.removeEventListener('input', onInput);
    text.unobserve(onChange);
  };
}
