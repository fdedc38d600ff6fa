import { parseCliConnection } from '../../lib/cli/cli-connection';
import { CliUsageError } from '../../lib/cli/cli-errors';

/** The CLI's store URLs are checked as the module checks them, before anything connects. */
describe('the CLI refuses a mistyped store URL before it connects', () => {
  const parse = (raw: Parameters<typeof parseCliConnection>[0]) => () => parseCliConnection({ members: '127.0.0.1:5701', clusterName: 'dev', mapPrefix: 'gatekeeper', pgSchema: 'gatekeeper', connectTimeout: '5s', ...raw });

  it('names the option and shows the URL without its password', () => {
    expect(parse({ backend: 'postgres', pgUrl: 'postgress//app:secret@db/app' })).toThrow(CliUsageError);
    expect(parse({ backend: 'postgres', pgUrl: 'postgress//app:secret@db/app' })).toThrow('invalid --pg-url (or GATEKEEPER_PG_URL): must be a URL such as postgres://user:password@host:5432/database (or a socket folder starting with /), got "postgress//app:***@db/app"');
    expect(parse({ backend: 'redis', redisUrl: 'redis//:secret@cache:6379' })).toThrow('invalid --redis-url (or GATEKEEPER_REDIS_URL): must be a URL such as redis://user:password@host:6379/0');
  });

  it('takes the URLs the drivers read as given', () => {
    expect(parse({ backend: 'postgres', pgUrl: 'postgres://app:secret@db:5432/app' })).not.toThrow();
    expect(parse({ backend: 'redis', redisUrl: 'redis://cache:6379/0' })).not.toThrow();
  });
});
