import type { Outcome } from '../../src/sessionFormat/sessionLines.js';
import { button, h } from '../dom.js';

/**
 * The filters of the list and the stats pages, kept in the page's address
 * (`?search=…&outcome=success&outcome=failed&after=…&before=…&project=…`): the same
 * parameters the API takes, so a filtered page can be bookmarked and shared.
 */

export const OUTCOME_LABELS: Readonly<Record<Outcome, string>> = {
  success: 'Success',
  failed: 'Failed',
  interrupted: 'Interrupted',
  max_iterations_reached: 'Iteration limit',
};

const FILTER_NAMES = ['search', 'outcome', 'after', 'before', 'project'] as const;
/** Typing is gathered before the server is asked again. */
const TYPING_DELAY_MS = 250;

/** The filter parameters of the page's address, and nothing else. */
export function filterFromAddress(search: string = location.search): URLSearchParams {
  const all = new URLSearchParams(search);
  const filter = new URLSearchParams();
  for (const name of FILTER_NAMES) for (const value of all.getAll(name)) if (value) filter.append(name, value);
  return filter;
}

export interface FilterBar {
  element: HTMLElement;
  /** Fills the project menu (from the stats of every session). */
  setProjects(projects: readonly string[]): void;
}

/** `address: false` where the page has no address of its own to keep them in (the editor's webview). */
export function createFilterBar(
  initial: URLSearchParams,
  onChange: (filter: URLSearchParams) => void,
  options: { search?: boolean; address?: boolean } = {},
): FilterBar {
  const searchInput = h('input', { class: 'filter-search', 'aria-label': 'Search prompts' });
  searchInput.type = 'search';
  searchInput.placeholder = 'Search prompts…';
  searchInput.value = initial.get('search') ?? '';

  const outcomeBoxes = outcomeChips(initial, changed);
  const after = dateInput(initial, 'after', 'Started on or after', changed);
  const before = dateInput(initial, 'before', 'Started on or before', changed);

  const project = h('select', { class: 'filter-project', 'aria-label': 'Project' });
  const initialProject = initial.get('project') ?? '';
  const fillProjects = (projects: readonly string[]): void => {
    // What the user chose stays chosen, All projects included.
    const chosen = project.value;
    const names = [...new Set([...projects, ...(initialProject ? [initialProject] : [])])].sort((a, b) => a.localeCompare(b));
    project.replaceChildren(h('option', {}, 'All projects'), ...names.map((name) => h('option', {}, name)));
    (project.options[0] as HTMLOptionElement).value = '';
    project.value = chosen;
  };
  fillProjects([]);
  project.value = initialProject;
  project.addEventListener('change', changed);

  let typingTimer: ReturnType<typeof setTimeout> | undefined;
  searchInput.addEventListener('input', () => {
    clearTimeout(typingTimer);
    typingTimer = setTimeout(changed, TYPING_DELAY_MS);
  });

  const clear = button(
    'Clear',
    () => {
      searchInput.value = '';
      for (const { box } of outcomeBoxes) box.checked = false;
      after.value = '';
      before.value = '';
      project.value = '';
      changed();
    },
    { icon: 'clear-all', title: 'Show every session', class: 'button filter-clear' },
  );

  function current(): URLSearchParams {
    const filter = new URLSearchParams();
    if (options.search !== false && searchInput.value.trim()) filter.set('search', searchInput.value.trim());
    for (const { outcome, box } of outcomeBoxes) if (box.checked) filter.append('outcome', outcome);
    if (after.value) filter.set('after', after.value);
    if (before.value) filter.set('before', before.value);
    if (project.value) filter.set('project', project.value);
    return filter;
  }

  function changed(): void {
    clearTimeout(typingTimer);
    const filter = current();
    const query = filter.toString();
    // The address follows the filters, without a history entry per keystroke.
    if (options.address !== false) history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}`);
    onChange(filter);
  }

  const element = h(
    'form',
    { class: 'filter-bar', role: 'search', 'aria-label': 'Filter sessions' },
    h('div', { class: 'filter-row' }, options.search !== false ? searchInput : null, project, clear),
    h(
      'div',
      { class: 'filter-row' },
      h('div', { class: 'chips', role: 'group', 'aria-label': 'Outcomes' }, ...outcomeBoxes.map(({ label }) => label)),
      h('span', { class: 'spacer' }),
      h('label', { class: 'date-label' }, 'Started from ', after),
      h('label', { class: 'date-label' }, 'to ', before),
    ),
  );
  element.addEventListener('submit', (event) => {
    event.preventDefault();
    changed();
  });
  return { element, setProjects: fillProjects };
}

/** A checkbox chip per outcome, checked as the address says. */
function outcomeChips(initial: URLSearchParams, changed: () => void): { outcome: Outcome; box: HTMLInputElement; label: HTMLElement }[] {
  const chosen = new Set(initial.getAll('outcome'));
  return (Object.keys(OUTCOME_LABELS) as Outcome[]).map((outcome) => {
    const box = h('input', { class: 'outcome-box', 'data-outcome': outcome });
    box.type = 'checkbox';
    box.checked = chosen.has(outcome);
    box.addEventListener('change', changed);
    return { outcome, box, label: h('label', { class: `chip chip-${outcome}` }, box, OUTCOME_LABELS[outcome]) };
  });
}

function dateInput(initial: URLSearchParams, name: 'after' | 'before', label: string, changed: () => void): HTMLInputElement {
  const input = h('input', { class: `filter-${name}`, 'aria-label': label, title: label });
  input.type = 'date';
  input.value = initial.get(name) ?? '';
  input.addEventListener('change', changed);
  return input;
}
