// What a person can do to a message: react (the emoji picker), reply,
// star, and from its menu quote it, copy its link and mark it unread
// (from it on, in its conversation); edit and delete their own.

import { h, reconcile } from './dom.js';
import { messageLink, apiNarrowOf } from './narrow.js';
import { Picker, emojiElement, customSrc } from './emoji.js';
import { toggleMenu } from './menu.js';

export class MessageActions {
  // list is the MessageList (its element(), fill() and view).
  constructor(api, model, list, { notify, confirm, onReply, onQuote }) {
    this.api = api;
    this.model = model;
    this.list = list;
    this.notify = notify;
    this.confirm = confirm;
    this.onReply = onReply;
    this.onQuote = onQuote;
    this.picker = new Picker(model);
  }

  // bar is a message's row of actions.
  bar(m) {
    const mine = m.sender_id === this.model.me;
    const who = `message from ${m.sender_full_name}`;
    const starred = (m.flags || []).includes('starred');
    return h('div', { class: 'msg-actions' },
      h('button', { type: 'button', class: 'icon-button react-button', 'data-focus': 'react', 'aria-label': `Add a reaction to this ${who}`, 'aria-expanded': 'false', onclick: (e) => this.togglePicker(m.id, e.currentTarget) }, h('span', { 'aria-hidden': 'true' }, '☺+')),
      h('button', { type: 'button', class: 'link-button reply-button', 'data-focus': 'reply', 'aria-label': `Reply to this ${who}`, onclick: () => this.onReply(m) }, 'Reply'),
      h('button', {
        type: 'button', class: 'icon-button star-button', 'data-focus': 'star', 'aria-pressed': starred ? 'true' : 'false',
        'aria-label': `Star this ${who}`, onclick: () => this.star(m.id, !starred),
      }, h('span', { 'aria-hidden': 'true' }, starred ? '★' : '☆')),
      mine ? h('button', { type: 'button', class: 'link-button edit-button', 'data-focus': 'edit', 'aria-label': 'Edit this message', onclick: () => this.startEdit(m.id) }, 'Edit') : null,
      mine ? h('button', { type: 'button', class: 'link-button delete-button', 'data-focus': 'delete', 'aria-label': 'Delete this message', onclick: () => this.delete(m.id) }, 'Delete') : null,
      h('button', {
        type: 'button', class: 'icon-button more-button', 'data-focus': 'more', 'aria-haspopup': 'menu', 'aria-expanded': 'false',
        'aria-label': `More actions for this ${who}`, onclick: (e) => this.more(m.id, e.currentTarget),
      }, h('span', { 'aria-hidden': 'true' }, '⋯')));
  }

  more(id, button) {
    toggleMenu(button, 'Message actions', [
      { label: 'Quote and reply', className: 'quote-action', run: () => this.quote(id) },
      { label: 'Copy link to message', className: 'copy-link-action', run: () => this.copyLink(id) },
      { label: 'Mark as unread from here', className: 'unread-action', run: () => this.markUnread(id) },
    ]);
  }

  // reactions draws a message's reactions, one button per emoji.
  reactions(box, m) {
    const groups = new Map();
    for (const r of m.reactions || []) {
      const key = `${r.reaction_type}:${r.emoji_code}`;
      if (!groups.has(key)) groups.set(key, { ...r, users: [] });
      groups.get(key).users.push(r.user_id ?? (r.user && r.user.id));
    }
    reconcile(box, [...groups.values()].map((g) => {
      const mine = g.users.includes(this.model.me);
      const names = g.users.map((id) => (id === this.model.me ? 'you' : this.model.userName(id))).join(', ');
      const d = { type: g.reaction_type, code: g.emoji_code, name: g.emoji_name, count: g.users.length, names, mine };
      if (d.type === 'realm_emoji') d.src = customSrc(this.model.customEmoji(d.code)); // its image may change
      return { key: `${d.type}:${d.code}`, sig: JSON.stringify(d), build: () => this.reaction(m.id, d) };
    }));
  }

  reaction(id, d) {
    return h('button', {
      type: 'button', class: 'reaction', 'aria-pressed': d.mine ? 'true' : 'false',
      'data-emoji': d.name, 'data-focus': `reaction:${d.code}`, title: `${d.names} reacted with :${d.name}:`,
      'aria-label': `${d.name}: ${d.count} (${d.names}). ${d.mine ? 'Remove your reaction' : 'Add yours'}`,
      onclick: () => this.react(id, d.name, d.code, d.type, d.mine),
    }, emojiElement({ type: d.type, code: d.code, name: d.name }, this.model), ' ', h('span', { class: 'count' }, String(d.count)));
  }

