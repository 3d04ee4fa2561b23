/**
 * The chat page's "In this room" list: the room's presence from `client.presence(room)`,
 * one line per key (a user with two tabs once, with the number of tabs), updated on every
 * `sync`. Everyone is shown by the name the chat shows (the meta's `name`: the account's name
 * for a signed-in user, `guest-...` for a guest), the key only for a meta without one.
 */
import type { Client, Presence } from '@pkg/client';
import type { ClientEvents, ServerEvents } from '../events';
import type { DemoPresenceMeta } from '../presence';

export interface PresenceList {
  /** Shows the presence of `room` (a new room replaces the one shown). */
  show(client: Client<ClientEvents, ServerEvents>, room: string, ownKeys: string[]): void;
  /** Shows nobody and stops listening. */
  clear(): void;
}

export function createPresenceList(element: HTMLUListElement, count: HTMLElement): PresenceList {
  let view: Presence<DemoPresenceMeta> | null = null;
  let own: string[] = [];

  const render = (): void => {
    if (!view) return;
    const items = view.list((key, { metas }) => ({
      key,
      name: metas.find((m) => typeof m.name === 'string')?.name ?? key,
      tabs: metas.length,
    }));
    element.replaceChildren(
      ...items.map(({ key, name, tabs }) => {
        const item = document.createElement('li');
        item.dataset['key'] = key;
        item.textContent = `${name}${tabs > 1 ? ` (${tabs} tabs)` : ''}${own.includes(key) ? ' (you)' : ''}`;
        return item;
      }),
    );
    const stats = view.stats();
    count.textContent = stats ? String(stats.keys) : '-';
  };

  const clear = (): void => {
    view?.close();
    view = null;
    element.replaceChildren();
    count.textContent = '-';
  };

  return {
    show(client, room, ownKeys) {
      own = ownKeys;
      const next = client.presence(room);
      if (next !== view) {
        clear();
        view = next;
        view.on('sync', render);
      }
      render();
    },
    clear,
  };
}
