package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// newChannel creates a channel by h.Owner and returns its ID.
func newChannel(t *testing.T, h *chattest.Harness, name string, private bool) int64 {
	t.Helper()
	return newChannelBy(t, h, h.Owner, name, private)
}

// newChannelBy creates a channel (its creator is subscribed) and returns its ID.
func newChannelBy(t *testing.T, h *chattest.Harness, creator chattest.User, name string, private bool) int64 {
	t.Helper()
	ctx := context.Background()
	_, err := h.Service.Subscribe(ctx, creator.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: name}}, InviteOnly: &private})
	require.NoError(t, err)
	resp, err := h.Service.GetChannelID(ctx, creator.Caller, chat.GetChannelIDRequest{Stream: name})
	require.NoError(t, err)
	return resp.StreamID
}

func subscribe(t *testing.T, h *chattest.Harness, by chattest.User, name string, users ...int64) {
	t.Helper()
	var ps []chat.Principal
	for _, id := range users {
		ps = append(ps, chat.Principal{ID: id})
	}
	_, err := h.Service.Subscribe(context.Background(), by.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: name}}, Principals: &ps})
	require.NoError(t, err)
}

func listsChannel(list []chat.Channel, id int64) bool {
	for _, c := range list {
		if c.StreamID == id {
			return true
		}
	}
	return false
}

type channelKind string

const (
	kindPublic        channelKind = "public"
	kindPrivateSub    channelKind = "private subscribed"
	kindPrivateNotSub channelKind = "private not subscribed"
	kindArchived      channelKind = "archived"
)

