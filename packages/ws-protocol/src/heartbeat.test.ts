import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Heartbeat } from './heartbeat';

describe('Heartbeat', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  function make(interval: number, alive = true) {
    const events: string[] = [];
    const hb = new Heartbeat({
      interval,
      timeout: 50,
      ping: () => {
        events.push('ping');
        return alive;
      },
      onTimeout: () => events.push('timeout'),
    });
    return { hb, events };
  }

  it('pings after the interval and keeps going while pongs arrive', () => {
    const { hb, events } = make(100);
    hb.start();
    jest.advanceTimersByTime(99);
    expect(events).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(events).toEqual(['ping']);
    hb.pong();
    jest.advanceTimersByTime(100);
    expect(events).toEqual(['ping', 'ping']);
    for (let i = 0; i < 10; i += 1) {
      hb.pong();
      jest.advanceTimersByTime(100);
    }
    expect(events).toEqual(Array.from({ length: 12 }, () => 'ping'));
    hb.stop();
  });

  it('reports a timeout once when the pong does not come', () => {
    const { hb, events } = make(100);
    hb.start();
    jest.advanceTimersByTime(100 + 50);
    expect(events).toEqual(['ping', 'timeout']);
    jest.advanceTimersByTime(10_000);
    expect(events).toEqual(['ping', 'timeout']);
  });

  it('ignores a pong that nobody asked for', () => {
    const { hb, events } = make(100);
    hb.start();
    hb.pong();
    jest.advanceTimersByTime(100);
    expect(events).toEqual(['ping']);
    hb.stop();
  });

  it('does nothing with an interval of 0', () => {
    const { hb, events } = make(0);
    hb.start();
    jest.advanceTimersByTime(100_000);
    expect(events).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('stops when the ping cannot be sent', () => {
    const { hb, events } = make(100, false);
    hb.start();
    jest.advanceTimersByTime(10_000);
    expect(events).toEqual(['ping']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('clears its timer on stop', () => {
    const { hb, events } = make(100);
    hb.start();
    expect(jest.getTimerCount()).toBe(1);
    hb.stop();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(10_000);
    expect(events).toEqual([]);
  });
});
