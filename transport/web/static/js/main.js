// The web client's entry point: logging in and out, the event loop, the
// views and the page's address.

import { Api, ApiError, loadSession, saveSession, forgetSession } from './api.js';
import { $, h, clear, reconcile, narrowHash } from './dom.js';
import { EventLoop } from './events.js';
import { Model } from './model.js';
import { parseHash, hashFor } from './narrow.js';
import { renderSidebar } from './sidebar.js';
import { MessageList } from './messages.js';
import { Compose } from './compose.js';
import { Channels } from './channels.js';
import { showJoin, InviteDialog } from './join.js';
import { Uploads, uploadPath } from './uploads.js';
import { Drafts } from './drafts.js';
import { Picker, sprite } from './emoji.js';
import { Views } from './views.js';
import { viewTitle, renderViewActions } from './header.js';
import { DesktopNotifications } from './notifications.js';
import { installShortcuts } from './shortcuts.js';
import { matches } from './narrow.js';
import { Settings, applyTheme } from './settings.js';
import { Presence } from './presence.js';
import { TypingLine } from './typing.js';

const api = new Api();
const model = new Model();
let loop = null;
let view = parseHash(location.hash);
let registered = false;
let noticeTimer = null;

// notify shows an error that has no better place (and logs it, so the
// browser tests see it), or, with error false, a passing word.
function notify(text, error = true) {
  if (error) console.warn(text);
  const el = $('notice');
  el.textContent = text;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { el.textContent = ''; }, 8000);
}

// confirm asks a yes/no question in a modal <dialog> (not window.confirm).
function confirm(text, ok = 'Delete') {
  const dialog = $('confirm-dialog');
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = ok;
  return new Promise((resolve) => {
    const done = (answer) => {
      dialog.removeEventListener('close', onClose);
      resolve(answer);
    };
    const onClose = () => done(dialog.returnValue === 'ok');
    dialog.addEventListener('close', onClose);
    dialog.returnValue = 'cancel';
    dialog.showModal();
    $('confirm-ok').focus();
  });
}

const uploads = new Uploads(api);
const messages = new MessageList(api, model, {
  notify, confirm, uploads,
  onReply: (m) => compose.replyTo(m),
  onQuote: (m, text) => {
    compose.replyTo(m);
    compose.insert(text);
  },
});
const compose = new Compose(api, model, { notify, uploads, loadTopics: (id) => loadTopics(id), onEditLast: () => messages.editLast() });
const composePicker = new Picker(model);
$('compose-emoji').addEventListener('click', (e) => {
  composePicker.toggle(e.currentTarget, 'Insert an emoji', (c) => {
    compose.insert(`:${c.name}: `);
    $('compose-content').focus();
  });
});
// The message box's icons are emoji of the sheet.
for (const el of document.querySelectorAll('[data-emoji-icon]')) {
  const s = sprite(el.dataset.emojiIcon, '');
  if (s) {
    s.setAttribute('aria-hidden', 'true');
    el.replaceWith(s);
  }
}
const channels = new Channels(api, model, { notify });
const invites = new InviteDialog(api, model);
const views = new Views(api, model, { notify });
const desktop = new DesktopNotifications(model, { isShown: (m) => matches(view, m, model.me) && !$('messages-view').hidden });
const settings = new Settings(api, model, { notify, desktop, confirm, invites });
const presence = new Presence(api, model, { onChange: () => sidebar() });
const typing = new TypingLine(model, () => view);
installShortcuts({ messages, compose, openDM: () => openDMDialog(), nextUnread: () => nextUnread() });

for (const button of document.querySelectorAll('#confirm-dialog button')) {
  button.addEventListener('click', (e) => {
    e.preventDefault();
    $('confirm-dialog').close(button.value);
  });
}

function showLogin(error = '') {
  $('app-view').hidden = true;
  $('join-view').hidden = true;
  $('login-view').hidden = false;
  $('login-error').textContent = error;
  $('login-password').value = '';
  $('login-email').focus();
  api.get('/server_settings').then((s) => {
    $('login-realm').textContent = s.realm_name ? `Log in to ${s.realm_name}` : '';
  }).catch(() => {});
}

async function login(e) {
  e.preventDefault();
  const email = $('login-email').value.trim();
  const password = $('login-password').value;
  const error = $('login-error');
  error.textContent = '';
  if (!email || !password) {
    error.textContent = 'Enter your email and password.';
    return;
  }
  const button = $('login-form').querySelector('button[type=submit]');
  button.disabled = true;
  try {
    const body = await api.post('/fetch_api_key', { username: email, password });
    loggedIn({ email: body.email, key: body.api_key, userId: body.user_id });
  } catch (err) {
    error.textContent = err instanceof ApiError ? err.message : 'The server could not be reached.';
    $('login-password').select();
  } finally {
    button.disabled = false;
  }
}

