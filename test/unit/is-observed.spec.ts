import { Subject } from 'rxjs';
import { isObserved } from '../../lib/nest/signals/gatekeeper-events';

/** Events are built only for subjects someone listens to; an rxjs without `Subject.observed` must never lose them. */
describe('isObserved', () => {
  it('follows the subscribers of a subject', () => {
    const subject = new Subject<number>();
    expect(isObserved(subject)).toBe(false);
    const subscription = subject.subscribe(() => undefined);
    expect(isObserved(subject)).toBe(true);
    subscription.unsubscribe();
    expect(isObserved(subject)).toBe(false);
  });

  it('counts every subject as observed on an rxjs older than 7.2, which has no `observed`', () => {
    class OldSubject<T> extends Subject<T> {
      // As rxjs 7.1 was: no such property.
      override get observed(): boolean {
        return undefined as unknown as boolean;
      }
    }
    expect(isObserved(new OldSubject<number>())).toBe(true);
  });
});
