// Views and their addresses. A view is what the main column shows: all
// messages, a channel, a topic, a direct conversation, search results or
// the channel directory. Its address is the page's hash, in the
// reference's form (#narrow/channel/1-general/topic/hello), so the links
// in rendered messages, the back button and bookmarks work.

// encodeHashComponent and decodeHashComponent are the reference's hash
// encoding: URI encoding with "%" written as ".".
export function encodeHashComponent(s) {
  const repl = { '%': '.', '(': '.28', ')': '.29', '.': '.2E' };
  return encodeURIComponent(s).replace(/[%().]/g, (m) => repl[m]);
}

export function decodeHashComponent(s) {
  try {
    return decodeURIComponent(s.replace(/\./g, '%'));
  } catch {
    return s;
  }
}

function slug(name) {
  return encodeHashComponent(String(name).replace(/\s+/g, '-'));
}

// parseHash reads a view from a location hash.
export function parseHash(hash) {
  const parts = String(hash || '').replace(/^#/, '').split('/');
  if (parts[0] === 'channels') return { kind: 'channels' };
  if (parts[0] === 'join' && parts[1]) return { kind: 'join', key: parts[1] };
  if (parts[0] === 'inbox' || parts[0] === 'recent') return { kind: parts[0] };
  if (parts[0] === 'settings' || parts[0] === 'organization') return { kind: 'settings', section: parts[0] === 'organization' ? `org-${parts[1] || 'profile'}` : parts[1] || 'profile' };
  // A message's link (".../near/ID" or ".../with/ID") opens its conversation.
  const near = parts.findIndex((p, i) => i > 1 && i % 2 === 1 && (p === 'near' || p === 'with'));
  if (near > 0) parts.splice(near);
  if (parts[0] !== 'narrow') return { kind: 'all' };
  const op = parts[1];
  if ((op === 'channel' || op === 'stream') && parts[2]) {
    const streamId = parseInt(parts[2], 10);
    if (!Number.isFinite(streamId)) return { kind: 'all' };
    if ((parts[3] === 'topic' || parts[3] === 'subject') && parts.length > 4) {
      return { kind: 'topic', streamId, topic: decodeHashComponent(parts.slice(4).join('/')) };
    }
    return { kind: 'channel', streamId };
  }
  if ((op === 'dm' || op === 'pm-with') && parts[2]) {
    const ids = parts[2].split('-')[0].split(',').map((x) => parseInt(x, 10)).filter(Number.isFinite);
    if (ids.length) return { kind: 'dm', userIds: [...new Set(ids)].sort((a, b) => a - b) };
  }
  if (op === 'is' && (parts[2] === 'starred' || parts[2] === 'mentioned')) return { kind: parts[2] };
  if (op === 'search' && parts.length > 2) {
    return { kind: 'search', query: decodeHashComponent(parts.slice(2).join('/')) };
  }
  return { kind: 'all' };
}

// hashFor writes a view's address; names make it readable.
export function hashFor(view, { channelName = '' } = {}) {
  switch (view.kind) {
    case 'channels':
      return '#channels';
    case 'channel':
      return `#narrow/channel/${view.streamId}-${slug(channelName)}`;
    case 'topic':
      return `#narrow/channel/${view.streamId}-${slug(channelName)}/topic/${encodeHashComponent(view.topic)}`;
    case 'dm':
      return `#narrow/dm/${view.userIds.join(',')}`;
    case 'search':
      return `#narrow/search/${encodeHashComponent(view.query)}`;
    case 'starred':
    case 'mentioned':
      return `#narrow/is/${view.kind}`;
    case 'inbox':
    case 'recent':
      return `#${view.kind}`;
    case 'settings':
      return view.section.startsWith('org-') ? `#organization/${view.section.slice(4)}` : `#settings/${view.section}`;
    default:
      return '#';
  }
}

// messageLink is a message's permalink, as the reference writes it.
export function messageLink(m, myId, channelName) {
  const base = m.type === 'stream'
    ? hashFor({ kind: 'topic', streamId: m.stream_id, topic: m.subject }, { channelName })
    : hashFor({ kind: 'dm', userIds: dmPeople(m, myId) });
  return `${base}/near/${m.id}`;
}

// apiNarrow is the view's narrow for GET /messages.
export function apiNarrow(view) {
  switch (view.kind) {
    case 'channel':
      return [{ operator: 'channel', operand: view.streamId }];
    case 'topic':
      return [{ operator: 'channel', operand: view.streamId }, { operator: 'topic', operand: view.topic }];
    case 'dm':
      return [{ operator: 'dm', operand: view.userIds }];
    case 'search':
      return [{ operator: 'search', operand: view.query }];
    case 'starred':
    case 'mentioned':
      return [{ operator: 'is', operand: view.kind }];
    default:
      return [];
  }
}

// apiNarrowOf is the narrow of a message's conversation.
export function apiNarrowOf(m, myId) {
  return m.type === 'stream'
    ? [{ operator: 'channel', operand: m.stream_id }, { operator: 'topic', operand: m.subject }]
    : [{ operator: 'dm', operand: dmPeople(m, myId) }];
}

export function sameTopic(a, b) {
  return String(a).toLowerCase() === String(b).toLowerCase();
}

// dmPeople lists the other people of a direct message (the user alone for
// a message to oneself), sorted.
export function dmPeople(message, myId) {
  const ids = message.display_recipient.map((u) => u.id);
  const others = ids.filter((id) => id !== myId);
  return (others.length ? others : [myId]).sort((a, b) => a - b);
}

export function dmKey(userIds) {
  return userIds.join(',');
}

// matches tells whether a new message belongs in the view (search
// results are not extended live).
export function matches(view, message, myId) {
  switch (view.kind) {
    case 'all':
      return true;
    case 'channel':
      return message.type === 'stream' && message.stream_id === view.streamId;
    case 'topic':
      return message.type === 'stream' && message.stream_id === view.streamId && sameTopic(message.subject, view.topic);
    case 'dm':
      return message.type === 'private' && dmKey(dmPeople(message, myId)) === dmKey(view.userIds);
    case 'starred':
      return (message.flags || []).includes('starred');
    case 'mentioned':
      return (message.flags || []).some((f) => f === 'mentioned' || f === 'wildcard_mentioned');
    default:
      return false;
  }
}
