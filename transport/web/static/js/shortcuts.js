// Keyboard shortcuts, the reference's: r (or Enter on a message) replies,
// c starts a topic, x a direct message, n goes to the next unread topic,
// i to the Inbox, / to search, j and k (or the arrows on a message) move
// between messages, Escape closes what is open or leaves the message box,
// ? lists them. They act only when the focus is not in a field.

import { $ } from './dom.js';
import { closePopover } from './menu.js';

export function installShortcuts({ messages, compose, openDM, nextUnread }) {
  const help = $('help-dialog');
  $('help-close').addEventListener('click', () => help.close());
  $('help-button').addEventListener('click', () => help.showModal());

  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    if ($('app-view').hidden) return;
    const t = e.target;
    const typing = t instanceof Element && t.matches('input, textarea, select, [contenteditable]');
    if (e.key === 'Escape') {
      if (closePopover(true)) {
        e.preventDefault();
      } else if (typing && t.id === 'compose-content' && !t.value) {
        // Leave the box for the messages.
        e.preventDefault();
        t.blur();
        focusMessage(messages, 0);
      }
      return;
    }
    if (typing || document.querySelector('dialog[open]')) return;
    const onMessage = t instanceof Element && t.matches('#message-list article');
    let done = true;
    switch (e.key) {
      case 'r': {
        const m = messages.selected();
        if (m) compose.replyTo(m);
        else done = false;
        break;
      }
      case 'Enter':
        if (onMessage) compose.replyTo(messages.selected());
        else done = false;
        break;
      case 'c':
        compose.newTopic();
        break;
      case 'x':
        openDM();
        break;
      case 'n':
        nextUnread();
        break;
      case 'i':
        location.hash = '#inbox';
        break;
      case '/':
        $('search-input').focus();
        break;
      case '?':
        help.showModal();
        break;
      case 'j':
        focusMessage(messages, 1);
        break;
      case 'k':
        focusMessage(messages, -1);
        break;
      case 'ArrowDown':
      case 'ArrowUp':
        if (onMessage) focusMessage(messages, e.key === 'ArrowDown' ? 1 : -1);
        else done = false;
        break;
      default:
        done = false;
    }
    if (done) e.preventDefault();
  });
}

// focusMessage moves the focus to the next (1) or previous (-1) message,
// or to the last one (0, or when none has it).
function focusMessage(messages, step) {
  const all = [...messages.list.children];
  if (!all.length) return;
  const at = all.indexOf(document.activeElement && document.activeElement.closest && document.activeElement.closest('#message-list article'));
  const i = at < 0 || step === 0 ? all.length - 1 : Math.max(0, Math.min(all.length - 1, at + step));
  all[i].focus();
  all[i].scrollIntoView({ block: 'nearest' });
}
