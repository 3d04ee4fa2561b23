/**
 * The default logger: discards everything. Only the type comes from @pkg/logger, so this
 * package has no runtime dependency on it; pass any LoggerInterface to see the log lines.
 */
import type { LoggerInterface } from '@pkg/logger';

const discard = (): void => {};

export const noopLogger: LoggerInterface = {
  emergency: discard,
  alert: discard,
  critical: discard,
  error: discard,
  warning: discard,
  notice: discard,
  info: discard,
  debug: discard,
  log: discard,
  exception: discard,
};
