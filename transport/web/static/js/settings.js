// Settings: one's profile (name, picture), password, notifications,
// display (theme, clock) and muted people; and, for administrators, the
// organization (admin.js). Each section is a page of the settings view
// (#settings/<section>, #organization/<section>). Choices save as they
// are made (PATCH /settings), and the settings event brings them back,
// here and in the person's other tabs.

import { $, h, avatar } from './dom.js';
import { hashFor } from './narrow.js';
import { Admin } from './admin.js';
import { roleName } from './join.js';

const SECTIONS = [
  ['profile', 'Profile'], ['account', 'Password'], ['notifications', 'Notifications'],
  ['display', 'Display'], ['muted', 'Muted people'],
];

const NOTIFICATIONS = [
  ['Desktop', [
    ['enable_desktop_notifications', 'Direct messages and mentions'],
    ['enable_followed_topic_desktop_notifications', 'Followed topics'],
    ['enable_stream_desktop_notifications', 'Every channel message'],
    ['wildcard_mentions_notify', 'Mentions of everyone (@all)'],
    ['pm_content_in_desktop_notifications', 'Show the message in the notification'],
  ]],
  ['Email, when you are away', [
    ['enable_offline_email_notifications', 'Direct messages and mentions'],
    ['enable_followed_topic_email_notifications', 'Followed topics'],
    ['enable_stream_email_notifications', 'Every channel message'],
  ]],
];

export class Settings {
  constructor(api, model, { notify, desktop, confirm, invites }) {
    this.api = api;
    this.model = model;
    this.notify = notify;
    this.desktop = desktop;
    this.admin = new Admin(api, model, { notify, confirm, invites });
    this.section = 'profile';
  }

  // show draws a section of the settings view.
  show(section) {
    const org = section.startsWith('org-');
    const sections = org ? this.admin.sections() : SECTIONS;
    if (!sections.some(([id]) => id === section)) section = sections[0][0];
    this.section = section;
    const nav = h('nav', { class: 'settings-nav', 'aria-label': org ? 'Organization settings' : 'Settings' },
      h('ul', {}, sections.map(([id, label]) => h('li', {},
        h('a', { href: hashFor({ kind: 'settings', section: id }), 'aria-current': id === section ? 'page' : null }, label)))),
      h('p', {}, org
        ? h('a', { href: '#settings/profile' }, 'Your settings')
        : this.model.isAdmin ? h('a', { href: '#organization/profile', class: 'org-link' }, 'Organization settings') : null));
    const body = h('div', { class: 'settings-body' });
    $('settings-view').replaceChildren(nav, body);
    this.draw(body);
  }

  // refresh draws the open section again (after an event), keeping the
  // focus on its control.
  refresh() {
    const body = $('settings-view').querySelector('.settings-body');
    if (!body) return;
    const id = document.activeElement && body.contains(document.activeElement) ? document.activeElement.id : '';
    const typing = document.activeElement && body.contains(document.activeElement) && document.activeElement.matches('input[type=text], input:not([type]), textarea, input[type=password]');
    if (typing) return; // not under the person's hands
    if (this.section === 'notifications' || this.section === 'display') {
      // The choices change in place (a redraw would take a click in flight).
      const st = this.model.settings;
      for (const box of body.querySelectorAll('input[type=checkbox][id^="settings-"]')) box.checked = !!st[box.id.slice('settings-'.length)];
      for (const r of body.querySelectorAll('input[name="settings-theme"]')) r.checked = Number(r.value) === (st.color_scheme || 1);
      return;
    }
    // The status lines say what was just done: they stay.
    const said = [...body.querySelectorAll('.result[id]')].map((el) => [el.id, el.textContent, el.className]);
    this.draw(body);
    for (const [sid, text, cls] of said) {
      const el = $(sid);
      if (el) {
        el.textContent = text;
        el.className = cls;
      }
    }
    if (id && $(id)) $(id).focus();
  }

