import type { CanActivate } from '@nestjs/common';
import { resolveAdminOptions } from '../../lib/nest/options/gatekeeper-admin.options';

const TOKEN = 'env-admin-token-0123456789';
const guard: CanActivate = { canActivate: () => true };

/** `admin.token` defaults to GATEKEEPER_ADMIN_TOKEN, the variable the CLI sends: one setting for the app and the CLI. */
describe('the admin options: the token from GATEKEEPER_ADMIN_TOKEN', () => {
  it('admin: {} takes the token from the environment; a token or a guard given wins over it', () => {
    expect(resolveAdminOptions({}, { GATEKEEPER_ADMIN_TOKEN: TOKEN })).toEqual({ path: 'gatekeeper', console: false, token: TOKEN });
    expect(resolveAdminOptions({ console: true, path: 'ops' }, { GATEKEEPER_ADMIN_TOKEN: TOKEN })).toEqual({ path: 'ops', console: true, token: TOKEN });
    expect(resolveAdminOptions({ token: 'given-admin-token-0123456789' }, { GATEKEEPER_ADMIN_TOKEN: TOKEN })?.token).toBe('given-admin-token-0123456789');
    expect(resolveAdminOptions({ guard }, { GATEKEEPER_ADMIN_TOKEN: TOKEN })).toEqual({ path: 'gatekeeper', console: false, guard });
    // Not mounted unless asked for: the variable alone mounts nothing.
    expect(resolveAdminOptions(undefined, { GATEKEEPER_ADMIN_TOKEN: TOKEN })).toBeUndefined();
  });

  it('without a token anywhere, or with a short one in the environment, refuses to start naming what to set', () => {
    expect(() => resolveAdminOptions({}, {})).toThrow(
      'invalid admin.token: the admin API must be protected: set GATEKEEPER_ADMIN_TOKEN (at least 16 characters; the CLI sends the same variable), ' +
        'or give admin.token or admin.guard',
    );
    expect(() => resolveAdminOptions({}, { GATEKEEPER_ADMIN_TOKEN: '' })).toThrow(/set GATEKEEPER_ADMIN_TOKEN/);
    expect(() => resolveAdminOptions({}, { GATEKEEPER_ADMIN_TOKEN: 'short' })).toThrow(
      'invalid admin.token: GATEKEEPER_ADMIN_TOKEN (the admin token) must have at least 16 characters, got 5',
    );
    // A short token given in the options is named as before, whatever the environment holds.
    expect(() => resolveAdminOptions({ token: 'short' }, { GATEKEEPER_ADMIN_TOKEN: TOKEN })).toThrow(/admin\.token of at least 16 characters \(got 5 characters\)/);
  });
});
