// User profile cards: who someone is (name, email, role, local time,
// whether they are online, when they joined), with a direct message and
// muting at hand. Opened from a message's sender.

import { h, avatar } from './dom.js';
import { hashFor } from './narrow.js';
import { roleName } from './join.js';
import { openPopover, closePopover } from './menu.js';

const joined = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

// localTime is the time now in a time zone, or '' for an unknown zone.
function localTime(zone, hour12) {
  if (!zone) return '';
  try {
    return new Intl.DateTimeFormat(undefined, { timeZone: zone, hour: '2-digit', minute: '2-digit', hour12 }).format(new Date());
  } catch {
    return '';
  }
}

export function showProfile(button, userId, model, { api, notify }) {
  const u = model.users.get(userId) || { user_id: userId, full_name: model.userName(userId) };
  const me = userId === model.me;
  const status = me ? 'active' : model.online(userId);
  const muted = model.mutedUsers.has(userId);
  const time = localTime(u.timezone, !model.settings.twenty_four_hour_time);
  const facts = [
    ['Email', u.delivery_email || u.email || ''],
    ['Role', u.is_bot ? 'Bot' : roleName(u.role)],
    ['Local time', time ? `${time} (${u.timezone})` : ''],
    ['Joined', u.date_joined ? joined.format(new Date(u.date_joined)) : ''],
  ].filter(([, v]) => v);
  const card = h('div', { class: 'profile-card', role: 'dialog', 'aria-label': `About ${u.full_name}` },
    h('div', { class: 'profile-head' },
      avatar(u, 'large'),
      h('div', {},
        h('h3', {}, u.full_name),
        h('p', { class: 'muted' },
          h('span', { class: `presence ${status}`, 'aria-hidden': 'true' }), ' ',
          { active: 'Online', idle: 'Idle', offline: 'Offline' }[status],
          muted ? ' · muted by you' : ''))),
    h('dl', {}, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h('div', { class: 'profile-actions' },
      h('a', { href: hashFor({ kind: 'dm', userIds: [userId] }), class: 'button primary', onclick: () => closePopover(false) },
        me ? 'Write a note to yourself' : 'Send a direct message'),
      me ? h('a', { href: '#settings/profile', class: 'button', onclick: () => closePopover(false) }, 'Edit your profile') : h('button', {
        type: 'button', class: 'mute-user',
        onclick: async () => {
          closePopover(true);
          try {
            if (muted) await api.del(`/users/me/muted_users/${userId}`);
            else await api.post(`/users/me/muted_users/${userId}`);
          } catch (err) {
            notify(`Could not ${muted ? 'unmute' : 'mute'} ${u.full_name}: ${err.message}`);
          }
        },
      }, muted ? 'Unmute' : 'Mute')));
  if (openPopover(button, card)) card.querySelector('a, button').focus();
}
