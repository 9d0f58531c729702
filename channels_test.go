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

// channelWant is what one caller may do with one kind of channel.
// see: GetChannel and GetChannelID find it; all: listed by include_all
// ("error" for guests, who may not ask); mine: listed by GET /streams'
// defaults; admin, self, unsub, archive: the outcome of UpdateChannel, of
// subscribing oneself, of unsubscribing oneself and of archiving it.
type channelWant struct {
	see                         bool
	all                         string
	mine                        bool
	admin, self, unsub, archive string
}

// channelMatrix is the explicit table of expected results, written from
// the reference's rules (not computed from them).
var channelMatrix = map[string]map[channelKind]channelWant{
	"owner": {
		kindPublic:        {see: true, all: "yes", mine: true, admin: "ok", self: "subscribed", unsub: "removed", archive: "ok"},
		kindPrivateSub:    {see: true, all: "yes", mine: true, admin: "ok", self: "already", unsub: "removed", archive: "ok"},
		kindPrivateNotSub: {see: true, all: "yes", mine: false, admin: "ok", self: "subscribed", unsub: "removed", archive: "ok"},
		kindArchived:      {see: true, all: "yes", mine: true, admin: "ok", self: "refused", unsub: "removed", archive: "already"},
	},
	"administrator": {
		kindPublic:        {see: true, all: "yes", mine: true, admin: "ok", self: "subscribed", unsub: "removed", archive: "ok"},
		kindPrivateSub:    {see: true, all: "yes", mine: true, admin: "ok", self: "already", unsub: "removed", archive: "ok"},
		kindPrivateNotSub: {see: true, all: "yes", mine: false, admin: "ok", self: "subscribed", unsub: "removed", archive: "ok"},
		kindArchived:      {see: true, all: "yes", mine: true, admin: "ok", self: "refused", unsub: "removed", archive: "already"},
	},
	"moderator": {
		kindPublic:        {see: true, all: "yes", mine: true, admin: "denied", self: "subscribed", unsub: "removed", archive: "denied"},
		kindPrivateSub:    {see: true, all: "yes", mine: true, admin: "denied", self: "already", unsub: "removed", archive: "invisible"},
		kindPrivateNotSub: {see: false, all: "no", mine: false, admin: "invisible", self: "refused", unsub: "missing", archive: "invisible"},
		kindArchived:      {see: true, all: "yes", mine: true, admin: "denied", self: "refused", unsub: "removed", archive: "denied"},
	},
	"member": {
		kindPublic:        {see: true, all: "yes", mine: true, admin: "denied", self: "subscribed", unsub: "removed", archive: "denied"},
		kindPrivateSub:    {see: true, all: "yes", mine: true, admin: "denied", self: "already", unsub: "removed", archive: "invisible"},
		kindPrivateNotSub: {see: false, all: "no", mine: false, admin: "invisible", self: "refused", unsub: "missing", archive: "invisible"},
		kindArchived:      {see: true, all: "yes", mine: true, admin: "denied", self: "refused", unsub: "removed", archive: "denied"},
	},
	"bot": {
		kindPublic:        {see: true, all: "yes", mine: true, admin: "denied", self: "subscribed", unsub: "removed", archive: "denied"},
		kindPrivateSub:    {see: true, all: "yes", mine: true, admin: "denied", self: "already", unsub: "removed", archive: "invisible"},
		kindPrivateNotSub: {see: false, all: "no", mine: false, admin: "invisible", self: "refused", unsub: "missing", archive: "invisible"},
		kindArchived:      {see: true, all: "yes", mine: true, admin: "denied", self: "refused", unsub: "removed", archive: "denied"},
	},
	"guest": {
		kindPublic:        {see: false, all: "error", mine: false, admin: "invisible", self: "refused", unsub: "missing", archive: "invisible"},
		kindPrivateSub:    {see: true, all: "error", mine: true, admin: "denied", self: "already", unsub: "removed", archive: "invisible"},
		kindPrivateNotSub: {see: false, all: "error", mine: false, admin: "invisible", self: "refused", unsub: "missing", archive: "invisible"},
		kindArchived:      {see: true, all: "error", mine: true, admin: "denied", self: "refused", unsub: "removed", archive: "invisible"},
	},
}