// loggedIn keeps a new session for the tab and opens the app (from the
// login form, or from the join form with the new account).
function loggedIn(session) {
  saveSession(session);
  if (parseHash(location.hash).kind === 'join') history.replaceState(null, '', location.pathname + location.search);
  enterApp(loadSession());
}

function enterApp(session) {
  api.setCredentials(session.email, session.key);
  $('login-view').hidden = true;
  $('join-view').hidden = true;
  $('app-view').hidden = false;
  $('connection').textContent = 'Connecting…';
  registered = false;
  loop = new EventLoop(api, { onRegister, onEvent, onStatus });
  loop.start();
}

function logout(reason = '') {
  if (loop) loop.stop();
  loop = null;
  presence.stop();
  typing.clear();
  compose.stopTyping();
  forgetSession();
  api.setCredentials('');
  uploads.forget();
  Drafts.forget();
  compose.drafts = new Drafts();
  model.reset({ user_id: 0 });
  messages.close();
  views.reset();
  desktop.hide();
  for (const id of ['channel-list', 'dm-list', 'people-list', 'all-channels']) clear($(id));
  document.title = 'teamchat';
  delete document.documentElement.dataset.theme;
  showLogin(reason);
}

function onStatus(status) {
  if (status === 'logged-out') {
    logout('Your session has ended. Please log in again.');
    return;
  }
  $('connection').textContent = status;
}

function onRegister(state) {
  model.reset(state);
  views.reset();
  applyTheme(model.settings);
  $('me-name').textContent = `(${model.userName(model.me)})`;
  invites.update();
  // A first registration opens the view; a later one (the queue was lost)
  // reloads it, since events were missed in between.
  route();
  if (!registered) {
    registered = true;
    // After logging in, the keyboard is in the message box (on a phone,
    // where that would open the keyboard, on the main column).
    const active = document.activeElement;
    if (!active || active === document.body || active.closest('[hidden]')) {
      if (matchMedia('(min-width: 721px)').matches && !$('compose').hidden) $('compose-content').focus();
      else $('main').focus();
    }
    desktop.offer();
    presence.start();
  }
}

function onEvent(ev) {
  const out = model.apply(ev);
  if (out.added) {
    messages.add(out.added);
    desktop.message(out.added);
  }
  if (out.removed) messages.remove(out.removed);
  if (out.changed) messages.refresh(out.changed);
  if (out.moved) messages.moved(out.moved);
  if (out.emoji) messages.refresh(messages.ids);
  if (out.people) invites.update();
  if (out.readChanged) messages.readChanged(out.readChanged);
  if (out.typing) typing.render();
  if (out.channels) {
    if (view.kind === 'channels') channels.render();
    compose.fillChannels();
  }
  if (out.mutedUsers) messages.refresh(messages.ids);
  if (out.avatars) messages.reavatar();
  if (out.settings === 'twenty_four_hour_time') messages.refresh(messages.ids);
  if (out.settings === 'color_scheme') applyTheme(model.settings);
  if (view.kind === 'settings' && (out.settings || out.mutedUsers || out.realm || out.people)) settings.refresh();
  if (out.sidebar || out.policy || out.channels) {
    sidebar();
    if (view.kind === 'inbox') views.inbox();
    if (view.kind === 'recent') views.drawRecent();
    renderViewActions(api, model, view, notify);
  }
}

function sidebar() {
  if (!model.me) return; // logged out meanwhile
  renderSidebar(model, view, { onNewDM: openDMDialog });
  const n = model.counts().total;
  document.title = `${n ? `(${n}) ` : ''}${model.realmName || 'teamchat'}`;
}

