// The client's state: people, channels, unread messages, topics, direct
// conversations, presence, typing and the messages loaded so far. It is
// filled from POST /register and kept current by applying events; the
// views read it and never change it themselves.

import { dmKey, dmPeople, sameTopic } from './narrow.js';

export class Model {
  constructor() {
    this.reset({ user_id: 0 });
  }

  // reset replaces the whole state with a registration's answer.
  reset(state) {
    this.me = state.user_id;
    this.realmName = state.realm_name || '';
    this.users = new Map();
    for (const u of state.realm_users || []) this.users.set(u.user_id, u);
    this.subs = new Map();
    for (const s of state.subscriptions || []) this.subs.set(s.stream_id, s);
    this.streams = new Map();
    for (const s of [...(state.streams || []), ...(state.never_subscribed || []), ...(state.unsubscribed || []), ...(state.subscriptions || [])]) {
      this.streams.set(s.stream_id, { ...this.streams.get(s.stream_id), ...s });
    }
    this.unread = new Map(); // message ID -> {streamId, topic} | {dm: key}
    this.cachedCounts = null;
    this.topics = new Map(); // stream ID -> Map(folded topic -> {name, maxId})
    this.dms = new Map(); // key -> {userIds, maxId}
    const u = state.unread_msgs || {};
    for (const s of u.streams || []) {
      for (const id of s.unread_message_ids) this.unread.set(id, { streamId: s.stream_id, topic: s.topic });
      this.noteTopic(s.stream_id, s.topic, Math.max(...s.unread_message_ids));
    }
    for (const p of u.pms || []) {
      const key = dmKey([p.other_user_id ?? p.sender_id]);
      for (const id of p.unread_message_ids) this.unread.set(id, { dm: key });
    }
    for (const g of u.huddles || []) {
      const ids = g.user_ids_string.split(',').map(Number).filter((id) => id !== this.me);
      const key = dmKey(ids.length ? ids : [this.me]);
      for (const id of g.unread_message_ids) this.unread.set(id, { dm: key });
    }
    for (const c of state.recent_private_conversations || []) {
      const ids = c.user_ids.length ? [...c.user_ids].sort((a, b) => a - b) : [this.me];
      this.noteDM(ids, c.max_message_id);
    }
    this.presence = new Map();
    this.clockSkew = 0;
    this.noteServerTime(state.server_timestamp);
    this.applyPresence(state.presences || {});
    this.offlineAfter = (state.server_presence_offline_threshold_seconds || 140) * 1000;
    this.pingEvery = (state.server_presence_ping_interval_seconds || 60) * 1000;
    this.typingWait = state.server_typing_started_wait_period_milliseconds || 10000;
    this.typingStopWait = state.server_typing_stopped_wait_period_milliseconds || 5000;
    this.typingExpiry = state.server_typing_started_expiry_period_milliseconds || 15000;
    this.typing = new Map(); // conversation key -> Map(user ID -> expiry time)
    this.messages = new Map(); // message ID -> message, those loaded
    this.isAdmin = !!state.is_admin;
    this.canInvite = !!state.can_invite_others_to_realm;
    this.role = (this.users.get(this.me) || {}).role || 400;
    this.realmEmoji = state.realm_emoji || {}; // ID -> {name, source_url, deactivated}
    this.realmDescription = state.realm_description || '';
    this.settings = state.user_settings || {};
    this.mutedUsers = new Set((state.muted_users || []).map((m) => m.id));
    this.topicPolicy = new Map(); // "stream:folded topic" -> 1 muted, 2 unmuted, 3 followed
    for (const t of state.user_topics || []) this.setTopicPolicy(t.stream_id, t.topic_name, t.visibility_policy);
    this.maxMessageLength = state.max_message_length || 10000;
    this.maxTopicLength = state.max_topic_length || 60;
  }

  userName(id) {
    const u = this.users.get(id);
    return u ? u.full_name : `User ${id}`;
  }

  channelName(id) {
    const s = this.streams.get(id) || this.subs.get(id);
    return s ? s.name : `channel ${id}`;
  }

  noteTopic(streamId, name, maxId) {
    let m = this.topics.get(streamId);
    if (!m) this.topics.set(streamId, (m = new Map()));
    const key = String(name).toLowerCase();
    const t = m.get(key);
    if (!t || maxId >= t.maxId) m.set(key, { name, maxId: Math.max(maxId, t ? t.maxId : 0) });
  }

  noteDM(userIds, maxId) {
    const key = dmKey(userIds);
    const c = this.dms.get(key);
    if (!c || maxId > c.maxId) this.dms.set(key, { userIds, maxId });
  }

  // topicsOf lists a channel's known topics, newest first.
  topicsOf(streamId) {
    return [...(this.topics.get(streamId) || new Map()).values()].sort((a, b) => b.maxId - a.maxId);
  }

