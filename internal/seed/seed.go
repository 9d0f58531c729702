// Package seed fills a store with a realistic organization quickly, for
// benchmarks and load tests: users, channels of several sizes with their
// subscribers, a message history with topics, direct messages, mentions
// and read state. It writes through the storage contract in large
// transactions (the Service is used only to create the organization), so
// a million messages take a minute or two on SQLite, not hours.
package seed

import (
	"context"
	"fmt"
	"math/rand/v2"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage"
)

// Config shapes the organization.
type Config struct {
	Users int
	// ChannelSizes are the subscriber counts of the channels (each at most
	// Users); the first user is in every channel.
	ChannelSizes []int
	Messages     int
	// DirectShare is the share of messages that are direct messages
	// between two users (0..1).
	DirectShare float64
	// MentionShare is the share of channel messages that mention one
	// subscriber.
	MentionShare float64
	// ReadShare is how much of each subscriber's channel history is read
	// (from the oldest message on).
	ReadShare float64
	// Topics per channel.
	Topics int
	Seed   uint64
	// Batch is the number of rows per transaction (default 2000).
	Batch int
	// Readers adds users with a chosen unread state (none when empty),
	// for measuring unread state and marking as read: see Reader.
	Readers []Reader
}

// Reader is a user added after Config.Users (in Org.Readers) whose read
// state is set exactly rather than by ReadShare: subscribed to the first
// Channels channels (before any message, so they received them all),
// they have read all their messages but the Unread newest, one range per
// channel. Readers send no message, take no part in direct messages and
// are never mentioned, so their only unread messages are those Unread,
// and the random choices of the rest of the organization (its users,
// subscribers and messages) are the same as without them.
type Reader struct {
	// Channels is how many of the channels, from the first, the reader
	// is subscribed to (every channel when 0 or more than there are).
	Channels int
	// Unread is how many of the newest messages of those channels stay
	// unread (all of them when there are fewer).
	Unread int
}

// Org is what Run made.
type Org struct {
	RealmID  int64
	Owner    chat.Caller
	OwnerKey string
	Users    []int64 // the first is in every channel
	Channels []Channel
	// Readers are the users of Config.Readers, in order.
	Readers []int64
	// Messages counts what was written.
	Messages, Direct int
	MaxID            int64
}

// Channel is one seeded channel.
type Channel struct {
	ID          int64
	Name        string
	Subscribers []int64
}

var words = []string{"lunch", "deploy", "review", "meeting", "release", "design", "bug", "coffee", "plan", "budget",
	"roadmap", "customer", "incident", "metrics", "sprint", "launch", "question", "answer", "update", "draft",
	"team", "office", "travel", "holiday", "server", "database", "query", "index", "cache", "latency"}

