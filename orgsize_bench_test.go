package chat_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/storage"
)

// BenchmarkOrgSize measures requests whose answer does not grow with the
// organization in organizations of 10, 1,000 and 10,000 users, every user
// subscribed to 50 of 100 channels: their cost should stay flat (within
// 1.5x from the smallest to the largest). Listings whose answer grows with
// the organization report their cost per returned item (ns/item).
//
//	go test -run XXX -bench OrgSize -benchtime 2s .
//
// TEAMCHAT_BENCH_SIZES overrides the sizes (comma-separated user counts);
// TEAMCHAT_TEST_STORE=postgres runs it on PostgreSQL. Seeding 10,000 users
// with 500,000 subscriptions takes a while (it is done once per size).
func BenchmarkOrgSize(b *testing.B) {
	sizes := []int{10, 1000, 10000}
	if env := os.Getenv("TEAMCHAT_BENCH_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("TEAMCHAT_BENCH_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
	for _, op := range []struct {
		name string
		run  func(b *testing.B, o *seededOrg) int // returns items per call (0: not a listing)
	}{
		{"GetOwnUser", func(b *testing.B, o *seededOrg) int {
			_, err := o.h.Service.GetOwnUser(ctx, o.me)
			check(b, err)
			return 0
		}},
		{"GetChannel", func(b *testing.B, o *seededOrg) int {
			_, err := o.h.Service.GetChannel(ctx, o.me, chat.GetChannelRequest{StreamID: o.channels[0]})
			check(b, err)
			return 0
		}},
		{"GetChannels", func(b *testing.B, o *seededOrg) int {
			_, err := o.h.Service.GetChannels(ctx, o.me, chat.GetChannelsRequest{})
			check(b, err)
			return 0
		}},
		{"GetSubscriptions", func(b *testing.B, o *seededOrg) int {
			_, err := o.h.Service.GetSubscriptions(ctx, o.me, chat.GetSubscriptionsRequest{})
			check(b, err)
			return 0
		}},
		{"SubscribeUnsubscribe", func(b *testing.B, o *seededOrg) int {
			_, err := o.h.Service.Subscribe(ctx, o.me, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: "channel-99"}}})
			check(b, err)
			_, err = o.h.Service.Unsubscribe(ctx, o.me, chat.UnsubscribeRequest{Subscriptions: []string{"channel-99"}})
			check(b, err)
			return 0
		}},
		{"UpdateSettings", func(b *testing.B, o *seededOrg) int {
			o.flip = !o.flip
			req := chat.UpdateSettingsRequest{}
			req.HighContrastMode = &o.flip
			_, err := o.h.Service.UpdateSettings(ctx, o.me, req)
			check(b, err)
			return 0
		}},
		{"GroupPermissionCheck", func(b *testing.B, o *seededOrg) int {
			// Is the caller in role:members (through nested subgroups)?
			resp, err := o.h.Service.IsUserGroupMember(ctx, o.me, chat.IsUserGroupMemberRequest{UserGroupID: o.membersGroup, UserID: o.me.UserID})
			check(b, err)
			if !resp.IsUserGroupMember {
				b.Fatal("the caller is a member")
			}
			return 0
		}},
		{"GetUsers", func(b *testing.B, o *seededOrg) int {
			resp, err := o.h.Service.GetUsers(ctx, o.me, chat.GetUsersRequest{})
			check(b, err)
			return len(resp.Members)
		}},
		{"GetUserGroups", func(b *testing.B, o *seededOrg) int {
			resp, err := o.h.Service.GetUserGroups(ctx, o.me, chat.GetUserGroupsRequest{})
			check(b, err)
			n := 0
			for _, g := range resp.UserGroups {
				n += 1 + len(g.Members)
			}
			return n
		}},
		// A send to channel-0, which every user of the organization is
		// subscribed to: its cost must not follow the channel's size.
		{"SendMessage", func(b *testing.B, o *seededOrg) int {
			resp, err := o.h.Service.SendMessage(ctx, o.me, chat.SendMessageRequest{Type: "channel",
				To: chat.ToChannelID(o.channels[0]), Topic: ptr("bench"), Content: "Hello **everyone**", ReadBySender: ptr(true)})
			check(b, err)
			o.lastMessage = resp.ID
			return 0
		}},
		{"AddRemoveReaction", func(b *testing.B, o *seededOrg) int {
			// A reaction to a message of the channel everyone is in, and
			// its removal: the issue's "no more in a 10,000-subscriber
			// channel than in a 10-member one".
			if o.reacted == 0 {
				resp, err := o.h.Service.SendMessage(ctx, o.me, chat.SendMessageRequest{Type: "channel",
					To: chat.ToChannelID(o.channels[0]), Topic: ptr("reactions"), Content: "react to me"})
				check(b, err)
				o.reacted = resp.ID
			}
			_, err := o.h.Service.AddReaction(ctx, o.me, chat.AddReactionRequest{MessageID: o.reacted, EmojiName: "tada"})
			check(b, err)
			_, err = o.h.Service.RemoveReaction(ctx, o.me, chat.RemoveReactionRequest{MessageID: o.reacted, EmojiName: ptr("tada")})
			check(b, err)
			return 0
		}},
		{"GetMessage", func(b *testing.B, o *seededOrg) int {
			if o.lastMessage == 0 {
				resp, err := o.h.Service.SendMessage(ctx, o.me, chat.SendMessageRequest{Type: "channel",
					To: chat.ToChannelID(o.channels[0]), Topic: ptr("bench"), Content: "x"})
				check(b, err)
				o.lastMessage = resp.ID
			}
			_, err := o.h.Service.GetMessage(ctx, o.me, chat.GetMessageRequest{MessageID: o.lastMessage})
			check(b, err)
			return 0
		}},
		// The newest 100 messages of channel-0 (those the sends above wrote).
		{"GetMessagesNewest100", func(b *testing.B, o *seededOrg) int {
			resp, err := o.h.Service.GetMessages(ctx, o.me, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100),
				Narrow: ptr(fmt.Sprintf(`[{"operator": "channel", "operand": %d}]`, o.channels[0]))})
			check(b, err)
			return len(resp.Messages)
		}},
		{"GetSubscribersOfMyChannels", func(b *testing.B, o *seededOrg) int {
			resp, err := o.h.Service.GetSubscriptions(ctx, o.me, chat.GetSubscriptionsRequest{IncludeSubscribers: ptr(true)})
			check(b, err)
			n := 0
			for _, s := range resp.Subscriptions {
				n += 1 + len(s.Subscribers)
			}
			return n
		}},
	} {
		for _, size := range sizes {
			b.Run(fmt.Sprintf("%s/users=%d", op.name, size), func(b *testing.B) {
				o := seedOrg(b, size)
				b.ResetTimer()
				items := 0
				for b.Loop() {
					items += op.run(b, o)
				}
				if items > 0 {
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(items), "ns/item")
				}
			})
		}
	}
}

