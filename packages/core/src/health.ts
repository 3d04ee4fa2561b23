/** The health-check document (spec: "Health-check document"). */
export interface HealthDocument {
  /** `healthy` while serving, `draining` while `close()` is shutting the server down. */
  status: HealthStatus;
  /** Unix time in whole seconds. */
  timestamp: number;
  server: {
    /** WebSocket clients connected to this process. */
    clients: number;
    /** Whole seconds since `run()` started listening. */
    uptime: number;
    /** The uptime as text, e.g. `2h 5m 9s`. */
    uptime_human: string;
  };
}

export type HealthStatus = 'healthy' | 'draining';

/** Formats whole seconds as hours, minutes and seconds: `0h 0m 7s`, `49h 3m 2s`. */
export function formatUptime(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  return `${hours}h ${minutes}m ${s % 60}s`;
}

/** Builds the document; `startedAt` and `now` are epoch milliseconds. */
export function buildHealthDocument(
  status: HealthStatus,
  clients: number,
  startedAt: number,
  now: number = Date.now(),
): HealthDocument {
  const uptime = Math.max(0, Math.floor((now - startedAt) / 1000));
  return {
    status,
    timestamp: Math.floor(now / 1000),
    server: { clients, uptime, uptime_human: formatUptime(uptime) },
  };
}
