// The message box: where a message goes follows the open view (its channel
// and topic, or its people; a channel picker where the view has none), the
// content is the reference's Markdown, Enter sends and Shift+Enter starts
// a new line. While the person types, the others in the conversation are
// told (POST /typing), as the reference's timing asks.

import { $, h, clear } from './dom.js';
import { hashFor, sameTopic } from './narrow.js';

export class Compose {
  constructor(api, model, { notify }) {
    this.api = api;
    this.model = model;
    this.notify = notify;
    this.view = { kind: 'all' };
    this.form = $('compose');
    this.content = $('compose-content');
    this.topic = $('compose-topic');
    this.channel = $('compose-channel');
    this.error = $('compose-error');
    this.typingTarget = null; // the conversation told that we type
    this.lastStart = 0;
    this.stopTimer = null;
    this.form.addEventListener('submit', (e) => { e.preventDefault(); this.send(); });
    this.content.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.send();
      }
    });
    this.content.addEventListener('input', () => this.typed());
    this.topic.addEventListener('input', () => this.stopTyping());
    this.channel.addEventListener('change', () => this.stopTyping());
  }

  // show fits the box to a view.
  show(view) {
    this.stopTyping();
    const same = JSON.stringify(view) === JSON.stringify(this.view);
    this.view = view;
    this.error.textContent = '';
    const label = $('compose-to-label');
    const writable = view.kind !== 'channels';
    this.form.hidden = !writable;
    if (!writable) return;
    const pick = view.kind === 'all' || view.kind === 'search';
    const dm = view.kind === 'dm';
    this.channel.hidden = !pick;
    this.topic.hidden = dm;
    if (pick) this.fillChannels();
    if (view.kind === 'topic') this.topic.value = view.topic;
    else if (!same) this.topic.value = '';
    if (dm) {
      label.textContent = 'To: ' + view.userIds.map((id) => this.model.userName(id)).join(', ');
      this.content.placeholder = `Message ${view.userIds.map((id) => this.model.userName(id)).join(', ')}`;
    } else if (pick) {
      label.textContent = 'To: #';
      this.content.placeholder = 'Message (Markdown; Enter sends, Shift+Enter for a new line)';
    } else {
      const name = this.model.channelName(view.streamId);
      label.textContent = `To: #${name}`;
      this.content.placeholder = `Message #${name}`;
    }
  }

  // fillChannels lists the subscribed channels in the picker.
  fillChannels() {
    const keep = this.channel.value;
    clear(this.channel);
    for (const s of [...this.model.subs.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      this.channel.append(h('option', { value: s.stream_id }, s.name));
    }
    if (keep && [...this.channel.options].some((o) => o.value === keep)) this.channel.value = keep;
  }

  // target is where the message goes: {streamId, topic} or {userIds}.
  target() {
    const v = this.view;
    if (v.kind === 'dm') return { userIds: v.userIds };
    const streamId = v.kind === 'channel' || v.kind === 'topic' ? v.streamId : Number(this.channel.value);
    if (!streamId) return null;
    return { streamId, topic: this.topic.value.trim() };
  }

  async send() {
    const content = this.content.value;
    const to = this.target();
    this.error.textContent = '';
    if (!content.trim()) return;
    if (!to) {
      this.error.textContent = 'Pick a channel first (or create one).';
      return;
    }
    const params = { content, read_by_sender: true };
    if (to.userIds) Object.assign(params, { type: 'direct', to: to.userIds });
    else Object.assign(params, { type: 'channel', to: to.streamId, topic: to.topic });
    this.stopTyping();
    // The box empties at once; a failed send puts the text back.
    this.content.value = '';
    try {
      await this.api.post('/messages', params);
      // A new topic in a channel view: follow the conversation there.
      if (this.view.kind === 'topic' && to.topic && !sameTopic(to.topic, this.view.topic)) {
        location.hash = hashFor({ kind: 'topic', streamId: to.streamId, topic: to.topic }, { channelName: this.model.channelName(to.streamId) });
      }
    } catch (err) {
      if (!this.content.value) this.content.value = content;
      this.error.textContent = err.message;
    }
  }

  typingParams(t, op) {
    return t.userIds ? { type: 'direct', op, to: t.userIds } : { type: 'stream', op, stream_id: t.streamId, topic: t.topic };
  }

  typed() {
    const t = this.target();
    if (!t || !this.content.value.trim()) {
      this.stopTyping();
      return;
    }
    const now = Date.now();
    if (!this.typingTarget || JSON.stringify(this.typingTarget) !== JSON.stringify(t) || now - this.lastStart > this.model.typingWait) {
      if (this.typingTarget && JSON.stringify(this.typingTarget) !== JSON.stringify(t)) this.stopTyping();
      this.typingTarget = t;
      this.lastStart = now;
      this.api.post('/typing', this.typingParams(t, 'start')).catch(() => {});
    }
    clearTimeout(this.stopTimer);
    this.stopTimer = setTimeout(() => this.stopTyping(), this.model.typingStopWait);
  }

  stopTyping() {
    clearTimeout(this.stopTimer);
    const t = this.typingTarget;
    this.typingTarget = null;
    this.lastStart = 0;
    if (t) this.api.post('/typing', this.typingParams(t, 'stop')).catch(() => {});
  }
}