  async react(id, name, code, type, remove) {
    try {
      const params = { emoji_name: name, emoji_code: code, reaction_type: type };
      if (remove) await this.api.del(`/messages/${id}/reactions`, params);
      else await this.api.post(`/messages/${id}/reactions`, params);
    } catch (err) {
      this.notify(`Could not ${remove ? 'remove' : 'add'} the reaction: ${err.message}`);
    }
  }

  togglePicker(id, button) {
    this.picker.toggle(button, 'Pick a reaction', (c) => {
      const m = this.model.messages.get(id);
      const mine = m && (m.reactions || []).some((r) => r.emoji_code === c.code && r.reaction_type === c.type && (r.user_id ?? r.user?.id) === this.model.me);
      this.react(id, c.name, c.code, c.type, mine);
    });
  }

  async star(id, on) {
    try {
      await this.api.post('/messages/flags', { messages: [id], op: on ? 'add' : 'remove', flag: 'starred' });
    } catch (err) {
      this.notify(`Could not ${on ? 'star' : 'unstar'} the message: ${err.message}`);
    }
  }

  async raw(id) {
    const body = await this.api.get(`/messages/${id}`, { apply_markdown: 'false' });
    return body.message ? body.message.content : body.raw_content;
  }

  // quote replies with the message quoted, as the reference writes it.
  async quote(id) {
    const m = this.model.messages.get(id);
    if (!m) return;
    try {
      const raw = await this.raw(id);
      const link = messageLink(m, this.model.me, this.model.channelName(m.stream_id));
      const fence = raw.includes('```') ? '````' : '```';
      this.onQuote(m, `@_**${m.sender_full_name}|${m.sender_id}** [said](${link}):\n${fence}quote\n${raw}\n${fence}\n`);
    } catch (err) {
      this.notify(`Could not quote the message: ${err.message}`);
    }
  }

  async copyLink(id) {
    const m = this.model.messages.get(id);
    if (!m) return;
    const url = location.origin + location.pathname + messageLink(m, this.model.me, this.model.channelName(m.stream_id));
    try {
      await navigator.clipboard.writeText(url);
      this.notify('The link is copied.', false);
    } catch {
      this.notify(`Copy this link: ${url}`, false);
    }
  }

  // markUnread marks the message and those after it in its conversation
  // unread; the view stops marking them read until it is opened again.
  async markUnread(id) {
    const m = this.model.messages.get(id);
    if (!m) return;
    this.list.holdReading(id);
    try {
      await this.api.post('/messages/flags/narrow', {
        anchor: String(id), include_anchor: true, num_before: 0, num_after: 5000,
        narrow: apiNarrowOf(m, this.model.me), op: 'remove', flag: 'read',
      });
    } catch (err) {
      this.notify(`Could not mark the messages unread: ${err.message}`);
    }
  }

  async startEdit(id) {
    const el = this.list.element(id);
    if (!el || el.querySelector('.edit-form')) return;
    let raw;
    try {
      raw = await this.raw(id);
    } catch (err) {
      this.notify(`Could not load the message for editing: ${err.message}`);
      return;
    }
    const content = el.querySelector('.msg-content');
    if (!content) return;
    const textarea = h('textarea', { class: 'edit-content', id: `edit-${id}`, rows: '3' });
    textarea.value = raw;
    const error = h('p', { class: 'error', role: 'alert' });
    const close = () => {
      const m = this.model.messages.get(id);
      if (m) this.list.fill(el, m);
      const edit = el.querySelector('.edit-button');
      if (edit) edit.focus();
    };
    const save = async () => {
      try {
        await this.api.patch(`/messages/${id}`, { content: textarea.value });
        close();
      } catch (err) {
        error.textContent = err.message;
      }
    };
    const form = h('form', { class: 'edit-form', onsubmit: (e) => { e.preventDefault(); save(); } },
      h('label', { for: `edit-${id}` }, 'Edit message'),
      textarea,
      error,
      h('div', { class: 'edit-buttons' },
        h('button', { type: 'submit', class: 'primary' }, 'Save'),
        h('button', { type: 'button', onclick: close }, 'Cancel')));
    textarea.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); close(); }
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); save(); }
    });
    content.replaceWith(form);
    textarea.focus();
  }

  async delete(id) {
    if (!(await this.confirm('Delete this message? This cannot be undone.'))) return;
    try {
      await this.api.del(`/messages/${id}`);
    } catch (err) {
      this.notify(`Could not delete the message: ${err.message}`);
    }
  }
}