  draw(body) {
    const s = this.section;
    if (s.startsWith('org-')) return this.admin.draw(s, body);
    const draw = { profile: this.profile, account: this.account, notifications: this.notifications, display: this.display, muted: this.muted }[s];
    body.replaceChildren(...draw.call(this));
  }

  // status is a section's line for "Saved" and errors.
  status(id) {
    return h('p', { id, class: 'result', role: 'status' });
  }

  // save patches settings and says how it went on the status line, found
  // after the answer (the settings event may have redrawn the section).
  async save(params, statusId, what = 'Saved.') {
    let ok = true;
    let text = what;
    try {
      await this.api.patch('/settings', params);
    } catch (err) {
      ok = false;
      text = err.message;
    }
    const status = $(statusId);
    if (status) {
      status.classList.toggle('error', !ok);
      status.textContent = text;
    }
    return ok;
  }

  profile() {
    const me = this.model.users.get(this.model.me) || { user_id: this.model.me, full_name: '' };
    const name = h('input', { id: 'settings-name', value: me.full_name, maxlength: '100', autocomplete: 'name' });
    const file = h('input', { id: 'settings-avatar-file', type: 'file', accept: 'image/png,image/jpeg,image/gif,image/webp', hidden: true });
    file.addEventListener('change', () => this.uploadAvatar(file));
    const uploaded = me.avatar_source === 'U' || /^\/user_avatars\//.test(me.avatar_url || '');
    return [
      h('h3', {}, 'Profile'),
      h('form', { class: 'card', onsubmit: (e) => { e.preventDefault(); this.save({ full_name: name.value.trim() }, 'settings-name-status'); } },
        h('label', { for: 'settings-name' }, 'Full name'),
        name,
        h('div', {}, h('button', { type: 'submit', class: 'primary' }, 'Save name')),
        this.status('settings-name-status')),
      h('div', { class: 'card' },
        h('h4', {}, 'Picture'),
        h('div', { class: 'avatar-row' }, avatar(me, 'large'),
          h('button', { type: 'button', id: 'settings-avatar-upload', onclick: () => file.click() }, 'Upload a picture'),
          uploaded ? h('button', { type: 'button', id: 'settings-avatar-remove', onclick: () => this.removeAvatar() }, 'Remove the picture') : null),
        file,
        this.status('settings-avatar-status')),
      h('dl', { class: 'facts' },
        h('dt', {}, 'Email'), h('dd', {}, me.delivery_email || me.email || ''),
        h('dt', {}, 'Role'), h('dd', {}, roleName(me.role))),
    ];
  }

  async uploadAvatar(input) {
    const f = input.files[0];
    input.value = '';
    if (!f) return;
    const status = $('settings-avatar-status');
    status.classList.remove('error');
    status.textContent = 'Uploading…';
    const form = new FormData();
    form.append('file', f, f.name);
    try {
      await this.api.upload('/users/me/avatar', form);
      $('settings-avatar-status').textContent = 'Saved.';
    } catch (err) {
      $('settings-avatar-status').classList.add('error');
      $('settings-avatar-status').textContent = err.message;
    }
  }

  async removeAvatar() {
    try {
      await this.api.del('/users/me/avatar');
    } catch (err) {
      this.notify(`Could not remove the picture: ${err.message}`);
    }
  }

  account() {
    const field = (id, label, auto) => [h('label', { for: id }, label), h('input', { id, type: 'password', autocomplete: auto, required: true })];
    const form = h('form', { class: 'card', onsubmit: (e) => { e.preventDefault(); this.changePassword(); } },
      h('h4', {}, 'Change your password'),
      field('settings-old-password', 'Current password', 'current-password'),
      field('settings-new-password', 'New password', 'new-password'),
      field('settings-new-password2', 'New password again', 'new-password'),
      h('div', {}, h('button', { type: 'submit', class: 'primary' }, 'Change password')),
      this.status('settings-password-status'));
    return [h('h3', {}, 'Password'), form];
  }

