/**
 * The chat page's list of lines. Every line starts with its time (the server's timestamp of a
 * message, the moment it was shown for the page's own notes) and is written with
 * `textContent` only. A message kept in a room's history carries its position
 * (`room epoch offset`), which keys its line: a message both in the history and live shows
 * once. Entering a room opens a history block: the room's earlier messages go in above a
 * divider ("Earlier messages above"), live lines below it.
 */
import type { RoomPosition } from '@pkg/client';
import { clock } from './words';

export interface HistoryBlock {
  /** True when the message at `pos` is on the page already. */
  has(pos: RoomPosition): boolean;
  /** Counts `pos` as shown without a line (a message left out or folded into another line). */
  skip(pos: RoomPosition): void;
  /** Adds an earlier line above the divider; null when its position is shown already. */
  insert(kind: string, text: string, at: number, pos?: RoomPosition): HTMLLIElement | null;
}

export interface MessageList {
  /** Appends a line (time `at` in ms, now by default). */
  add(kind: string, text: string, at?: number): HTMLLIElement;
  /** Appends a live message of a room; null when its position is shown already. */
  addKept(
    kind: string,
    text: string,
    at: number,
    pos: RoomPosition | undefined,
  ): HTMLLIElement | null;
  /** Appends a hidden divider; earlier lines of `room` go above it and show it. */
  openHistory(room: string): HistoryBlock;
  /** Marks the newest own line with this text as delivered (the server's answer arrived). */
  markDelivered(text: string): void;
}

const keyOf = (pos: RoomPosition): string => `${pos.room} ${pos.epoch} ${pos.offset}`;

export function createMessageList(list: HTMLUListElement): MessageList {
  /** Lines already on the page (or left out on purpose), by room position. */
  const shown = new Set<string>();

  const toBottom = (): void => {
    list.scrollTop = list.scrollHeight;
  };

  const line = (kind: string, text: string, at: number): HTMLLIElement => {
    const item = document.createElement('li');
    item.className = kind;
    const time = document.createElement('time');
    const when = new Date(at);
    time.dateTime = when.toISOString();
    time.title = when.toLocaleString();
    time.textContent = clock(at);
    const body = document.createElement('span');
    body.className = 'text';
    body.textContent = text;
    item.append(time, body);
    return item;
  };

  const add = (kind: string, text: string, at = Date.now()): HTMLLIElement => {
    const item = line(kind, text, at);
    list.appendChild(item);
    toBottom();
    return item;
  };

  return {
    add,
    addKept(kind, text, at, pos) {
      if (pos === undefined) return add(kind, text, at);
      if (shown.has(keyOf(pos))) return null;
      shown.add(keyOf(pos));
      return add(kind, text, at);
    },
    openHistory(room) {
      const divider = document.createElement('li');
      divider.className = 'divider';
      divider.hidden = true;
      divider.dataset['room'] = room;
      divider.textContent = `Earlier messages of room ${room} above \u00b7 new ones below`;
      list.appendChild(divider);
      return {
        has: (pos) => shown.has(keyOf(pos)),
        skip: (pos) => void shown.add(keyOf(pos)),
        insert(kind, text, at, pos) {
          if (pos !== undefined) {
            if (shown.has(keyOf(pos))) return null;
            shown.add(keyOf(pos));
          }
          const item = line(`${kind} history`, text, at);
          list.insertBefore(item, divider);
          divider.hidden = false;
          toBottom();
          return item;
        },
      };
    },
    markDelivered(text) {
      const mine = list.querySelectorAll<HTMLLIElement>('li.mine:not(.delivered)');
      for (let i = mine.length - 1; i >= 0; i -= 1) {
        const item = mine[i]!;
        if (item.dataset['text'] !== text) continue;
        item.classList.add('delivered');
        const mark = document.createElement('span');
        mark.className = 'delivery';
        mark.textContent = ' \u2713 delivered';
        item.appendChild(mark);
        return;
      }
    },
  };
}
