import type { RateLimitRule } from '@pkg/core';

/**
 * The demo's rate-limit budgets at scale 1. Each counts per client address (behind a
 * trusted proxy, the forwarded one), in memory or, with `REDIS_URL`, across instances.
 * `RATE_LIMIT_SCALE` multiplies every `maxCount` here; the windows stay as they are.
 * `GET /api/limited` is the spec's sample and keeps its own fixed budget (showcase controller).
 */
export const BASE_LIMITS = Object.freeze({
  /** `POST /api/broadcast` (admins only): 10 per 60 s. */
  broadcast: Object.freeze({ maxCount: 10, timeWindow: 60 }),
  /** `GET /api/status` and `GET /api/clients`: 60 per 60 s (the page polls every 30 s). */
  status: Object.freeze({ maxCount: 60, timeWindow: 60 }),
  /** `room.join`: 20 per 10 s; every new room name costs a subscription with Redis. */
  roomJoin: Object.freeze({ maxCount: 20, timeWindow: 10 }),
  /** `chat.message`: 30 per 10 s. */
  chatMessage: Object.freeze({ maxCount: 30, timeWindow: 10 }),
  /** `doc.update`: 150 per 10 s, a page sends one per edit. */
  docUpdate: Object.freeze({ maxCount: 150, timeWindow: 10 }),
  /** `doc.state` (a whole document): 10 per 10 s, a page sends one per 100 edits or visit. */
  docState: Object.freeze({ maxCount: 10, timeWindow: 10 }),
});

export type DemoLimits = { readonly [K in keyof typeof BASE_LIMITS]: RateLimitRule };

/** The budgets multiplied by `scale` (RATE_LIMIT_SCALE), rounded, never below 1. */
export function scaleLimits(scale: number): DemoLimits {
  if (!(typeof scale === 'number' && scale > 0 && Number.isFinite(scale))) {
    throw new TypeError(`The rate-limit scale must be a positive number; got ${String(scale)}.`);
  }
  const scaled = (rule: RateLimitRule): RateLimitRule => ({
    maxCount: Math.max(1, Math.round(rule.maxCount * scale)),
    timeWindow: rule.timeWindow,
  });
  return {
    broadcast: scaled(BASE_LIMITS.broadcast),
    status: scaled(BASE_LIMITS.status),
    roomJoin: scaled(BASE_LIMITS.roomJoin),
    chatMessage: scaled(BASE_LIMITS.chatMessage),
    docUpdate: scaled(BASE_LIMITS.docUpdate),
    docState: scaled(BASE_LIMITS.docState),
  };
}
