// The typing line: who is typing in the open conversation, as the
// typing events told (entries expire on their own, so the line is
// redrawn every second while it names anyone).

import { $ } from './dom.js';
import { dmKey } from './narrow.js';

export class TypingLine {
  // view returns the open view.
  constructor(model, view) {
    this.model = model;
    this.view = view;
    this.timer = null;
  }

  render() {
    const view = this.view();
    let prefix = null;
    if (view.kind === 'topic') prefix = `s:${view.streamId}:${view.topic.toLowerCase()}`;
    if (view.kind === 'channel') prefix = `s:${view.streamId}:`;
    if (view.kind === 'dm') prefix = 'd:' + dmKey(view.userIds);
    const names = prefix ? this.model.typingIn(prefix) : [];
    const text = names.length === 0 ? ''
      : names.length === 1 ? `${names[0]} is typing…`
        : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} are typing…`;
    if ($('typing').textContent !== text) $('typing').textContent = text;
    clearInterval(this.timer);
    if (names.length) this.timer = setInterval(() => this.render(), 1000);
  }

  clear() {
    clearInterval(this.timer);
    $('typing').textContent = '';
  }
}
