// The message list of the open view: loads the newest messages, older ones
// as the reader scrolls up, takes new messages, edits, deletions and
// reactions as they arrive, marks messages read as they are seen, and
// offers reacting, editing and deleting.

import { $, h, clear, setMessageHTML, timeElement, keepFocus, avatar } from './dom.js';
import { decorateEmoji } from './emoji.js';
import { MessageActions } from './actions.js';
import { showProfile } from './profile.js';
import { apiNarrow, hashFor, matches, dmPeople, dmKey } from './narrow.js';

const PAGE = 50;

// renderedFrom is the HTML each message content element was made from.
const renderedFrom = new WeakMap();

// day is a message's local date, for grouping.
function day(seconds) {
  return new Date(seconds * 1000).toDateString();
}

export class MessageList {
  constructor(api, model, { notify, confirm, uploads, onReply, onQuote }) {
    this.api = api;
    this.model = model;
    this.uploads = uploads;
    this.actions = new MessageActions(api, model, this, { notify, confirm, onReply, onQuote });
    this.readingHeld = false;
    this.notify = notify;
    this.confirm = confirm;
    this.list = $('message-list');
    this.scroller = $('message-scroller');
    this.status = $('history-status');
    this.view = { kind: 'all' };
    this.ids = [];
    this.pending = [];
    this.loading = false;
    this.foundOldest = false;
    this.foundNewest = false;
    this.generation = 0;
    this.toMark = new Set();
    this.markTimer = null;
    this.seen = new IntersectionObserver((entries) => this.onSeen(entries), { root: this.scroller, threshold: 0 });
    // Near the top, older messages load.
    this.scroller.addEventListener('scroll', () => {
      if (this.scroller.scrollTop < 300) this.loadOlder();
    }, { passive: true });
    document.addEventListener('visibilitychange', () => this.markVisible());
  }

  // open shows a view's newest messages.
  async open(view) {
    this.view = view;
    this.readingHeld = false;
    this.ids = [];
    this.foundOldest = false;
    this.foundNewest = false;
    this.pending = [];
    this.seen.disconnect();
    clear(this.list);
    $('empty-view').hidden = true;
    const gen = ++this.generation;
    await this.fetch('newest', gen);
  }

  // close forgets the list (logging out); answers still on their way are
  // dropped.
  close() {
    this.generation++;
    this.ids = [];
    this.pending = [];
    this.loading = false;
    this.seen.disconnect();
    this.toMark.clear();
    clearTimeout(this.markTimer);
    this.markTimer = null;
    clear(this.list);
    this.status.textContent = '';
  }

  async loadOlder() {
    if (this.loading || this.foundOldest || !this.ids.length) return;
    await this.fetch(this.ids[0], this.generation);
  }

  async fetch(anchor, gen) {
    this.loading = true;
    this.list.setAttribute('aria-busy', 'true');
    this.status.textContent = 'Loading…';
    try {
      const body = await this.api.get('/messages', {
        anchor: String(anchor), num_before: String(PAGE), num_after: '0',
        include_anchor: anchor === 'newest' ? 'true' : 'false',
        narrow: apiNarrow(this.view), apply_markdown: 'true', client_gravatar: 'true',
      });
      if (gen !== this.generation) return;
      this.model.remember(body.messages);
      this.foundOldest = body.found_oldest;
      if (anchor === 'newest') this.foundNewest = body.found_newest;
      // Where the reader is, to stay there as older messages come in
      // above (read only then: reading it lays the page out).
      const before = anchor === 'newest' ? 0 : this.scroller.scrollHeight - this.scroller.scrollTop;
      const fresh = body.messages.filter((m) => !this.ids.includes(m.id));
      this.ids = [...fresh.map((m) => m.id), ...this.ids];
      const frag = document.createDocumentFragment();
      let prev = null;
      for (const m of fresh) {
        frag.append(this.render(m, prev));
        prev = m;
      }
      const oldFirst = this.list.firstElementChild;
      this.list.prepend(frag);
      if (oldFirst) this.fixHeader(oldFirst);
      if (anchor === 'newest') {
        // Messages that arrived while the page of history was on its way.
        const pending = this.pending;
        this.pending = [];
        for (const m of pending) this.add(m);
        this.scrollToBottom();
      }
      else this.scroller.scrollTop = this.scroller.scrollHeight - before;
      this.status.textContent = this.foundOldest ? (this.ids.length ? 'This is the beginning of the conversation.' : '') : '';
      this.loading = false;
      this.showEmpty();
    } catch (err) {
      if (gen === this.generation) this.status.textContent = `Could not load messages: ${err.message}`;
    } finally {
      if (gen === this.generation) {
        this.loading = false;
        this.list.removeAttribute('aria-busy');
      }
    }
    // Keep filling while the top is still in sight.
    if (gen === this.generation && !this.foundOldest && this.scroller.scrollTop < 300) queueMicrotask(() => this.loadOlder());
  }

