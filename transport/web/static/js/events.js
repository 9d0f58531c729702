// The event loop: POST /register for an event queue and the initial state,
// then long-poll GET /events with the last event ID seen. When the server
// answers BAD_EVENT_QUEUE_ID (the queue was collected, or lost with a
// restart) it registers again, and the state is reloaded from the new
// answer, since events were lost in between. Network errors are retried
// with a growing pause.

import { ApiError } from './api.js';

export const EVENT_TYPES = [
  'message', 'update_message', 'delete_message', 'reaction', 'typing',
  'update_message_flags', 'subscription', 'stream', 'presence', 'realm_user',
  'realm_emoji', 'user_topic', 'muted_users', 'user_settings', 'realm',
];

const FETCH_TYPES = [
  'message', 'update_message_flags', 'subscription', 'stream', 'presence',
  'realm_user', 'recent_private_conversations', 'realm', 'realm_emoji',
  'user_topic', 'muted_users', 'user_settings',
];

export class EventLoop {
  // onRegister(state) gets each registration's answer, onEvent(event) each
  // event, onStatus(text) the connection's state ('' when connected).
  constructor(api, { onRegister, onEvent, onStatus }) {
    this.api = api;
    this.onRegister = onRegister;
    this.onEvent = onEvent;
    this.onStatus = onStatus;
    this.abort = null;
    this.queueId = null;
    this.running = false;
  }

  start() {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    this.run(this.abort.signal);
  }

  // stop ends polling and deletes the queue (best effort).
  stop() {
    this.running = false;
    if (this.abort) this.abort.abort();
    if (this.queueId) {
      this.api.del('/events', { queue_id: this.queueId }).catch(() => {});
    }
    this.queueId = null;
  }

  async run(signal) {
    let pause = 1000;
    while (!signal.aborted) {
      let state;
      try {
        state = await this.api.post('/register', {
          apply_markdown: true,
          client_gravatar: true,
          slim_presence: true,
          event_types: EVENT_TYPES,
          fetch_event_types: FETCH_TYPES,
          client_capabilities: {
            notification_settings_null: true,
            bulk_message_deletion: true,
            user_avatar_url_field_optional: true,
            stream_typing_notifications: true,
            user_settings_object: true,
            simplified_presence_events: true,
          },
        }, { signal });
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof ApiError && err.status === 401) {
          this.onStatus('logged-out');
          return;
        }
        this.onStatus('Reconnecting…');
        await sleep(pause, signal);
        pause = Math.min(pause * 2, 30000);
        continue;
      }
      if (signal.aborted) return;
      pause = 1000;
      this.queueId = state.queue_id;
      this.onStatus('');
      this.onRegister(state);
      const gone = await this.poll(state.queue_id, state.last_event_id, signal);
      if (gone === 'logged-out') return;
    }
  }

  // poll long-polls one queue until it is gone ('queue-gone'), the
  // credentials stop working ('logged-out') or the loop stops.
  async poll(queueId, lastEventId, signal) {
    let last = lastEventId;
    let pause = 1000;
    while (!signal.aborted) {
      let body;
      try {
        body = await this.api.get('/events', { queue_id: queueId, last_event_id: String(last) }, { signal });
      } catch (err) {
        if (signal.aborted) return 'stopped';
        if (err instanceof ApiError && err.code === 'BAD_EVENT_QUEUE_ID') return 'queue-gone';
        if (err instanceof ApiError && err.status === 400) {
          // The same poll would be refused again: start over with a new queue.
          console.warn('GET /events:', err.message);
          this.api.del('/events', { queue_id: queueId }).catch(() => {});
          return 'queue-gone';
        }
        if (err instanceof ApiError && err.status === 401) {
          this.onStatus('logged-out');
          return 'logged-out';
        }
        this.onStatus('Reconnecting…');
        await sleep(pause, signal);
        pause = Math.min(pause * 2, 30000);
        continue;
      }
      if (signal.aborted) return 'stopped';
      if (pause !== 1000) this.onStatus('');
      pause = 1000;
      for (const ev of body.events || []) {
        last = Math.max(last, ev.id);
        if (ev.type === 'heartbeat') continue;
        try {
          this.onEvent(ev);
        } catch (err) {
          console.error('event', ev.type, err);
        }
      }
    }
    return 'stopped';
  }
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}
