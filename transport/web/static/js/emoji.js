// Emoji as images: the emoji set (../emoji/sheet.png, one image of every
// emoji the server names, and ../emoji/data.js, their codes and names)
// shows emoji the same on every machine, with or without an emoji font.
// An emoji is a span with the sheet as its background (its place set in
// CSS variables); its text, the ":name:" the server rendered, stays for
// copying and screen readers. The picker offers every emoji, the
// organization's custom ones and the recently used first, with a search.

import { COLUMNS, CATEGORIES, EMOJI } from '../emoji/data.js';
import { h, emojiChar } from './dom.js';
import { rank, fold } from './typeahead.js';

const byCode = new Map();
const byName = new Map();
const all = EMOJI.split('\n').map((line, index) => {
  const [code, cat, names] = line.split(':');
  const e = { code, cat: Number(cat), names: names.split(','), index };
  byCode.set(code, e);
  for (const n of e.names) byName.set(n, e);
  return e;
});

export function emojiByName(name) {
  return byName.get(name) || null;
}

// POPULAR are offered first until the person has used others.
const POPULAR = ['+1', 'heart', 'tada', 'smile', 'joy', 'eyes', 'rocket', 'thinking', 'check', 'working_on_it'];
const RECENT_KEY = 'teamchat.recentEmoji';

// sprite makes an emoji of the sheet, or null when it has none.
export function sprite(code, label, text = '') {
  const e = byCode.get(code);
  if (!e) return null;
  const el = h('span', { class: 'emoji-img', role: 'img', 'aria-label': label }, text);
  place(el, e);
  return el;
}

function place(el, e) {
  el.classList.add('emoji-img');
  el.style.setProperty('--ex', String(e.index % COLUMNS));
  el.style.setProperty('--ey', String(Math.floor(e.index / COLUMNS)));
}

// emojiElement shows a reaction's or a suggestion's emoji: a custom
// emoji's image, a Unicode emoji from the sheet (or as a character), or
// its name.
export function emojiElement({ type, code, name }, model) {
  if (type === 'realm_emoji') {
    const src = customSrc(model.customEmoji(code));
    if (src) return h('img', { class: 'emoji', src, alt: '', 'aria-hidden': 'true' });
    return h('span', { 'aria-hidden': 'true' }, `:${name}:`);
  }
  const s = sprite(code, name);
  if (s) {
    s.setAttribute('aria-hidden', 'true');
    return s;
  }
  return h('span', { 'aria-hidden': 'true' }, emojiChar(code) || `:${name}:`);
}

// customSrc is where a custom emoji's image is, beside the page.
export function customSrc(e) {
  const url = e && e.source_url;
  return url && /^\/user_avatars\/[\w./-]+$/.test(url) && !url.includes('..') ? url.slice(1) : '';
}

// decorateEmoji turns the emoji spans of rendered HTML into images.
export function decorateEmoji(root) {
  for (const span of root.querySelectorAll('span.emoji')) {
    const cls = [...span.classList].find((c) => c.startsWith('emoji-'));
    const e = cls && byCode.get(cls.slice('emoji-'.length));
    if (e) {
      place(span, e);
      span.textContent = `:${e.names[0]}:`;
    }
  }
}

function recentNames() {
  try {
    const list = JSON.parse(localStorage.getItem(RECENT_KEY) || '[]');
    return Array.isArray(list) ? list.filter((n) => typeof n === 'string').slice(0, 20) : [];
  } catch {
    return [];
  }
}

export function noteUsed(name) {
  const list = [name, ...recentNames().filter((n) => n !== name)].slice(0, 20);
  try {
    localStorage.setItem(RECENT_KEY, JSON.stringify(list));
  } catch {
    // Not kept: the order stays as it was.
  }
}

