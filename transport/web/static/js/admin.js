// Organization settings, for administrators: the organization's name and
// description (PATCH /realm), its members (roles with PATCH /users/{id},
// deactivating and reactivating them) and its invitations (GET /invites,
// revoking them, inviting more). The server decides who may do what; the
// page offers only what the person's role allows and shows its refusals.

import { $, h, timeElement } from './dom.js';
import { ROLES, roleName } from './join.js';

export class Admin {
  constructor(api, model, { notify, confirm, invites }) {
    this.api = api;
    this.model = model;
    this.notify = notify;
    this.confirm = confirm;
    this.invites = invites;
  }

  sections() {
    return [['org-profile', 'Organization'], ['org-members', 'Members'], ['org-invitations', 'Invitations']];
  }

  draw(section, body) {
    if (!this.model.isAdmin) {
      body.replaceChildren(h('p', {}, 'Only administrators can change the organization’s settings.'));
      return;
    }
    if (section === 'org-members') this.members(body);
    else if (section === 'org-invitations') this.invitations(body);
    else this.profile(body);
  }

  profile(body) {
    const name = h('input', { id: 'org-name', value: this.model.realmName, maxlength: '40' });
    const description = h('textarea', { id: 'org-description', rows: '4', maxlength: '1000' });
    description.value = this.model.realmDescription;
    const status = h('p', { id: 'org-status', class: 'result', role: 'status' });
    body.replaceChildren(h('h3', {}, 'Organization'),
      h('form', {
        class: 'card',
        onsubmit: async (e) => {
          e.preventDefault();
          // The organization's event may redraw the form meanwhile: the
          // status line is found again.
          try {
            await this.api.patch('/realm', { name: name.value.trim(), description: description.value });
            $('org-status').classList.remove('error');
            $('org-status').textContent = 'Saved.';
          } catch (err) {
            $('org-status').classList.add('error');
            $('org-status').textContent = err.message;
          }
        },
      },
      h('label', { for: 'org-name' }, 'Name'), name,
      h('label', { for: 'org-description' }, 'Description (Markdown)'), description,
      h('div', {}, h('button', { type: 'submit', class: 'primary' }, 'Save')),
      status));
  }

  async members(body) {
    if (!body.querySelector('table.members')) body.replaceChildren(h('h3', {}, 'Members'), h('p', { class: 'muted', role: 'status' }, 'Loading…'));
    let members;
    try {
      members = (await this.api.get('/users', { client_gravatar: 'true' })).members;
    } catch (err) {
      body.replaceChildren(h('h3', {}, 'Members'), h('p', { class: 'error' }, err.message));
      return;
    }
    if (!body.isConnected) return;
    // The status line says what was just done, possibly while the list
    // was being fetched (a role's answer beside the event that redraws).
    const said = $('members-status') ? $('members-status').textContent : '';
    const mine = this.model.role;
    const rows = members.filter((u) => !u.is_bot).sort((a, b) => (b.is_active - a.is_active) || a.full_name.localeCompare(b.full_name)).map((u) => {
      const me = u.user_id === this.model.me;
      const editable = !me && u.is_active && (mine === 100 || u.role > 200);
      const role = editable
        ? h('select', {
          id: `member-role-${u.user_id}`, 'aria-label': `Role of ${u.full_name}`,
          onchange: (e) => this.setRole(u, Number(e.target.value), e.target),
        }, ROLES.filter(([n]) => n >= mine || n === u.role).map(([n, label]) => h('option', { value: n, selected: n === u.role }, label)))
        : h('span', {}, roleName(u.role));
      const action = me ? null : u.is_active
        ? (editable ? h('button', { type: 'button', class: 'danger-link', id: `member-deactivate-${u.user_id}`, 'aria-label': `Deactivate ${u.full_name}`, onclick: () => this.deactivate(u, body) }, 'Deactivate') : null)
        : h('button', { type: 'button', id: `member-reactivate-${u.user_id}`, 'aria-label': `Reactivate ${u.full_name}`, onclick: () => this.reactivate(u, body) }, 'Reactivate');
      return h('tr', { class: u.is_active ? null : 'muted-item', 'data-user-id': u.user_id },
        h('td', {}, u.full_name, me ? ' (you)' : '', u.is_active ? '' : ' (deactivated)'),
        h('td', {}, u.delivery_email || u.email || ''),
        h('td', {}, role),
        h('td', {}, action));
    });
    body.replaceChildren(h('h3', {}, 'Members'),
      h('table', { class: 'members' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Email'), h('th', { scope: 'col' }, 'Role'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
        h('tbody', {}, rows)),
      h('p', { id: 'members-status', class: 'result', role: 'status' }, said));
  }

  async setRole(u, role, select) {
    try {
      await this.api.patch(`/users/${u.user_id}`, { role });
      u.role = role;
      $('members-status').textContent = `${u.full_name} is now ${roleName(role).toLowerCase()}.`;
    } catch (err) {
      select.value = String(u.role);
      this.notify(`Could not change the role of ${u.full_name}: ${err.message}`);
    }
  }

  async deactivate(u, body) {
    if (!(await this.confirm(`Deactivate ${u.full_name}? They will be logged out and unable to log in.`, 'Deactivate'))) return;
    try {
      await this.api.del(`/users/${u.user_id}`);
      this.members(body);
    } catch (err) {
      this.notify(`Could not deactivate ${u.full_name}: ${err.message}`);
    }
  }

  async reactivate(u, body) {
    try {
      await this.api.post(`/users/${u.user_id}/reactivate`);
      this.members(body);
    } catch (err) {
      this.notify(`Could not reactivate ${u.full_name}: ${err.message}`);
    }
  }

  async invitations(body) {
    const head = [h('h3', {}, 'Invitations'), h('p', {}, h('button', { type: 'button', class: 'primary', onclick: () => this.invites.open(() => this.invitations(body)) }, 'Invite people'))];
    body.replaceChildren(...head, h('p', { class: 'muted', role: 'status' }, 'Loading…'));
    let invites;
    try {
      invites = (await this.api.get('/invites')).invites;
    } catch (err) {
      body.replaceChildren(...head, h('p', { class: 'error' }, err.message));
      return;
    }
    if (!body.isConnected) return;
    const rows = invites.sort((a, b) => b.invited - a.invited).map((inv) => h('tr', { 'data-invite-id': inv.id },
      h('td', {}, inv.is_multiuse ? h('span', {}, 'Link: ', h('code', {}, inv.link_url || '')) : inv.email),
      h('td', {}, roleName(inv.invited_as)),
      h('td', {}, this.model.userName(inv.invited_by_user_id)),
      h('td', {}, inv.expiry_date ? timeElement(inv.expiry_date) : 'never'),
      h('td', {}, h('button', {
        type: 'button', class: 'danger-link', 'aria-label': `Revoke the invitation ${inv.is_multiuse ? 'link' : `of ${inv.email}`}`,
        onclick: () => this.revoke(inv, body),
      }, 'Revoke'))));
    body.replaceChildren(...head, rows.length
      ? h('table', { class: 'members' },
        h('thead', {}, h('tr', {}, ['Invited', 'Role', 'By', 'Expires'].map((c) => h('th', { scope: 'col' }, c)), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
        h('tbody', {}, rows))
      : h('p', {}, 'There are no open invitations.'));
  }

  async revoke(inv, body) {
    try {
      await this.api.del(inv.is_multiuse ? `/invites/multiuse/${inv.id}` : `/invites/${inv.id}`);
      this.invitations(body);
    } catch (err) {
      this.notify(`Could not revoke the invitation: ${err.message}`);
    }
  }
}
