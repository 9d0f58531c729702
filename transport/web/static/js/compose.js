// The message box. Where a message goes follows the open view (its
// channel and topic, or its people; a channel picker where the view has
// none) until the person replies to a message, which points the box at
// that message's conversation. The content is the reference's Markdown:
// Enter sends, Shift+Enter starts a new line, Up in an empty box edits
// one's last message. Topics, @-mentions, #channels and :emoji: are
// completed as they are typed; files are attached with a button, pasted
// or dropped, and uploaded with their progress shown. What is written is
// kept per view (a draft) while the person looks elsewhere. While the
// person types, the others in the conversation are told (POST /typing),
// as the reference's timing asks.

import { $, h, reconcile } from './dom.js';
import { hashFor, sameTopic } from './narrow.js';
import { Typeahead, rank } from './typeahead.js';
import { Drafts } from './drafts.js';
import { emojiSuggestions } from './emoji.js';

export class Compose {
  constructor(api, model, { notify, uploads, loadTopics, onEditLast }) {
    this.api = api;
    this.model = model;
    this.notify = notify;
    this.uploads = uploads;
    this.loadTopics = loadTopics;
    this.onEditLast = onEditLast;
    this.view = { kind: 'all' };
    this.dm = null; // the people of a direct message, when the box writes one
    this.drafts = new Drafts();
    this.form = $('compose');
    this.content = $('compose-content');
    this.topic = $('compose-topic');
    this.channel = $('compose-channel');
    this.error = $('compose-error');
    this.typingTarget = null; // the conversation told that we type
    this.lastStart = 0;
    this.stopTimer = null;
    this.uploading = 0;
    this.form.addEventListener('submit', (e) => { e.preventDefault(); this.send(); });
    this.content.addEventListener('keydown', (e) => this.onKey(e));
    this.content.addEventListener('input', () => { this.typed(); this.saveDraft(); });
    this.topic.addEventListener('input', () => { this.stopTyping(); this.topicHint(); this.saveDraft(); });
    this.channel.addEventListener('change', () => {
      this.stopTyping();
      this.loadTopics(Number(this.channel.value));
      this.fitTo();
      this.saveDraft();
    });
    $('compose-cancel-dm').addEventListener('click', () => {
      this.dm = null;
      this.fitTo();
      this.content.focus();
    });
    this.content.addEventListener('paste', (e) => {
      const files = [...(e.clipboardData ? e.clipboardData.files : [])];
      if (files.length) {
        e.preventDefault();
        this.attach(files);
      }
    });
    const file = $('compose-file');
    $('compose-attach').addEventListener('click', () => file.click());
    file.addEventListener('change', () => {
      this.attach([...file.files]);
      file.value = '';
    });
    const zone = $('messages-view');
    zone.addEventListener('dragover', (e) => {
      if (![...e.dataTransfer.types].includes('Files') || this.form.hidden) return;
      e.preventDefault();
      this.form.classList.add('dropping');
    });
    zone.addEventListener('dragleave', (e) => { if (!zone.contains(e.relatedTarget)) this.form.classList.remove('dropping'); });
    zone.addEventListener('drop', (e) => {
      this.form.classList.remove('dropping');
      const files = [...(e.dataTransfer ? e.dataTransfer.files : [])];
      if (!files.length || this.form.hidden) return;
      e.preventDefault();
      this.attach(files);
    });
    this.contentAhead = new Typeahead(this.content, (f) => this.suggestContent(f));
    this.topicAhead = new Typeahead(this.topic, (f) => this.suggestTopic(f), {
      onApplied: () => this.content.focus(),
    });
  }

  onKey(e) {
    if (e.isComposing) return;
    if (e.key === 'Enter' && !e.shiftKey && !e.ctrlKey && !e.altKey) {
      e.preventDefault();
      this.send();
    } else if (e.key === 'ArrowUp' && !this.content.value && !e.shiftKey) {
      if (this.onEditLast()) e.preventDefault();
    } else if (e.key === 'Escape' && this.dm && this.view.kind !== 'dm' && !this.content.value) {
      this.dm = null;
      this.fitTo();
    }
  }

  // show fits the box to a view, with the view's draft.
  show(view) {
    this.stopTyping();
    this.saveDraft();
    this.view = view;
    this.error.textContent = '';
    const writable = view.kind !== 'channels' && view.kind !== 'inbox' && view.kind !== 'recent' && view.kind !== 'settings';
    this.form.hidden = !writable;
    if (!writable) return;
    this.fillChannels();
    const d = this.drafts.get(view);
    this.dm = view.kind === 'dm' ? view.userIds : (d && d.dm) || null;
    if (view.kind === 'channel' || view.kind === 'topic') this.channel.value = String(view.streamId);
    else if (d && d.streamId) this.channel.value = String(d.streamId);
    this.topic.value = view.kind === 'topic' ? view.topic : (d && d.topic) || '';
    this.content.value = (d && d.content) || '';
    if (view.kind === 'all' || view.kind === 'search') this.loadTopics(Number(this.channel.value));
    this.fitTo();
  }

