// The sidebar: channels with their unread counts (and the open channel's
// topics), direct conversations, and people with who is online.

import { $, h, reconcile, avatar } from './dom.js';
import { hashFor, dmKey, sameTopic } from './narrow.js';
import { sprite } from './emoji.js';

export function renderSidebar(model, view, { onNewDM }) {
  for (const [id, kind] of [['nav-all', 'all'], ['nav-inbox', 'inbox'], ['nav-recent', 'recent'], ['nav-mentioned', 'mentioned'], ['nav-starred', 'starred']]) {
    if (view.kind === kind) $(id).setAttribute('aria-current', 'page');
    else $(id).removeAttribute('aria-current');
  }
  const n = model.counts();
  const inboxCount = $('nav-inbox').querySelector('.count');
  inboxCount.textContent = n.total ? String(n.total) : '';

  const subs = [...model.subs.values()].sort((a, b) => a.name.localeCompare(b.name));
  const channelItems = subs.map((s) => {
    const open = (view.kind === 'channel' || view.kind === 'topic') && view.streamId === s.stream_id;
    const topics = open ? model.topicsOf(s.stream_id).slice(0, 30).map((t) => ({
      name: t.name,
      unread: n.topic(s.stream_id, t.name),
      current: view.kind === 'topic' && sameTopic(view.topic, t.name),
      muted: model.topicMuted(s.stream_id, t.name),
      followed: model.policyOf(s.stream_id, t.name) === 3,
    })) : [];
    const data = {
      id: s.stream_id, name: s.name, private: !!s.invite_only, unread: n.channel(s.stream_id),
      current: view.kind === 'channel' && open, topics, muted: !!s.is_muted,
    };
    return { key: `c${s.stream_id}`, sig: JSON.stringify(data), build: () => channelItem(data) };
  });
  if (!subs.length) {
    channelItems.push({ key: 'none', sig: '', build: () => h('li', { class: 'muted hint' }, 'No channels yet. ', h('a', { href: '#channels' }, 'Browse or create one')) });
  }
  reconcile($('channel-list'), channelItems);

  const convs = [...model.dms.values()].sort((a, b) => b.maxId - a.maxId).slice(0, 20);
  const dmItems = [{ key: 'new', sig: '', build: () => h('li', {}, h('button', { type: 'button', class: 'link-button', onclick: onNewDM }, 'New direct message')) }];
  for (const c of convs) {
    const key = dmKey(c.userIds);
    const data = {
      key, ids: c.userIds, names: c.userIds.map((id) => model.userName(id)).join(', '),
      unread: n.dm(key), current: view.kind === 'dm' && dmKey(view.userIds) === key,
    };
    dmItems.push({
      key: `d${key}`,
      sig: JSON.stringify(data),
      build: () => h('li', {}, navLink(hashFor({ kind: 'dm', userIds: data.ids }), { current: data.current, dataset: { dm: key } },
        [h('span', { class: 'name' }, data.names)], data.unread)),
    });
  }
  reconcile($('dm-list'), dmItems);

  const order = { active: 0, idle: 1, offline: 2 };
  const people = [...model.users.values()].filter((u) => u.is_active !== false && !u.is_bot)
    .map((u) => ({ id: u.user_id, name: u.full_name, avatar: u.avatar_url || '', me: u.user_id === model.me, status: u.user_id === model.me ? 'active' : model.online(u.user_id) }))
    .sort((a, b) => order[a.status] - order[b.status] || a.name.localeCompare(b.name));
  reconcile($('people-list'), people.map((p) => ({ key: `p${p.id}`, sig: JSON.stringify(p), build: () => personItem(p) })));
}

function channelItem(d) {
  const item = h('li', { class: d.muted ? 'muted-item' : null },
    navLink(hashFor({ kind: 'channel', streamId: d.id }, { channelName: d.name }), { current: d.current, dataset: { streamId: d.id } },
      [h('span', { class: 'channel-mark', 'aria-hidden': 'true' }, d.private ? sprite('1f512', '') || '🔒' : '#'), h('span', { class: 'name' }, d.name)],
      d.unread));
  if (d.topics.length) {
    item.append(h('ul', { class: 'topic-list', 'aria-label': `Topics in ${d.name}` },
      d.topics.map((t) => h('li', { class: t.muted ? 'muted-item' : null },
        navLink(hashFor({ kind: 'topic', streamId: d.id, topic: t.name }, { channelName: d.name }), { current: t.current, dataset: { topic: t.name } },
          [h('span', { class: 'name' }, t.name), t.followed ? h('span', { class: 'followed', title: 'Followed' }, h('span', { 'aria-hidden': 'true' }, '★'), h('span', { class: 'visually-hidden' }, ', followed')) : null,
            t.muted ? h('span', { class: 'visually-hidden' }, ', muted') : null], t.unread)))));
  }
  return item;
}

function personItem(p) {
  const label = { active: 'online', idle: 'idle', offline: 'offline' }[p.status];
  return h('li', {}, h('a', {
    href: hashFor({ kind: 'dm', userIds: [p.id] }),
    class: 'nav-item person',
    'data-user-id': p.id,
    'data-presence': p.status,
  },
  h('span', { class: `presence ${p.status}`, 'aria-hidden': 'true' }),
  avatar({ user_id: p.id, full_name: p.name, avatar_url: p.avatar }),
  h('span', { class: 'name' }, p.name + (p.me ? ' (you)' : '')),
  h('span', { class: 'visually-hidden' }, `, ${label}`)));
}

// navLink is a sidebar link with an unread count.
function navLink(href, { current, dataset }, content, unread) {
  return h('a', { href, class: 'nav-item', 'aria-current': current ? 'page' : null, dataset },
    content,
    unread ? h('span', { class: 'badge' }, h('span', { class: 'count' }, String(unread)), h('span', { class: 'visually-hidden' }, ' unread')) : null);
}
