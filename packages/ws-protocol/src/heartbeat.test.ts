import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { HeartbeatSweep, type HeartbeatMember } from './heartbeat';

describe('HeartbeatSweep', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  interface Member extends HeartbeatMember {
    name: string;
    alive: boolean;
  }

  function make(interval: number, timeout = 40) {
    const events: string[] = [];
    const sweep = new HeartbeatSweep<Member>({
      interval,
      timeout,
      ping: (m) => {
        events.push(`ping ${m.name}`);
        return m.alive;
      },
      onTimeout: (m) => events.push(`timeout ${m.name}`),
    });
    const member = (name: string, alive = true): Member => ({
      name,
      alive,
      heartbeatDue: 0,
      awaitingPong: false,
    });
    return { sweep, events, member };
  }

  it('sweeps every quarter of the smaller duration', () => {
    expect(make(100, 40).sweep.period).toBe(10);
    expect(make(20, 200).sweep.period).toBe(5);
    expect(make(2, 2).sweep.period).toBe(1);
  });

  it('pings after the interval and keeps going while pongs arrive', () => {
    const { sweep, events, member } = make(100);
    const a = member('a');
    sweep.add(a);
    jest.advanceTimersByTime(90);
    expect(events).toEqual([]);
    jest.advanceTimersByTime(10);
    expect(events).toEqual(['ping a']);
    sweep.pong(a);
    jest.advanceTimersByTime(100);
    expect(events).toEqual(['ping a', 'ping a']);
    sweep.pong(a);
    jest.advanceTimersByTime(130);
    expect(events).toEqual(['ping a', 'ping a', 'ping a']);
  });

  it('reports a member whose pong does not come within the timeout, once, and drops it', () => {
    const { sweep, events, member } = make(100, 40);
    const a = member('a');
    const b = member('b');
    sweep.add(a);
    sweep.add(b);
    jest.advanceTimersByTime(100);
    sweep.pong(b);
    jest.advanceTimersByTime(30);
    expect(events).toEqual(['ping a', 'ping b']);
    jest.advanceTimersByTime(10);
    expect(events).toEqual(['ping a', 'ping b', 'timeout a']);
    jest.advanceTimersByTime(50);
    expect(events).toEqual(['ping a', 'ping b', 'timeout a']);
    expect(sweep.size).toBe(1);
  });

  it('drops a member whose ping cannot be sent, and stops its timer when empty', () => {
    const { sweep, events, member } = make(100);
    sweep.add(member('gone', false));
    jest.advanceTimersByTime(100);
    expect(events).toEqual(['ping gone']);
    expect(sweep.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(1000);
    expect(events).toEqual(['ping gone']);
  });

  it('stops watching a removed member, and does nothing with interval 0', () => {
    const { sweep, events, member } = make(100);
    const a = member('a');
    sweep.add(a);
    sweep.remove(a);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(1000);
    expect(events).toEqual([]);
    const off = make(0);
    off.sweep.add(off.member('x'));
    expect(off.sweep.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('ignores a pong that nobody asked for', () => {
    const { sweep, events, member } = make(100);
    const a = member('a');
    sweep.add(a);
    jest.advanceTimersByTime(50);
    sweep.pong(a);
    jest.advanceTimersByTime(50);
    expect(events).toEqual(['ping a']);
  });
});
