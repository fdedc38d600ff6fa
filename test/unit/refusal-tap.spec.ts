import type { ILogger } from 'hazelcast-client';
import { refusalTap } from '../../lib/backends/hazelcast/refusal-tap';

/** The line hazelcast-client 5.6 logs (WARN) for each member that answered but refused its cluster name. */
const REFUSAL = 'Error during initial connection to 127.0.0.1:5911 Error: The configured cluster name on the client does not match the one '
  + 'configured in the cluster or the credentials set in the client security config could not be authenticated.';

describe('refusalTap: a member that refused the client, heard in the client\'s log lines', () => {
  it('tells the refusing address, and passes every line on unchanged', () => {
    const passed: string[] = [];
    const keep = (level: string) => (objectName: string, message: string) => void passed.push(`${level} ${objectName}: ${message}`);
    const inner = { log: () => undefined, error: keep('E'), warn: keep('W'), info: keep('I'), debug: keep('D'), trace: keep('T') } as unknown as ILogger;
    const refused: string[] = [];
    const tap = refusalTap(inner, (address) => refused.push(address));
    tap.warn('ConnectionManager', 'Error during initial connection to 127.0.0.1:5912 Error: connect ECONNREFUSED 127.0.0.1:5912');
    tap.warn('ConnectionManager', REFUSAL);
    tap.info('ConnectionManager', 'Trying to connect to 127.0.0.1:5911');
    expect(refused).toEqual(['127.0.0.1:5911']);
    expect(passed).toHaveLength(3);
    expect(passed[1]).toBe(`W ConnectionManager: ${REFUSAL}`);
  });
});
