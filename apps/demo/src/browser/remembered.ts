/**
 * What the chat page remembers across a reload: the name typed, the room and whether a token
 * was used, in `localStorage` (this browser, until the site's data is cleared), and the token
 * itself in `sessionStorage` (this tab only, gone when it closes). A reload brings a page back
 * to its room under the same name, a signed-in one under the same account, while a token
 * never outlives its tab: another tab, or the browser started again, knows the room and name
 * but asks for the token. A browser that refuses storage (a private mode, a quota) simply
 * remembers nothing.
 */

const NAME = 'chat-demo.name';
const ROOM = 'chat-demo.room';
const SIGNED_IN = 'chat-demo.signed-in';
const TOKEN = 'chat-demo.token';

export interface Remembered {
  name: string;
  room: string;
  /** The token of this tab, '' for a guest or when this tab does not know it. */
  token: string;
  /** True when the room was joined with a token (whether or not this tab still has it). */
  signedIn: boolean;
}

function read(storage: () => Storage, key: string): string {
  try {
    return storage().getItem(key) ?? '';
  } catch {
    return '';
  }
}

function write(storage: () => Storage, key: string, value: string): void {
  try {
    if (value === '') storage().removeItem(key);
    else storage().setItem(key, value);
  } catch {
    // nothing is remembered
  }
}

const local = (): Storage => window.localStorage;
const session = (): Storage => window.sessionStorage;

/** The name and room of the last room joined in this browser, or null. */
export function recall(): Remembered | null {
  const room = read(local, ROOM);
  if (room === '') return null;
  return {
    name: read(local, NAME),
    room,
    token: read(session, TOKEN),
    signedIn: read(local, SIGNED_IN) === '1',
  };
}

/** Remembers the room just joined, with the name typed and the token used ('' for none). */
export function remember(name: string, room: string, token: string): void {
  write(local, NAME, name);
  write(local, ROOM, room);
  write(local, SIGNED_IN, token === '' ? '' : '1');
  write(session, TOKEN, token);
}
