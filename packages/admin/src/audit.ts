/**
 * The audit of admin actions: each one is a log line through the server's logger (who,
 * what, on what, when, and how it went) and an entry of a bounded in-memory list, which the
 * page shows. The list is this instance's: an action is audited where it was asked.
 */
import type { LoggerInterface } from '@pkg/core';

/** One audited action. */
export interface AuditEntry {
  /** When it was asked, ms since the epoch. */
  readonly at: number;
  /** Who asked: the `authorize` hook's name, else `token@<address>` or the address. */
  readonly who: string;
  readonly action: 'disconnect' | 'revoke' | 'trace';
  /** What it was about: a client id, or an identity (with its room for a room revocation). */
  readonly target: string;
  /** What came of it: `ok`, a count of connections reached, or the error. */
  readonly outcome: string;
}

export class AuditLog {
  readonly #size: number;
  readonly #logger: LoggerInterface;
  #entries: AuditEntry[] = [];

  constructor(size: number, logger: LoggerInterface) {
    this.#size = size;
    this.#logger = logger;
  }

  /** Records an action: a log line, and the newest entry of the list. */
  record(entry: AuditEntry): void {
    this.#entries.push(entry);
    if (this.#entries.length > this.#size) this.#entries = this.#entries.slice(-this.#size);
    try {
      this.#logger.notice(
        `admin: ${entry.action} ${entry.target} by ${entry.who}: ${entry.outcome}`,
        {
          audit: true,
          ...entry,
          at: new Date(entry.at).toISOString(),
        },
      );
    } catch {
      // A logger that throws loses the line; the entry stays in the list.
    }
  }

  /** The entries, newest first. */
  list(): AuditEntry[] {
    return [...this.#entries].reverse();
  }
}