  // remember stores loaded messages and what they tell about topics and
  // conversations.
  remember(messages) {
    for (const m of messages) {
      this.messages.set(m.id, m);
      if (m.type === 'stream') this.noteTopic(m.stream_id, m.subject, m.id);
      else this.noteDM(dmPeople(m, this.me), m.id);
    }
  }

  unreadCount(pred) {
    let n = 0;
    for (const where of this.unread.values()) if (pred(where)) n++;
    return n;
  }

  channelUnread(streamId) {
    return this.unreadCount((w) => w.streamId === streamId);
  }

  topicUnread(streamId, topic) {
    return this.unreadCount((w) => w.streamId === streamId && sameTopic(w.topic, topic));
  }

  dmUnread(key) {
    return this.unreadCount((w) => w.dm === key);
  }

  setTopicPolicy(streamId, topic, policy) {
    const key = `${streamId}:${String(topic).toLowerCase()}`;
    if (policy) this.topicPolicy.set(key, policy);
    else this.topicPolicy.delete(key);
  }

  policyOf(streamId, topic) {
    return this.topicPolicy.get(`${streamId}:${String(topic).toLowerCase()}`) || 0;
  }

  channelMuted(streamId) {
    const sub = this.subs.get(streamId);
    return !!(sub && sub.is_muted);
  }

  // topicMuted: the topic's own policy, else its channel's.
  topicMuted(streamId, topic) {
    const p = this.policyOf(streamId, topic);
    if (p === 1) return true;
    if (p === 2 || p === 3) return false;
    return this.channelMuted(streamId);
  }

  // counts is every unread count in one pass: by channel and by topic
  // (muted topics left out of their channel's count), by direct
  // conversation, and the total the title shows.
  counts() {
    if (!this.cachedCounts) this.cachedCounts = this.countAll();
    return this.cachedCounts;
  }

  countAll() {
    const channels = new Map();
    const topics = new Map();
    const dms = new Map();
    const muted = new Map();
    let total = 0;
    for (const w of this.unread.values()) {
      if (w.dm !== undefined) {
        dms.set(w.dm, (dms.get(w.dm) || 0) + 1);
        total++;
        continue;
      }
      const tk = `${w.streamId}:${String(w.topic).toLowerCase()}`;
      topics.set(tk, (topics.get(tk) || 0) + 1);
      let m = muted.get(tk);
      if (m === undefined) muted.set(tk, (m = this.topicMuted(w.streamId, w.topic)));
      if (m || !this.subs.has(w.streamId)) continue;
      channels.set(w.streamId, (channels.get(w.streamId) || 0) + 1);
      total++;
    }
    return {
      channel: (id) => channels.get(id) || 0,
      topic: (id, t) => topics.get(`${id}:${String(t).toLowerCase()}`) || 0,
      dm: (key) => dms.get(key) || 0,
      total,
    };
  }

  isUnread(id) {
    return this.unread.has(id);
  }

  // noteServerTime keeps the difference between the server's clock and
  // ours, so that presence ages are measured on the server's clock.
  noteServerTime(seconds) {
    if (seconds) this.clockSkew = seconds * 1000 - Date.now();
  }

  // online: 'active', 'idle' or 'offline' from the last presence report.
  online(userId) {
    const p = this.presence.get(userId);
    if (!p) return 'offline';
    const now = Date.now() + this.clockSkew;
    if (p.active && now - p.active * 1000 < this.offlineAfter) return 'active';
    if (p.idle && now - p.idle * 1000 < this.offlineAfter) return 'idle';
    return 'offline';
  }

  // applyPresence reads presence in the modern form ({user_id: {active_timestamp,
  // idle_timestamp}}) or the legacy one ({email: {aggregated: {...}}}).
  applyPresence(presences) {
    for (const [key, p] of Object.entries(presences)) {
      let id = Number(key);
      if (!Number.isFinite(id)) {
        const u = [...this.users.values()].find((x) => x.email === key);
        if (!u) continue;
        id = u.user_id;
      }
      if ('active_timestamp' in p || 'idle_timestamp' in p) {
        this.presence.set(id, { active: p.active_timestamp, idle: p.idle_timestamp });
      } else if (p.aggregated) {
        const a = p.aggregated;
        this.presence.set(id, a.status === 'active' ? { active: a.timestamp, idle: a.timestamp } : { active: 0, idle: a.timestamp });
      }
    }
  }

  // typingIn lists who is typing in a conversation (typing keys are
  // "s:<stream>:<topic>" and "d:<people>"), dropping expired entries.
  typingIn(prefix) {
    const now = Date.now();
    const names = [];
    for (const [key, who] of this.typing) {
      if (!key.startsWith(prefix)) continue;
      for (const [id, until] of who) {
        if (until < now) who.delete(id);
        else names.push(this.userName(id));
      }
    }
    return names;
  }