  async changePassword() {
    const old = $('settings-old-password').value;
    const neu = $('settings-new-password').value;
    const status = $('settings-password-status');
    if (!old || !neu || neu !== $('settings-new-password2').value) {
      status.classList.add('error');
      status.textContent = !old || !neu ? 'Enter your current password and a new one.' : 'The new passwords differ.';
      return;
    }
    if (await this.save({ old_password: old, new_password: neu }, 'settings-password-status', 'Your password is changed.')) {
      for (const id of ['settings-old-password', 'settings-new-password', 'settings-new-password2']) $(id).value = '';
    }
  }

  notifications() {
    const st = this.model.settings;
    const perm = typeof window.Notification === 'function' ? Notification.permission : 'unsupported';
    const browser = h('div', { class: 'card' },
      h('h4', {}, 'This browser'),
      h('p', { id: 'settings-permission' }, {
        granted: 'Desktop notifications are allowed in this browser.',
        denied: 'This browser blocks notifications from this page: allow them in its site settings.',
        default: 'This browser has not been allowed to show notifications yet.',
        unsupported: 'This browser cannot show notifications.',
      }[perm]),
      perm === 'default' ? h('button', { type: 'button', id: 'settings-permission-ask', onclick: async () => { await this.desktop.ask(); this.refresh(); } }, 'Allow desktop notifications') : null);
    const groups = NOTIFICATIONS.map(([title, fields]) => h('fieldset', { class: 'card' },
      h('legend', {}, title),
      fields.map(([key, label]) => checkbox(`settings-${key}`, label, st[key] !== false && st[key] !== undefined ? !!st[key] : false,
        (on) => this.save({ [key]: on }, 'settings-notifications-status')))));
    return [h('h3', {}, 'Notifications'), browser, ...groups, this.status('settings-notifications-status')];
  }

  display() {
    const st = this.model.settings;
    const scheme = st.color_scheme || 1;
    const themes = h('fieldset', { class: 'card' }, h('legend', {}, 'Theme'),
      [[1, 'Automatic (as the system)'], [3, 'Light'], [2, 'Dark']].map(([v, label]) => h('label', { class: 'check' },
        h('input', {
          type: 'radio', name: 'settings-theme', id: `settings-theme-${v}`, value: v, checked: scheme === v,
          onchange: () => this.save({ color_scheme: v }, 'settings-display-status'),
        }), label)));
    const clock = h('fieldset', { class: 'card' }, h('legend', {}, 'Time'),
      checkbox('settings-twenty_four_hour_time', '24-hour clock', !!st.twenty_four_hour_time,
        (on) => this.save({ twenty_four_hour_time: on }, 'settings-display-status')));
    return [h('h3', {}, 'Display'), themes, clock, this.status('settings-display-status')];
  }

  muted() {
    const ids = [...this.model.mutedUsers];
    const rows = ids.map((id) => h('li', {},
      h('span', { class: 'name' }, this.model.userName(id)),
      h('button', {
        type: 'button', id: `settings-unmute-${id}`, 'aria-label': `Unmute ${this.model.userName(id)}`,
        onclick: () => this.api.del(`/users/me/muted_users/${id}`).catch((err) => this.notify(`Could not unmute: ${err.message}`)),
      }, 'Unmute')));
    return [
      h('h3', {}, 'Muted people'),
      h('p', { class: 'muted' }, 'Messages from people you mute are hidden and marked read. Mute someone from their profile card (click their name on a message).'),
      rows.length ? h('ul', { class: 'settings-list' }, rows) : h('p', {}, 'You have not muted anyone.'),
    ];
  }
}

export function checkbox(id, label, checked, onChange) {
  return h('label', { class: 'check', for: id },
    h('input', { type: 'checkbox', id, checked, onchange: (e) => onChange(e.target.checked) }), label);
}


// applyTheme follows the color_scheme setting: 1 as the system, 2 dark, 3 light.
export function applyTheme(settings) {
  const v = settings.color_scheme;
  document.documentElement.dataset.theme = v === 2 ? 'dark' : v === 3 ? 'light' : 'auto';
}
