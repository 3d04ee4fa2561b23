import ipaddr from 'ipaddr.js';
import { createHttpError } from './errors';
import { IPV4_CANONICAL, isCanonicalIp } from './trust-proxy';

/** The IPv6 prefix length per-address limits group by when none is configured: a /64. */
export const DEFAULT_IPV6_SUBNET = 64;

/**
 * The key per-address limits count a client under. An IPv4 address (or an IPv4-mapped IPv6
 * one) is its own key; an IPv6 address is grouped with its network of `ipv6Subnet` bits
 * (`2001:db8:1:2::/64` for every address of that /64), since one subscriber is usually
 * handed a whole /64 (or /56, /48) and could otherwise take a new slot per address. A zone
 * index is dropped. Anything that is not an IP address is returned unchanged.
 */
export function addressGroup(address: string, ipv6Subnet: number = DEFAULT_IPV6_SUBNET): string {
  if (!Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128) {
    throw createHttpError(
      RangeError,
      'PKG_ERR_HTTP_INVALID_ARGUMENT',
      `addressGroup: ipv6Subnet must be a whole number of bits from 1 to 128, got ${String(ipv6Subnet)}.`,
    );
  }
  // The common case first, without parsing: a canonical IPv4 address is its own key.
  if (IPV4_CANONICAL.test(address)) return address;
  const zoneAt = address.indexOf('%');
  const bare = zoneAt === -1 ? address : address.slice(0, zoneAt);
  if (!isCanonicalIp(bare)) return address;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${v6.toString()}/${ipv6Subnet}`);
  return `${network.toRFC5952String()}/${ipv6Subnet}`;
}
