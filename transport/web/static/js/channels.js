// The channel directory: every channel the person may see, to subscribe
// to or leave, and a form to create one (POST /users/me/subscriptions
// with a new name creates the channel).

import { $, h, reconcile } from './dom.js';
import { hashFor } from './narrow.js';

export class Channels {
  constructor(api, model, { notify }) {
    this.api = api;
    this.model = model;
    this.notify = notify;
    $('create-channel-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.create();
    });
  }

  render() {
    const all = [...this.model.streams.values()].filter((s) => !s.is_archived).sort((a, b) => a.name.localeCompare(b.name));
    const items = all.map((s) => {
      const data = { id: s.stream_id, name: s.name, private: !!s.invite_only, description: s.description || '', subscribed: this.model.subs.has(s.stream_id) };
      return { key: `s${s.stream_id}`, sig: JSON.stringify(data), build: () => this.item(s, data) };
    });
    if (!all.length) items.push({ key: 'none', sig: '', build: () => h('li', { class: 'muted' }, 'There are no channels yet.') });
    reconcile($('all-channels'), items);
  }

  item(s, d) {
    return h('li', { 'data-stream-id': d.id },
      h('div', {},
        h('a', { href: hashFor({ kind: 'channel', streamId: d.id }, { channelName: d.name }), class: 'channel-name' },
          (d.private ? '🔒 ' : '#') + d.name),
        d.description ? h('p', { class: 'muted' }, d.description) : null),
      h('button', {
        type: 'button',
        class: d.subscribed ? '' : 'primary',
        'aria-label': `${d.subscribed ? 'Unsubscribe from' : 'Subscribe to'} ${d.name}`,
        onclick: () => this.toggle(s, d.subscribed),
      }, d.subscribed ? 'Unsubscribe' : 'Subscribe'));
  }

  async toggle(s, subscribed) {
    try {
      if (subscribed) await this.api.del('/users/me/subscriptions', { subscriptions: [s.name] });
      else await this.api.post('/users/me/subscriptions', { subscriptions: [{ name: s.name }] });
    } catch (err) {
      this.notify(`Could not ${subscribed ? 'unsubscribe from' : 'subscribe to'} ${s.name}: ${err.message}`);
    }
  }

  async create() {
    const name = $('new-channel-name').value.trim();
    const description = $('new-channel-description').value.trim();
    const error = $('create-channel-error');
    error.textContent = '';
    if (!name) {
      error.textContent = 'A channel needs a name.';
      $('new-channel-name').focus();
      return;
    }
    if ([...this.model.streams.values()].some((s) => s.name.toLowerCase() === name.toLowerCase())) {
      error.textContent = `A channel named ${name} exists already: subscribe to it below.`;
      return;
    }
    try {
      const body = await this.api.post('/users/me/subscriptions', {
        subscriptions: [{ name, description }],
        invite_only: $('new-channel-private').checked,
      });
      $('create-channel-form').reset();
      // The answer names the channel; its ID comes with the subscription event
      // or, at the latest, from GET /get_stream_id.
      const id = await this.channelId(name);
      if (id) location.hash = hashFor({ kind: 'channel', streamId: id }, { channelName: name });
      return body;
    } catch (err) {
      error.textContent = err.message;
    }
    return null;
  }

  async channelId(name) {
    const known = [...this.model.subs.values()].find((s) => s.name.toLowerCase() === name.toLowerCase());
    if (known) return known.stream_id;
    const body = await this.api.get('/get_stream_id', { stream: name });
    return body.stream_id;
  }
}
