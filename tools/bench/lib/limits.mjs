// The @pkg/core settings of the throughput workloads. One bench connection stands for many
// real clients (50 echo connections carry some 60,000 messages/s, one connection triggers
// every broadcast), so the per-connection inbound budgets (100 messages/s and 1 MiB/s by
// default) are raised far above the load instead of turned off: the budget check still runs
// on every message and its cost is in the figures. The abuse workload keeps the defaults.
export const THROUGHPUT_PKG_CONFIG = Object.freeze({
  heartbeat_interval: 0,
  ws_max_messages_per_second: 1_000_000,
  ws_max_bytes_per_second: 1_000_000_000,
});

export const THROUGHPUT_LIMITS =
  '@pkg/core with heartbeat_interval 0 and the per-connection inbound budgets raised to 1,000,000 messages/s and 1 GB/s (still checked on every message; one bench connection stands for many clients), other settings default';
