package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// The unread state against a brute force: on a random history of sends,
// subscriptions coming and going, mutes, and every way of marking read
// and unread, GetUnreadMessages must equal what the reader's own fetched
// messages and flags say (every message of their feed without "read", in
// channels they are subscribed to, grouped as unread_msgs groups them).
// TEAMCHAT_UNREAD_SEED picks another seed.
//
// It runs twice: as a reader's state is listed from scratch, and as it is
// remembered between requests (every state, however small), where it is
// compared ten times as often, through GetUnreadMessages and through a
// registration, and a state that nothing changed is asked for again.
func TestUnreadMessagesAgainstBruteForce(t *testing.T) {
	t.Run("listed", func(t *testing.T) { testUnreadsAgainstBruteForce(t, false) })
	t.Run("remembered", func(t *testing.T) { testUnreadsAgainstBruteForce(t, true) })
}

func testUnreadsAgainstBruteForce(t *testing.T, remembered bool) {
	seed := testSeed(t, "TEAMCHAT_UNREAD_SEED")
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 1))
	h := chattest.New(t)
	every := 100
	if remembered {
		chat.SetUnreadCacheMin(h.Service, 1)
		every = 10
	}
	var users []chattest.User
	for i := range 4 {
		users = append(users, h.NewUser(t, []int{chat.RoleMember, chat.RoleMember, chat.RoleAdministrator, chat.RoleMember}[i]))
	}
	names := []string{"general", "design", "secret"}
	channels := map[string]int64{}
	for i, name := range names {
		channels[name] = newChannelBy(t, h, h.Owner, name, i == 2)
	}
	subscribed := map[[2]int64]bool{}
	toggleSub := func(u chattest.User, name string) {
		key := [2]int64{u.ID, channels[name]}
		ps := &[]chat.Principal{{ID: u.ID}}
		var err error
		if subscribed[key] {
			_, err = h.Service.Unsubscribe(ctx, h.Owner.Caller, chat.UnsubscribeRequest{Subscriptions: []string{name}, Principals: ps})
		} else {
			_, err = h.Service.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: name}}, Principals: ps})
		}
		require.NoError(t, err)
		subscribed[key] = !subscribed[key]
	}
	for _, u := range users {
		for _, name := range names {
			if rng.IntN(3) > 0 {
				toggleSub(u, name)
			}
		}
	}
	topics := []string{"alpha", "Alpha", "beta", "", "gamma"}
	feed := func(u chattest.User) []chat.FetchedMessage {
		resp, err := h.Service.GetMessages(ctx, u.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(5000)})
		require.NoError(t, err)
		return resp.Messages
	}
	randomIDs := func(u chattest.User) []int64 {
		var ids []int64
		for _, m := range feed(u) {
			if rng.IntN(3) == 0 {
				ids = append(ids, m.ID)
			}
		}
		return ids
	}
	// mutes[u][v]: u muted v, whose channel messages must then be read
	// for u.
	mutes := map[int64]map[int64]bool{}
	steps, checks, unread := 0, 0, 0
	// soon: the last step changed what every reader's remembered state is
	// read from (moves and deletions), or its reader's settings (mutes):
	// compare at once, before another write makes the state stale anyway.
	soon := false
	for steps = 0; steps < 700; steps++ {
		if steps%every == every-1 || soon {
			soon = false
			for _, u := range users {
				msgs := feed(u)
				for _, m := range msgs {
					// (Direct messages arrive read, but can be marked unread.)
					if mutes[u.ID][m.SenderID] && m.Type == "stream" {
						require.Contains(t, m.Flags, "read", "seed %d: message %d (%s %v) of a sender %d muted", seed, m.ID, m.Type, m.StreamID, u.ID)
					}
				}
				unread += checkUnreads(t, h, u, seed, msgs, remembered)
				checks++
			}
		}
		u := users[rng.IntN(len(users))]
		name := names[rng.IntN(len(names))]
		switch r := rng.IntN(100); {
		case r < 45:
			if !subscribed[[2]int64{u.ID, channels[name]}] {
				continue
			}
			content := "hello"
			switch rng.IntN(6) {
			case 0:
				content = "@**all** look"
			case 1:
				other := users[rng.IntN(len(users))]
				content = fmt.Sprintf("@**%s** look", other.FullName)
			case 2:
				content = "@**topic** look"
			}
			_, err := h.Service.SendMessage(ctx, u.Caller, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel(name),
				Topic: ptr(topics[rng.IntN(len(topics))]), Content: content, ReadBySender: ptr(rng.IntN(2) == 0)})
			require.NoError(t, err)
		case r < 55:
			to := []int64{users[rng.IntN(len(users))].ID}
			if rng.IntN(2) == 0 {
				to = append(to, users[rng.IntN(len(users))].ID)
			}
			_, err := h.Service.SendMessage(ctx, u.Caller, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(to...), Content: "psst"})
			require.NoError(t, err)
		case r < 70:
			op := []string{"add", "remove"}[rng.IntN(2)]
			flag := []string{"read", "read", "starred"}[rng.IntN(3)]
			_, err := h.Service.UpdateMessageFlags(ctx, u.Caller, chat.UpdateMessageFlagsRequest{Messages: randomIDs(u), Op: op, Flag: flag})
			require.NoError(t, err)
		case r < 75:
			narrowJSON := fmt.Sprintf(`[{"operator":"channel","operand":%q},{"operator":"topic","operand":%q}]`, name, topics[rng.IntN(len(topics))])
			_, err := h.Service.UpdateMessageFlagsForNarrow(ctx, u.Caller, chat.UpdateMessageFlagsForNarrowRequest{Anchor: "oldest",
				NumAfter: rng.IntN(8), Narrow: narrowJSON, Op: []string{"add", "remove"}[rng.IntN(2)], Flag: "read"})
			if err != nil {
				require.Contains(t, err.Error(), "Invalid narrow", "only an inaccessible channel")
			}
		case r < 78:
			_, err := h.Service.MarkTopicAsRead(ctx, u.Caller, chat.MarkTopicAsReadRequest{StreamID: channels[name], TopicName: topics[rng.IntN(len(topics))]})
			if err != nil && !strings.Contains(err.Error(), "No such topic") && !strings.Contains(err.Error(), "Invalid channel ID") {
				require.NoError(t, err)
			}
		case r < 80:
			_, err := h.Service.MarkStreamAsRead(ctx, u.Caller, chat.MarkStreamAsReadRequest{StreamID: channels[name]})
			if err != nil && !strings.Contains(err.Error(), "Invalid channel ID") {
				require.NoError(t, err)
			}
		case r < 81:
			_, err := h.Service.MarkAllAsRead(ctx, u.Caller)
			require.NoError(t, err)
		case r < 84:
			// Moves and deletions by an administrator, who may do both:
			// a topic (some of it, or all) to another topic or channel.
			msgs := feed(h.Owner)
			if len(msgs) == 0 {
				continue
			}
			m := msgs[rng.IntN(len(msgs))]
			if m.Type != "stream" {
				continue
			}
			req := chat.UpdateMessageRequest{MessageID: m.ID, PropagateMode: ptr([]string{"change_one", "change_later", "change_all"}[rng.IntN(3)])}
			switch rng.IntN(3) {
			case 0:
				req.Topic = ptr(topics[rng.IntN(len(topics))])
			case 1:
				to := channels[names[rng.IntN(2)]] // the public ones
				req.StreamID = &to
			default:
				_, err := h.Service.DeleteMessage(ctx, h.Owner.Caller, chat.DeleteMessageRequest{MessageID: m.ID})
				require.NoError(t, err)
				soon = remembered
				continue
			}
			if _, err := h.Service.UpdateMessage(ctx, h.Owner.Caller, req); err != nil {
				require.Contains(t, err.Error(), "Nothing to change")
			}
			soon = remembered
		case r < 88:
			toggleSub(u, name)
		case r < 94:
			if !subscribed[[2]int64{u.ID, channels[name]}] {
				continue
			}
			_, err := h.Service.UpdateSubscriptionProperties(ctx, u.Caller, chat.UpdateSubscriptionPropertiesRequest{SubscriptionData: []chat.SubscriptionProperty{
				{StreamID: channels[name], Property: "is_muted", Value: json.RawMessage(strconv.FormatBool(rng.IntN(2) == 0))}}})
			require.NoError(t, err)
			soon = remembered
		case r < 97:
			// Mute or unmute another user (the owner, who moves, too).
			other := append(slices.Clone(users), h.Owner)[rng.IntN(len(users)+1)]
			if other.ID == u.ID {
				continue
			}
			if mutes[u.ID] == nil {
				mutes[u.ID] = map[int64]bool{}
			}
			var err error
			if mutes[u.ID][other.ID] {
				_, err = h.Service.UnmuteUser(ctx, u.Caller, chat.MuteUserRequest{MutedUserID: other.ID})
			} else {
				_, err = h.Service.MuteUser(ctx, u.Caller, chat.MuteUserRequest{MutedUserID: other.ID})
			}
			require.NoError(t, err)
			mutes[u.ID][other.ID] = !mutes[u.ID][other.ID]
			soon = remembered
		default:
			_, err := h.Service.UpdateUserTopic(ctx, u.Caller, chat.UpdateUserTopicRequest{StreamID: channels[name],
				Topic: topics[rng.IntN(len(topics))], VisibilityPolicy: rng.IntN(4)})
			if err != nil && !strings.Contains(err.Error(), "Invalid channel ID") {
				require.NoError(t, err)
			}
			soon = remembered
		}
	}
	t.Logf("seed %d: %d steps, %d comparisons of %d unread messages in all", seed, steps, checks, unread)
	require.Positive(t, unread)
	hits, merges, misses := chat.UnreadCacheStats(h.Service)
	t.Logf("remembered states: %d used as they were, %d with newer messages added, %d stale", hits, merges, misses)
	if remembered {
		require.Positive(t, hits, "a remembered state was used")
		require.Positive(t, merges, "newer messages were added to a remembered state")
	} else {
		require.Zero(t, hits+merges+misses, "no state is remembered below the least size")
	}
}