// Run creates the organization with svc (so it has its system groups and
// owner) and fills it through st.
func Run(ctx context.Context, svc *chat.Service, st storage.Store, cfg Config) (*Org, error) {
	if cfg.Batch <= 0 {
		cfg.Batch = 2000
	}
	if cfg.Topics <= 0 {
		cfg.Topics = 20
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed))
	realm, err := svc.CreateRealm(ctx, chat.CreateRealmRequest{Name: "Seeded", URL: fmt.Sprintf("http://seed%d.example.com", cfg.Seed),
		OwnerEmail: "owner@seed.example.com", OwnerFullName: "Seed Owner", OwnerPassword: "a long seeded password",
		SkipOnboarding: true}) // the seeded channels and history only
	if err != nil {
		return nil, fmt.Errorf("seed: create organization: %w", err)
	}
	org := &Org{RealmID: realm.RealmID, Owner: chat.Caller{RealmID: realm.RealmID, UserID: realm.OwnerID}, OwnerKey: realm.OwnerAPIKey}
	org.Users = append(org.Users, realm.OwnerID)
	members, err := st.GetGroupByName(ctx, org.RealmID, chat.GroupMembers)
	if err != nil {
		return nil, err
	}
	for start := 1; start < cfg.Users; start += cfg.Batch {
		err := st.InTx(ctx, func(tx storage.Store) error {
			var ids []int64
			for i := start; i < min(cfg.Users, start+cfg.Batch); i++ {
				u := &storage.User{RealmID: org.RealmID, Email: fmt.Sprintf("user%d@seed.example.com", i), FullName: fmt.Sprintf("Seed User %d", i),
					Role: chat.RoleMember, IsActive: true, APIKey: fmt.Sprintf("seed%028d", i), AvatarSource: "G", AvatarVersion: 1}
				if err := tx.CreateUser(ctx, u); err != nil {
					return err
				}
				ids = append(ids, u.ID)
			}
			org.Users = append(org.Users, ids...)
			return tx.AddGroupMembers(ctx, org.RealmID, members.ID, ids)
		})
		if err != nil {
			return nil, fmt.Errorf("seed: users: %w", err)
		}
	}
	everyone, err := st.GetGroupByName(ctx, org.RealmID, chat.GroupEveryone)
	if err != nil {
		return nil, err
	}
	admins, err := st.GetGroupByName(ctx, org.RealmID, chat.GroupAdministrators)
	if err != nil {
		return nil, err
	}
	for i, size := range cfg.ChannelSizes {
		size = min(size, len(org.Users))
		ch := &storage.Stream{RealmID: org.RealmID, Name: fmt.Sprintf("channel %d (%d)", i, size), DateCreated: 1,
			HistoryPublicToSubscribers: true, CanAddSubscribersGroupID: members.ID, CanRemoveSubscribersGroupID: admins.ID,
			CanAdministerChannelGroupID: admins.ID, CanSendMessageGroupID: everyone.ID, CanSubscribeGroupID: members.ID}
		if err := st.CreateStream(ctx, ch); err != nil {
			return nil, fmt.Errorf("seed: channel: %w", err)
		}
		subs := append([]int64{org.Users[0]}, pick(rng, org.Users[1:], size-1)...)
		for start := 0; start < len(subs); start += cfg.Batch {
			err := st.InTx(ctx, func(tx storage.Store) error {
				for _, u := range subs[start:min(len(subs), start+cfg.Batch)] {
					if err := tx.Subscribe(ctx, &storage.Subscription{RealmID: org.RealmID, UserID: u, StreamID: ch.ID, Color: "#76ce90"}, 1); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("seed: subscriptions: %w", err)
			}
		}
		org.Channels = append(org.Channels, Channel{ID: ch.ID, Name: ch.Name, Subscribers: subs})
	}
	if err := addReaders(ctx, st, org, cfg, members.ID); err != nil {
		return nil, err
	}
	if err := messages(ctx, st, org, cfg, rng); err != nil {
		return nil, err
	}
	return org, nil
}

// addReaders creates the users of cfg.Readers and subscribes them to
// their channels (before the messages: their periods start at 0).
func addReaders(ctx context.Context, st storage.Store, org *Org, cfg Config, membersID int64) error {
	for i, r := range cfg.Readers {
		err := st.InTx(ctx, func(tx storage.Store) error {
			email, key := ReaderCredentials(i)
			u := &storage.User{RealmID: org.RealmID, Email: email, FullName: fmt.Sprintf("Seed Reader %d", i),
				Role: chat.RoleMember, IsActive: true, APIKey: key, AvatarSource: "G", AvatarVersion: 1}
			if err := tx.CreateUser(ctx, u); err != nil {
				return err
			}
			if err := tx.AddGroupMembers(ctx, org.RealmID, membersID, []int64{u.ID}); err != nil {
				return err
			}
			for _, ch := range org.Channels[:readerChannels(r, org)] {
				if err := tx.Subscribe(ctx, &storage.Subscription{RealmID: org.RealmID, UserID: u.ID, StreamID: ch.ID, Color: "#76ce90"}, 1); err != nil {
					return err
				}
			}
			org.Readers = append(org.Readers, u.ID)
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed: readers: %w", err)
		}
	}
	return nil
}

// ReaderCredentials are the email and API key of the i-th reader of
// Config.Readers (for requests through HTTP).
func ReaderCredentials(i int) (email, key string) {
	return fmt.Sprintf("reader%d@seed.example.com", i), fmt.Sprintf("seedreader%022d", i)
}

// readerChannels is how many of the first channels r is subscribed to.
func readerChannels(r Reader, org *Org) int {
	if r.Channels <= 0 || r.Channels > len(org.Channels) {
		return len(org.Channels)
	}
	return r.Channels
}

// channelMessage is a channel message written, by its channel's index in
// Org.Channels, for the readers' read state.
type channelMessage struct {
	id      int64
	channel int
}

// readReaders gives each reader one range per channel covering all but
// its Unread newest messages (msgs ascending).
func readReaders(ctx context.Context, st storage.Store, org *Org, cfg Config, msgs []channelMessage) error {
	for i, r := range cfg.Readers {
		n := readerChannels(r, org)
		first := make([]int64, n) // each channel's first message
		for _, m := range msgs {
			if m.channel < n && first[m.channel] == 0 {
				first[m.channel] = m.id
			}
		}
		// Everything up to last is read: last is just before the
		// Unread-th newest message of the reader's channels.
		last, unread := org.MaxID, 0
		for k := len(msgs) - 1; k >= 0 && unread < r.Unread; k-- {
			if msgs[k].channel < n {
				last, unread = msgs[k].id-1, unread+1
			}
		}
		if unread < r.Unread {
			continue // fewer messages than Unread: nothing read
		}
		err := st.InTx(ctx, func(tx storage.Store) error {
			for c, f := range first {
				if f != 0 && f <= last {
					if err := tx.AddReadRange(ctx, org.RealmID, org.Readers[i], org.Channels[c].ID, f, last); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed: readers' read state: %w", err)
		}
	}
	return nil
}

// pick returns n distinct users of from.
func pick(rng *rand.Rand, from []int64, n int) []int64 {
	n = min(n, len(from))
	perm := rng.Perm(len(from))[:n]
	out := make([]int64, n)
	for i, p := range perm {
		out[i] = from[p]
	}
	return out
}

func messages(ctx context.Context, st storage.Store, org *Org, cfg Config, rng *rand.Rand) error {
	if len(org.Channels) == 0 && cfg.DirectShare < 1 {
		cfg.DirectShare = 1
	}
	conversations := map[[2]int64]int64{}
	firstOf := map[int64]int64{} // channel -> first message ID
	channelIndex := map[int64]int{}
	for i, ch := range org.Channels {
		channelIndex[ch.ID] = i
	}
	var written []channelMessage // for the readers only
	for start := 0; start < cfg.Messages; start += cfg.Batch {
		err := st.InTx(ctx, func(tx storage.Store) error {
			for range min(cfg.Batch, cfg.Messages-start) {
				text := sentence(rng)
				m := &storage.Message{RealmID: org.RealmID, Content: text, RenderedContent: "<p>" + text + "</p>", DateSent: 1_700_000_000 + int64(org.Messages), SendingClient: "seed"}
				var readers []storage.UserMessage
				if rng.Float64() < cfg.DirectShare && len(org.Users) > 1 {
					a, b := org.Users[rng.IntN(len(org.Users))], org.Users[rng.IntN(len(org.Users))]
					if a == b {
						b = org.Users[0]
					}
					key := [2]int64{min(a, b), max(a, b)}
					conv, ok := conversations[key]
					if !ok {
						var err error
						if conv, err = tx.DirectConversation(ctx, org.RealmID, []int64{a, b}); err != nil {
							return err
						}
						conversations[key] = conv
					}
					m.SenderID, m.ConversationID = a, &conv
					readers = append(readers, storage.UserMessage{UserID: a, Flags: storage.FlagPrivate | storage.FlagRead})
					if b != a {
						readers = append(readers, storage.UserMessage{UserID: b, Flags: storage.FlagPrivate})
					}
					org.Direct++
				} else {
					ch := org.Channels[rng.IntN(len(org.Channels))]
					m.SenderID = ch.Subscribers[rng.IntN(len(ch.Subscribers))]
					m.StreamID = &ch.ID
					m.Topic = fmt.Sprintf("%s %d", words[rng.IntN(len(words))], rng.IntN(cfg.Topics))
					if rng.Float64() < cfg.MentionShare {
						readers = append(readers, storage.UserMessage{UserID: ch.Subscribers[rng.IntN(len(ch.Subscribers))], Flags: storage.FlagMentioned})
					}
				}
				if err := tx.CreateMessage(ctx, m, readers); err != nil {
					return err
				}
				if m.StreamID != nil && firstOf[*m.StreamID] == 0 {
					firstOf[*m.StreamID] = m.ID
				}
				if m.StreamID != nil && len(cfg.Readers) > 0 {
					written = append(written, channelMessage{id: m.ID, channel: channelIndex[*m.StreamID]})
				}
				org.Messages++
				org.MaxID = m.ID
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed: messages: %w", err)
		}
	}
	if err := readReaders(ctx, st, org, cfg, written); err != nil {
		return err
	}
	// Read state: each subscriber has read the oldest ReadShare of each
	// channel's history, one range each.
	if cfg.ReadShare <= 0 {
		return nil
	}
	for _, ch := range org.Channels {
		first := firstOf[ch.ID]
		if first == 0 {
			continue
		}
		last := first + int64(float64(org.MaxID-first)*cfg.ReadShare)
		for start := 0; start < len(ch.Subscribers); start += cfg.Batch {
			err := st.InTx(ctx, func(tx storage.Store) error {
				for _, u := range ch.Subscribers[start:min(len(ch.Subscribers), start+cfg.Batch)] {
					if err := tx.AddReadRange(ctx, org.RealmID, u, ch.ID, first, last); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("seed: read state: %w", err)
			}
		}
	}
	return nil
}

func sentence(rng *rand.Rand) string {
	n := 4 + rng.IntN(12)
	b := make([]byte, 0, n*8)
	for i := range n {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[rng.IntN(len(words))]...)
	}
	return string(b)
}
