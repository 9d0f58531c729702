package chat

import (
	"context"
	"errors"

	"github.com/teamchat/chat/storage"
)

// GetChannelTopicsRequest is the input of GetChannelTopics (GET
// /users/me/{stream_id}/topics).
type GetChannelTopicsRequest struct {
	StreamID int64 `json:"stream_id"`
	// AllowEmptyTopicName (default false): the empty topic is named ""
	// rather than realm_empty_topic_display_name.
	AllowEmptyTopicName *bool `json:"allow_empty_topic_name"`
}

// ChannelTopic is one topic of a channel with its newest message the
// caller may read.
type ChannelTopic struct {
	Name  string `json:"name"`
	MaxID int64  `json:"max_id"`
}

// GetChannelTopicsResponse is the success body of GetChannelTopics.
type GetChannelTopicsResponse struct {
	Topics []ChannelTopic `json:"topics"`
}

// GetChannelTopics lists a channel's topics, the most recent first, with
// the newest message of each (the reference's topic history): case
// variants are one topic, named as its newest message spells it. The
// caller must be able to read the channel (subscribed to it, or it is
// public and they are no guest, or it is web-public): any other channel is
// "Invalid channel ID", as one that does not exist. Where the channel
// shares its history with subscribers every topic counts; otherwise only
// the messages the caller received while subscribed. The cost follows the
// channel's topics, not its messages (see storage.MessageStore).
func (s *Service) GetChannelTopics(ctx context.Context, c Caller, req GetChannelTopicsRequest) (*GetChannelTopicsResponse, error) {
	return s.reads().getChannelTopics(ctx, c, req)
}

// getChannelTopics is GetChannelTopics reading through r.
func (r reads) getChannelTopics(ctx context.Context, c Caller, req GetChannelTopicsRequest) (*GetChannelTopicsResponse, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	ch, err := r.channelByID(ctx, realm.ID, req.StreamID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errInvalidChannelID
	} else if err != nil {
		return nil, r.s.internal(ctx, "get channel topics", err)
	}
	periods, err := r.userPeriods(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get channel topics", err)
	}
	var spans []storage.ChannelSpan // nil: the whole history
	subscribed := false
	for _, sp := range spansOf(periods) {
		if sp.StreamID == ch.ID {
			spans = append(spans, sp)
			subscribed = subscribed || sp.Through == nil
		}
	}
	if !subscribed && !ch.IsWebPublic && (ch.InviteOnly || me.Role == RoleGuest) {
		return nil, errInvalidChannelID
	}
	if ch.HistoryPublicToSubscribers {
		spans = nil
	} else if spans == nil {
		spans = []storage.ChannelSpan{}
	}
	topics, err := r.st.ListChannelTopics(ctx, realm.ID, ch.ID, spans)
	if err != nil {
		return nil, r.s.internal(ctx, "get channel topics", err)
	}
	resp := &GetChannelTopicsResponse{Topics: make([]ChannelTopic, len(topics))}
	for i, t := range topics {
		resp.Topics[i] = ChannelTopic{Name: t.Name, MaxID: t.MaxID}
		if t.Name == "" && !ptrValue(req.AllowEmptyTopicName) {
			resp.Topics[i].Name = EmptyTopicDisplayName
		}
	}
	return resp, nil
}