func check(b *testing.B, err error) {
	if err != nil {
		b.Fatal(err)
	}
}

// seededOrg is an organization of a given size for the benchmarks.
type seededOrg struct {
	h            *chattest.Harness
	me           chat.Caller
	channels     []int64
	membersGroup int64
	flip         bool
	lastMessage  int64
	reacted      int64
}

var (
	seedMu sync.Mutex
	seeded = map[int]*seededOrg{}
)

const (
	benchChannels     = 100
	benchSubsPerUser  = 50
	benchUsersPerSeed = 1000
)

// seedOrg builds (once per size and process) an organization with users
// members, benchChannels public channels and benchSubsPerUser
// subscriptions per user, written through the store in batches.
func seedOrg(b *testing.B, users int) *seededOrg {
	seedMu.Lock()
	defer seedMu.Unlock()
	if o := seeded[users]; o != nil {
		return o
	}
	ctx := context.Background()
	// The harness outlives this benchmark: it is closed with the process.
	h := chattest.New(&keepAlive{B: b})
	st := h.Store
	groups := map[string]int64{}
	for _, name := range []string{chat.GroupMembers, chat.GroupFullMembers, chat.GroupAdministrators, chat.GroupEveryone, chat.GroupNobody} {
		g, err := st.GetGroupByName(ctx, h.RealmID, name)
		check(b, err)
		groups[name] = g.ID
	}
	o := &seededOrg{h: h, membersGroup: groups[chat.GroupMembers]}
	err := st.InTx(ctx, func(tx storage.Store) error {
		for i := range benchChannels {
			c := &storage.Stream{RealmID: h.RealmID, Name: fmt.Sprintf("channel-%d", i), DateCreated: 1,
				HistoryPublicToSubscribers: true,
				CanAddSubscribersGroupID:   groups[chat.GroupNobody], CanRemoveSubscribersGroupID: groups[chat.GroupAdministrators],
				CanAdministerChannelGroupID: groups[chat.GroupAdministrators], CanSendMessageGroupID: groups[chat.GroupEveryone],
				CanSubscribeGroupID: groups[chat.GroupNobody]}
			if err := tx.CreateStream(ctx, c); err != nil {
				return err
			}
			o.channels = append(o.channels, c.ID)
		}
		return nil
	})
	check(b, err)
	for start := 0; start < users; start += benchUsersPerSeed {
		err := st.InTx(ctx, func(tx storage.Store) error {
			var ids []int64
			for i := start; i < min(users, start+benchUsersPerSeed); i++ {
				u := &storage.User{RealmID: h.RealmID, Email: fmt.Sprintf("user%d@example.com", i), FullName: fmt.Sprintf("User %d", i),
					Role: chat.RoleMember, IsActive: true, APIKey: fmt.Sprintf("%032d", i), AvatarSource: "G", AvatarVersion: 1}
				if err := tx.CreateUser(ctx, u); err != nil {
					return err
				}
				ids = append(ids, u.ID)
				// Channels 0..48 for everyone (channel-99 stays free for the
				// subscribe benchmark), one more chosen by the user's number.
				for k := range benchSubsPerUser {
					ch := k
					if k == benchSubsPerUser-1 {
						ch = benchSubsPerUser - 1 + i%(benchChannels-benchSubsPerUser)
					}
					sub := &storage.Subscription{RealmID: h.RealmID, UserID: u.ID, StreamID: o.channels[ch], Active: true, Color: "#76ce90"}
					if err := tx.Subscribe(ctx, sub, 1); err != nil {
						return err
					}
				}
			}
			for _, g := range []string{chat.GroupMembers, chat.GroupFullMembers} {
				if err := tx.AddGroupMembers(ctx, h.RealmID, groups[g], ids); err != nil {
					return err
				}
			}
			if start == 0 {
				o.me = chat.Caller{RealmID: h.RealmID, UserID: ids[0]}
			}
			return nil
		})
		check(b, err)
	}
	if st, ok := st.(interface{ Analyze(context.Context) error }); ok {
		check(b, st.Analyze(ctx)) // as autovacuum would after a bulk load
	}
	seeded[users] = o
	return o
}

// keepAlive lends a benchmark's helpers to a harness without tying the
// harness's cleanup to that benchmark: seeded organizations are shared by
// every benchmark of the run.
type keepAlive struct{ *testing.B }

func (k *keepAlive) Cleanup(func()) {}

// TempDir is a directory that outlives the benchmark that asked for it.
func (k *keepAlive) TempDir() string {
	dir, err := os.MkdirTemp("", "teamchat-bench-")
	if err != nil {
		k.Fatal(err)
	}
	return dir
}
