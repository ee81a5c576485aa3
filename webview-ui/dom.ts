/**
 * Building DOM without HTML strings: every piece of text, agent output above all,
 * becomes a text node, so `<script>` or `<img onerror>` printed by an agent is
 * shown, never run. Event handlers are attached with addEventListener only.
 */

type Child = Node | string | null | undefined | false;

export interface Attributes {
  class?: string;
  title?: string;
  role?: string;
  href?: string;
  [name: `aria-${string}`]: string | undefined;
  [name: `data-${string}`]: string | undefined;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined) continue;
    // Links are shown, not followed from agent text: only http(s) addresses are kept.
    if (name === 'href' && !/^https?:\/\//i.test(value)) continue;
    element.setAttribute(name, value);
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** A codicon (the font ships with the viewer). */
export function icon(name: string, extraClass = ''): HTMLElement {
  return h('span', { class: `codicon codicon-${name}${extraClass ? ` ${extraClass}` : ''}`, 'aria-hidden': 'true' });
}

export function button(label: string, onClick: () => void, options: { icon?: string; title?: string; class?: string } = {}): HTMLButtonElement {
  const element = h('button', { class: options.class ?? 'button', title: options.title }, options.icon ? icon(options.icon) : null, label);
  element.type = 'button';
  element.addEventListener('click', onClick);
  return element;
}

/** Replaces an element's children; null, undefined and false are left out. */
export function setChildren(parent: Element, ...children: Child[]): void {
  clear(parent);
  append(parent, ...children);
}

export function clear(element: Element): void {
  while (element.firstChild) element.removeChild(element.firstChild);
}