  // replyTo points the box at a message's conversation and puts the
  // focus in it.
  replyTo(m) {
    if (this.form.hidden) return;
    if (m.type === 'stream') {
      this.dm = null;
      this.channel.value = String(m.stream_id);
      this.topic.value = m.subject;
      this.loadTopics(m.stream_id);
    } else {
      const others = m.display_recipient.map((u) => u.id).filter((id) => id !== this.model.me).sort((a, b) => a - b);
      this.dm = others.length ? others : [this.model.me];
    }
    this.fitTo();
    this.saveDraft();
    this.focusEnd();
  }

  // newTopic points the box at the open channel (or the picked one) with
  // an empty topic, the focus in the topic.
  newTopic() {
    if (this.form.hidden) return;
    this.dm = null;
    this.topic.value = '';
    this.fitTo();
    this.topic.focus();
  }

  // insert adds text at the caret (a quote, an upload's link).
  insert(text) {
    const el = this.content;
    const start = el.selectionStart ?? el.value.length;
    const end = el.selectionEnd ?? start;
    el.value = el.value.slice(0, start) + text + el.value.slice(end);
    const caret = start + text.length;
    el.setSelectionRange(caret, caret);
    this.saveDraft();
  }

  focusEnd() {
    this.content.focus();
    const n = this.content.value.length;
    this.content.setSelectionRange(n, n);
  }

  // fitTo shows the fields of the target: the channel picker where the
  // view does not fix the channel, the topic for channels, the people for
  // a direct message.
  fitTo() {
    const v = this.view;
    const label = $('compose-to-label');
    const fixed = (v.kind === 'channel' || v.kind === 'topic') && this.channel.value === String(v.streamId);
    this.channel.hidden = !!this.dm || fixed;
    this.topic.hidden = !!this.dm;
    $('compose-cancel-dm').hidden = !this.dm || v.kind === 'dm';
    if (this.dm) {
      const names = this.dm.map((id) => this.model.userName(id)).join(', ');
      label.textContent = `To: ${names}`;
      this.content.placeholder = `Message ${names}`;
    } else if (fixed) {
      const name = this.model.channelName(v.streamId);
      label.textContent = `To: #${name}`;
      this.content.placeholder = `Message #${name}`;
    } else {
      label.textContent = 'To: #';
      this.content.placeholder = 'Message (Markdown; Enter sends, Shift+Enter for a new line)';
    }
    this.topicHint();
  }

  // topicHint says when the topic typed is a new one (a typo would
  // otherwise start a topic unnoticed).
  topicHint() {
    const hint = $('compose-topic-hint');
    const streamId = Number(this.channel.value);
    const t = this.topic.value.trim();
    const known = this.model.topicsOf(streamId).some((x) => sameTopic(x.name, t));
    hint.textContent = !this.dm && t && !known ? 'New topic' : '';
  }

  // fillChannels lists the subscribed channels in the picker (the options
  // of unchanged channels stay, the choice too).
  fillChannels() {
    const subs = [...this.model.subs.values()].sort((a, b) => a.name.localeCompare(b.name));
    const keep = this.channel.value;
    reconcile(this.channel, subs.map((s) => ({ key: `c${s.stream_id}`, sig: s.name, build: () => h('option', { value: s.stream_id }, s.name) })));
    if (keep && [...this.channel.options].some((o) => o.value === keep)) this.channel.value = keep;
  }

  // target is where the message goes: {streamId, topic} or {userIds}.
  target() {
    if (this.dm) return { userIds: this.dm };
    const streamId = Number(this.channel.value);
    if (!streamId) return null;
    return { streamId, topic: this.topic.value.trim() };
  }

  saveDraft() {
    if (this.form.hidden) return;
    const streamId = Number(this.channel.value) || 0;
    this.drafts.set(this.view, { content: this.content.value, topic: this.topic.value, streamId, dm: this.view.kind === 'dm' ? null : this.dm });
  }