// TestChannelPermissionMatrix checks each channel operation for each caller
// role and channel kind against the reference's rules.
func TestChannelPermissionMatrix(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	member := h.NewUser(t, chat.RoleMember)
	creator := h.NewUser(t, chat.RoleAdministrator) // makes the channels; not one of the callers
	callers := map[string]chattest.User{
		"owner": h.Owner, "administrator": h.NewUser(t, chat.RoleAdministrator), "moderator": h.NewUser(t, chat.RoleModerator),
		"member": member, "guest": h.NewUser(t, chat.RoleGuest), "bot": h.NewBot(t, member),
	}
	n := 0
	for who, caller := range callers {
		isAdmin := who == "owner" || who == "administrator"
		isGuest := who == "guest"
		for _, kind := range []channelKind{kindPublic, kindPrivateSub, kindPrivateNotSub, kindArchived} {
			t.Run(fmt.Sprintf("%s/%s", who, kind), func(t *testing.T) {
				n++
				name := fmt.Sprintf("chan-%d", n)
				id := newChannelBy(t, h, creator, name, kind == kindPrivateSub || kind == kindPrivateNotSub)
				if kind == kindPrivateSub || kind == kindArchived {
					subscribe(t, h, creator, name, caller.ID)
				}
				if kind == kindArchived {
					_, err := h.Service.ArchiveChannel(ctx, creator.Caller, chat.ArchiveChannelRequest{StreamID: id})
					require.NoError(t, err)
				}
				subscribed := kind == kindPrivateSub || kind == kindArchived
				canSee := subscribed || !isGuest && (kind == kindPublic || isAdmin)

				// Reading a channel: an invisible one is answered like a missing one.
				_, err := h.Service.GetChannel(ctx, caller.Caller, chat.GetChannelRequest{StreamID: id})
				_, errMissing := h.Service.GetChannel(ctx, caller.Caller, chat.GetChannelRequest{StreamID: 999999})
				_, errByName := h.Service.GetChannelID(ctx, caller.Caller, chat.GetChannelIDRequest{Stream: name})
				if canSee {
					require.NoError(t, err)
					require.NoError(t, errByName)
				} else {
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid channel ID")
					assert.Equal(t, chat.AsError(errMissing).Msg, chat.AsError(err).Msg, "no existence leak")
					requireError(t, errByName, chat.KindInvalid, chat.CodeBadRequest, "Invalid channel name '"+name+"'")
				}

				// Listings: every channel the caller can see (include_all), and subscriptions.
				all, err := h.Service.GetChannels(ctx, caller.Caller, chat.GetChannelsRequest{IncludeAll: ptr(true), ExcludeArchived: ptr(false)})
				if isGuest {
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "User not authorized for this query")
				} else {
					require.NoError(t, err)
					assert.Equal(t, canSee, listsChannel(all.Streams, id), "GET /streams include_all")
				}
				mine, err := h.Service.GetChannels(ctx, caller.Caller, chat.GetChannelsRequest{ExcludeArchived: ptr(false)})
				require.NoError(t, err)
				assert.Equal(t, subscribed || kind == kindPublic && !isGuest, listsChannel(mine.Streams, id), "GET /streams defaults")
				subs, err := h.Service.GetSubscriptions(ctx, caller.Caller, chat.GetSubscriptionsRequest{})
				require.NoError(t, err)
				var subscribedIDs []int64
				for _, sub := range subs.Subscriptions {
					subscribedIDs = append(subscribedIDs, sub.StreamID)
				}
				assert.Equal(t, subscribed, slices.Contains(subscribedIDs, id), "GET /users/me/subscriptions")

				// Administering: organization administrators (and the creator, not a caller).
				_, err = h.Service.UpdateChannel(ctx, caller.Caller, chat.UpdateChannelRequest{StreamID: id, Description: ptr("new words")})
				switch {
				case !canSee:
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid channel ID")
				case !isAdmin:
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "You do not have permission to administer this channel.")
				default:
					require.NoError(t, err)
				}

				// Topic policies need a visible channel.
				_, err = h.Service.UpdateUserTopic(ctx, caller.Caller, chat.UpdateUserTopicRequest{StreamID: id, Topic: "lunch", VisibilityPolicy: chat.TopicPolicyMuted})
				if canSee {
					require.NoError(t, err)
				} else {
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid channel ID")
				}

				// Personal properties need a subscription.
				_, err = h.Service.UpdateSubscriptionProperties(ctx, caller.Caller, chat.UpdateSubscriptionPropertiesRequest{
					SubscriptionData: []chat.SubscriptionProperty{{StreamID: id, Property: "pin_to_top", Value: json.RawMessage("true")}}})
				if subscribed {
					require.NoError(t, err)
				} else {
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, fmt.Sprintf("Not subscribed to channel ID %d", id))
				}

				// Subscribing oneself.
				resp, err := h.Service.Subscribe(ctx, caller.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: name}}})
				me := strconv.FormatInt(caller.ID, 10)
				switch {
				case kind == kindArchived:
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Unable to access channel ("+name+").")
				case kind == kindPrivateSub:
					require.NoError(t, err)
					assert.Equal(t, []string{name}, resp.AlreadySubscribed[me])
				case kind == kindPublic && !isGuest || kind == kindPrivateNotSub && isAdmin:
					require.NoError(t, err)
					assert.Equal(t, []string{name}, resp.Subscribed[me])
				default:
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Unable to access channel ("+name+").")
				}
				nowSubscribed := subscribed || err == nil

				// Unsubscribing oneself (archived channels included).
				out, err := h.Service.Unsubscribe(ctx, caller.Caller, chat.UnsubscribeRequest{Subscriptions: []string{name}})
				switch {
				case !canSee && !nowSubscribed:
					e := requireError(t, err, chat.KindInvalid, chat.CodeStreamDoesNotExist, "Channel '"+name+"' does not exist")
					assert.Equal(t, name, e.Fields["stream"])
				case nowSubscribed:
					require.NoError(t, err)
					assert.Equal(t, []string{name}, out.Removed)
				default:
					require.NoError(t, err)
					assert.Equal(t, []string{name}, out.NotRemoved)
				}

				// Archiving.
				_, err = h.Service.ArchiveChannel(ctx, caller.Caller, chat.ArchiveChannelRequest{StreamID: id})
				visibleNow := !isGuest && (kind != kindPrivateNotSub && kind != kindPrivateSub || isAdmin)
				switch {
				case !visibleNow:
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid channel ID")
				case !isAdmin:
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "You do not have permission to administer this channel.")
				case kind == kindArchived:
					requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Channel is already archived.")
				default:
					require.NoError(t, err)
				}
			})
		}
	}
}
