import { Injectable } from '@nestjs/common';
import { ClusterSingleton } from '../../lib';

/*
 * The decorator's type accepts only methods whose declared return type stays true once wrapped (the wrapper
 * returns a Promise, of undefined when a tick is skipped). `npm run typecheck` compiles this file: each
 * @ts-expect-error must meet the error it expects, or the check fails.
 */
@Injectable()
export class TypedJobs {
  @ClusterSingleton('a', '1m')
  nothing(): void {}

  @ClusterSingleton('b', '1m')
  async later(): Promise<void> {}

  @ClusterSingleton('c', '1m')
  async maybe(): Promise<number | undefined> {
    return 1;
  }

  // @ts-expect-error a synchronous method returning a value would be typed as returning it, but returns a Promise
  @ClusterSingleton('d', '1m')
  count(): number {
    return 1;
  }

  // @ts-expect-error a skipped tick resolves to undefined, which Promise<number> does not admit
  @ClusterSingleton('e', '1m')
  async total(): Promise<number> {
    return 1;
  }
}

describe('@ClusterSingleton types', () => {
  it('wraps a synchronous void method into one that returns a Promise (its type says void, never a value)', () => {
    const jobs = new TypedJobs();
    // Outside a Nest module there is no runner: the wrapper rejects, which shows it is async.
    const result = (jobs.nothing as () => unknown)();
    expect(result).toBeInstanceOf(Promise);
    return expect(result).rejects.toThrow('no GatekeeperModule in scope');
  });
});
