/**
 * The format of `membership.httpAddress`, for messages: `scheme://host:port`, optionally a path the app's routes sit
 * under (a global prefix); a bare `host:port` means `http://host:port`.
 */
export const HTTP_ADDRESS_FORMAT = 'http(s)://host:port[/prefix], e.g. http://10.0.0.5:3000 (a bare host:port means http://)';

/** An advertised address as a URL base: `http://` added when it has no scheme, no trailing slash. */
export function httpAddressBase(address: string): string {
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(address) ? address : `http://${address}`;
  return url.replace(/\/+$/, '');
}

/** Why `address` cannot be an advertised HTTP address (see {@link HTTP_ADDRESS_FORMAT}), or `undefined` if it can. */
export function httpAddressProblem(address: string): string | undefined {
  let url: URL;
  try {
    url = new URL(httpAddressBase(address.trim()));
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `has the scheme ${url.protocol.slice(0, -1)}, not http or https`;
  if (url.hostname === '') return 'names no host';
  if (url.search !== '' || url.hash !== '') return 'may not have a query or a fragment';
  if (url.username !== '' || url.password !== '') return 'may not carry credentials';
  return undefined;
}

/** One address of a network interface, as `os.networkInterfaces()` lists it. */
export interface InterfaceAddress {
  readonly address: string;
  readonly family: string;
  readonly internal: boolean;
  /** An IPv6 address's scope (0: global). */
  readonly scopeid?: number;
}

/** This machine's interfaces and their addresses, as `os.networkInterfaces()` gives them. */
export type NetworkInterfaces = Readonly<Record<string, readonly InterfaceAddress[] | undefined>>;

/** Where a server listens, as `server.address()` gives it: an address and port, or a pipe's path (or nothing). */
export type ListeningAddress = { readonly address: string; readonly family: string; readonly port: number } | string | null;

/** The wildcard addresses a server listens on to take connections on every interface. */
const WILDCARDS = new Set(['0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0']);

/**
 * The address this node advertises for its HTTP server when `membership.httpAddress` is not set: the one it listens
 * on (`scheme://host:port`). A server bound to every interface (`0.0.0.0`, `::`: `app.listen(port)` without a host)
 * is advertised at this machine's first external IPv4 address (then a global IPv6 one), which the same machine
 * reaches too; on a machine with none, at 127.0.0.1. A pipe or socket file has no address to advertise.
 */
export function advertisedHttpAddress(
  listening: ListeningAddress,
  secure: boolean,
  interfaces: NetworkInterfaces,
): string | undefined {
  if (listening === null || typeof listening === 'string') return undefined;
  const bound = listening.address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  const host = WILDCARDS.has(bound) ? reachableHost(interfaces) : bound;
  return `${secure ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${listening.port}`;
}

/** This machine's first external IPv4 address, else its first global IPv6 one, else 127.0.0.1. */
function reachableHost(interfaces: NetworkInterfaces): string {
  const external = Object.values(interfaces).flatMap((list) => list ?? []).filter((i) => !i.internal);
  const v4 = external.find((i) => i.family === 'IPv4');
  if (v4) return v4.address;
  // A link-local IPv6 address (fe80::) needs its zone to be reached: not advertised.
  const v6 = external.find((i) => i.family === 'IPv6' && (i.scopeid ?? 0) === 0 && !/^fe[89ab]/i.test(i.address));
  return v6?.address ?? '127.0.0.1';
}