// TestChannelPermissionMatrix checks each channel operation for each caller
// role and channel kind against channelMatrix.
func TestChannelPermissionMatrix(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	member := h.NewUser(t, chat.RoleMember)
	creator := h.NewUser(t, chat.RoleAdministrator) // makes the channels; not one of the callers
	callers := map[string]chattest.User{
		"owner": h.Owner, "administrator": h.NewUser(t, chat.RoleAdministrator), "moderator": h.NewUser(t, chat.RoleModerator),
		"member": member, "guest": h.NewUser(t, chat.RoleGuest), "bot": h.NewBot(t, member),
	}
	require.Len(t, channelMatrix, len(callers))
	n := 0
	for who, caller := range callers {
		for _, kind := range []channelKind{kindPublic, kindPrivateSub, kindPrivateNotSub, kindArchived} {
			want, ok := channelMatrix[who][kind]
			require.True(t, ok, "no expectation for %s/%s", who, kind)
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

				// Reading a channel: an invisible one is answered like a missing one.
				_, err := h.Service.GetChannel(ctx, caller.Caller, chat.GetChannelRequest{StreamID: id})
				_, errMissing := h.Service.GetChannel(ctx, caller.Caller, chat.GetChannelRequest{StreamID: 999999})
				_, errByName := h.Service.GetChannelID(ctx, caller.Caller, chat.GetChannelIDRequest{Stream: name})
				if want.see {
					require.NoError(t, err)
					require.NoError(t, errByName)
				} else {
					requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
					assert.Equal(t, chat.AsError(errMissing).Msg, chat.AsError(err).Msg, "no existence leak")
					requireError(t, errByName, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel name '"+name+"'")
				}

				// Listings: every channel the caller can see (include_all), and subscriptions.
				all, err := h.Service.GetChannels(ctx, caller.Caller, chat.GetChannelsRequest{IncludeAll: ptr(true), ExcludeArchived: ptr(false)})
				if want.all == "error" {
					requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "User not authorized for this query")
				} else {
					require.NoError(t, err)
					assert.Equal(t, want.all == "yes", listsChannel(all.Streams, id), "GET /streams include_all")
				}
				mine, err := h.Service.GetChannels(ctx, caller.Caller, chat.GetChannelsRequest{ExcludeArchived: ptr(false)})
				require.NoError(t, err)
				assert.Equal(t, want.mine, listsChannel(mine.Streams, id), "GET /streams defaults")
				subs, err := h.Service.GetSubscriptions(ctx, caller.Caller, chat.GetSubscriptionsRequest{})
				require.NoError(t, err)
				var subscribedIDs []int64
				for _, sub := range subs.Subscriptions {
					subscribedIDs = append(subscribedIDs, sub.StreamID)
				}
				assert.Equal(t, subscribed, slices.Contains(subscribedIDs, id), "GET /users/me/subscriptions")

				// Administering.
				_, err = h.Service.UpdateChannel(ctx, caller.Caller, chat.UpdateChannelRequest{StreamID: id, Description: ptr("new words")})
				requireOutcome(t, err, want.admin, name)

				// Topic policies need a visible channel.
				_, err = h.Service.UpdateUserTopic(ctx, caller.Caller, chat.UpdateUserTopicRequest{StreamID: id, Topic: "lunch", VisibilityPolicy: chat.TopicPolicyMuted})
				if want.see {
					require.NoError(t, err)
				} else {
					requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
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
				switch want.self {
				case "refused":
					requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Unable to access channel ("+name+").")
				case "already":
					require.NoError(t, err)
					assert.Equal(t, []string{name}, resp.AlreadySubscribed[me])
				case "subscribed":
					require.NoError(t, err)
					assert.Equal(t, []string{name}, resp.Subscribed[me])
				default:
					t.Fatalf("bad expectation %q", want.self)
				}

				// Unsubscribing oneself (archived channels included).
				out, err := h.Service.Unsubscribe(ctx, caller.Caller, chat.UnsubscribeRequest{Subscriptions: []string{name}})
				switch want.unsub {
				case "missing":
					e := requireError(t, err, chat.KindNotFound, chat.CodeStreamDoesNotExist, "Channel '"+name+"' does not exist")
					assert.Equal(t, name, e.Fields["stream"])
				case "removed":
					require.NoError(t, err)
					assert.Equal(t, []string{name}, out.Removed)
				case "not_removed":
					require.NoError(t, err)
					assert.Equal(t, []string{name}, out.NotRemoved)
				default:
					t.Fatalf("bad expectation %q", want.unsub)
				}

				// Archiving.
				_, err = h.Service.ArchiveChannel(ctx, caller.Caller, chat.ArchiveChannelRequest{StreamID: id})
				requireOutcome(t, err, want.archive, name)
			})
		}
	}
}

// requireOutcome checks an administering call against its expectation.
func requireOutcome(t *testing.T, err error, want, name string) {
	t.Helper()
	switch want {
	case "ok":
		require.NoError(t, err)
	case "invisible":
		requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "Invalid channel ID")
	case "denied":
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "You do not have permission to administer this channel.")
	case "already":
		requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "Channel is already archived.")
	default:
		t.Fatalf("bad expectation %q for %s", want, name)
	}
}
