/** What a bench server hands to the runner's line protocol (see control.mjs). */
export interface ServedServer {
  /** The bound port. */
  port: number;
  /** WebSocket connections held now. */
  count: () => number;
  /** The server's graceful close, run on SIGTERM before exiting 0. */
  close: () => Promise<void> | void;
  /** Any other line from the runner (optional; ignored without it). */
  command?: (line: string) => void;
}

export declare function serve(server: ServedServer): void;