  // apply changes the state by one event and says what changed:
  // {sidebar, messages: [ids re-rendered], added: message, removed: [ids],
  // typing, people}.
  apply(ev) {
    const out = { sidebar: false };
    this.cachedCounts = null; // any event may change them
    switch (ev.type) {
      case 'message': {
        const m = { ...ev.message, flags: ev.flags || [] };
        this.remember([m]);
        if (!m.flags.includes('read')) this.unread.set(m.id, whereOf(m, this.me));
        // A message ends its sender's typing there.
        for (const who of this.typing.values()) who.delete(m.sender_id);
        out.sidebar = true;
        out.added = m;
        out.typing = true;
        break;
      }
      case 'update_message_flags':
        if (ev.flag !== 'read') {
          out.changed = [];
          for (const id of ev.messages) {
            const m = this.messages.get(id);
            if (!m) continue;
            const flags = (m.flags || []).filter((f) => f !== ev.flag);
            if (ev.op === 'add') flags.push(ev.flag);
            m.flags = flags;
            out.changed.push(id);
          }
        }
        if (ev.flag === 'read') {
          if (ev.op === 'add') {
            if (ev.all) this.unread.clear();
            for (const id of ev.messages) this.unread.delete(id);
          } else {
            for (const id of ev.messages) {
              const d = (ev.message_details || {})[id];
              const m = this.messages.get(id);
              if (m) this.unread.set(id, whereOf(m, this.me));
              else if (d && d.type === 'stream') this.unread.set(id, { streamId: d.stream_id, topic: d.topic });
              else if (d) this.unread.set(id, { dm: dmKey(d.user_ids.length ? [...d.user_ids].sort((a, b) => a - b) : [this.me]) });
            }
          }
          out.sidebar = true;
          out.readChanged = ev.messages;
        }
        break;
      case 'delete_message': {
        const ids = ev.message_ids || [ev.message_id];
        for (const id of ids) {
          this.unread.delete(id);
          this.messages.delete(id);
        }
        out.sidebar = true;
        out.removed = ids;
        break;
      }
      case 'update_message':
        Object.assign(out, this.applyUpdate(ev));
        out.sidebar = true;
        break;
      case 'reaction': {
        const m = this.messages.get(ev.message_id);
        if (m) {
          const same = (r) => r.emoji_code === ev.emoji_code && r.reaction_type === ev.reaction_type && (r.user_id ?? r.user?.id) === ev.user_id;
          m.reactions = (m.reactions || []).filter((r) => !same(r));
          if (ev.op === 'add') {
            m.reactions.push({ emoji_name: ev.emoji_name, emoji_code: ev.emoji_code, reaction_type: ev.reaction_type, user_id: ev.user_id });
          }
          out.changed = [m.id];
        }
        break;
      }
      case 'typing': {
        const key = ev.message_type === 'stream'
          ? `s:${ev.stream_id}:${String(ev.topic).toLowerCase()}`
          : 'd:' + dmKey(othersOf((ev.recipients || []).map((r) => r.user_id), this.me));
        let who = this.typing.get(key);
        if (!who) this.typing.set(key, (who = new Map()));
        if (ev.op === 'start') who.set(ev.sender.user_id, Date.now() + this.typingExpiry);
        else who.delete(ev.sender.user_id);
        out.typing = true;
        break;
      }
      case 'subscription':
        this.applySubscription(ev);
        out.sidebar = true;
        out.channels = true;
        break;
      case 'stream':
        if (ev.op === 'create') for (const s of ev.streams) this.streams.set(s.stream_id, s);
        if (ev.op === 'delete') {
          for (const s of ev.streams || []) this.streams.delete(s.stream_id);
          for (const id of ev.stream_ids || []) this.streams.delete(id);
        }
        if (ev.op === 'update' && this.streams.has(ev.stream_id)) this.streams.get(ev.stream_id)[ev.property] = ev.value;
        if (ev.op === 'update' && this.subs.has(ev.stream_id)) this.subs.get(ev.stream_id)[ev.property] = ev.value;
        out.sidebar = true;
        out.channels = true;
        break;
      case 'presence':
        if (ev.presences) this.applyPresence(ev.presences);
        else if (ev.presence) this.applyPresence({ [ev.user_id]: legacyToModern(ev.presence) });
        out.sidebar = true;
        break;
      case 'realm_user':
        if (ev.op === 'add') this.users.set(ev.person.user_id, ev.person);
        if (ev.op === 'update' && this.users.has(ev.person.user_id)) Object.assign(this.users.get(ev.person.user_id), ev.person);
        if (ev.op === 'remove') this.users.delete(ev.person.user_id);
        if (ev.op === 'update' && ev.person.avatar_url !== undefined) out.avatars = true;
        if (ev.person.user_id === this.me && ev.person.role !== undefined) {
          this.role = ev.person.role;
          this.isAdmin = this.role <= 200;
        }
        out.sidebar = true;
        out.people = true;
        break;
      case 'user_topic':
        this.setTopicPolicy(ev.stream_id, ev.topic_name, ev.visibility_policy);
        out.sidebar = true;
        out.policy = true;
        break;
      case 'muted_users':
        this.mutedUsers = new Set((ev.muted_users || []).map((m) => m.id));
        out.sidebar = true;
        out.mutedUsers = true;
        break;
      case 'user_settings':
        if (ev.op === 'update') this.settings[ev.property] = ev.value;
        out.settings = ev.property;
        break;
      case 'realm':
        if (ev.op === 'update' && ev.property === 'name') this.realmName = ev.value;
        if (ev.op === 'update' && ev.property === 'description') this.realmDescription = ev.value;
        if (ev.op === 'update_dict' && ev.data) {
          if (ev.data.name !== undefined) this.realmName = ev.data.name;
          if (ev.data.description !== undefined) this.realmDescription = ev.data.description;
        }
        out.sidebar = true;
        out.realm = true;
        break;
      case 'realm_emoji':
        if (ev.op === 'update') this.realmEmoji = ev.realm_emoji || {};
        out.emoji = true;
        break;
      default:
        break;
    }
    return out;
  }