  showEmpty() {
    const empty = $('empty-view');
    empty.hidden = this.ids.length > 0 || this.loading || !this.foundNewest;
    empty.textContent = this.view.kind === 'search' ? 'No messages match your search.' : 'No messages here yet. Say something!';
  }

  atBottom() {
    return this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < 60;
  }

  scrollToBottom() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  // add takes a new message from an event.
  add(m) {
    if (!matches(this.view, m, this.model.me) || this.ids.includes(m.id)) return;
    if (!this.foundNewest) {
      if (this.loading && this.ids.length === 0) this.pending.push(m);
      return;
    }
    if (this.ids.length && m.id < this.ids[this.ids.length - 1]) return; // older than the newest shown: not new
    const stick = this.atBottom() || m.sender_id === this.model.me;
    const last = this.ids.length ? this.model.messages.get(this.ids[this.ids.length - 1]) : null;
    this.ids.push(m.id);
    this.list.append(this.render(m, last));
    $('empty-view').hidden = true;
    if (stick) this.scrollToBottom();
  }

  // moved takes a move of messages ({ids, streamId, topic}): those that
  // now belong in the view and are not shown are fetched and put in place.
  async moved(mv) {
    const gen = this.generation;
    const dest = { type: 'stream', stream_id: mv.streamId, subject: mv.topic };
    const missing = mv.ids.filter((id) => !this.ids.includes(id));
    if (!missing.length || !matches(this.view, dest, this.model.me)) return;
    try {
      const body = await this.api.get('/messages', { message_ids: missing, apply_markdown: 'true', client_gravatar: 'true' });
      if (gen !== this.generation) return;
      this.model.remember(body.messages);
      this.insert(body.messages.filter((m) => matches(this.view, m, this.model.me)));
    } catch (err) {
      this.notify(`Could not show the moved messages: ${err.message}`);
    }
  }

  // insert puts messages in their places by ID, those within the loaded
  // stretch of history only (older ones come with scrolling).
  insert(messages) {
    for (const m of [...messages].sort((a, b) => a.id - b.id)) {
      if (this.ids.includes(m.id)) continue;
      let i = this.ids.findIndex((id) => id > m.id);
      if (i < 0) i = this.ids.length;
      if ((i === 0 && !this.foundOldest) || (i === this.ids.length && !this.foundNewest)) continue;
      const next = i < this.ids.length ? this.element(this.ids[i]) : null;
      const prev = i > 0 ? this.model.messages.get(this.ids[i - 1]) : null;
      this.ids.splice(i, 0, m.id);
      this.list.insertBefore(this.render(m, prev), next);
      if (next) this.fixHeader(next);
    }
    this.showEmpty();
  }

  remove(ids) {
    for (const id of ids) {
      const el = this.element(id);
      if (!el) continue;
      const next = el.nextElementSibling;
      el.remove();
      this.ids = this.ids.filter((x) => x !== id);
      if (next) this.fixHeader(next);
    }
    this.showEmpty();
  }

