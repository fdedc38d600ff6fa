// The console's DOM helpers: elements by id, elements built from a tag, attributes and children, and the tables'
// rows kept in place across polls, labelled for the phone's cards and filtered by words.

/** The page's element of `id` (the page is console.html: a missing id is a bug, said at once). */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`console.html has no #${id}`);
  return found as T;
}

/** An attribute's value: `undefined` or `false` leaves it out, `true` sets it empty; `on<event>` adds a listener. */
type Attribute = string | number | boolean | undefined | ((event: Event) => unknown);
export type Attributes = Record<string, Attribute>;
/** A child: a node, or text; `null`, `undefined` and nested arrays are flattened away. */
export type Child = Node | string | number | null | undefined | readonly Child[];

/** `<tag attrs…>children…</tag>`. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (key === 'class') node.className = String(value);
    else if (typeof value === 'function') node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  node.append(...nodes(children));
  return node;
}

/** `children` as `append` and `replaceChildren` take them: nested arrays flattened, `null` and `undefined` left out. */
export function nodes(children: readonly Child[]): Array<Node | string> {
  return children.flatMap((child): Array<Node | string> => {
    if (child === null || child === undefined) return [];
    if (Array.isArray(child)) return nodes(child as readonly Child[]);
    return [child instanceof Node ? child : String(child)];
  });
}

/** The table a body belongs to. */
const tableOf = (tbody: HTMLTableSectionElement): HTMLTableElement => tbody.closest('table') as HTMLTableElement;

/** One row of one cell across the table: "No job.", "Not read yet." */
export const wholeRow = (columns: number, text: string): HTMLTableRowElement => el('tr', {}, el('td', { colspan: columns }, text));

/** On a phone the tables are cards (console.css): each cell names its column, from the table's header. */
export function labelCells(tbody: HTMLTableSectionElement): void {
  const heads = Array.from(tableOf(tbody).querySelectorAll('thead th'), (th) => th.textContent ?? '');
  for (const row of Array.from(tbody.rows)) {
    if (row.classList.contains('detail-row')) continue;
    Array.from(row.cells).forEach((cell, i) => {
      if (cell.tagName === 'TD' && !cell.classList.contains('actions') && !cell.hasAttribute('colspan') && !cell.dataset.label && heads[i]) cell.dataset.label = heads[i];
    });
  }
}

/** Puts `rows` in `tbody`, replacing what was there, and labels their cells. */
export function fillRows(tbody: HTMLTableSectionElement, rows: readonly HTMLTableRowElement[]): void {
  tbody.replaceChildren(...rows);
  labelCells(tbody);
}

/**
 * Puts `rows` in `tbody` in that order, moving nothing already in place: rows kept from the last poll (and a row
 * with focus, or an open detail under its job) stay where they are instead of being re-created every 2 s.
 */
export function syncRows(tbody: HTMLTableSectionElement, rows: readonly HTMLTableRowElement[]): void {
  const wanted = new Set<Element>(rows);
  for (const row of Array.from(tbody.children)) if (!wanted.has(row)) row.remove();
  rows.forEach((row, i) => {
    if (tbody.children[i] !== row) tbody.insertBefore(row, tbody.children[i] ?? null);
  });
  labelCells(tbody);
}

/**
 * Filters the rows of `tbody` by the words of `query` (each must appear in a row's `data-search`, case ignored); a
 * row's detail row goes with it. Says how many are shown in `count`, and names the filter when none is.
 */
export function filterRows(tbody: HTMLTableSectionElement, query: string, count: HTMLElement, what: string): void {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  let total = 0;
  let previous = true;
  for (const row of Array.from(tbody.rows)) {
    if (row.classList.contains('detail-row')) {
      row.classList.toggle('filtered-out', !previous);
      continue;
    }
    if (row.dataset.search === undefined) continue;
    total++;
    const text = row.dataset.search.toLowerCase();
    previous = words.every((w) => text.includes(w));
    row.classList.toggle('filtered-out', !previous);
    if (previous) shown++;
  }
  let none = tbody.querySelector<HTMLTableRowElement>('tr.no-match');
  if (words.length && total && !shown) {
    if (!none) {
      none = el('tr', { class: 'no-match' }, el('td', { colspan: tableOf(tbody).querySelectorAll('thead th').length }));
      tbody.append(none);
    }
    none.cells[0].textContent = `No ${what} matches “${query.trim()}”.`;
  } else if (none) none.remove();
  count.textContent = words.length ? `${shown} of ${total} shown` : total ? `${total} ${what}${total === 1 ? '' : 's'}` : '';
}

/** Keeps the rows of a table built from a listing: an unchanged item keeps its row (and what the operator opened in it). */
export class KeptRows<T> {
  private readonly rows = new Map<string, { key: string; row: HTMLTableRowElement }>();

  constructor(private readonly build: (item: T) => HTMLTableRowElement) {}

  /** The row of `item` (built anew when `key`, what it shows, changed); rows of ids not in `ids` are dropped. */
  row(id: string, key: string, item: T): HTMLTableRowElement {
    let kept = this.rows.get(id);
    if (!kept || kept.key !== key) this.rows.set(id, (kept = { key, row: this.build(item) }));
    return kept.row;
  }

  /** The row kept for `id`, if any. */
  get(id: string): HTMLTableRowElement | undefined {
    return this.rows.get(id)?.row;
  }

  /** Forgets the rows of items no longer listed. */
  keepOnly(ids: ReadonlySet<string>): void {
    for (const id of Array.from(this.rows.keys())) if (!ids.has(id)) this.rows.delete(id);
  }
}
