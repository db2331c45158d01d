import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Addresses a production service never delivers to unless WEBHOOK_ALLOW_PRIVATE_TARGETS=true:
 * loopback, private, shared (CGNAT), link-local (the cloud metadata service's 169.254.169.254
 * among them), unspecified, multicast and reserved ranges, in IPv4 and IPv6.
 */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv6');
}

/** Whether a delivery to this IP address is refused in production. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1], 'ipv4');
  return PRIVATE.check(address, 'ipv6');
}

/** The longest target URL taken. */
export const MAX_URL_LENGTH = 2048;

/** What is wrong with a target URL's form, or undefined: http or https, a host, no credentials. */
export function urlProblem(raw: string): string | undefined {
  if (raw.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must be an http or https URL';
  if (url.hostname === '') return 'url must name a host';
  if (url.username !== '' || url.password !== '') return 'url must not hold a user name or password';
  return undefined;
}

/** The host of a URL as the resolver takes it (IPv6 literals without their brackets). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Why a target is refused on a private address (undefined: it is not). Resolves the host as the
 * delivery would; a host that does not resolve is taken (it may resolve later, and connect checks
 * again).
 */
export async function privateTargetProblem(url: URL): Promise<string | undefined> {
  const host = hostOf(url);
  const addresses: string[] = isIP(host)
    ? [host]
    : await new Promise<string[]>((resolve) =>
        dnsLookup(host, { all: true }, (err, found: LookupAddress[]) =>
          resolve(err ? [] : found.map((a) => a.address)),
        ),
      );
  const refused = addresses.find(isPrivateAddress);
  return refused === undefined
    ? undefined
    : `url resolves to ${refused}, a loopback, private, link-local or metadata address, which is refused in production (WEBHOOK_ALLOW_PRIVATE_TARGETS)`;
}

/**
 * A `lookup` for the delivery's socket that refuses private addresses, so the address checked is
 * the address connected to: a DNS answer that changes after creation cannot redirect a delivery.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, found: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const allowed = found.filter((a) => !isPrivateAddress(a.address));
    if (allowed.length === 0) {
      const refused = new Error(`${hostname} resolves only to private addresses`) as NodeJS.ErrnoException;
      refused.code = 'EPRIVATETARGET';
      return callback(refused, '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
};