  // refresh re-renders messages whose content, reactions or place changed.
  refresh(ids) {
    for (const id of ids) {
      const el = this.element(id);
      const m = this.model.messages.get(id);
      if (!el || !m) continue;
      if (!matches(this.view, m, this.model.me) && this.view.kind !== 'search') {
        this.remove([id]); // moved out of this view
        continue;
      }
      if (el.dataset.conv !== this.convKey(m)) {
        // Moved within the view (another topic of the channel): new header.
        el.dataset.conv = this.convKey(m);
        if (el.firstElementChild.classList.contains('recipient')) el.firstElementChild.remove();
        this.fixHeader(el);
        if (el.nextElementSibling) this.fixHeader(el.nextElementSibling);
      }
      if (el.querySelector('.edit-form')) {
        keepFocus(el, () => this.actions.reactions(el.querySelector('.reactions'), m));
        continue;
      }
      keepFocus(el, () => this.fill(el, m));
    }
  }

  readChanged(ids) {
    for (const id of ids || []) {
      const el = this.element(id);
      if (el) el.classList.toggle('unread', this.model.isUnread(id));
    }
  }

  element(id) {
    return this.list.querySelector(`article[data-id="${id}"]`);
  }

  convKey(m) {
    return m.type === 'stream' ? `s${m.stream_id}:${m.subject.toLowerCase()}` : 'd' + dmKey(dmPeople(m, this.model.me));
  }

  render(m, prev) {
    const el = h('article', { class: 'msg', 'data-id': m.id, 'data-conv': this.convKey(m), 'data-sender': m.sender_id, 'data-day': day(m.timestamp), tabindex: '-1' });
    if (!prev || this.convKey(prev) !== this.convKey(m)) el.append(this.header(m));
    else if (prev.sender_id === m.sender_id && day(prev.timestamp) === day(m.timestamp)) el.classList.add('continued');
    const face = avatar(this.model.users.get(m.sender_id) || { user_id: m.sender_id, full_name: m.sender_full_name });
    el.append(face);
    el.append(h('div', { class: 'msg-body' }));
    this.fill(el, m);
    return el;
  }

  // fill (re)draws a message's meta line, content, reactions and actions.
  fill(el, m) {
    el.classList.toggle('unread', this.model.isUnread(m.id));
    el.classList.toggle('starred', (m.flags || []).includes('starred'));
    el.classList.toggle('mine', m.sender_id === this.model.me);
    el.classList.toggle('mentioned', (m.flags || []).some((f) => f === 'mentioned' || f === 'wildcard_mentioned'));
    const body = el.querySelector('.msg-body');
    // The content is parsed again only when it changed (a reaction
    // redraws the rest), so previews and focus inside it stay.
    const html = this.view.kind === 'search' && m.match_content ? m.match_content : m.content;
    let content = body.querySelector(':scope > .msg-content');
    if (!content || renderedFrom.get(content) !== html) {
      content = h('div', { class: 'msg-content rendered' });
      setMessageHTML(content, html, (root) => {
        decorateEmoji(root);
        this.uploads.decorate(root);
      });
      renderedFrom.set(content, html);
    }
    const edited = m.last_edit_timestamp || (m.edit_history && m.edit_history.length);
    const starred = (m.flags || []).includes('starred');
    // A muted sender's message is hidden until asked for.
    const hidden = this.model.mutedUsers.has(m.sender_id) && !el.dataset.reveal;
    const shown = hidden ? h('p', { class: 'msg-content muted-message muted' }, 'This message was hidden because you muted its sender. ',
      h('button', { type: 'button', class: 'link-button', onclick: () => { el.dataset.reveal = '1'; this.fill(el, m); } }, 'Show it')) : content;
    const reactions = h('div', { class: 'reactions' });
    body.replaceChildren(
      h('div', { class: 'msg-meta' },
        h('button', {
          type: 'button', class: 'sender link-button', 'aria-haspopup': 'dialog', 'aria-expanded': 'false',
          onclick: (e) => showProfile(e.currentTarget, m.sender_id, this.model, { api: this.api, notify: this.notify }),
        }, m.sender_full_name),
        ' ', timeElement(m.timestamp, this.model.settings.twenty_four_hour_time),
        edited ? h('span', { class: 'edited', title: 'This message was edited' }, ' (edited)') : null,
        starred ? h('span', { class: 'star-mark', title: 'Starred' }, h('span', { 'aria-hidden': 'true' }, '★'), h('span', { class: 'visually-hidden' }, 'starred')) : null),
      shown,
      reactions,
      this.actions.bar(m));
    this.actions.reactions(reactions, m);
    if (this.model.isUnread(m.id)) this.seen.observe(el);
  }

