// Desktop notifications (the browser's Notification API) for what the
// person asked to hear about in their notification settings: direct
// messages and mentions, followed topics, channels with notifications on;
// never their own messages, muted senders or muted topics. They show when
// the message is out of sight: the page hidden or not focused, or another
// conversation open. The permission is asked for once, from a button the
// person presses (a banner after logging in, or the settings), never
// unprompted.

import { $, messageText } from './dom.js';
import { hashFor, dmPeople } from './narrow.js';

const DISMISSED = 'teamchat.notificationsDismissed';

export class DesktopNotifications {
  constructor(model, { isShown }) {
    this.model = model;
    this.isShown = isShown;
    $('notifications-enable').addEventListener('click', () => this.ask());
    $('notifications-later').addEventListener('click', () => {
      $('ask-notifications').hidden = true;
      try { localStorage.setItem(DISMISSED, '1'); } catch { /* asked again next time */ }
    });
  }

  get supported() {
    return typeof window.Notification === 'function';
  }

  // offer shows the banner when notifications are wanted, possible and
  // not yet allowed or refused.
  offer() {
    const s = this.model.settings;
    const wanted = s.enable_desktop_notifications !== false || s.enable_stream_desktop_notifications || s.enable_followed_topic_desktop_notifications;
    let dismissed = false;
    try { dismissed = localStorage.getItem(DISMISSED) === '1'; } catch { /* not dismissed */ }
    $('ask-notifications').hidden = !(this.supported && wanted && Notification.permission === 'default' && !dismissed);
  }

  hide() {
    $('ask-notifications').hidden = true;
  }

  async ask() {
    $('ask-notifications').hidden = true;
    if (!this.supported) return 'unsupported';
    try {
      return await Notification.requestPermission();
    } catch {
      return Notification.permission;
    }
  }

  // wants tells whether the settings ask for a notification of m.
  wants(m) {
    const model = this.model;
    const s = model.settings;
    const flags = m.flags || [];
    if (m.sender_id === model.me || model.mutedUsers.has(m.sender_id)) return false;
    const personal = s.enable_desktop_notifications !== false;
    if (m.type === 'private') return personal;
    if (flags.includes('mentioned') || flags.includes('has_alert_word')) return personal;
    if (model.topicMuted(m.stream_id, m.subject)) return false;
    if (flags.includes('wildcard_mentioned')) {
      const sub = model.subs.get(m.stream_id) || {};
      if (personal && (sub.wildcard_mentions_notify ?? s.wildcard_mentions_notify ?? true)) return true;
    }
    if (model.policyOf(m.stream_id, m.subject) === 3 && s.enable_followed_topic_desktop_notifications) return true;
    const sub = model.subs.get(m.stream_id);
    if (!sub) return false;
    return sub.desktop_notifications ?? !!s.enable_stream_desktop_notifications;
  }

  // message shows a notification for a new message when it is wanted
  // and out of sight.
  message(m) {
    if (!this.supported || Notification.permission !== 'granted' || !this.wants(m)) return;
    const inSight = document.visibilityState === 'visible' && document.hasFocus() && this.isShown(m);
    if (inSight) return;
    const model = this.model;
    const title = m.type === 'private'
      ? (m.display_recipient.length > 2 ? `${m.sender_full_name} (to ${dmPeople(m, model.me).map((id) => model.userName(id)).join(', ')})` : m.sender_full_name)
      : `#${model.channelName(m.stream_id)} › ${m.subject}`;
    const text = model.settings.pm_content_in_desktop_notifications === false ? 'New message' : messageText(m.content);
    const body = m.type === 'private' ? text : `${m.sender_full_name}: ${text}`;
    const where = m.type === 'private'
      ? hashFor({ kind: 'dm', userIds: dmPeople(m, model.me) })
      : hashFor({ kind: 'topic', streamId: m.stream_id, topic: m.subject }, { channelName: model.channelName(m.stream_id) });
    try {
      const n = new Notification(title, { body: body.slice(0, 300), tag: String(m.id), silent: false });
      n.onclick = () => {
        window.focus();
        location.hash = where;
        n.close();
      };
    } catch {
      // Some browsers allow notifications from a service worker only.
    }
  }
}
