// What the Redis history store tests share: a logger that keeps its lines, the template the
// server would build for a kept message, and the policy they run with.
import { NullLogger, type LogContext } from '@pkg/core';

export class Logs extends NullLogger {
  readonly lines: { level: string; message: string }[] = [];
  override log(level: string, message: string, _context?: LogContext): void {
    this.lines.push({ level, message });
  }
}

/** The template the server would build for `{event: 'm', data: {n}}` to room `room`. */
export function template(room: string, n: number): { head: string; tail: string } {
  return {
    head: `{"event":"m","data":{"n":${n}},"pos":{"room":${JSON.stringify(room)},"namespace":"/","epoch":`,
    tail: '}}',
  };
}

export const POLICY = { size: 100, ttl: 60_000 };
