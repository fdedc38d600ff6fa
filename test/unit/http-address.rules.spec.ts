import type { NetworkInterfaceInfo } from 'node:os';
import { resolveGatekeeperOptions } from '../../lib/nest/options/gatekeeper-options.resolver';
import { advertisedHttpAddress, httpAddressBase, httpAddressProblem } from '../../lib/presence/http-address.rules';

const nic = (address: string, family: 'IPv4' | 'IPv6', internal = false, scopeid = 0): NetworkInterfaceInfo =>
  (family === 'IPv4'
    ? { address, family, internal, netmask: '255.255.255.0', mac: '00:00:00:00:00:00', cidr: null }
    : { address, family, internal, netmask: 'ffff::', mac: '00:00:00:00:00:00', cidr: null, scopeid });
const lo = { lo: [nic('127.0.0.1', 'IPv4', true), nic('::1', 'IPv6', true)] };
const lan = { ...lo, eth0: [nic('fe80::1', 'IPv6', false, 2), nic('10.0.0.5', 'IPv4')], docker0: [nic('172.17.0.1', 'IPv4')] };

/** What a node advertises for its HTTP server when membership.httpAddress is not set, and what that option takes. */
describe('the advertised HTTP address', () => {
  it('is the address the server is bound to, with its port and scheme', () => {
    expect(advertisedHttpAddress({ address: '127.0.0.1', family: 'IPv4', port: 3000 }, false, lan)).toBe('http://127.0.0.1:3000');
    expect(advertisedHttpAddress({ address: '10.0.0.5', family: 'IPv4', port: 443 }, true, lan)).toBe('https://10.0.0.5:443');
    expect(advertisedHttpAddress({ address: '::1', family: 'IPv6', port: 3001 }, false, lan)).toBe('http://[::1]:3001');
    expect(advertisedHttpAddress({ address: '::ffff:127.0.0.1', family: 'IPv6', port: 3002 }, false, lan)).toBe('http://127.0.0.1:3002');
  });

  it('for a server on every interface (app.listen(port)), is a reachable address of this machine, never 0.0.0.0 or ::', () => {
    expect(advertisedHttpAddress({ address: '::', family: 'IPv6', port: 3000 }, false, lan)).toBe('http://10.0.0.5:3000');
    expect(advertisedHttpAddress({ address: '0.0.0.0', family: 'IPv4', port: 3000 }, false, lan)).toBe('http://10.0.0.5:3000');
    // Only a global IPv6 address: that one; only link-local (needs its zone) or nothing external: the loopback.
    expect(advertisedHttpAddress({ address: '::', family: 'IPv6', port: 3000 }, false, { ...lo, eth0: [nic('2001:db8::5', 'IPv6')] })).toBe('http://[2001:db8::5]:3000');
    expect(advertisedHttpAddress({ address: '::', family: 'IPv6', port: 3000 }, false, { ...lo, eth0: [nic('fe80::1', 'IPv6', false, 2)] })).toBe('http://127.0.0.1:3000');
    expect(advertisedHttpAddress({ address: '0.0.0.0', family: 'IPv4', port: 3000 }, false, lo)).toBe('http://127.0.0.1:3000');
  });

  it('is none for a pipe or a server that does not listen', () => {
    expect(advertisedHttpAddress('/tmp/app.sock', false, lan)).toBeUndefined();
    expect(advertisedHttpAddress(null, false, lan)).toBeUndefined();
  });

  it('as membership.httpAddress: scheme://host:port[/prefix], http:// when bare; anything else refused at start-up, naming the format', () => {
    expect(httpAddressBase('10.0.0.5:3000')).toBe('http://10.0.0.5:3000');
    expect(httpAddressBase('https://ops.example.com/api/')).toBe('https://ops.example.com/api');
    for (const good of ['http://10.0.0.5:3000', '10.0.0.5:3000', 'https://ops.example.com/api', 'http://[::1]:3000']) expect(httpAddressProblem(good)).toBeUndefined();
    expect(httpAddressProblem('ftp://10.0.0.5')).toBe('has the scheme ftp, not http or https');
    expect(httpAddressProblem('http://10.0.0.5:3000/?x=1')).toBe('may not have a query or a fragment');
    expect(httpAddressProblem('http://:3000')).toBe('is not a URL');

    const resolve = (httpAddress: unknown) => () => resolveGatekeeperOptions({ membership: { httpAddress: httpAddress as string } });
    expect(resolve(' http://10.0.0.5:3000/api ')().membership?.httpAddress).toBe('http://10.0.0.5:3000/api');
    expect(resolve('ftp://10.0.0.5')).toThrow(
      'invalid membership.httpAddress: must be where this node\'s HTTP server answers, http(s)://host:port[/prefix], e.g. http://10.0.0.5:3000 ' +
        '(a bare host:port means http://); "ftp://10.0.0.5" has the scheme ftp, not http or https',
    );
    expect(resolve('')).toThrow(/invalid membership\.httpAddress: .* "" is not a non-empty string/);
  });
});
