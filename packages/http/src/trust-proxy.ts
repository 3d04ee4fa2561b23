import { isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { describe } from './describe';
import { createHttpError } from './errors';

/**
 * Which peers are trusted to report the client's address, scheme and host in forwarded
 * headers: `true` trusts every peer (development only), `false` or `[]` trusts none, and a
 * list trusts the peers it names. A list entry is an IPv4 or IPv6 address, a CIDR range
 * (`10.0.0.0/8`, `fd00::/8`), or one of the names `loopback`, `linklocal`, `uniquelocal`.
 */
export type TrustProxySetting = boolean | readonly string[];

/** Answers whether a peer at the given address is a trusted proxy. */
export type TrustPredicate = (address: string) => boolean;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

const NAMED_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

const IPV4_OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
export const IPV4_CANONICAL = new RegExp(`^${IPV4_OCTET}(?:\\.${IPV4_OCTET}){3}$`);
const PREFIX = /^(?:0|[1-9][0-9]{0,2})$/;

/**
 * True when `address` is an IP address in canonical textual form: a dotted quad of four
 * decimal octets without leading zeros, or an IPv6 address (hex groups, `::`, an embedded
 * dotted quad) without a zone index. Unlike ipaddr.js's lenient parser it refuses `127.1`,
 * `0x7f.1`, `0177.0.0.1` and `2130706433`, so such a string from a forwarded header can
 * never be taken for a trusted proxy or a client address.
 */
export function isCanonicalIp(address: string): boolean {
  if (IPV4_CANONICAL.test(address)) return true;
  return !address.includes('%') && isIPv6(address);
}

/**
 * Parses a canonical address; IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) become IPv4 so
 * that they match IPv4 entries. Returns undefined for anything that is not canonical.
 */
function parseCanonical(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!isCanonicalIp(address)) return undefined;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed;
}

/**
 * The address in one canonical spelling, so that equal addresses give equal strings (used
 * as rate-limit keys): IPv4-mapped IPv6 becomes the dotted quad, IPv6 is written in RFC 5952
 * form. A zone index (`%eth0`, only ever on a socket's own address) is kept. Anything that is
 * not an IP address is returned unchanged.
 */
export function normalizeIp(address: string): string {
  // The common case, without parsing: a canonical dotted quad is already its own spelling.
  if (IPV4_CANONICAL.test(address)) return address;
  const zoneAt = address.indexOf('%');
  const bare = zoneAt === -1 ? address : address.slice(0, zoneAt);
  const parsed = parseCanonical(bare);
  if (parsed === undefined) return address;
  const text =
    parsed.kind() === 'ipv6' ? (parsed as ipaddr.IPv6).toRFC5952String() : parsed.toString();
  return zoneAt === -1 || parsed.kind() === 'ipv4' ? text : text + address.slice(zoneAt);
}

function invalidEntry(entry: unknown, why: string): TypeError {
  const shown = typeof entry === 'string' ? JSON.stringify(entry) : String(entry);
  return createHttpError(
    TypeError,
    'PKG_ERR_HTTP_INVALID_TRUST_PROXY',
    `Invalid trust-proxy entry ${shown}: ${why}. Use a canonical IPv4 or IPv6 address ` +
      `("10.0.0.1", "::1"), a CIDR range ("10.0.0.0/8", "fd00::/8") or one of ` +
      `"loopback", "linklocal", "uniquelocal".`,
  );
}

function parseEntry(entry: unknown): Range[] {
  if (typeof entry !== 'string') throw invalidEntry(entry, 'it is not a string');
  const trimmed = entry.trim();
  const named = NAMED_RANGES[trimmed.toLowerCase()];
  if (named !== undefined && Object.hasOwn(NAMED_RANGES, trimmed.toLowerCase())) {
    return named.flatMap(parseEntry);
  }
  const slash = trimmed.indexOf('/');
  const addressText = slash === -1 ? trimmed : trimmed.slice(0, slash);
  if (!isCanonicalIp(addressText)) {
    throw invalidEntry(entry, 'it is not an IP address in canonical form');
  }
  let address: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(addressText);
  const max = address.kind() === 'ipv4' ? 32 : 128;
  let bits = max;
  if (slash !== -1) {
    const prefixText = trimmed.slice(slash + 1);
    bits = PREFIX.test(prefixText) ? Number(prefixText) : NaN;
    if (!(bits <= max)) throw invalidEntry(entry, `the prefix length must be 0 to ${max}`);
  }
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    if (bits >= 96) {
      address = (address as ipaddr.IPv6).toIPv4Address();
      bits -= 96;
    }
  }
  return [[address, bits]];
}

function matchesAny(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly Range[]): boolean {
  for (const [base, bits] of ranges) {
    if (base.kind() === address.kind() && address.match(base, bits)) return true;
  }
  return false;
}

const TRUST_ALL: TrustPredicate = () => true;
const TRUST_NONE: TrustPredicate = () => false;

/**
 * Reduces a trust-proxy setting to one predicate, once. The setting is `true`, `false`, a
 * list of IP addresses, CIDR ranges and the names `loopback`, `linklocal`, `uniquelocal`, or
 * a predicate `(address) => boolean`, which is returned as it is (so a compiled predicate
 * may be passed again). Anything else, or an invalid list entry, throws a `TypeError` (code
 * `PKG_ERR_HTTP_INVALID_TRUST_PROXY`) that names `option` (default `trustProxy`) and the
 * entry. The predicate fails closed: an address that is not canonical (or not an address at
 * all) is never trusted, unless the setting is `true`.
 */
export function compileTrustProxy(
  setting?: TrustProxySetting | TrustPredicate,
  option = 'trustProxy',
): TrustPredicate {
  if (setting === undefined || setting === false) return TRUST_NONE;
  if (setting === true) return TRUST_ALL;
  if (typeof setting === 'function') return setting;
  if (!Array.isArray(setting)) {
    throw createHttpError(
      TypeError,
      'PKG_ERR_HTTP_INVALID_TRUST_PROXY',
      `The ${option} setting must be true, false, an array of IP addresses, CIDR ranges and ` +
        `names (e.g. ['loopback', '10.0.0.0/8']) or a function (address) => boolean; got ` +
        `${describe(setting)}.`,
    );
  }
  const ranges = (setting as readonly unknown[]).flatMap(parseEntry);
  if (ranges.length === 0) return TRUST_NONE;
  const v4 = ranges.filter(([base]) => base.kind() === 'ipv4');
  const v6 = ranges.filter(([base]) => base.kind() === 'ipv6');
  return (address: string): boolean => {
    if (typeof address !== 'string') return false;
    const zoneAt = address.indexOf('%');
    const parsed = parseCanonical(zoneAt === -1 ? address : address.slice(0, zoneAt));
    if (parsed === undefined) return false;
    return matchesAny(parsed, parsed.kind() === 'ipv4' ? v4 : v6);
  };
}
