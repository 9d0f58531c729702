// Popovers: a menu of actions, or a card, opened by a button and placed
// beside it (fixed, inside the window). One is open at a time; Escape,
// a press elsewhere or choosing an item closes it, and the focus goes
// back to its button. A menu moves with the arrow keys (WAI-ARIA's menu
// button pattern).

import { h } from './dom.js';

let current = null; // {el, button}

export function closePopover(refocus = false) {
  if (!current) return false;
  const { el, button } = current;
  current = null;
  el.remove();
  button.setAttribute('aria-expanded', 'false');
  if (refocus && button.isConnected) button.focus();
  return true;
}

export function popoverOpen() {
  return !!current;
}

document.addEventListener('pointerdown', (e) => {
  if (current && !current.el.contains(e.target) && !current.button.contains(e.target)) closePopover(false);
}, { capture: true });

// openPopover shows el by button (closing it instead when it was open there).
export function openPopover(button, el) {
  const same = current && current.button === button;
  closePopover(false);
  if (same) return false;
  current = { el, button };
  button.setAttribute('aria-expanded', 'true');
  el.classList.add('popover');
  el.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      closePopover(true);
    }
  });
  button.after(el);
  const r = button.getBoundingClientRect();
  const w = Math.min(el.offsetWidth || 260, window.innerWidth - 16);
  const s = el.style;
  s.setProperty('left', `${Math.max(8, Math.min(r.right - w, window.innerWidth - w - 8))}px`);
  if (window.innerHeight - r.bottom >= el.offsetHeight + 8 || r.top < el.offsetHeight + 8) s.setProperty('top', `${r.bottom + 4}px`);
  else s.setProperty('bottom', `${window.innerHeight - r.top + 4}px`);
  return true;
}

// toggleMenu opens a menu of items ({label, run}) by button.
export function toggleMenu(button, label, items) {
  const menu = h('div', { role: 'menu', class: 'menu', 'aria-label': label },
    items.map((it) => h('button', {
      type: 'button', role: 'menuitem', tabindex: '-1', class: it.className || null,
      onclick: () => {
        closePopover(true);
        it.run();
      },
    }, it.label)));
  menu.addEventListener('keydown', (e) => {
    const all = [...menu.querySelectorAll('[role=menuitem]')];
    const i = all.indexOf(document.activeElement);
    const next = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: all.length - 1 }[e.key];
    if (next !== undefined) {
      e.preventDefault();
      all[(next + all.length) % all.length].focus();
    } else if (e.key === 'Tab') {
      closePopover(false);
    }
  });
  if (openPopover(button, menu)) menu.querySelector('[role=menuitem]').focus();
}
