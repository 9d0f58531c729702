// DOM helpers. Everything a person typed (names, topics, channel
// descriptions, search words) reaches the page as text through h() and
// textContent. The only HTML inserted is a message's content as the
// server's Markdown renderer made it, through setMessageHTML, the one
// function that may create TrustedHTML (the page's Content-Security-Policy
// allows only this policy, so any other use of innerHTML throws).

const policy = window.trustedTypes
  ? window.trustedTypes.createPolicy('teamchat-message', { createHTML: (html) => html })
  : { createHTML: (html) => html };

// listeners are the listeners h attached, by element, so that morph can
// move them with the rest of what build made.
const listeners = new WeakMap();

// h builds an element: attrs are set as attributes (on* keys are not
// attributes but listeners), children are nodes or text.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
      if (!listeners.has(el)) listeners.set(el, []);
      listeners.get(el).push([key.slice(2), value]);
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

export function $(id) {
  return document.getElementById(id);
}

// setMessageHTML puts a message's rendered HTML into el and finishes it
// with DOM changes only: emoji spans show their character, custom emoji
// images load from beside the page, links to other sites open in a new
// tab without a referrer, and finish (when given) changes the rest. The
// HTML is parsed in an inert <template>, so that nothing in it loads
// before it is finished.
export function setMessageHTML(el, html, finish) {
  const t = document.createElement('template');
  t.innerHTML = policy.createHTML(html);
  const root = t.content;
  for (const span of root.querySelectorAll('span.emoji')) {
    const code = [...span.classList].find((c) => c.startsWith('emoji-'));
    const ch = code && emojiChar(code.slice('emoji-'.length));
    if (ch) span.textContent = ch;
  }
  for (const img of root.querySelectorAll('img')) {
    const src = img.getAttribute('src') || '';
    // Custom emoji are at /user_avatars/...: beside the page, wherever it is mounted.
    if (img.classList.contains('emoji') && /^\/user_avatars\/[\w./-]+$/.test(src) && !src.includes('..')) img.setAttribute('src', src.slice(1));
    else img.replaceWith(img.getAttribute('alt') || '');
  }
  for (const a of root.querySelectorAll('a[href]')) {
    const href = a.getAttribute('href');
    if (narrowHash(href) !== null || /^\/?user_uploads\//.test(href)) continue;
    a.setAttribute('target', '_blank');
    a.setAttribute('rel', 'noopener noreferrer');
  }
  if (finish) finish(root);
  el.replaceChildren(root);
}

// messageText is the text of a message's rendered HTML (parsed inert,
// nothing loads).
export function messageText(html) {
  const t = document.createElement('template');
  t.innerHTML = policy.createHTML(html);
  return t.content.textContent.replace(/\s+/g, ' ').trim();
}

// narrowHash returns the "#narrow/..." part of an in-app link of the
// rendered HTML ("/#narrow/channel/1-general"), or null.
export function narrowHash(href) {
  if (!href) return null;
  const i = href.indexOf('#narrow/');
  if (i < 0) return null;
  const before = href.slice(0, i);
  return before === '' || before === '/' ? href.slice(i) : null;
}

// emojiChar turns an emoji code ("1f44d", "1f468-200d-1f9af") into its
// characters, or '' when it is not a Unicode emoji code.
export function emojiChar(code) {
  if (!/^[0-9a-f]{2,6}(-[0-9a-f]{2,6})*$/.test(code)) return '';
  try {
    return String.fromCodePoint(...code.split('-').map((p) => parseInt(p, 16)));
  } catch {
    return '';
  }
}

const formats = new Map();

function format(opts) {
  const key = JSON.stringify(opts);
  if (!formats.has(key)) formats.set(key, new Intl.DateTimeFormat(undefined, opts));
  return formats.get(key);
}

// timeElement shows a Unix time as a local time (on a 24-hour clock when
// asked, else the locale's), the full date in its title.
export function timeElement(seconds, twentyFour) {
  const d = new Date(seconds * 1000);
  const today = new Date().toDateString() === d.toDateString();
  const cycle = twentyFour === undefined ? {} : { hourCycle: twentyFour ? 'h23' : 'h12' };
  const full = format({ dateStyle: 'medium', timeStyle: 'short', ...cycle }).format(d);
  return h('time', { datetime: d.toISOString(), title: full },
    today ? format({ hour: '2-digit', minute: '2-digit', ...cycle }).format(d) : full);
}

// avatar is a user's picture: the uploaded one (beside the page), or
// their initials on a colour of their own.
export function avatar(u, size = '') {
  const url = u && typeof u.avatar_url === 'string' ? u.avatar_url : '';
  if (/^\/user_avatars\/\d+\/avatars\/\d+-\d+$/.test(url)) {
    return h('img', { class: `avatar ${size}`.trim(), src: url.slice(1), alt: '', 'aria-hidden': 'true' });
  }
  const el = h('span', { class: `avatar ${size}`.trim(), 'aria-hidden': 'true' }, initials(u ? u.full_name : '?'));
  el.style.setProperty('--hue', String(hue(u ? u.user_id : 0)));
  return el;
}

// initials of a name, for the avatar circle.
function initials(name) {
  const parts = String(name).trim().split(/\s+/).filter(Boolean);
  const letters = parts.length > 1 ? [parts[0], parts[parts.length - 1]] : parts;
  return letters.map((p) => [...p][0] || '').join('').toUpperCase() || '?';
}

// hue of a user's avatar circle, stable per user ID.
function hue(id) {
  return (Number(id) * 137) % 360;
}

export function clear(el) {
  el.replaceChildren();
}

// reconcile is how a list is redrawn: it makes parent's children the
// items' elements ({key, sig, build}, keys unique in the list), in order,
// keeping the element of every item whose key and signature are unchanged
// (so a list redrawn after an event keeps its focus, hover and identity)
// and building the others. An item whose signature changed is built and
// its element updated to match in place (morph), so that a link whose
// unread count changes between a person's mousedown and mouseup is still
// the same element and the click is not lost. The signature must change
// whenever what build makes does; the listeners build attached with h move
// with the rest (a kept element calls the new closures), but nothing build
// sets outside the markup does. What the person set in a kept element (a
// ticked box) stays, so a list that must start afresh is cleared first. A
// part built once (a dialog as it opens) is built with h and replaceChildren.
export function reconcile(parent, items) {
  // Where the focus is, to put it back if its item is rebuilt.
  const active = document.activeElement;
  const focusedItem = active && parent.contains(active) ? [...parent.children].find((el) => el.contains(active)) : null;
  const focusIndex = focusedItem ? [...focusedItem.querySelectorAll(FOCUSABLE)].indexOf(active) : -1;
  const old = new Map();
  for (const el of parent.children) old.set(el.dataset.rkey, el);
  const next = items.map((it) => {
    const el = old.get(it.key);
    if (el && el.dataset.rsig === it.sig) return el;
    const made = it.build();
    made.dataset.rkey = it.key;
    made.dataset.rsig = it.sig;
    return el && el.nodeName === made.nodeName ? morph(el, made) : made;
  });
  next.forEach((el, i) => {
    if (parent.children[i] !== el) parent.insertBefore(el, parent.children[i] || null);
  });
  while (parent.children.length > next.length) parent.lastElementChild.remove();
  if (focusedItem && !parent.contains(document.activeElement)) {
    const again = next.find((el) => el.dataset.rkey === focusedItem.dataset.rkey);
    const target = again && again.querySelectorAll(FOCUSABLE)[focusIndex];
    if (target) target.focus();
  }
}

const FOCUSABLE = 'a[href], button, input, select, textarea';

// morph updates el (of the same tag as want) to want's attributes,
// listeners (those h attached) and children, keeping every element whose
// tag matches at its place, and returns el.
function morph(el, want) {
  for (const a of [...el.attributes]) if (!want.hasAttribute(a.name)) el.removeAttribute(a.name);
  for (const a of want.attributes) if (el.getAttribute(a.name) !== a.value) el.setAttribute(a.name, a.value);
  for (const [type, fn] of listeners.get(el) || []) el.removeEventListener(type, fn);
  const on = listeners.get(want) || [];
  for (const [type, fn] of on) el.addEventListener(type, fn);
  if (on.length) listeners.set(el, on);
  else listeners.delete(el);
  const have = [...el.childNodes];
  const wanted = [...want.childNodes];
  wanted.forEach((w, i) => {
    const c = have[i];
    if (!c) el.append(w);
    else if (c.nodeType === Node.TEXT_NODE && w.nodeType === Node.TEXT_NODE) {
      if (c.data !== w.data) c.data = w.data;
    } else if (c.nodeType === Node.ELEMENT_NODE && c.nodeName === w.nodeName) morph(c, w);
    else c.replaceWith(w);
  });
  for (const c of have.slice(wanted.length)) c.remove();
  return el;
}

// keepFocus runs redraw, which replaces parts of el, and puts the focus
// back on the control with the same data-focus key if it was in el.
export function keepFocus(el, redraw) {
  const active = document.activeElement;
  const key = active && el.contains(active) ? active.dataset.focus : undefined;
  redraw();
  if (key !== undefined && !el.contains(document.activeElement)) {
    const again = el.querySelector(`[data-focus="${CSS.escape(key)}"]`);
    if (again) again.focus();
  }
}
