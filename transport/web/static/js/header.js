// The view's header: its title, a line under it, and what can be done
// to the whole conversation: mute or unmute a channel, follow or mute a
// topic, mark it all read.

import { $, h } from './dom.js';

export function viewTitle(model, view) {
  switch (view.kind) {
    case 'channel':
      return ['#' + model.channelName(view.streamId), (model.streams.get(view.streamId) || {}).description || ''];
    case 'topic':
      return [`#${model.channelName(view.streamId)} › ${view.topic}`, ''];
    case 'dm':
      return [view.userIds.map((id) => model.userName(id)).join(', '), 'Direct messages'];
    case 'search':
      return [`Search: ${view.query}`, ''];
    case 'channels':
      return ['Channels', 'Subscribe to channels or create one'];
    case 'inbox':
      return ['Inbox', 'Unread messages by conversation'];
    case 'recent':
      return ['Recent conversations', ''];
    case 'starred':
      return ['Starred messages', ''];
    case 'mentioned':
      return ['Mentions', ''];
    case 'settings':
      return [view.section.startsWith('org-') ? 'Organization settings' : 'Settings', ''];
    default:
      return ['All messages', ''];
  }
}

// renderViewActions draws the header's buttons for the view.
export function renderViewActions(api, model, view, notify) {
  const box = $('view-actions');
  const focused = document.activeElement && box.contains(document.activeElement) ? document.activeElement.dataset.action : null;
  const buttons = [];
  const call = async (what, fn) => {
    try {
      await fn();
    } catch (err) {
      notify(`Could not ${what}: ${err.message}`);
    }
  };
  if ((view.kind === 'channel' || view.kind === 'topic') && model.subs.has(view.streamId)) {
    const name = model.channelName(view.streamId);
    if (view.kind === 'topic') {
      const policy = model.policyOf(view.streamId, view.topic);
      const set = (p, what) => call(what, () => api.post('/user_topics', { stream_id: view.streamId, topic: view.topic, visibility_policy: p }));
      buttons.push(h('button', { type: 'button', 'data-action': 'follow', 'aria-pressed': policy === 3 ? 'true' : 'false', onclick: () => set(policy === 3 ? 0 : 3, 'follow the topic') },
        policy === 3 ? 'Following' : 'Follow topic'));
      const muted = model.topicMuted(view.streamId, view.topic);
      const unmuteTo = model.channelMuted(view.streamId) ? 2 : 0;
      buttons.push(h('button', { type: 'button', 'data-action': 'mute-topic', 'aria-pressed': muted ? 'true' : 'false', onclick: () => set(muted ? unmuteTo : 1, 'mute the topic') },
        muted ? 'Unmute topic' : 'Mute topic'));
    } else {
      const muted = model.channelMuted(view.streamId);
      buttons.push(h('button', {
        type: 'button', 'data-action': 'mute-channel', 'aria-pressed': muted ? 'true' : 'false', 'aria-label': `${muted ? 'Unmute' : 'Mute'} #${name}`,
        onclick: () => call('mute the channel', () => api.post('/users/me/subscriptions/properties', {
          subscription_data: [{ stream_id: view.streamId, property: 'is_muted', value: !muted }],
        })),
      }, muted ? 'Unmute channel' : 'Mute channel'));
    }
    buttons.push(h('button', {
      type: 'button', 'data-action': 'read',
      onclick: () => call('mark as read', () => (view.kind === 'topic'
        ? api.post('/mark_topic_as_read', { stream_id: view.streamId, topic_name: view.topic })
        : api.post('/mark_stream_as_read', { stream_id: view.streamId }))),
    }, 'Mark all as read'));
  }
  box.replaceChildren(...buttons);
  if (focused) {
    const again = box.querySelector(`[data-action="${focused}"]`);
    if (again) again.focus();
  }
}