// nextUnread opens the next topic with unread messages after the open
// one (in the sidebar's order), or the first.
function nextUnread() {
  const c = model.counts();
  const list = [];
  for (const s of [...model.subs.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    for (const t of model.topicsOf(s.stream_id)) {
      if (c.topic(s.stream_id, t.name) && !model.topicMuted(s.stream_id, t.name)) list.push({ s, t });
    }
  }
  if (!list.length) return notify('There are no unread topics.', false);
  const at = view.kind === 'topic' ? list.findIndex((x) => x.s.stream_id === view.streamId && x.t.name.toLowerCase() === view.topic.toLowerCase()) : -1;
  const next = list[(at + 1) % list.length];
  location.hash = hashFor({ kind: 'topic', streamId: next.s.stream_id, topic: next.t.name }, { channelName: next.s.name });
}

function route() {
  view = parseHash(location.hash);
  if (view.kind === 'join') {
    if (!loop) {
      showJoin(api, view.key, loggedIn);
      return;
    }
    notify('You are logged in already: log out first to accept an invitation as someone else.');
    history.replaceState(null, '', location.pathname + location.search);
    view = { kind: 'all' };
  }
  if (!loop && !$('join-view').hidden) {
    showLogin(); // left the join form for the login form
    return;
  }
  if (!model.me) return;
  const [t, sub] = viewTitle(model, view);
  $('view-title').textContent = t;
  $('view-subtitle').textContent = sub;
  $('search-input').value = view.kind === 'search' ? view.query : '';
  const panel = { channels: 'channels-view', inbox: 'inbox-view', recent: 'recent-view', settings: 'settings-view' }[view.kind] || 'messages-view';
  for (const id of ['channels-view', 'inbox-view', 'recent-view', 'settings-view', 'messages-view']) $(id).hidden = id !== panel;
  closeMenu();
  compose.show(view);
  renderViewActions(api, model, view, notify);
  if (view.kind === 'channels') channels.render();
  else if (view.kind === 'inbox') views.inbox();
  else if (view.kind === 'recent') views.recent();
  else if (view.kind === 'settings') settings.show(view.section);
  else messages.open(view);
  if (view.kind === 'channel' || view.kind === 'topic') loadTopics(view.streamId);
  typing.render();
  sidebar();
}

// loadTopics asks for a channel's topics (GET /users/me/{stream_id}/topics);
// a server without that endpoint answers 404 once, and then the topics
// are those of the unread and loaded messages.
let topicsEndpoint = true;
async function loadTopics(streamId) {
  if (!topicsEndpoint || !streamId) return;
  try {
    const body = await api.get(`/users/me/${streamId}/topics`);
    if (!model.me) return;
    for (const t of body.topics || []) model.noteTopic(streamId, t.name, t.max_id);
    sidebar();
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) topicsEndpoint = false;
  }
}

// The sidebar is a drawer on narrow screens.
function closeMenu() {
  $('app-view').classList.remove('menu-open');
  $('menu-button').setAttribute('aria-expanded', 'false');
}

function toggleMenu() {
  const open = $('app-view').classList.toggle('menu-open');
  $('menu-button').setAttribute('aria-expanded', String(open));
  if (open) $('nav-all').focus();
}

// The people chosen in the "New direct message" dialog; a filter hides
// choices without forgetting them.
const dmChosen = new Set();

function openDMDialog() {
  const dialog = $('dm-dialog');
  const choices = $('dm-choices');
  const filter = $('dm-filter');
  filter.value = '';
  dmChosen.clear();
  clear(choices); // no box ticked at the last opening stays ticked
  const draw = () => {
    const q = filter.value.trim().toLowerCase();
    const people = [...model.users.values()].filter((u) => u.is_active !== false && u.user_id !== model.me)
      .filter((u) => !q || u.full_name.toLowerCase().includes(q) || (u.email || '').toLowerCase().includes(q))
      .sort((a, b) => a.full_name.localeCompare(b.full_name));
    const items = people.map((u) => ({ key: `u${u.user_id}`, sig: u.full_name, build: () => dmChoice(u) }));
    if (!people.length) items.push({ key: 'none', sig: '', build: () => h('li', { class: 'muted' }, 'Nobody matches.') });
    reconcile(choices, items);
  };
  filter.oninput = draw;
  draw();
  dialog.showModal();
  filter.focus();
}

function dmChoice(u) {
  const id = `dm-choice-${u.user_id}`;
  return h('li', {},
    h('input', {
      type: 'checkbox', id, value: u.user_id, checked: dmChosen.has(u.user_id),
      onchange: (e) => (e.target.checked ? dmChosen.add(u.user_id) : dmChosen.delete(u.user_id)),
    }),
    h('label', { for: id }, u.full_name));
}

$('dm-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const ids = [...dmChosen].sort((a, b) => a - b);
  if (!ids.length) return;
  $('dm-dialog').close();
  location.hash = hashFor({ kind: 'dm', userIds: ids });
});
$('skip-link').addEventListener('click', (e) => {
  e.preventDefault();
  if (!$('compose').hidden) $('compose-content').focus();
  else $('main').focus();
});
$('dm-cancel').addEventListener('click', () => $('dm-dialog').close());
$('login-form').addEventListener('submit', login);
$('logout-button').addEventListener('click', () => logout());
$('menu-button').addEventListener('click', toggleMenu);
$('search-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const q = $('search-input').value.trim();
  location.hash = q ? hashFor({ kind: 'search', query: q }) : '#';
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && $('app-view').classList.contains('menu-open')) {
    closeMenu();
    $('menu-button').focus();
  }
});
// Links between conversations in rendered messages stay in the page;
// links to uploaded files open through a temporary URL.
document.addEventListener('click', (e) => {
  const a = e.target.closest && e.target.closest('.rendered a[href]');
  if (!a) return;
  const hash = narrowHash(a.getAttribute('href'));
  if (hash !== null) {
    e.preventDefault();
    location.hash = hash;
    return;
  }
  const path = uploadPath(a.getAttribute('href'));
  if (path) {
    e.preventDefault();
    uploads.open(path, notify);
  }
});
window.addEventListener('hashchange', route);

const session = loadSession();
if (session) enterApp(session);
else if (view.kind === 'join') showJoin(api, view.key, loggedIn);
else showLogin();
