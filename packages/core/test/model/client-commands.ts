// Commands on open connections and on the server: requests with and without ids, joins with
// good and odd room names, a second `$hello`, TCP drops, broadcasts and disconnectClient.
import { WAIT, type Received } from './harness';
import { encodeBinaryFrame } from '@pkg/wire';
import { newsBytes, newsNumber, type Client, type Model, type Real } from './model';
import { Step, choose, expectWithin, fail, live, open, sendEcho } from './step';

// ---------------------------------------------------------------- messages

/** `echo` with or without an id, from any connection still open on the client side. */
export class Send extends Step {
  constructor(
    readonly pick: number,
    readonly withId: boolean,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return live(m).length > 0;
  }
  async act(m: Model): Promise<void> {
    const c = choose(live(m), this.pick);
    if (c === undefined) return;
    const id = sendEcho(c, this.withId);
    if (id === undefined || c.phase !== 'open') return;
    const answer = await expectWithin(
      c.conn.next((x) => x.id === id, WAIT, `${c.tag}: echo id ${id} not answered`),
    );
    if (answer.event !== 'echo') fail(`${c.tag}: echo id ${id} answered ${JSON.stringify(answer)}`);
  }
  toString(): string {
    return `Send(#${this.pick}, ${this.withId ? 'with id' : 'no id'})`;
  }
}

export type RoomName = 'lobby' | 'emoji' | 'empty' | 'lone surrogate' | 'very long';
const ROOM: Record<RoomName, string> = {
  lobby: 'lobby',
  emoji: 'r\ud83d\ude00',
  empty: '',
  'lone surrogate': 'x\ud800',
  // Far past any documented limit of a room name.
  'very long': 'r'.repeat(5000),
};
const VALID = new Set<RoomName>(['lobby', 'emoji']);

/** `join_room` from an open connection, with a good or an odd room name. */
export class Join extends Step {
  constructor(
    readonly pick: number,
    readonly room: RoomName,
    readonly withId: boolean,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return open(m).length > 0;
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = choose(open(m), this.pick);
    if (c === undefined) return;
    const room = ROOM[this.room];
    const valid = VALID.has(this.room);
    const data = { room, tag: c.tag };
    const before = c.conn.received.length;
    const later = (x: Received): boolean => c.conn.received.indexOf(x) >= before;
    if (this.withId) {
      const id = c.nextId++;
      c.requests.set(id, Date.now());
      c.conn.send({ event: 'join_room', data, id });
      const answer = await expectWithin(
        c.conn.next((x) => x.id === id, WAIT, `${c.tag}: join_room id ${id} not answered`),
      );
      if (valid && answer.event === 'error')
        fail(`${c.tag}: join_room ${JSON.stringify(room)} refused: ${JSON.stringify(answer)}`);
      if (!valid && answer.event !== 'error') {
        fail(
          `${c.tag}: join_room ${JSON.stringify(room)} (${this.room}) answered ${JSON.stringify(answer)}, not an error with its id`,
        );
      }
      if (!valid && (answer.data as { code?: string }).code !== 'invalid_payload') {
        fail(
          `${c.tag}: join_room (${this.room}) refused with ${JSON.stringify(answer.data)}, not invalid_payload`,
        );
      }
    } else {
      c.conn.send({ event: 'join_room', data });
      await expectWithin(
        c.conn.next(
          (x) =>
            later(x) &&
            (valid ? x.event === 'room_joined' : x.event === 'error' && x.id === undefined),
          WAIT,
          `${c.tag}: join_room ${this.room} without id got no ${valid ? 'room_joined' : 'error'}`,
        ),
      );
    }
    const members = r.server.getNamespaceManager().getClientsInRoom(room);
    if (valid) {
      if (!members.includes(c.clientId!)) fail(`${c.tag}: joined ${this.room} but is not a member`);
      if (!m.rooms.has(room)) m.rooms.set(room, new Set());
      m.rooms.get(room)!.add(c.clientId!);
    } else if (members.includes(c.clientId!)) {
      fail(`${c.tag}: a refused join (${this.room}) left it a member of ${JSON.stringify(room)}`);
    }
  }
  toString(): string {
    return `Join(#${this.pick}, ${this.room}, ${this.withId ? 'with id' : 'no id'})`;
  }
}

