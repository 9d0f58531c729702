package chat

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/teamchat/chat/storage"
)

// Topic visibility policies (user_topics): a user's muting, unmuting and
// following of a channel's topics, and the legacy muted_topics form.

// Topic visibility policies.
const (
	TopicPolicyNone     = 0
	TopicPolicyMuted    = 1
	TopicPolicyUnmuted  = 2
	TopicPolicyFollowed = 3
)

// EmptyTopicDisplayName is how the empty topic is shown to clients that do
// not support it (realm_empty_topic_display_name).
const EmptyTopicDisplayName = "general chat"

// UpdateUserTopicRequest is the input of UpdateUserTopic.
type UpdateUserTopicRequest struct {
	StreamID         int64  `json:"stream_id"`
	Topic            string `json:"topic"`
	VisibilityPolicy int    `json:"visibility_policy"`
}

// UpdateUserTopic sets the caller's visibility policy for a topic of a
// channel they can see: 0 none (removes any), 1 muted, 2 unmuted, 3
// followed. It works whether or not the topic has messages. "(no topic)"
// and the empty-topic display name mean the empty topic.
func (s *Service) UpdateUserTopic(ctx context.Context, c Caller, req UpdateUserTopicRequest) (*EmptyResponse, error) {
	cc, err := s.reads().channelCaller(ctx, c)
	if err != nil {
		return nil, err
	}
	if req.VisibilityPolicy < TopicPolicyNone || req.VisibilityPolicy > TopicPolicyFollowed {
		return nil, BadRequest("Invalid visibility_policy: allowed values are 0, 1, 2, 3")
	}
	topic := strings.TrimSpace(req.Topic)
	if topic == "(no topic)" || topic == EmptyTopicDisplayName {
		topic = ""
	}
	if utf8.RuneCountInString(topic) > s.limits.MaxTopicLength {
		return nil, BadRequest("topic is too long (limit: %d characters)", s.limits.MaxTopicLength)
	}
	if strings.ContainsRune(topic, 0) {
		return nil, BadRequest("topic must not contain null bytes")
	}
	ch, err := s.reads().visibleChannel(ctx, cc, req.StreamID)
	if err != nil {
		return nil, err
	}
	now := s.nowUnix()
	err = s.write(ctx, cc.realm.ID, func(w *writeTx) error {
		var err error
		if req.VisibilityPolicy == TopicPolicyNone {
			err = w.DeleteUserTopic(ctx, cc.realm.ID, cc.me.ID, ch.ID, topic)
		} else {
			err = w.SetUserTopic(ctx, &storage.UserTopic{RealmID: cc.realm.ID, UserID: cc.me.ID, StreamID: ch.ID,
				TopicName: topic, VisibilityPolicy: req.VisibilityPolicy, LastUpdated: now})
		}
		if err != nil {
			return err
		}
		w.emit(toUsers(cc.me.ID), UserTopicEvent{StreamID: ch.ID, TopicName: topic, LastUpdated: now, VisibilityPolicy: req.VisibilityPolicy})
		return s.emitMutedTopics(ctx, w, cc.me)
	})
	if err != nil {
		return nil, s.internal(ctx, "update user topic", err)
	}
	return &EmptyResponse{}, nil
}

// MutedTopicsEvent is the legacy form of the user's muted topics (the
// whole list: [channel name, topic, time muted]), sent with each explicit
// policy change as the reference does.
type MutedTopicsEvent struct {
	MutedTopics [][]any `json:"muted_topics"`
}

func (MutedTopicsEvent) EventType() string { return "muted_topics" }

// emitMutedTopics tells the user their muted topics in the legacy form.
func (s *Service) emitMutedTopics(ctx context.Context, w *writeTx, me *storage.User) error {
	muted, err := s.mutedTopics(ctx, w.reads(), me)
	if err != nil {
		return err
	}
	w.emit(toUsers(me.ID), MutedTopicsEvent{MutedTopics: muted})
	return nil
}

// mutedTopics lists the user's muted topics in the legacy form: [channel
// name, topic, time muted].
func (s *Service) mutedTopics(ctx context.Context, r reads, me *storage.User) ([][]any, error) {
	rows, err := r.st.ListUserTopics(ctx, me.RealmID, me.ID)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, r := range rows {
		if r.VisibilityPolicy == TopicPolicyMuted {
			ids = append(ids, r.StreamID)
		}
	}
	channels, err := r.channelsByID(ctx, me.RealmID, ids)
	if err != nil {
		return nil, err
	}
	muted := [][]any{}
	for _, r := range rows {
		if ch := channels[r.StreamID]; ch != nil && r.VisibilityPolicy == TopicPolicyMuted {
			muted = append(muted, []any{ch.Name, r.TopicName, r.LastUpdated})
		}
	}
	return muted, nil
}

// UserTopic is a stored topic policy.
type UserTopic struct {
	StreamID         int64  `json:"stream_id"`
	TopicName        string `json:"topic_name"`
	LastUpdated      int64  `json:"last_updated"`
	VisibilityPolicy int    `json:"visibility_policy"`
}

// GetUserTopicsResponse is the result of GetUserTopics.
type GetUserTopicsResponse struct {
	UserTopics []UserTopic `json:"user_topics"`
}

// GetUserTopics lists the caller's topic policies (in-process; clients get
// them at registration in the reference).
func (s *Service) GetUserTopics(ctx context.Context, c Caller) (*GetUserTopicsResponse, error) {
	return s.reads().getUserTopics(ctx, c)
}

// getUserTopics is GetUserTopics reading through r.
func (r reads) getUserTopics(ctx context.Context, c Caller) (*GetUserTopicsResponse, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	rows, err := r.st.ListUserTopics(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get user topics", err)
	}
	out := &GetUserTopicsResponse{UserTopics: make([]UserTopic, 0, len(rows))}
	for _, row := range rows {
		out.UserTopics = append(out.UserTopics, UserTopic{StreamID: row.StreamID, TopicName: row.TopicName, LastUpdated: row.LastUpdated, VisibilityPolicy: row.VisibilityPolicy})
	}
	return out, nil
}
