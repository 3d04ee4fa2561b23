/**
 * The history contract of @pkg/core (packages/core/src/cluster/history.ts), re-exported
 * from one place so the store's modules import it the same way.
 */
export type {
  HistoryPolicy,
  HistoryQuery,
  HistoryRead,
  HistoryStore,
  KeptMessage,
  KeptTarget,
  PositionTemplate,
  PublishedMessage,
} from '../../core/src/cluster/history';
