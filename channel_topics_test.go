package chat_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func topicsOf(t *testing.T, h *chattest.Harness, as chattest.User, streamID int64, allowEmpty bool) []chat.ChannelTopic {
	t.Helper()
	resp, err := h.Service.GetChannelTopics(context.Background(), as.Caller, chat.GetChannelTopicsRequest{StreamID: streamID, AllowEmptyTopicName: &allowEmpty})
	require.NoError(t, err)
	checkSchema(t, "GET", "/users/me/{stream_id}/topics", resp)
	return resp.Topics
}

func TestGetChannelTopics(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	admin := h.NewUser(t, chat.RoleAdministrator)
	post := func(from chattest.User, channel, topic string) int64 {
		return send(t, h, from, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel(channel), Topic: ptr(topic), Content: "hi"})
	}

	public := newChannelBy(t, h, alice, "public", false)
	lunch := post(alice, "public", "Lunch")
	empty := post(alice, "public", "")
	lunch2 := post(alice, "public", "LUNCH")
	plans := post(alice, "public", "plans")
	t.Run("public channel: every topic, newest first, one per case-insensitive name", func(t *testing.T) {
		want := []chat.ChannelTopic{{Name: "plans", MaxID: plans}, {Name: "LUNCH", MaxID: lunch2}, {Name: "general chat", MaxID: empty}}
		assert.Equal(t, want, topicsOf(t, h, bob, public, false), "a member who never subscribed")
		want[2].Name = ""
		assert.Equal(t, want, topicsOf(t, h, alice, public, true), "allow_empty_topic_name")
		resp, err := h.Service.GetChannelTopics(ctx, bob.Caller, chat.GetChannelTopicsRequest{StreamID: public})
		require.NoError(t, err)
		assert.Equal(t, "general chat", resp.Topics[2].Name, "allow_empty_topic_name defaults to false")
		assert.Greater(t, lunch2, lunch)
	})
	t.Run("guests read only what they are subscribed to", func(t *testing.T) {
		_, err := h.Service.GetChannelTopics(ctx, guest.Caller, chat.GetChannelTopicsRequest{StreamID: public})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
		subscribe(t, h, alice, "public", guest.ID)
		assert.Len(t, topicsOf(t, h, guest, public, false), 3)
	})

	newPrivate := func(name string, sharedHistory bool) int64 {
		_, err := h.Service.Subscribe(ctx, alice.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: name}},
			InviteOnly: ptr(true), HistoryPublicToSubscribers: &sharedHistory})
		require.NoError(t, err)
		id, err := h.Service.GetChannelID(ctx, alice.Caller, chat.GetChannelIDRequest{Stream: name})
		require.NoError(t, err)
		return id.StreamID
	}
	shared := newPrivate("shared", true)
	before := post(alice, "shared", "before")
	subscribe(t, h, alice, "shared", bob.ID)
	t.Run("private channel with shared history: subscribers see it all, nobody else", func(t *testing.T) {
		assert.Equal(t, []chat.ChannelTopic{{Name: "before", MaxID: before}}, topicsOf(t, h, bob, shared, false))
		for _, u := range []chattest.User{admin, guest, h.Owner} {
			_, err := h.Service.GetChannelTopics(ctx, u.Caller, chat.GetChannelTopicsRequest{StreamID: shared})
			requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
		}
	})

	protected := newPrivate("protected", false)
	early := post(alice, "protected", "early")
	post(alice, "protected", "both")
	subscribe(t, h, alice, "protected", bob.ID)
	both := post(alice, "protected", "BOTH")
	late := post(alice, "protected", "late")
	t.Run("private channel with protected history: what the caller received", func(t *testing.T) {
		assert.Equal(t, []chat.ChannelTopic{{Name: "late", MaxID: late}, {Name: "BOTH", MaxID: both}, {Name: "early", MaxID: early}},
			topicsOf(t, h, alice, protected, false))
		assert.Equal(t, []chat.ChannelTopic{{Name: "late", MaxID: late}, {Name: "BOTH", MaxID: both}}, topicsOf(t, h, bob, protected, false))
		_, err := h.Service.Unsubscribe(ctx, bob.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"protected"}})
		require.NoError(t, err)
		_, err = h.Service.GetChannelTopics(ctx, bob.Caller, chat.GetChannelTopicsRequest{StreamID: protected})
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
		after := post(alice, "protected", "after bob")
		subscribe(t, h, alice, "protected", bob.ID)
		again := post(alice, "protected", "again")
		assert.Equal(t, []chat.ChannelTopic{{Name: "again", MaxID: again}, {Name: "late", MaxID: late}, {Name: "BOTH", MaxID: both}},
			topicsOf(t, h, bob, protected, false), "both periods, not the gap between them")
		assert.Greater(t, again, after)
	})

	t.Run("missing channels and other organizations' channels", func(t *testing.T) {
		other := h.NewRealm(t, "http://other.example.com")
		elsewhere := newChannelBy(t, other, other.Owner, "elsewhere", false)
		for _, id := range []int64{0, -1, protected + 1000, elsewhere} {
			_, err := h.Service.GetChannelTopics(ctx, bob.Caller, chat.GetChannelTopicsRequest{StreamID: id})
			requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
		}
	})
	t.Run("an empty channel and a deactivated caller", func(t *testing.T) {
		quiet := newChannelBy(t, h, alice, "quiet", false)
		assert.Equal(t, []chat.ChannelTopic{}, topicsOf(t, h, bob, quiet, false))
		h.Deactivate(t, bob)
		_, err := h.Service.GetChannelTopics(ctx, bob.Caller, chat.GetChannelTopicsRequest{StreamID: public})
		requireError(t, err, chat.KindUnauthenticated, chat.CodeUserDeactivated, "")
	})
}
