import type { AlertEvent, HistoryEvent } from './history';
import { runsOf } from './runs';

/** What {@link checkAlerts} found: the alerts said, in order, and each one that broke a rule. */
export interface AlertCheck {
  readonly alerts: readonly AlertEvent[];
  readonly violations: readonly string[];
}

/**
 * Checks, from the history alone, what was said about a job's health against the runs that ended before it. Each
 * turn is said once for the cluster: alerts alternate, `failing` first (a second `failing` with no `recovered`
 * between is a turn said twice, whichever node said it). None is said early: before a `failing`, the job's newest
 * `failureThreshold` ended runs (by start) all failed; before a `recovered`, its newest `recoveryThreshold` all
 * completed. Runs with no end (a killed node's) are not ended runs.
 */
export function checkAlerts(events: readonly HistoryEvent[], job: string, thresholds: { failureThreshold: number; recoveryThreshold: number }): AlertCheck {
  const alerts = events.filter((e): e is AlertEvent => e.type === 'alert' && e.job === job && (e.kind === 'failing' || e.kind === 'recovered')).sort((a, b) => a.at - b.at);
  const ended = runsOf([...events]).filter((run) => run.outcome !== 'unfinished').map((run) => ({
    at: run.events.find((e) => e.type === 'end')!.at, startedAt: run.start.at, ok: run.outcome === 'done',
  }));
  const violations: string[] = [];
  let expected: AlertEvent['kind'] = 'failing';
  for (const alert of alerts) {
    if (alert.kind !== expected) {
      violations.push(`${alert.kind} said by ${alert.node} at ${alert.at} while the job was already ${alert.kind === 'failing' ? 'failing' : 'not failing'}: a turn said twice`);
      continue;
    }
    const before = ended.filter((run) => run.at <= alert.at).sort((a, b) => b.startedAt - a.startedAt);
    const needed = alert.kind === 'failing' ? thresholds.failureThreshold : thresholds.recoveryThreshold;
    const newest = before.slice(0, needed);
    if (newest.length < needed || newest.some((run) => run.ok !== (alert.kind === 'recovered'))) {
      violations.push(`${alert.kind} said by ${alert.node} at ${alert.at} before ${needed} ${alert.kind === 'failing' ? 'failed' : 'completed'} runs in a row had ended`);
    }
    expected = alert.kind === 'failing' ? 'recovered' : 'failing';
  }
  return { alerts, violations };
}

/** What {@link checkMissed} found: the instants said missed, and each one that broke a rule. */
export interface MissedCheck {
  readonly instants: readonly number[];
  readonly violations: readonly string[];
}

/**
 * Checks, from the history alone, the missed slots said of a job: each instant is said once for the cluster
 * (whichever node says it), and only an instant no run started for (a `start` event naming its tick, on any node),
 * except a run whose process was killed (`killed`: pid to when) within `recordMs` of its start: its record, not yet
 * written, died with it, and the library says what it can know (no node recorded a run for that instant).
 */
export function checkMissed(events: readonly HistoryEvent[], job: string, killed: { readonly at: ReadonlyMap<number, number>; readonly recordMs: number } = { at: new Map(), recordMs: 0 }): MissedCheck {
  const said = events.filter((e): e is AlertEvent => e.type === 'alert' && e.job === job && e.kind === 'missed');
  const recorded = runsOf([...events]).filter((run) => {
    const death = killed.at.get(run.pid);
    return death === undefined || death - run.start.at > killed.recordMs;
  });
  const ran = new Set(recorded.map((run) => run.start.tick * 1000));
  const violations: string[] = [];
  const seen = new Map<number, AlertEvent>();
  for (const alert of said) {
    const instant = (alert.detail as { instant: number }).instant;
    const before = seen.get(instant);
    if (before) violations.push(`${new Date(instant).toISOString()} said missed twice: by ${before.node} and by ${alert.node}`);
    seen.set(instant, alert);
    if (ran.has(instant)) violations.push(`${new Date(instant).toISOString()} said missed by ${alert.node}, but a run started for it`);
  }
  return { instants: [...seen.keys()].sort((a, b) => a - b), violations };
}
