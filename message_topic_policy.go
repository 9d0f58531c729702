package chat

import (
	"context"
	"errors"

	"github.com/teamchat/chat/storage"
)

// Topic visibility policies at send: the policy a send sets for its
// sender (automatically_follow_topics_policy and its unmuting twin), and
// how a user's policy is read (through the Service's cache outside a
// transaction) and forgotten when a transaction changes it.

// storedTopicPolicy is the user's visibility policy of the topic as r
// reads it: TopicPolicyNone without one.
func (r reads) storedTopicPolicy(ctx context.Context, realmID, userID, streamID int64, topic string) (int, error) {
	ut, err := r.st.GetUserTopic(ctx, realmID, userID, streamID, topic)
	switch {
	case err == nil:
		return ut.VisibilityPolicy, nil
	case errors.Is(err, storage.ErrNotFound):
		return TopicPolicyNone, nil
	}
	return 0, err
}

// topicPolicy is the user's visibility policy of the topic
// (TopicPolicyNone without one), through the cache except inside a
// transaction (which reads its own).
func (r reads) topicPolicy(ctx context.Context, realmID, userID, streamID int64, topic string) (int, error) {
	load := func() (int, error) { return r.storedTopicPolicy(ctx, realmID, userID, streamID, topic) }
	if r.tx {
		return load()
	}
	return r.c.topicPolicies.Load(realmID, topicKey{realmID, userID, streamID, storage.Fold(topic)}, load)
}

// SetUserTopic is the store's, and forgets the cached policy once the
// transaction commits.
func (w *writeTx) SetUserTopic(ctx context.Context, t *storage.UserTopic) error {
	if err := w.Store.SetUserTopic(ctx, t); err != nil {
		return err
	}
	w.forgetTopicPolicy(t.RealmID, t.UserID, t.StreamID, t.TopicName)
	return nil
}

// DeleteUserTopic is the store's, and forgets the cached policy once the
// transaction commits.
func (w *writeTx) DeleteUserTopic(ctx context.Context, realmID, userID, streamID int64, topic string) error {
	if err := w.Store.DeleteUserTopic(ctx, realmID, userID, streamID, topic); err != nil {
		return err
	}
	w.forgetTopicPolicy(realmID, userID, streamID, topic)
	return nil
}

func (w *writeTx) forgetTopicPolicy(realmID, userID, streamID int64, topic string) {
	key := topicKey{realmID, userID, streamID, storage.Fold(topic)}
	w.afterCommit(func() { w.svc.records.topicPolicies.Forget(key) })
}

// setTopicPolicies writes the planned topic policies of the message's
// topic, with their events.
func (s *Service) setTopicPolicies(ctx context.Context, w *writeTx, o *outgoing, changes []topicPolicyChange) error {
	now := s.nowUnix()
	for _, c := range changes {
		if err := w.SetUserTopic(ctx, &storage.UserTopic{RealmID: o.realm.ID, UserID: c.userID, StreamID: o.channel.ID,
			TopicName: o.msg.Topic, VisibilityPolicy: c.policy, LastUpdated: now}); err != nil {
			return err
		}
		w.emit(toUsers(c.userID), UserTopicEvent{StreamID: o.channel.ID, TopicName: o.msg.Topic, LastUpdated: now, VisibilityPolicy: c.policy})
		if c.sender {
			o.newPolicy = &c.policy
		}
	}
	return nil
}

// The values of automatically_follow_topics_policy and
// automatically_unmute_topics_in_muted_streams_policy.
const (
	autoOnParticipation = 1
	autoOnSend          = 2
	autoOnInitiation    = 3
	autoNever           = 4
)

// autoTopicPolicy is the policy the send sets on the topic for its
// sender as their settings ask (the reference's
// visibility_policy_for_send_message), or 0: only ever making the topic
// more visible, following before unmuting, and "initiation" meaning no
// older message of the topic the sender can see.
func (s *Service) autoTopicPolicy(ctx context.Context, r reads, o *outgoing) (int, error) {
	set := settingsOf(o.me)
	follow, unmute := set.AutomaticallyFollowTopicsPolicy, set.AutomaticallyUnmuteTopicsInMutedStreamsPolicy
	if follow == autoNever && unmute == autoNever {
		return 0, nil
	}
	m := &o.msg
	current, err := r.topicPolicy(ctx, o.realm.ID, o.me.ID, o.channel.ID, m.Topic)
	if err != nil {
		return 0, err
	}
	if current == TopicPolicyFollowed {
		return 0, nil
	}
	muted := false
	if sub, err := r.st.GetSubscription(ctx, o.realm.ID, o.me.ID, o.channel.ID); err == nil {
		muted = sub.Active && sub.IsMuted
	} else if !errors.Is(err, storage.ErrNotFound) {
		return 0, err
	}
	policy := 0
	switch {
	case follow == autoOnParticipation || follow == autoOnSend:
		policy = TopicPolicyFollowed
	case muted && (unmute == autoOnParticipation || unmute == autoOnSend):
		policy = TopicPolicyUnmuted
	}
	if policy != TopicPolicyFollowed && current == TopicPolicyNone &&
		(follow == autoOnInitiation || muted && unmute == autoOnInitiation) {
		initiated, err := r.startsTopic(ctx, o)
		if err != nil {
			return 0, err
		}
		if initiated && follow == autoOnInitiation {
			policy = TopicPolicyFollowed
		} else if initiated && muted && unmute == autoOnInitiation {
			policy = TopicPolicyUnmuted
		}
	}
	if policy == current {
		return 0, nil
	}
	return policy, nil
}

// startsTopic reports whether the message is the first of its topic that
// its sender can see: any older one of the channel when its history is
// open to them, else any they received.
func (r reads) startsTopic(ctx context.Context, o *outgoing) (bool, error) {
	m := &o.msg
	scope, err := r.channelReadScope(ctx, o.realm.ID, o.me.ID, o.channel)
	if err != nil {
		return false, err
	}
	topic := m.Topic
	older, _, err := r.st.ListMessageWindow(ctx, storage.MessageWindow{RealmID: o.realm.ID, UserID: o.me.ID, Scope: scope,
		Filter: storage.MessageFilter{StreamID: &o.channel.ID, Topic: &topic}, Anchor: largerThanMaxMessageID, IDsOnly: true})
	return len(older) == 0, err
}
