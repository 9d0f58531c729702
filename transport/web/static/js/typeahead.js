// Autocomplete for a text field, as a combobox with a listbox of
// suggestions (WAI-ARIA's pattern): ArrowDown and ArrowUp move through
// them, Enter or Tab takes one, Escape closes the list; a click takes one
// too. suggest(field) says what to offer for the text before the caret:
// {items: [{key, label, detail, icon, apply}], from, to} or null, where
// apply() returns the text that replaces field.value.slice(from, to).

import { h, reconcile } from './dom.js';

let seq = 0;

export class Typeahead {
  constructor(field, suggest, { onApplied, above = true } = {}) {
    this.field = field;
    this.suggest = suggest;
    this.onApplied = onApplied || (() => {});
    this.above = above;
    this.items = [];
    this.active = 0;
    this.range = null;
    this.id = `typeahead-${++seq}`;
    this.list = h('ul', { id: this.id, class: 'typeahead', role: 'listbox', hidden: true, 'aria-label': 'Suggestions' });
    document.body.append(this.list);
    field.setAttribute('aria-autocomplete', 'list');
    field.setAttribute('aria-controls', this.id);
    field.setAttribute('aria-expanded', 'false');
    field.addEventListener('input', () => this.update());
    field.addEventListener('focus', () => this.update());
    field.addEventListener('click', () => this.update());
    field.addEventListener('blur', () => setTimeout(() => { if (document.activeElement !== field) this.close(); }, 0));
    field.addEventListener('keydown', (e) => this.onKey(e), true);
    window.addEventListener('resize', () => this.close());
    // A press on a suggestion takes it without taking the focus.
    this.list.addEventListener('mousedown', (e) => e.preventDefault());
  }

  get open() {
    return !this.list.hidden;
  }

  update() {
    if (document.activeElement !== this.field) return this.close();
    const got = this.suggest(this.field);
    if (!got || !got.items.length) return this.close();
    this.items = got.items.slice(0, 8);
    this.range = { from: got.from, to: got.to };
    this.active = 0;
    this.render();
  }

  render() {
    // Keyed by place too, so that the keys are unique whatever the suggestions' are.
    reconcile(this.list, this.items.map((it, i) => ({
      key: `${i}:${it.key}`,
      sig: JSON.stringify([it.label, it.detail, i === this.active]),
      build: () => h('li', {
        id: `${this.id}-${i}`, role: 'option', 'aria-selected': i === this.active ? 'true' : 'false',
        class: 'typeahead-item', 'data-key': it.key,
        onclick: () => this.take(i),
      }, it.icon || null, h('span', { class: 'label' }, it.label), it.detail ? h('span', { class: 'detail muted' }, it.detail) : null),
    })));
    this.list.hidden = false;
    this.field.setAttribute('aria-expanded', 'true');
    this.field.setAttribute('aria-activedescendant', `${this.id}-${this.active}`);
    this.place();
  }

  // place puts the list against the field (above it: the message box is
  // at the bottom of the screen).
  place() {
    const r = this.field.getBoundingClientRect();
    const s = this.list.style;
    s.setProperty('left', `${Math.max(4, r.left)}px`);
    s.setProperty('min-width', `${Math.min(r.width, 320)}px`);
    if (this.above) {
      s.setProperty('bottom', `${window.innerHeight - r.top + 4}px`);
      s.removeProperty('top');
    } else {
      s.setProperty('top', `${r.bottom + 4}px`);
      s.removeProperty('bottom');
    }
  }

  close() {
    if (this.list.hidden) return;
    this.list.hidden = true;
    this.items = [];
    this.field.setAttribute('aria-expanded', 'false');
    this.field.removeAttribute('aria-activedescendant');
  }

  onKey(e) {
    if (!this.open || e.isComposing) return;
    const n = this.items.length;
    switch (e.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        this.active = (this.active + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
        this.render();
        break;
      case 'Enter':
      case 'Tab':
        if (e.shiftKey) return;
        this.take(this.active);
        break;
      case 'Escape':
        this.close();
        break;
      default:
        return;
    }
    e.preventDefault();
    e.stopImmediatePropagation();
  }

  take(i) {
    const it = this.items[i];
    if (!it || !this.range) return;
    const text = it.apply();
    const v = this.field.value;
    this.field.value = v.slice(0, this.range.from) + text + v.slice(this.range.to);
    const caret = this.range.from + text.length;
    this.field.setSelectionRange(caret, caret);
    this.close();
    this.field.focus();
    this.onApplied(it);
    this.field.dispatchEvent(new Event('input', { bubbles: true }));
  }
}

// fold is a string for matching: lower case, accents off.
export function fold(s) {
  return String(s).normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
}

// rank orders matches: a name that starts with the query, then one with a
// word that does, then the others.
export function rank(name, query) {
  const n = fold(name);
  const q = fold(query);
  if (!q) return 1;
  if (n.startsWith(q)) return 0;
  if (n.split(/[\s_\-.]+/).some((w) => w.startsWith(q))) return 1;
  if (n.includes(q)) return 2;
  return -1;
}
