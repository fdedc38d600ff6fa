import { z } from 'zod';
import { absentAs, durationInput } from '../../core/input-fields';
import { HTTP_ADDRESS_FORMAT, httpAddressProblem } from '../../presence/http-address.rules';
import { optionsObject, parseOption } from './option-schema';
import type { GatekeeperModuleOptions, MembershipOptions, ResolvedGatekeeperOptions } from './gatekeeper.options';
import { invalidOption } from '../../core/errors/input.errors';

// The address is read after the ttl rule, as it always was: see resolveMembership.
export const MEMBERSHIP_OPTIONS = optionsObject(
  {
    interval: absentAs('5s', durationInput()),
    ttl: durationInput().optional(),
    httpAddress: z.unknown().optional(),
    refuseDuplicateName: z.unknown().optional(),
  } satisfies Record<keyof MembershipOptions, z.ZodType>,
  { notObject: (given) => `must be false or an object, got ${String(given)}`, lists: true },
);

/** Where this node's HTTP server answers, trimmed: text that {@link httpAddressProblem} has nothing against. */
const HTTP_ADDRESS = z.unknown().transform((given, context) => {
  const problem = typeof given !== 'string' || given.trim() === '' ? 'is not a non-empty string' : httpAddressProblem(given);
  if (problem === undefined) return (given as string).trim();
  context.addIssue({ code: 'custom', message: `must be where this node's HTTP server answers, ${HTTP_ADDRESS_FORMAT}; ${JSON.stringify(given)} ${problem}`, input: given });
  return z.NEVER;
});

/** The `membership` option (presence); `undefined` when it is turned off. Throws naming the field (`membership.ttl`). */
export function resolveMembership(membership: GatekeeperModuleOptions['membership']): ResolvedGatekeeperOptions['membership'] {
  if (membership === false) return undefined;
  const { interval: intervalMs, ttl, httpAddress, refuseDuplicateName } = parseOption(MEMBERSHIP_OPTIONS, membership ?? {}, 'membership');
  const ttlMs = ttl ?? 3 * intervalMs;
  if (ttlMs <= intervalMs) throw invalidOption('membership.ttl', `must be more than membership.interval (${intervalMs} ms), got ${ttlMs} ms`);
  const address = parseOption(HTTP_ADDRESS.optional(), httpAddress, 'membership.httpAddress');
  return {
    intervalMs,
    ttlMs,
    ...(address !== undefined && { httpAddress: address }),
    refuseDuplicateName: refuseDuplicateName === true,
  };
}