  header(m) {
    if (m.type === 'stream') {
      const name = this.model.channelName(m.stream_id);
      const topic = m.subject;
      return h('div', { class: 'recipient' },
        h('a', { href: hashFor({ kind: 'channel', streamId: m.stream_id }, { channelName: name }) }, '#' + name),
        h('span', { 'aria-hidden': 'true' }, ' › '),
        h('a', { href: hashFor({ kind: 'topic', streamId: m.stream_id, topic }, { channelName: name }), class: 'topic' }, topic || '(no topic)'));
    }
    const ids = dmPeople(m, this.model.me);
    return h('div', { class: 'recipient' }, h('a', { href: hashFor({ kind: 'dm', userIds: ids }) },
      'Direct message with ' + ids.map((id) => this.model.userName(id)).join(', ')));
  }

  // fixHeader gives a message a recipient header exactly when the message
  // before it is in another conversation.
  fixHeader(el) {
    const prev = el.previousElementSibling;
    const need = !prev || prev.dataset.conv !== el.dataset.conv;
    const has = el.firstElementChild && el.firstElementChild.classList.contains('recipient');
    if (need && !has) {
      const m = this.model.messages.get(Number(el.dataset.id));
      if (m) el.prepend(this.header(m));
    } else if (!need && has) {
      el.firstElementChild.remove();
    }
    // Under one name: the same sender, the same day, the same conversation.
    el.classList.toggle('continued', !need && prev.dataset.sender === el.dataset.sender && prev.dataset.day === el.dataset.day);
  }

  // reavatar draws the senders' pictures again (one changed).
  reavatar() {
    for (const el of this.list.children) {
      const old = el.querySelector(':scope > .avatar');
      const m = this.model.messages.get(Number(el.dataset.id));
      if (old && m) old.replaceWith(avatar(this.model.users.get(m.sender_id) || { user_id: m.sender_id, full_name: m.sender_full_name }));
    }
  }

  // holdReading stops marking the view's messages read (after "mark as
  // unread" from message fromId), until a view is opened. Messages seen
  // before fromId and not yet marked are marked now: only those from it
  // on are to stay unread.
  holdReading(fromId) {
    this.readingHeld = true;
    for (const id of this.toMark) if (id >= fromId) this.toMark.delete(id);
    clearTimeout(this.markTimer);
    this.flushRead();
  }

  // selected is the message a shortcut acts on: the focused one, or the
  // last of the view.
  selected() {
    const a = document.activeElement && document.activeElement.closest && document.activeElement.closest('#message-list article');
    const el = a || this.list.lastElementChild;
    return el ? this.model.messages.get(Number(el.dataset.id)) || null : null;
  }

  // editLast edits the person's last message in the view (Up in an
  // empty message box); false when there is none.
  editLast() {
    const mine = this.list.querySelectorAll('article.mine');
    if (!mine.length) return false;
    this.actions.startEdit(Number(mine[mine.length - 1].dataset.id));
    return true;
  }

  // Marking read: messages seen while the page is visible are marked in
  // batches.
  onSeen(entries) {
    for (const e of entries) {
      if (e.isIntersecting) e.target.dataset.visible = '1';
      else delete e.target.dataset.visible;
    }
    this.markVisible();
  }

  markVisible() {
    if (document.visibilityState !== 'visible' || this.readingHeld) return;
    for (const el of this.list.querySelectorAll('article.unread[data-visible]')) {
      const id = Number(el.dataset.id);
      if (this.model.isUnread(id)) this.toMark.add(id);
      this.seen.unobserve(el);
    }
    if (this.toMark.size && !this.markTimer) {
      this.markTimer = setTimeout(() => this.flushRead(), 150);
    }
  }

  async flushRead() {
    this.markTimer = null;
    const ids = [...this.toMark];
    this.toMark.clear();
    if (!ids.length) return;
    try {
      await this.api.post('/messages/flags', { messages: ids, op: 'add', flag: 'read' });
    } catch (err) {
      this.notify(`Could not mark messages as read: ${err.message}`);
    }
  }
}
