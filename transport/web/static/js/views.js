// The Inbox and Recent conversations views. The Inbox lists what is
// unread by conversation: direct messages first, then each channel with
// its unread topics (muted ones left out), each with a way to mark it
// read. Recent conversations lists the latest conversations, read or not,
// newest first, from the messages loaded (the newest few hundred are
// fetched when the view first opens) and those that arrive.

import { $, h, reconcile, timeElement } from './dom.js';
import { hashFor, dmKey } from './narrow.js';

const RECENT_FETCH = 400;

export class Views {
  constructor(api, model, { notify }) {
    this.api = api;
    this.model = model;
    this.notify = notify;
    this.recentLoaded = false;
  }

  reset() {
    this.recentLoaded = false;
  }

  // inbox draws the Inbox.
  inbox() {
    const m = this.model;
    const c = m.counts();
    const box = $('inbox-list');
    const focusKey = document.activeElement && box.contains(document.activeElement) ? document.activeElement.dataset.focus : null;
    const parts = [];
    // Direct conversations with unread messages, the newest first.
    const dms = new Map();
    const topics = new Map(); // stream ID -> Map(folded topic -> {name, maxId})
    for (const [id, w] of m.unread) {
      if (w.dm !== undefined) {
        dms.set(w.dm, Math.max(dms.get(w.dm) || 0, id));
        continue;
      }
      if (!m.subs.has(w.streamId) || m.topicMuted(w.streamId, w.topic)) continue;
      let t = topics.get(w.streamId);
      if (!t) topics.set(w.streamId, (t = new Map()));
      const key = String(w.topic).toLowerCase();
      const had = t.get(key);
      t.set(key, { name: had ? had.name : w.topic, maxId: Math.max(had ? had.maxId : 0, id) });
    }
    if (dms.size) {
      const rows = [...dms].sort((a, b) => b[1] - a[1]).map(([key]) => {
        const ids = key.split(',').map(Number);
        return { key, ids, names: ids.map((id) => m.userName(id)).join(', '), count: c.dm(key) };
      });
      parts.push({ key: 'dm', sig: JSON.stringify(rows), build: () => this.dmGroup(rows) });
    }
    const channels = [...topics.keys()].map((id) => m.subs.get(id)).sort((a, b) => a.name.localeCompare(b.name));
    for (const s of channels) {
      const group = {
        id: s.stream_id, name: s.name, count: c.channel(s.stream_id),
        topics: [...topics.get(s.stream_id).values()].sort((a, b) => b.maxId - a.maxId)
          .map((t) => ({ name: t.name, count: c.topic(s.stream_id, t.name), followed: m.policyOf(s.stream_id, t.name) === 3 })),
      };
      parts.push({ key: `c${s.stream_id}`, sig: JSON.stringify(group), build: () => this.channelGroup(group) });
    }
    if (!parts.length) parts.push({ key: 'none', sig: '', build: () => h('p', { class: 'muted empty' }, 'There are no unread messages. You are all caught up!') });
    reconcile(box, parts);
    // A changed group is updated in place, row by row, so the focused
    // row may now be another conversation's: the focus goes back to its own.
    if (focusKey && document.activeElement.dataset.focus !== focusKey) {
      const again = box.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`);
      if (again) again.focus();
    }
  }

  dmGroup(rows) {
    return h('section', { class: 'inbox-group', 'aria-label': 'Direct messages' },
      h('h3', {}, 'Direct messages'),
      h('ul', {}, rows.map((r) => this.row(hashFor({ kind: 'dm', userIds: r.ids }), r.names, r.count,
        `Mark the conversation with ${r.names} as read`, () => this.markDM(r.key), `dm:${r.key}`))));
  }

  channelGroup(g) {
    return h('section', { class: 'inbox-group', 'aria-label': `#${g.name}` },
      h('h3', {},
        h('a', { href: hashFor({ kind: 'channel', streamId: g.id }, { channelName: g.name }) }, `#${g.name}`),
        h('span', { class: 'badge' }, h('span', { class: 'count' }, String(g.count)), h('span', { class: 'visually-hidden' }, ' unread')),
        h('button', { type: 'button', class: 'link-button', 'data-focus': `c:${g.id}`, 'aria-label': `Mark #${g.name} as read`, onclick: () => this.markChannel(g.id) }, 'Mark as read')),
      h('ul', {}, g.topics.map((t) => this.row(
        hashFor({ kind: 'topic', streamId: g.id, topic: t.name }, { channelName: g.name }),
        t.name, t.count, `Mark ${t.name} as read`,
        () => this.markTopic(g.id, t.name), `t:${g.id}:${t.name}`, t.followed))));
  }