/** A second `$hello` on an open version 1 connection: refused, the connection stays. */
export class SecondHello extends Step {
  constructor(readonly pick: number) {
    super();
  }
  #targets(m: Readonly<Model>): Client[] {
    return open(m).filter((c) => c.version === 1);
  }
  check(m: Readonly<Model>): boolean {
    return this.#targets(m).length > 0;
  }
  async act(m: Model): Promise<void> {
    const c = choose(this.#targets(m), this.pick);
    if (c === undefined) return;
    const before = c.conn.received.length;
    c.conn.send({ event: '$hello', data: { v: 1, auth: `good:${c.user}:${c.tag}` } });
    const error = await expectWithin(
      c.conn.next(
        (x) => c.conn.received.indexOf(x) >= before && x.event === 'error',
        WAIT,
        `${c.tag}: a second $hello was not refused`,
      ),
    );
    if ((error.data as { code?: string }).code !== 'invalid_envelope') {
      fail(`${c.tag}: a second $hello answered ${JSON.stringify(error)}`);
    }
  }
  toString(): string {
    return `SecondHello(#${this.pick})`;
  }
}

// ---------------------------------------------------------------- drops and the server

/** The TCP connection drops (no close frame). */
export class Drop extends Step {
  constructor(readonly pick: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return live(m).length > 0;
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = choose(live(m), this.pick);
    if (c === undefined) return;
    const wasOpen = c.phase === 'open';
    c.closedBy = 'client';
    c.conn.ws.terminate();
    await expectWithin(c.conn.whenClosed(WAIT, `${c.tag}: terminate did not close`));
    c.phase = 'closed';
    if (!wasOpen || c.clientId === undefined) return;
    const id = c.clientId;
    if (c.session !== undefined) {
      c.session.state = 'away';
      await expectWithin(
        bounded(
          () => !r.server.getAllClients().includes(id),
          `${c.tag}: the server never saw the drop`,
        ),
      );
    } else {
      for (const members of m.rooms.values()) members.delete(id);
      await expectWithin(
        r.recorder.waitFor(
          (e) => e.kind === 'disconnect' && e.id === id,
          WAIT,
          `OnDisconnect of ${c.tag} after a drop`,
        ),
      );
    }
  }
  toString(): string {
    return `Drop(#${this.pick})`;
  }
}

/** Polls a condition of the server that has no event, every 5 ms, for at most WAIT ms. */
function bounded(done: () => boolean, what: string): Promise<void> {
  const until = Date.now() + WAIT;
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      if (done()) resolve();
      else if (Date.now() > until) reject(new Error(`${what} within ${WAIT} ms`));
      else setTimeout(poll, 5);
    };
    poll();
  });
}

/**
 * `server.broadcast` to everyone or to a room, of JSON or of bytes: bytes reach the version 1
 * connections only (a version 0 one is skipped), JSON reaches all.
 */
export class Broadcast extends Step {
  constructor(
    readonly room: 'lobby' | null,
    readonly binary = false,
  ) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model, r: Real): Promise<void> {
    const n = m.broadcasts.length + 1;
    const members = this.room === null ? undefined : (m.rooms.get(this.room) ?? new Set<string>());
    const targets = new Set<string>();
    const inScope = (id: string): boolean => members === undefined || members.has(id);
    const takes = (c: Client): boolean => !this.binary || c.version === 1;
    for (const c of m.clients)
      if (c.phase === 'open' && takes(c) && inScope(c.clientId!)) targets.add(c.clientId!);
    for (const s of m.sessions)
      if (s.state === 'away' && inScope(s.clientId)) targets.add(s.clientId);
    const maybe = new Set(
      m.clients
        .filter((c) => c.phase === 'pending' && c.fate === 'accept' && takes(c))
        .map((c) => c.tag),
    );
    m.broadcasts.push({ n, room: this.room ?? undefined, binary: this.binary, targets, maybe });
    const data = this.binary ? newsBytes(n) : { n };
    if (this.room === null) r.server.broadcast('news', data);
    else r.server.broadcast('news', data, '/', this.room);
    for (const c of m.clients) {
      if (c.phase !== 'open' || !targets.has(c.clientId!)) continue;
      await expectWithin(
        c.conn.next((x) => newsNumber(x) === n, WAIT, `${c.tag}: broadcast #${n} not delivered`),
      );
    }
  }
  toString(): string {
    return `Broadcast(${this.room ?? 'everyone'}${this.binary ? ', bytes' : ''})`;
  }
}

