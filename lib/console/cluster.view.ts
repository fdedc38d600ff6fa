// The Cluster section: its participants (who leads what) and its elections, as just read (the leases' time left is
// as the answer says: it was read a moment ago).
import type { ClusterOverview } from './console-api.types';
import { $, el, fillRows } from './console.dom';
import { seconds, token } from './console.format';

export function renderCluster(cluster: ClusterOverview): void {
  fillRows($('participants-rows'), (cluster.participants || []).map((p) => el('tr', {},
    el('th', { scope: 'row' }, p.acquirer), el('td', {}, p.group), el('td', {}, p.version), el('td', {}, seconds(p.ageMs)),
    el('td', {}, (p.leads || []).map((e) => el('span', { class: 'badge leader' }, e))))));
  fillRows($('elections-rows'), (cluster.elections || []).map((e) => el('tr', {},
    el('th', { scope: 'row' }, e.name), el('td', {}, e.leader ? e.leader.acquirer : 'nobody'), el('td', e.epoch === undefined || e.epoch === null ? { class: 'token' } : { class: 'token', title: String(e.epoch) }, e.epoch === undefined || e.epoch === null ? '' : token(e.epoch)),
    el('td', {}, e.leader && e.leaseLeftMs !== undefined ? seconds(e.leaseLeftMs) : ''))));
}