  row(href, label, count, markLabel, mark, key, followed = false) {
    return h('li', { class: 'inbox-row' },
      h('a', { href, 'data-focus': `a:${key}` }, h('span', { class: 'name' }, label),
        followed ? h('span', { class: 'followed', title: 'Followed' }, h('span', { 'aria-hidden': 'true' }, ' ★'), h('span', { class: 'visually-hidden' }, ', followed')) : null),
      h('span', { class: 'badge' }, h('span', { class: 'count' }, String(count)), h('span', { class: 'visually-hidden' }, ' unread')),
      h('button', { type: 'button', class: 'link-button', 'data-focus': `m:${key}`, 'aria-label': markLabel, onclick: mark }, 'Mark as read'));
  }

  async markTopic(streamId, topic) {
    await this.call('/mark_topic_as_read', { stream_id: streamId, topic_name: topic });
  }

  async markChannel(streamId) {
    await this.call('/mark_stream_as_read', { stream_id: streamId });
  }

  async markDM(key) {
    const ids = [...this.model.unread].filter(([, w]) => w.dm === key).map(([id]) => id);
    if (ids.length) await this.call('/messages/flags', { messages: ids, op: 'add', flag: 'read' });
  }

  async call(path, params) {
    try {
      await this.api.post(path, params);
    } catch (err) {
      this.notify(`Could not mark as read: ${err.message}`);
    }
  }

  // recent draws Recent conversations, fetching the newest messages the
  // first time.
  async recent() {
    this.drawRecent();
    if (this.recentLoaded) return;
    this.recentLoaded = true;
    $('recent-status').textContent = 'Loading…';
    try {
      const body = await this.api.get('/messages', {
        anchor: 'newest', num_before: String(RECENT_FETCH), num_after: '0', narrow: [], apply_markdown: 'true', client_gravatar: 'true',
      });
      this.model.remember(body.messages);
      $('recent-status').textContent = '';
    } catch (err) {
      this.recentLoaded = false;
      $('recent-status').textContent = `Could not load the conversations: ${err.message}`;
    }
    this.drawRecent();
  }

  drawRecent() {
    const m = this.model;
    const c = m.counts();
    const convs = [];
    for (const [streamId, topics] of m.topics) {
      if (!m.subs.has(streamId)) continue;
      for (const t of topics.values()) convs.push({ streamId, topic: t.name, maxId: t.maxId });
    }
    for (const d of m.dms.values()) convs.push({ userIds: d.userIds, maxId: d.maxId });
    convs.sort((a, b) => b.maxId - a.maxId);
    const today = new Date().toDateString(); // a time shows as a date from tomorrow on
    const rows = convs.slice(0, 60).map((x) => {
      const last = m.messages.get(x.maxId);
      const r = { who: last ? last.sender_full_name : '', at: last ? last.timestamp : 0, muted: !x.userIds && m.topicMuted(x.streamId, x.topic) };
      if (x.userIds) {
        Object.assign(r, { conv: `d${dmKey(x.userIds)}`, userIds: x.userIds, names: x.userIds.map((id) => m.userName(id)).join(', '), count: c.dm(dmKey(x.userIds)) });
      } else {
        Object.assign(r, { conv: `s${x.streamId}:${x.topic}`, streamId: x.streamId, topic: x.topic, channel: m.channelName(x.streamId), count: c.topic(x.streamId, x.topic) });
      }
      return { key: r.conv, sig: JSON.stringify([r, today]), build: () => recentRow(r) };
    });
    reconcile($('recent-list'), rows);
    $('recent-empty').hidden = rows.length > 0 || !this.recentLoaded;
  }
}

function recentRow(r) {
  const place = r.userIds
    ? h('a', { href: hashFor({ kind: 'dm', userIds: r.userIds }) }, r.names)
    : h('span', {},
      h('a', { href: hashFor({ kind: 'channel', streamId: r.streamId }, { channelName: r.channel }), class: 'recent-channel' }, `#${r.channel}`),
      h('span', { 'aria-hidden': 'true' }, ' › '),
      h('a', { href: hashFor({ kind: 'topic', streamId: r.streamId, topic: r.topic }, { channelName: r.channel }), class: 'recent-topic' }, r.topic));
  return h('li', { class: `recent-row${r.muted ? ' muted-item' : ''}`, 'data-conv': r.conv },
    place,
    r.count ? h('span', { class: 'badge' }, h('span', { class: 'count' }, String(r.count)), h('span', { class: 'visually-hidden' }, ' unread')) : null,
    h('span', { class: 'recent-last muted' }, r.who, ' ', r.at ? timeElement(r.at) : null));
}
