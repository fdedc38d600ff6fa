// The Allocations section: each allocation's owners and their resources, its skew and its last rebalance.
import type { AllocationStatus } from './console-api.types';
import { $, el } from './console.dom';

export function renderAllocations(allocations: readonly AllocationStatus[]): void {
  $('allocations-list').replaceChildren(...(allocations.length ? allocations.map((a) => el('div', { class: 'owner' },
    el('h3', {}, a.name),
    el('p', {}, `${a.resources} resources, ${a.unowned} unowned, skew ${a.skew}`,
      a.lastRebalance ? `; last rebalance: ${a.lastRebalance.reason} (generation ${a.lastRebalance.generation}, ${a.lastRebalance.moved} moved)` : ''),
    el('div', { class: 'scroll' }, el('table', {},
      el('caption', { class: 'sr-only' }, `Owners of ${a.name}`),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Node'), el('th', { scope: 'col' }, 'Group'), el('th', { scope: 'col' }, 'Resources'))),
      el('tbody', {}, a.owners.map((o) => el('tr', {}, el('th', { scope: 'row' }, o.acquirer), el('td', {}, o.group), el('td', { class: 'wrap' }, `${o.resources.length}: ${o.resources.join(', ')}`)))))))) : [el('p', {}, 'No allocation.')]));
}
