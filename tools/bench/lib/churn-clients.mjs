// The clients of the churn workload: each in room `churn`, losing its socket when told
// (`kill()`), coming back after RECONNECT_DELAY ms and recovering; `hooks.tick(client, data)`
// for every message handed on, `hooks.up(client)` once it is back in the room.
import { io as ioClient } from 'socket.io-client';
import WebSocket from 'ws';

export const RECONNECT_DELAY = 100;

/**
 * A protocol version 1 client of room `churn`: remembers the room's last position, comes
 * back on the other instance after `RECONNECT_DELAY` ms, and recovers with join_room.since.
 * It drops a message whose position it has seen (as @pkg/client does).
 */
export class PkgClient {
  constructor(ports, index, hooks) {
    this.ports = ports;
    this.at = index % 2;
    this.hooks = hooks;
    this.last = null; // {epoch, offset}
    this.up = false;
    this.stopped = false;
    this.gaps = 0;
  }

  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${this.ports[this.at]}/`, ['pkg.v1']);
      this.ws = ws;
      ws.on('error', () => {});
      ws.once('open', () => ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } })));
      ws.once('close', () => {
        this.up = false;
        if (this.stopped) return;
        this.at = 1 - this.at; // the other instance
        setTimeout(() => this.open().catch(() => this.ws.emit('close')), RECONNECT_DELAY);
      });
      ws.on('message', (raw) => {
        const m = JSON.parse(String(raw));
        if (m.event === '$welcome') {
          const since = this.last ? { since: this.last } : {};
          ws.send(
            JSON.stringify({ event: 'join_room', data: { room: 'churn', ...since }, id: 'j' }),
          );
        } else if (m.id === 'j') {
          if (m.event === 'error') return reject(new Error(JSON.stringify(m.data)));
          if (!this.last) this.#ready(resolve);
        } else if (m.event === '$recovered') {
          if (!m.data.recovered) this.gaps += 1;
          if (m.data.position) this.last = m.data.position;
          this.#ready(resolve);
        } else if (m.event === 'tick') {
          const pos = m.pos;
          if (this.last && pos.epoch === this.last.epoch && pos.offset <= this.last.offset) return;
          this.last = { epoch: pos.epoch, offset: pos.offset };
          this.hooks.tick(this, m.data);
        }
      });
    });
  }

  #ready(resolve) {
    this.up = true;
    this.hooks.up(this);
    resolve();
  }

  kill() {
    this.up = false;
    this.ws.terminate();
  }

  close() {
    this.stopped = true;
    this.ws.close();
  }
}

/** A socket.io client with recovery: its manager reconnects after `RECONNECT_DELAY` ms. */
export class SocketIoClient {
  constructor(ports, index, hooks) {
    this.port = ports[index % 2];
    this.hooks = hooks;
    this.up = false;
    this.gaps = 0;
  }

  open() {
    const s = ioClient(`http://127.0.0.1:${this.port}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnectionDelay: RECONNECT_DELAY,
      reconnectionDelayMax: RECONNECT_DELAY,
      randomizationFactor: 0,
    });
    this.s = s;
    s.on('tick', (data) => this.hooks.tick(this, data));
    s.on('disconnect', () => {
      this.up = false;
    });
    return new Promise((resolve, reject) => {
      let first = true;
      s.on('connect', () => {
        if (!first && !s.recovered) this.gaps += 1;
        this.up = true;
        this.hooks.up(this);
        if (first) resolve();
        first = false;
      });
      s.once('connect_error', (err) => first && reject(err));
    });
  }

  kill() {
    this.up = false;
    this.s.io.engine.transport.ws.terminate();
  }

  close() {
    this.s.close();
  }
}