// checkUnreads compares GetUnreadMessages with the brute force over the
// reader's fetched messages.
func checkUnreads(t *testing.T, h *chattest.Harness, u chattest.User, seed uint64, msgs []chat.FetchedMessage, remembered bool) int {
	t.Helper()
	ctx := context.Background()
	subs, err := h.Service.GetSubscriptions(ctx, u.Caller, chat.GetSubscriptionsRequest{})
	require.NoError(t, err)
	active, mutedChannel := map[int64]bool{}, map[int64]bool{}
	for _, s := range subs.Subscriptions {
		active[s.StreamID] = true
		mutedChannel[s.StreamID] = s.IsMuted
	}
	policies, err := h.Service.GetUserTopics(ctx, u.Caller)
	require.NoError(t, err)
	policy := map[string]int{}
	for _, p := range policies.UserTopics {
		policy[fmt.Sprint(p.StreamID, "\x00", strings.ToLower(p.TopicName))] = p.VisibilityPolicy
	}
	want := chat.UnreadMessages{PMs: []chat.UnreadDirect{}, Streams: []chat.UnreadChannelTopic{}, Huddles: []chat.UnreadGroupDirect{}, Mentions: []int64{}}
	topicIdx, pmIdx, hudIdx := map[string]int{}, map[int64]int{}, map[string]int{}
	for _, m := range msgs {
		if slices.Contains(m.Flags, "read") {
			continue
		}
		muted := false
		if m.Type == "stream" {
			sid := *m.StreamID
			if !active[sid] {
				continue
			}
			topic := m.Subject
			p := policy[fmt.Sprint(sid, "\x00", strings.ToLower(topic))]
			if topic == "general chat" {
				p = policy[fmt.Sprint(sid, "\x00", "")]
			}
			muted = p == chat.TopicPolicyMuted || mutedChannel[sid] && p != chat.TopicPolicyUnmuted && p != chat.TopicPolicyFollowed
			if !muted {
				want.Count++
			}
			key := fmt.Sprint(sid, "\x00", strings.ToLower(topic))
			if _, ok := topicIdx[key]; !ok {
				topicIdx[key] = len(want.Streams)
				want.Streams = append(want.Streams, chat.UnreadChannelTopic{StreamID: sid, Topic: topic})
			}
			want.Streams[topicIdx[key]].UnreadMessageIDs = append(want.Streams[topicIdx[key]].UnreadMessageIDs, m.ID)
		} else {
			want.Count++
			var members []int64
			for _, r := range m.DisplayRecipient.([]chat.DisplayUser) {
				members = append(members, r.ID)
			}
			slices.Sort(members)
			if len(members) <= 2 {
				other := m.SenderID
				if other == u.ID {
					other = u.ID
					for _, id := range members {
						if id != u.ID {
							other = id
						}
					}
				}
				if _, ok := pmIdx[other]; !ok {
					pmIdx[other] = len(want.PMs)
					want.PMs = append(want.PMs, chat.UnreadDirect{OtherUserID: other, SenderID: other})
				}
				want.PMs[pmIdx[other]].UnreadMessageIDs = append(want.PMs[pmIdx[other]].UnreadMessageIDs, m.ID)
			} else {
				key := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(members)), ","), "[]")
				if _, ok := hudIdx[key]; !ok {
					hudIdx[key] = len(want.Huddles)
					want.Huddles = append(want.Huddles, chat.UnreadGroupDirect{UserIDsString: key})
				}
				want.Huddles[hudIdx[key]].UnreadMessageIDs = append(want.Huddles[hudIdx[key]].UnreadMessageIDs, m.ID)
			}
		}
		if slices.Contains(m.Flags, "mentioned") || slices.Contains(m.Flags, "wildcard_mentioned") && !muted {
			want.Mentions = append(want.Mentions, m.ID)
		}
	}
	slices.SortFunc(want.Streams, func(a, b chat.UnreadChannelTopic) int {
		if a.StreamID != b.StreamID {
			return int(a.StreamID - b.StreamID)
		}
		return strings.Compare(strings.ToLower(a.Topic), strings.ToLower(b.Topic))
	})
	slices.SortFunc(want.PMs, func(a, b chat.UnreadDirect) int { return int(a.OtherUserID - b.OtherUserID) })
	slices.SortFunc(want.Huddles, func(a, b chat.UnreadGroupDirect) int { return strings.Compare(a.UserIDsString, b.UserIDsString) })
	got, err := h.Service.GetUnreadMessages(ctx, u.Caller, chat.GetUnreadMessagesRequest{})
	require.NoError(t, err)
	// A topic is shown with the case of its oldest unread message.
	require.Equal(t, want, *got, "seed %d: unread messages of %s", seed, u.FullName)
	if remembered {
		// Asked again with nothing changed, and through a registration
		// (read in its snapshot).
		again, err := h.Service.GetUnreadMessages(ctx, u.Caller, chat.GetUnreadMessagesRequest{})
		require.NoError(t, err)
		require.Equal(t, want, *again, "seed %d: unread messages of %s asked again", seed, u.FullName)
		got.Count = -1 // an answer's holder may change it
		reg, err := h.Service.Register(ctx, u.Caller, chat.RegisterRequest{FetchEventTypes: &[]string{"message", "update_message_flags"}})
		require.NoError(t, err)
		require.Equal(t, want, *reg.State["unread_msgs"].(*chat.UnreadMessages), "seed %d: unread messages of %s at register", seed, u.FullName)
	}
	return want.Count
}
