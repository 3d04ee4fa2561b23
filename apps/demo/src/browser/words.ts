/**
 * What the chat page says, as plain functions of their inputs (no DOM, so they are
 * unit-tested in Node): a line's time, a run of old joins and leaves in one sentence, and
 * which name the page chats under and why.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * A line's time in the browser's time zone: `14:05` on the day of `now`, `3 Mar 14:05`
 * before it.
 */
export function clock(at: number, now: number = Date.now()): string {
  const d = new Date(at);
  const n = new Date(now);
  const time = `${two(d.getHours())}:${two(d.getMinutes())}`;
  const sameDay =
    d.getFullYear() === n.getFullYear() &&
    d.getMonth() === n.getMonth() &&
    d.getDate() === n.getDate();
  return sameDay ? time : `${d.getDate()} ${MONTHS[d.getMonth()]} ${time}`;
}

/** One join or leave from a room's history. */
export interface Coming {
  kind: 'joined' | 'left';
  name: string;
}

const list = (names: string[]): string => {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
};

/**
 * A run of joins and leaves from a room's history in one sentence, each name once, by what
 * it did first and last: `guest-Ada and Bob joined; guest-Cy joined and left.`
 */
export function summarizeComings(run: readonly Coming[]): string {
  const byName = new Map<string, { first: Coming['kind']; last: Coming['kind'] }>();
  for (const { kind, name } of run) {
    const seen = byName.get(name);
    if (seen) seen.last = kind;
    else byName.set(name, { first: kind, last: kind });
  }
  const groups = new Map<string, string[]>();
  for (const [name, { first, last }] of byName) {
    const what =
      first === last ? first : first === 'joined' ? 'joined and left' : 'left and came back';
    const names = groups.get(what) ?? [];
    names.push(name);
    groups.set(what, names);
  }
  const parts = [...groups].map(([what, names]) => `${list(names)} ${what}`);
  return parts.length === 0 ? '' : `${parts.join('; ')}.`;
}

/**
 * Which name the page chats under, and why: a token's account name replaces a typed name,
 * and a guest's name is marked `guest-`.
 */
export function explainName(shown: string, typed: string, user: { name: string } | null): string {
  if (user) {
    if (typed !== '' && typed !== user.name) {
      return `You chat as ${shown}: the token signs you in as ${user.name}, and a signed-in user always appears under the account's name, so the name you typed ("${typed}") is not used.`;
    }
    return `You chat as ${shown}: the name of the account the token signs you in as.`;
  }
  const marked =
    'without a token you are a guest, and a guest\'s name always starts with "guest-" so that nobody can pass for a signed-in user';
  if (typed === '')
    return `You chat as ${shown}: ${marked}; you typed no name, so the server chose one.`;
  return `You chat as ${shown}: ${marked}.`;
}
