import type { MigrationReportView, ScheduleChangeView } from '../../lib/console/console-api.types';
import type { GroupMigrationReport, UndoMigrationReport } from '../../lib/permits/group-migrations';
import type { ScheduleChangeResult } from '../../lib/schedules/schedule-catalog';

/*
 * The web console (lib/console, checked without Node's types) describes two of the admin API's answers itself:
 * their types live beside Node code. `npm run typecheck` compiles this file: an answer that no longer fits what the
 * console reads fails here, so the console and the API cannot drift.
 */
const fits = <View>() => <Answer extends View>(answer?: Answer): Answer | undefined => answer;
fits<MigrationReportView>()<GroupMigrationReport>();
fits<MigrationReportView>()<UndoMigrationReport>();
fits<ScheduleChangeView>()<ScheduleChangeResult>();

describe("the console's view of the admin API's answers", () => {
  it('is checked at compile time (this file compiles)', () => {
    const report: GroupMigrationReport = { dryRun: true, fromGroup: 'a', toGroup: 'b', changes: [], skipped: [], target: { group: 'b', liveNodes: [] }, forced: false, warnings: [] };
    const seen: MigrationReportView = report;
    expect(seen.changes).toEqual([]);
  });
});
