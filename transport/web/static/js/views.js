// The Inbox and Recent conversations views. The Inbox lists what is
// unread by conversation: direct messages first, then each channel with
// its unread topics (muted ones left out), each with a way to mark it
// read. Recent conversations lists the latest conversations, read or not,
// newest first, from the messages loaded (the newest few hundred are
// fetched when the view first opens) and those that arrive.

import { $, h, timeElement } from './dom.js';
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
        const names = ids.map((id) => m.userName(id)).join(', ');
        return this.row(hashFor({ kind: 'dm', userIds: ids }), names, c.dm(key), `Mark the conversation with ${names} as read`,
          () => this.markDM(key), `dm:${key}`);
      });
      parts.push(h('section', { class: 'inbox-group', 'aria-label': 'Direct messages' },
        h('h3', {}, 'Direct messages'), h('ul', {}, rows)));
    }
    const channels = [...topics.keys()].map((id) => m.subs.get(id)).sort((a, b) => a.name.localeCompare(b.name));
    for (const s of channels) {
      const list = [...topics.get(s.stream_id).values()].sort((a, b) => b.maxId - a.maxId);
      parts.push(h('section', { class: 'inbox-group', 'aria-label': `#${s.name}` },
        h('h3', {},
          h('a', { href: hashFor({ kind: 'channel', streamId: s.stream_id }, { channelName: s.name }) }, `#${s.name}`),
          h('span', { class: 'badge' }, h('span', { class: 'count' }, String(c.channel(s.stream_id))), h('span', { class: 'visually-hidden' }, ' unread')),
          h('button', { type: 'button', class: 'link-button', 'data-focus': `c:${s.stream_id}`, 'aria-label': `Mark #${s.name} as read`, onclick: () => this.markChannel(s.stream_id) }, 'Mark as read')),
        h('ul', {}, list.map((t) => this.row(
          hashFor({ kind: 'topic', streamId: s.stream_id, topic: t.name }, { channelName: s.name }),
          t.name, c.topic(s.stream_id, t.name), `Mark ${t.name} as read`,
          () => this.markTopic(s.stream_id, t.name), `t:${s.stream_id}:${t.name}`,
          m.policyOf(s.stream_id, t.name) === 3)))));
    }
    if (!parts.length) parts.push(h('p', { class: 'muted empty' }, 'There are no unread messages. You are all caught up!'));
    box.replaceChildren(...parts);
    if (focusKey) {
      const again = box.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`);
      if (again) again.focus();
    }
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
    const rows = convs.slice(0, 60).map((x) => {
      const last = m.messages.get(x.maxId);
      const who = last ? last.sender_full_name : '';
      let place;
      let count;
      if (x.userIds) {
        const names = x.userIds.map((id) => m.userName(id)).join(', ');
        place = h('a', { href: hashFor({ kind: 'dm', userIds: x.userIds }) }, names);
        count = c.dm(dmKey(x.userIds));
      } else {
        const name = m.channelName(x.streamId);
        place = h('span', {},
          h('a', { href: hashFor({ kind: 'channel', streamId: x.streamId }, { channelName: name }), class: 'recent-channel' }, `#${name}`),
          h('span', { 'aria-hidden': 'true' }, ' › '),
          h('a', { href: hashFor({ kind: 'topic', streamId: x.streamId, topic: x.topic }, { channelName: name }), class: 'recent-topic' }, x.topic));
        count = c.topic(x.streamId, x.topic);
      }
      const muted = !x.userIds && m.topicMuted(x.streamId, x.topic);
      return h('li', { class: `recent-row${muted ? ' muted-item' : ''}`, 'data-conv': x.userIds ? `d${dmKey(x.userIds)}` : `s${x.streamId}:${x.topic}` },
        place,
        count ? h('span', { class: 'badge' }, h('span', { class: 'count' }, String(count)), h('span', { class: 'visually-hidden' }, ' unread')) : null,
        h('span', { class: 'recent-last muted' }, who, ' ', last ? timeElement(last.timestamp) : null));
    });
    $('recent-list').replaceChildren(...rows);
    $('recent-empty').hidden = rows.length > 0 || !this.recentLoaded;
  }
}
