import 'reflect-metadata';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton, GatekeeperError, LeaderOnly, OncePerTrigger, TaskHandler } from '../../lib';
import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';
import { invalidDecorator } from '../../lib/nest/errors/decorator.errors';

/** The library's method decorators refuse misuse the same way: an InvalidInputError naming decorator and method. */
describe('method decorators', () => {
  it.each([
    ['@ClusterSingleton', () => ClusterSingleton('billing', '1m')],
    ['@LeaderOnly', () => LeaderOnly()],
    ["@OncePerTrigger('check')", () => OncePerTrigger('check')],
  ])('%s applied twice on one method is refused, naming the method', (name, decorator) => {
    const declare = () => {
      class Jobs {
        @decorator()
        @decorator()
        async run(): Promise<void> {}
      }
      return Jobs;
    };
    expect(declare).toThrow(InvalidInputError);
    expect(declare).toThrow(`${name} on Jobs.run: `);
  });

  it('refuses a property that is not a method', () => {
    const descriptor = { value: 42, writable: true, configurable: true, enumerable: false };
    const apply = () => (ClusterSingleton('billing', '1m') as unknown as MethodDecorator)(class Jobs {}.prototype, 'run', descriptor);
    expect(apply).toThrow(invalidDecorator('@ClusterSingleton on Jobs.run', 'not a method'));
  });

  it('keeps the metadata of decorators below it and the method name, and fails a call made outside any module', async () => {
    class Jobs {
      @LeaderOnly()
      @Cron('* * * * *')
      async report(): Promise<void> {}
    }
    const method = Jobs.prototype.report;
    expect(method.name).toBe('report');
    expect(Reflect.getMetadataKeys(method).length).toBeGreaterThan(1); // @Cron's keys and the wrapper's own
    const error = await new Jobs().report().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatekeeperError);
    expect((error as Error).message).toBe('@LeaderOnly on Jobs.report: no GatekeeperModule in scope (import GatekeeperModule.forRoot(), global by default)');
  });

  it('names the option at fault', () => {
    expect(() => TaskHandler('export', { maxAttempts: 0 })).toThrow(
      invalidDecorator("@TaskHandler('export')", 'must be a whole number, 1 or more, got 0', 'maxAttempts'),
    );
    expect(() => LeaderOnly('')).toThrow(InvalidInputError);
  });
});