// choices lists the custom emoji (as pickable) for a model.
function customChoices(model) {
  return Object.entries(model.realmEmoji || {}).filter(([, e]) => !e.deactivated)
    .map(([id, e]) => ({ type: 'realm_emoji', code: id, name: e.name, names: [e.name] }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function unicodeChoice(e) {
  return { type: 'unicode_emoji', code: e.code, name: e.names[0], names: e.names };
}

// search finds emoji whose names match a query, the best first.
function search(q, model) {
  const found = [];
  for (const c of [...customChoices(model), ...all.map(unicodeChoice)]) {
    let r = -1;
    for (const n of c.names) {
      const x = rank(n, q);
      if (x >= 0 && (r < 0 || x < r)) r = x;
    }
    if (r >= 0) found.push({ c, r });
  }
  return found.sort((a, b) => a.r - b.r).map((x) => x.c);
}

// emojiSuggestions are the message box's suggestions after ":" and letters.
export function emojiSuggestions(q, model) {
  return search(q, model).slice(0, 8).map((c) => ({
    key: `${c.type}:${c.code}`, label: `:${c.name}:`, icon: emojiElement(c, model),
    apply: () => { noteUsed(c.name); return `:${c.name}: `; },
  }));
}

// Picker is the emoji picker, a popover by a button: onPick gets
// {type, code, name}.
export class Picker {
  constructor(model) {
    this.model = model;
    this.el = null;
    this.button = null;
    // A press outside closes it.
    document.addEventListener('pointerdown', (e) => {
      if (this.el && !this.el.contains(e.target) && !(this.button && this.button.contains(e.target))) this.close(false);
    }, { capture: true });
  }

  get open() {
    return !!this.el;
  }

  // toggle opens the picker by button (closing it if it was open there).
  toggle(button, label, onPick) {
    const same = this.button === button;
    this.close(false);
    if (same) return;
    this.button = button;
    this.onPick = onPick;
    this.build(label);
    button.setAttribute('aria-expanded', 'true');
    this.place();
    const first = this.el.querySelector('.emoji-recent button');
    (first || this.el.querySelector('input')).focus();
  }

  close(refocus) {
    if (!this.el) return;
    this.el.remove();
    this.el = null;
    const b = this.button;
    this.button = null;
    if (b) {
      b.setAttribute('aria-expanded', 'false');
      if (refocus && b.isConnected) b.focus();
    }
  }

  build(label) {
    const input = h('input', { type: 'search', class: 'emoji-search', placeholder: 'Search emoji', 'aria-label': 'Search emoji', autocomplete: 'off' });
    const recent = this.recentChoices();
    const grid = h('div', { class: 'emoji-grid' });
    this.el = h('div', { class: 'emoji-picker', role: 'dialog', 'aria-label': label },
      input,
      h('div', { class: 'emoji-recent', role: 'group', 'aria-label': 'Recently used' }, recent.map((c) => this.choice(c, 0))),
      grid);
    this.fill(grid, '');
    input.addEventListener('input', () => this.fill(grid, input.value.trim()));
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        const first = grid.querySelector('button');
        if (first) first.click();
      } else if (e.key === 'ArrowDown') {
        e.preventDefault();
        e.stopPropagation();
        const first = grid.querySelector('button');
        if (first) first.focus();
      }
    });
    this.el.addEventListener('keydown', (e) => this.onKey(e, grid, input));
    // Beside its button (a fixed popover there), so that it belongs to the
    // message it reacts to.
    this.button.after(this.el);
  }

  recentChoices() {
    const names = [...recentNames(), ...POPULAR.filter((n) => !recentNames().includes(n))].slice(0, 10);
    const custom = customChoices(this.model);
    return names.map((n) => {
      const c = custom.find((x) => x.name === n);
      if (c) return c;
      const e = byName.get(n);
      return e ? { ...unicodeChoice(e), name: n } : null;
    }).filter(Boolean);
  }

  // fill shows every emoji by category, or those matching a search.
  fill(grid, q) {
    grid.replaceChildren();
    if (q) {
      const found = search(fold(q), this.model).slice(0, 120);
      grid.append(found.length ? this.section('Results', found) : h('p', { class: 'muted' }, 'No emoji match.'));
    } else {
      const custom = customChoices(this.model);
      if (custom.length) grid.append(this.section('Custom', custom));
      CATEGORIES.forEach((name, i) => grid.append(this.section(name, all.filter((e) => e.cat === i).map(unicodeChoice))));
    }
    const first = grid.querySelector('button');
    if (first) first.tabIndex = 0;
  }

  section(title, choices) {
    return h('section', { class: 'emoji-section', 'aria-label': title },
      h('h4', {}, title),
      h('div', { class: 'emoji-cells' }, choices.map((c) => this.choice(c, -1))));
  }

  choice(c, tabIndex) {
    return h('button', {
      type: 'button', tabindex: tabIndex, 'data-emoji': c.name, title: `:${c.name}:`, 'aria-label': c.name.replace(/_/g, ' '),
      onclick: () => {
        noteUsed(c.name);
        const pick = this.onPick;
        this.close(true);
        pick({ type: c.type, code: c.code, name: c.name });
      },
    }, emojiElement(c, this.model));
  }

  // onKey: Escape closes; arrows move in the grid (one stop for Tab).
  onKey(e, grid, input) {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      this.close(true);
      return;
    }
    const cells = [...grid.querySelectorAll('button')];
    const i = cells.indexOf(document.activeElement);
    if (i < 0) return;
    const perRow = Math.max(1, Math.round(grid.clientWidth / (cells[0].offsetWidth || 32)));
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: perRow, ArrowUp: -perRow }[e.key];
    if (!step) return;
    e.preventDefault();
    const j = i + step;
    if (j < 0) {
      input.focus();
      return;
    }
    const next = cells[Math.min(j, cells.length - 1)];
    cells[i].tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }

  // place puts the picker by its button, inside the window.
  place() {
    const r = this.button.getBoundingClientRect();
    const w = Math.min(340, window.innerWidth - 16);
    const s = this.el.style;
    s.setProperty('width', `${w}px`);
    s.setProperty('left', `${Math.max(8, Math.min(r.right - w, window.innerWidth - w - 8))}px`);
    const below = window.innerHeight - r.bottom;
    if (below >= 300 || below >= r.top) s.setProperty('top', `${r.bottom + 4}px`);
    else s.setProperty('bottom', `${window.innerHeight - r.top + 4}px`);
    s.setProperty('max-height', `${Math.max(200, Math.min(380, below >= 300 || below >= r.top ? below - 12 : r.top - 12))}px`);
  }
}
