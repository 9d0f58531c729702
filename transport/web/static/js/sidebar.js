// The sidebar: channels with their unread counts (and the open channel's
// topics), direct conversations, and people with who is online.

import { $, h, clear, initials, hue } from './dom.js';
import { hashFor, dmKey, sameTopic } from './narrow.js';

export function renderSidebar(model, view, { onNewDM }) {
  // Re-rendering keeps the keyboard focus where it was.
  const focused = document.activeElement && document.activeElement.closest('#sidebar') ? document.activeElement.dataset.key : null;

  if (view.kind === 'all') $('nav-all').setAttribute('aria-current', 'page');
  else $('nav-all').removeAttribute('aria-current');

  const channels = $('channel-list');
  clear(channels);
  const subs = [...model.subs.values()].sort((a, b) => a.name.localeCompare(b.name));
  if (!subs.length) {
    channels.append(h('li', { class: 'muted hint' }, 'No channels yet. ', h('a', { href: '#channels' }, 'Browse or create one')));
  }
  for (const s of subs) {
    const current = (view.kind === 'channel' || view.kind === 'topic') && view.streamId === s.stream_id;
    const item = h('li', {},
      navLink(hashFor({ kind: 'channel', streamId: s.stream_id }, { channelName: s.name }),
        { key: `c${s.stream_id}`, current: view.kind === 'channel' && current, dataset: { streamId: s.stream_id } },
        [h('span', { class: 'channel-mark', 'aria-hidden': 'true' }, s.invite_only ? '🔒' : '#'), h('span', { class: 'name' }, s.name)],
        model.channelUnread(s.stream_id)));
    channels.append(item);
    if (current) {
      const topics = model.topicsOf(s.stream_id);
      if (topics.length) {
        item.append(h('ul', { class: 'topic-list', 'aria-label': `Topics in ${s.name}` },
          topics.slice(0, 30).map((t) => h('li', {},
            navLink(hashFor({ kind: 'topic', streamId: s.stream_id, topic: t.name }, { channelName: s.name }),
              { key: `t${s.stream_id}:${t.name.toLowerCase()}`, current: view.kind === 'topic' && sameTopic(view.topic, t.name), dataset: { topic: t.name } },
              [h('span', { class: 'name' }, t.name)],
              model.topicUnread(s.stream_id, t.name))))));
      }
    }
  }

  const dms = $('dm-list');
  clear(dms);
  dms.append(h('li', {}, h('button', { type: 'button', class: 'link-button', 'data-key': 'newdm', onclick: onNewDM }, 'New direct message')));
  const convs = [...model.dms.values()].sort((a, b) => b.maxId - a.maxId).slice(0, 20);
  for (const c of convs) {
    const key = dmKey(c.userIds);
    const names = c.userIds.map((id) => model.userName(id)).join(', ');
    dms.append(h('li', {}, navLink(hashFor({ kind: 'dm', userIds: c.userIds }),
      { key: `d${key}`, current: view.kind === 'dm' && dmKey(view.userIds) === key, dataset: { dm: key } },
      [h('span', { class: 'name' }, names)], model.dmUnread(key))));
  }

  const people = $('people-list');
  clear(people);
  const order = { active: 0, idle: 1, offline: 2 };
  const users = [...model.users.values()].filter((u) => u.is_active !== false && !u.is_bot)
    .map((u) => ({ u, status: u.user_id === model.me ? 'active' : model.online(u.user_id) }))
    .sort((a, b) => order[a.status] - order[b.status] || a.u.full_name.localeCompare(b.u.full_name));
  for (const { u, status } of users) {
    const label = { active: 'online', idle: 'idle', offline: 'offline' }[status];
    people.append(h('li', {}, h('a', {
      href: hashFor({ kind: 'dm', userIds: [u.user_id] }),
      class: 'nav-item person',
      'data-key': `p${u.user_id}`,
      'data-user-id': u.user_id,
      'data-presence': status,
    },
    h('span', { class: `presence ${status}`, 'aria-hidden': 'true' }),
    avatar(u),
    h('span', { class: 'name' }, u.full_name + (u.user_id === model.me ? ' (you)' : '')),
    h('span', { class: 'visually-hidden' }, `, ${label}`))));
  }

  if (focused) {
    const again = document.querySelector(`#sidebar [data-key="${CSS.escape(focused)}"]`);
    if (again) again.focus();
  }
}

// navLink is a sidebar link with an unread count.
function navLink(href, { key, current, dataset }, content, unread) {
  return h('a', { href, class: 'nav-item', 'data-key': key, 'aria-current': current ? 'page' : null, dataset },
    content,
    unread ? h('span', { class: 'badge' }, h('span', { class: 'count' }, String(unread)), h('span', { class: 'visually-hidden' }, ' unread')) : null);
}

export function avatar(u) {
  const el = h('span', { class: 'avatar', 'aria-hidden': 'true' }, initials(u ? u.full_name : '?'));
  el.style.setProperty('--hue', String(hue(u ? u.user_id : 0)));
  return el;
}
