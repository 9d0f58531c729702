// Joining and inviting. An invitation link (<organization URL>/join/KEY/)
// is sent on by the server to this page's #join/KEY, where the newcomer
// picks a name and a password: POST /invites/accept makes the account and
// answers its API key, and the page logs in with it. People who may invite
// do it from the "Invite people" dialog: by email (POST /invites) or with a
// reusable link (POST /invites/multiuse, administrators by default).

import { $, h } from './dom.js';
import { ApiError } from './api.js';

// The roles, most powerful first, as the API numbers them.
export const ROLES = [[100, 'Owner'], [200, 'Administrator'], [300, 'Moderator'], [400, 'Member'], [600, 'Guest']];

export function roleName(role) {
  const r = ROLES.find(([n]) => n === role);
  return r ? r[1] : 'Member';
}

// showJoin shows the sign-up form of an invitation key; onJoined gets the
// new account's session.
export function showJoin(api, key, onJoined) {
  $('app-view').hidden = true;
  $('login-view').hidden = true;
  $('join-view').hidden = false;
  const form = $('join-form');
  form.dataset.key = key;
  form.onsubmit = (e) => { e.preventDefault(); join(api, form.dataset.key, onJoined); };
  $('join-error').textContent = '';
  $('join-email').focus();
  api.get('/server_settings').then((s) => {
    if (s.realm_name) $('join-realm').textContent = s.realm_name;
  }).catch(() => {});
}

async function join(api, key, onJoined) {
  const email = $('join-email').value.trim();
  const fullName = $('join-name').value.trim();
  const password = $('join-password').value;
  const error = $('join-error');
  error.textContent = '';
  if (!email || !fullName || !password) {
    error.textContent = 'Enter your email, your name and a password.';
    return;
  }
  const button = $('join-form').querySelector('button[type=submit]');
  button.disabled = true;
  try {
    const body = await api.post('/invites/accept', { key, email, full_name: fullName, password });
    $('join-form').reset();
    onJoined({ email: body.email, key: body.api_key, userId: body.user_id });
  } catch (err) {
    error.textContent = err instanceof ApiError ? err.message : 'The server could not be reached.';
  } finally {
    button.disabled = false;
  }
}

// InviteDialog is the "Invite people" dialog.
export class InviteDialog {
  constructor(api, model) {
    this.api = api;
    this.model = model;
    this.dialog = $('invite-dialog');
    $('invite-button').addEventListener('click', () => this.open());
    $('invite-close').addEventListener('click', () => this.dialog.close());
    $('invite-email-form').addEventListener('submit', (e) => { e.preventDefault(); this.byEmail(); });
    $('invite-link-form').addEventListener('submit', (e) => { e.preventDefault(); this.link(); });
    $('invite-link-copy').addEventListener('click', () => copyText($('invite-link'), $('invite-link-copy')));
  }

  // update shows the button to those who may invite.
  update() {
    $('invite-button').hidden = !this.model.canInvite;
  }

  // open shows the dialog; onClose (if given) runs when it closes.
  open(onClose) {
    if (onClose) this.dialog.addEventListener('close', onClose, { once: true });
    const mine = this.model.role || 400;
    // Built afresh at each opening: nothing chosen last time stays.
    for (const select of document.querySelectorAll('.invite-role')) {
      select.replaceChildren(...ROLES.filter(([n]) => n >= mine).map(([n, name]) => h('option', { value: n, selected: n === 400 }, name)));
    }
    const subs = [...this.model.subs.values()].sort((a, b) => a.name.localeCompare(b.name));
    $('invite-channels').replaceChildren(...subs.map((sub) => {
      const id = `invite-channel-${sub.stream_id}`;
      return h('li', {}, h('input', { type: 'checkbox', id, value: sub.stream_id }), h('label', { for: id }, `#${sub.name}`));
    }));
    if (!subs.length) $('invite-channels').append(h('li', { class: 'muted' }, 'You are in no channels yet.'));
    for (const id of ['invite-email-result', 'invite-email-error', 'invite-link-error']) $(id).textContent = '';
    $('invite-link-result').hidden = true;
    $('invite-link-form').hidden = !this.model.isAdmin;
    this.dialog.showModal();
    $('invite-emails').focus();
  }

  async byEmail() {
    const emails = $('invite-emails').value.trim();
    const error = $('invite-email-error');
    error.textContent = '';
    $('invite-email-result').textContent = '';
    if (!emails) {
      error.textContent = 'Enter at least one email address.';
      return;
    }
    try {
      await this.api.post('/invites', {
        invitee_emails: emails,
        invite_as: Number($('invite-email-role').value),
        stream_ids: chosenChannels(),
        include_realm_default_subscriptions: true,
      });
      $('invite-email-result').textContent = `Invited: ${emails.split(/[\n,]+/).map((e) => e.trim()).filter(Boolean).join(', ')}.`;
      $('invite-emails').value = '';
    } catch (err) {
      error.textContent = err.message;
    }
  }

  async link() {
    const error = $('invite-link-error');
    error.textContent = '';
    const expiry = $('invite-link-expiry').value;
    try {
      const body = await this.api.post('/invites/multiuse', {
        invite_expires_in_minutes: expiry === 'null' ? null : Number(expiry),
        invite_as: Number($('invite-link-role').value),
        stream_ids: chosenChannels(),
        include_realm_default_subscriptions: true,
      });
      $('invite-link').value = body.invite_link;
      $('invite-link-result').hidden = false;
      $('invite-link').select();
    } catch (err) {
      error.textContent = err.message;
    }
  }
}

// chosenChannels are the channels checked in the invitation dialog.
function chosenChannels() {
  return [...document.querySelectorAll('#invite-channels input:checked')].map((i) => Number(i.value));
}

// copyText copies an input's text and says so on the button.
export async function copyText(input, button) {
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    button.textContent = 'Copied';
  } catch {
    button.textContent = 'Press Ctrl+C to copy';
  }
}
