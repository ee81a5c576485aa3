import { h } from '../dom.js';

/** Rows rendered above and below the visible ones, so scrolling shows no gaps. */
const OVERSCAN_ROWS = 10;

/**
 * A list of fixed-height rows of which only those in view exist in the page: ten
 * thousand sessions cost what forty do. The page itself scrolls (the list is as tall
 * as all its rows), so find-in-page aside, it behaves like a long list.
 */
export class VirtualList<T> {
  readonly element = h('div', { class: 'virtual-list', role: 'list' });
  private items: readonly T[] = [];
  private frame = 0;
  private renderedRange = '';

  constructor(
    private readonly rowHeight: number,
    private readonly renderRow: (item: T, index: number) => HTMLElement,
  ) {
    const schedule = (): void => {
      if (this.frame) return;
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.render(false);
      });
    };
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', schedule);
  }

  setItems(items: readonly T[]): void {
    this.items = items;
    // CSSOM, not a style attribute: allowed under the page's CSP.
    this.element.style.height = `${items.length * this.rowHeight}px`;
    this.render(true);
  }

  /** Draws the visible rows again (their data changed). */
  refresh(): void {
    this.render(true);
  }

  private render(force: boolean): void {
    const top = this.element.getBoundingClientRect().top;
    const viewport = window.innerHeight || 800;
    const first = Math.max(0, Math.floor(-top / this.rowHeight) - OVERSCAN_ROWS);
    const last = Math.min(this.items.length, Math.ceil((viewport - top) / this.rowHeight) + OVERSCAN_ROWS);
    const range = `${first}:${last}`;
    if (!force && range === this.renderedRange) return;
    this.renderedRange = range;
    const rows: HTMLElement[] = [];
    for (let index = first; index < last; index++) {
      const row = this.renderRow(this.items[index]!, index);
      row.classList.add('virtual-row');
      row.style.transform = `translateY(${index * this.rowHeight}px)`;
      row.setAttribute('role', 'listitem');
      row.setAttribute('aria-setsize', String(this.items.length));
      row.setAttribute('aria-posinset', String(index + 1));
      rows.push(row);
    }
    this.element.replaceChildren(...rows);
  }
}
