import { redactedUrl } from '../../lib/core/redacted-url';

describe('redactedUrl: a connection string for a message, without its password', () => {
  it('masks the password of a URL', () => {
    expect(redactedUrl('postgres://app:secret@db:5432/app')).toBe('postgres://app:***@db:5432/app');
    expect(redactedUrl('redis://:secret@cache:6379/0')).toBe('redis://:***@cache:6379/0');
    expect(redactedUrl('postgres://db:5432/app')).toBe('postgres://db:5432/app');
    expect(redactedUrl('postgres://db/app?user=app&password=secret')).toBe('postgres://db/app?user=app&password=***');
  });

  it('shows text that is no URL as it is, with what looks like a password masked', () => {
    expect(redactedUrl('postgress//app:secret@db:5432/app')).toBe('postgress//app:***@db:5432/app');
    expect(redactedUrl('redis//:secret@cache:6379')).toBe('redis//:***@cache:6379');
    expect(redactedUrl('host=db user=app password=secret dbname=app')).toBe('host=db user=app password=*** dbname=app');
    expect(redactedUrl("host=db password = 'two words'")).toBe('host=db password = ***');
    expect(redactedUrl('/var/run/postgresql app')).toBe('/var/run/postgresql app');
  });
});