  async send() {
    const content = this.content.value;
    const to = this.target();
    this.error.textContent = '';
    if (!content.trim()) return;
    if (this.uploading) {
      this.error.textContent = 'Wait for the files to finish uploading.';
      return;
    }
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
    this.saveDraft();
    try {
      await this.api.post('/messages', params);
      // A new topic in a topic view: follow the conversation there.
      if (this.view.kind === 'topic' && to.topic && !sameTopic(to.topic, this.view.topic) && to.streamId === this.view.streamId) {
        location.hash = hashFor({ kind: 'topic', streamId: to.streamId, topic: to.topic }, { channelName: this.model.channelName(to.streamId) });
      }
      this.topicHint();
    } catch (err) {
      if (!this.content.value) this.content.value = content;
      this.saveDraft();
      this.error.textContent = err.message;
    }
  }

  // attach uploads files one after the other, each with a placeholder in
  // the text that becomes its link, and its progress shown.
  async attach(files) {
    for (const file of files) {
      const name = file.name || 'pasted image.png';
      const placeholder = `[Uploading ${name}…]()`;
      this.insert((this.content.value && !/\s$/.test(this.content.value.slice(0, this.content.selectionStart)) ? ' ' : '') + placeholder + ' ');
      const bar = h('progress', { max: '100', value: '0', 'aria-label': `Uploading ${name}` });
      const row = h('li', {}, h('span', {}, name), bar);
      $('compose-uploads').append(row);
      this.uploading++;
      try {
        const got = await this.uploads.upload(file, (f) => { bar.value = Math.round(f * 100); });
        const link = `[${got.filename.replace(/[[\]]/g, '')}](${got.url})`;
        this.content.value = this.content.value.replace(placeholder, link);
      } catch (err) {
        this.content.value = this.content.value.replace(placeholder, '');
        this.error.textContent = `Could not upload ${name}: ${err.message}`;
      } finally {
        this.uploading--;
        row.remove();
        this.saveDraft();
      }
    }
    this.content.focus();
  }

  // suggestContent offers people after "@", channels after "#" and emoji
  // after ":" and two letters.
  suggestContent(field) {
    const before = field.value.slice(0, field.selectionStart);
    let m = /(?:^|[\s(])@(\*\*)?([^\n@*]{0,40})$/.exec(before);
    if (m) {
      const q = m[2];
      const from = before.length - q.length - 1 - (m[1] ? 2 : 0);
      const people = [...this.model.users.values()].filter((u) => u.is_active !== false)
        .map((u) => ({ u, r: best(rank(u.full_name, q), u.email && q.length > 1 ? rank(u.email, q) : -1) }))
        .filter((x) => x.r >= 0)
        .sort((a, b) => a.r - b.r || a.u.full_name.localeCompare(b.u.full_name));
      const clash = (u) => [...this.model.users.values()].filter((x) => x.full_name === u.full_name).length > 1;
      return {
        from, to: before.length,
        items: people.map(({ u }) => ({
          key: `u${u.user_id}`, label: u.full_name, detail: u.email || '',
          apply: () => `@**${u.full_name}${clash(u) ? `|${u.user_id}` : ''}** `,
        })),
      };
    }
    m = /(?:^|[\s(])#(\*\*)?([^\n#*>]{0,40})$/.exec(before);
    if (m) {
      const q = m[2];
      const from = before.length - q.length - 1 - (m[1] ? 2 : 0);
      const chans = [...this.model.streams.values()].filter((s) => !s.is_archived)
        .map((s) => ({ s, r: rank(s.name, q) })).filter((x) => x.r >= 0)
        .sort((a, b) => a.r - b.r || a.s.name.localeCompare(b.s.name));
      return { from, to: before.length, items: chans.map(({ s }) => ({ key: `c${s.stream_id}`, label: `#${s.name}`, apply: () => `#**${s.name}** ` })) };
    }
    m = /(?:^|[\s(]):([a-z0-9_+-]{2,})$/i.exec(before);
    if (m) {
      const q = m[1].toLowerCase();
      return { from: before.length - q.length - 1, to: before.length, items: emojiSuggestions(q, this.model) };
    }
    return null;
  }

  // suggestTopic offers the channel's topics that contain what is typed.
  suggestTopic(field) {
    const streamId = Number(this.channel.value);
    const q = field.value.trim();
    const topics = this.model.topicsOf(streamId)
      .map((t) => ({ t, r: rank(t.name, q) })).filter((x) => x.r >= 0)
      .sort((a, b) => a.r - b.r || b.t.maxId - a.t.maxId);
    if (topics.length === 1 && sameTopic(topics[0].t.name, q)) return null;
    return { from: 0, to: field.value.length, items: topics.map(({ t }) => ({ key: `t${t.name}`, label: t.name, apply: () => t.name })) };
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

// best is the best of ranks (the lowest that is not -1), or -1.
function best(...ranks) {
  const ok = ranks.filter((r) => r >= 0);
  return ok.length ? Math.min(...ok) : -1;
}
