import { addressGroup, type RateLimitStore } from '@pkg/http';
import type { WsRateLimitKey } from '../config/server-config';

/** A rate-limit store whose backing store can be replaced before the server runs. */
export class ReplaceableStore implements RateLimitStore {
  constructor(public store: RateLimitStore) {}
  increment(key: string, windowMs: number): ReturnType<RateLimitStore['increment']> {
    return this.store.increment(key, windowMs);
  }
}

/** The key a WebSocket RateLimit counts under, from `ws_rate_limit_key`. */
export function rateLimitKey(
  setting: WsRateLimitKey,
  addressOf: (clientId: string) => string | undefined,
  ipv6Subnet: number,
): (clientId: string) => string {
  if (setting === 'client') return (id) => id;
  // IPv6 clients of one network (ipv6_subnet, a /64 by default) share one budget.
  if (setting === 'address') {
    return (id) => {
      const address = addressOf(id);
      return address ? addressGroup(address, ipv6Subnet) : id;
    };
  }
  return (id) => {
    const key = setting(id, addressOf(id) ?? '');
    return typeof key === 'string' && key !== '' ? key : id;
  };
}