/**
 * A binary `echo` from an open connection, with or without an id: a version 1 one gets its
 * bytes back in one binary frame with the id; a version 0 one gets `binary_not_supported`.
 */
export class SendBinary extends Step {
  constructor(
    readonly pick: number,
    readonly withId: boolean,
    readonly size: number,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return open(m).length > 0;
  }
  async act(m: Model): Promise<void> {
    const c = choose(open(m), this.pick);
    if (c === undefined) return;
    const id = this.withId ? c.nextId++ : undefined;
    const data = new Uint8Array(this.size).map((_, i) => (i * 7 + c.nextId) & 0xff);
    const before = c.conn.received.length;
    const frame = encodeBinaryFrame(
      id === undefined ? { event: 'echo', data } : { event: 'echo', id, data },
    );
    if (!c.conn.sendBinary(frame)) return;
    if (c.version === 0) {
      const refusal = await expectWithin(
        c.conn.next(
          (x) => c.conn.received.indexOf(x) >= before && x.event === 'error',
          WAIT,
          `${c.tag} (version 0): a binary frame was not refused`,
        ),
      );
      const code = (refusal.data as { code?: string }).code;
      if (code !== 'binary_not_supported' || refusal.id !== undefined) {
        fail(`${c.tag} (version 0): a binary frame answered ${JSON.stringify(refusal)}`);
      }
      return;
    }
    if (id === undefined) return;
    c.requests.set(id, Date.now());
    const answer = await expectWithin(
      c.conn.next((x) => x.id === id, WAIT, `${c.tag}: binary echo id ${id} not answered`),
    );
    if (answer.binary !== true || answer.event !== 'echo') {
      fail(`${c.tag}: binary echo id ${id} answered ${JSON.stringify(answer)}`);
    }
    if (!Buffer.from(answer.data as Uint8Array).equals(data)) {
      fail(`${c.tag}: binary echo id ${id} came back with other bytes`);
    }
  }
  toString(): string {
    return `SendBinary(#${this.pick}, ${this.withId ? 'with id' : 'no id'}, ${this.size} B)`;
  }
}

/** `server.disconnectClient` of an open connection or of a session that is away. */
export class Disconnect extends Step {
  constructor(readonly pick: number) {
    super();
  }
  #targets(m: Readonly<Model>): string[] {
    return [
      ...open(m).map((c) => c.clientId!),
      ...m.sessions.filter((s) => s.state === 'away').map((s) => s.clientId),
    ];
  }
  check(m: Readonly<Model>): boolean {
    return this.#targets(m).length > 0;
  }
  async act(m: Model, r: Real): Promise<void> {
    const id = choose(this.#targets(m), this.pick);
    if (id === undefined) return;
    const c = open(m).find((x) => x.clientId === id);
    if (c !== undefined) c.closedBy = 'server';
    r.server.disconnectClient(id);
    if (c !== undefined) {
      const closed = await expectWithin(
        c.conn.whenClosed(WAIT, `${c.tag}: disconnectClient did not close it`),
      );
      if (closed.code !== 1000)
        fail(`${c.tag}: disconnectClient closed with ${closed.code}, not 1000`);
      c.phase = 'closed';
    }
    const s = m.sessions.find((x) => x.clientId === id && x.state !== 'ended');
    if (s !== undefined) {
      s.state = 'ended';
    }
    for (const members of m.rooms.values()) members.delete(id);
    await expectWithin(
      r.recorder.waitFor(
        (e) => e.kind === 'disconnect' && e.id === id,
        WAIT,
        `OnDisconnect of ${id} after disconnectClient`,
      ),
    );
  }
  toString(): string {
    return `Disconnect(#${this.pick})`;
  }
}