  // customEmoji is a custom emoji by its ID (the reaction's emoji_code).
  customEmoji(id) {
    return this.realmEmoji[id] || null;
  }

  // applyUpdate takes an edit or a move: {changed: IDs of loaded messages
  // to redraw, moved: {ids, streamId, topic} where a move took them}.
  applyUpdate(ev) {
    const changed = [];
    let moved = null;
    const m = this.messages.get(ev.message_id);
    if (m && ev.rendered_content !== undefined) {
      m.content = ev.rendered_content;
      m.last_edit_timestamp = ev.edit_timestamp;
      changed.push(m.id);
    }
    // A topic or channel move changes where the messages are.
    const newTopic = ev.subject ?? ev.topic;
    const newStream = ev.new_stream_id;
    if (newTopic !== undefined || newStream !== undefined) {
      for (const id of ev.message_ids || []) {
        const mm = this.messages.get(id);
        if (mm) {
          if (newTopic !== undefined) mm.subject = newTopic;
          if (newStream !== undefined) mm.stream_id = newStream;
          mm.last_edit_timestamp = ev.edit_timestamp;
          changed.push(id);
        }
        const w = this.unread.get(id);
        if (w && w.streamId !== undefined) {
          this.unread.set(id, { streamId: newStream ?? w.streamId, topic: newTopic ?? w.topic });
        }
      }
      this.noteTopic(newStream ?? ev.stream_id, newTopic ?? ev.orig_subject, Math.max(...(ev.message_ids || [0])));
      moved = { ids: ev.message_ids || [], streamId: newStream ?? ev.stream_id, topic: newTopic ?? ev.orig_subject };
    }
    return { changed, moved };
  }

  applySubscription(ev) {
    if (ev.op === 'add') {
      for (const s of ev.subscriptions) {
        this.subs.set(s.stream_id, s);
        this.streams.set(s.stream_id, { ...this.streams.get(s.stream_id), ...s });
      }
    } else if (ev.op === 'remove') {
      for (const s of ev.subscriptions) {
        this.subs.delete(s.stream_id);
        for (const [id, w] of this.unread) if (w.streamId === s.stream_id) this.unread.delete(id);
      }
    } else if (ev.op === 'update' && this.subs.has(ev.stream_id)) {
      this.subs.get(ev.stream_id)[ev.property] = ev.value;
      if (ev.property === 'in_home_view') this.subs.get(ev.stream_id).is_muted = !ev.value;
    }
  }
}

function othersOf(ids, me) {
  const others = ids.filter((id) => id !== me).sort((a, b) => a - b);
  return others.length ? others : [me];
}

// whereOf is the unread entry of a message.
function whereOf(m, me) {
  return m.type === 'stream' ? { streamId: m.stream_id, topic: m.subject } : { dm: dmKey(dmPeople(m, me)) };
}

function legacyToModern(presence) {
  let active = 0;
  let idle = 0;
  for (const p of Object.values(presence)) {
    if (p.status === 'active') active = Math.max(active, p.timestamp);
    idle = Math.max(idle, p.timestamp);
  }
  return { active_timestamp: active, idle_timestamp: idle };
}
