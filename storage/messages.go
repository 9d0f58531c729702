package storage

import "context"

// Messages, the sparse per-user state, reactions and message windows.

// Message is one message, stored once whatever its number of readers: a
// channel message (StreamID set, with a topic) or a direct message
// (ConversationID set). IDs increase in send order across the Store.
type Message struct {
	ID             int64  `bun:"id,pk,autoincrement"`
	RealmID        int64  `bun:"realm_id"`
	SenderID       int64  `bun:"sender_id"`
	StreamID       *int64 `bun:"stream_id"`
	ConversationID *int64 `bun:"conversation_id"`
	// Topic is the channel message's topic, case preserved; lookups by
	// topic are case-insensitive (Fold). Empty for direct messages (and
	// for the empty topic).
	Topic           string `bun:"topic"`
	Content         string `bun:"content"`
	RenderedContent string `bun:"rendered_content"`
	DateSent        int64  `bun:"date_sent"`
	SendingClient   string `bun:"sending_client"`
	HasLink         bool   `bun:"has_link"`
	HasImage        bool   `bun:"has_image"`
	HasAttachment   bool   `bun:"has_attachment"`
	IsMeMessage     bool   `bun:"is_me_message"`
	// StreamWildcard and TopicWildcard record @**all**-style and
	// @**topic** mentions: facts of the message from which each reader's
	// wildcard flags are computed, instead of a row per reader.
	StreamWildcard bool `bun:"stream_wildcard"`
	TopicWildcard  bool `bun:"topic_wildcard"`
	// EditHistory is the reference's edit_history: a JSON array, newest
	// entry first ("" when never edited or moved). LastEditTime is when it
	// was last edited or moved.
	EditHistory  string `bun:"edit_history"`
	LastEditTime *int64 `bun:"last_edit_time"`
	// Type is MessageNormal or MessageResolveNotice.
	Type int `bun:"message_type"`
}

// Message types.
const (
	MessageNormal = 0
	// MessageResolveNotice says a topic was resolved or unresolved.
	MessageResolveNotice = 2
)

// MessageEdit changes messages: their channel and topic (moves), the
// content of one, and their edit history.
type MessageEdit struct {
	StreamID *int64
	Topic    *string
	// Content, when not nil, carries the new Content, RenderedContent,
	// Has*, IsMeMessage, StreamWildcard and TopicWildcard of the message.
	Content *Message
	// HistoryEntry is the JSON object put first in each message's edit
	// history; LastEditTime is set with it.
	HistoryEntry string
	LastEditTime int64
}

// UserMessage is a reader's state of one message where it differs from
// the default: every participant of a direct message has one; a channel
// message has one only for readers it mentions or who starred, collapsed
// or (historically) touched it. Flags are the reference's bits (Flag*).
type UserMessage struct {
	RealmID   int64 `bun:"realm_id"`
	UserID    int64 `bun:"user_id,pk"`
	MessageID int64 `bun:"message_id,pk"`
	Flags     int64 `bun:"flags"`
}

// The bits of UserMessage.Flags, in the reference's order: the one list
// of message flags (the API's names for them are chat's; the store's
// queries write masks of them as numbers, to match its partial indexes).
// FlagGroupMentioned, FlagForceExpand and FlagForceCollapse are the
// reference's too, and never set by its send path or ours; FlagPrivate is
// internal (not in the API's flag lists).
const (
	FlagRead                    int64 = 1 << 0
	FlagStarred                 int64 = 1 << 1
	FlagCollapsed               int64 = 1 << 2
	FlagMentioned               int64 = 1 << 3
	FlagStreamWildcardMentioned int64 = 1 << 4
	FlagTopicWildcardMentioned  int64 = 1 << 5
	FlagGroupMentioned          int64 = 1 << 6
	FlagForceExpand             int64 = 1 << 7
	FlagForceCollapse           int64 = 1 << 8
	FlagHasAlertWord            int64 = 1 << 9
	FlagHistorical              int64 = 1 << 10
	FlagPrivate                 int64 = 1 << 11
)

// DirectMessageRef is a direct message and its conversation.
type DirectMessageRef struct {
	MessageID      int64 `bun:"message_id"`
	ConversationID int64 `bun:"conversation_id"`
}

// MessageStore persists messages and the sparse per-user state.
type MessageStore interface {
	// DirectConversation returns the ID of the realm's direct conversation
	// among exactly userIDs (duplicates ignored; the sender is one of
	// them), creating it on first use. A user that is missing or of
	// another realm gives ErrNotFound.
	DirectConversation(ctx context.Context, realmID int64, userIDs []int64) (int64, error)
	// FindDirectConversation returns the ID of the conversation among
	// exactly userIDs, or ErrNotFound when there is none yet.
	FindDirectConversation(ctx context.Context, realmID int64, userIDs []int64) (int64, error)
	// ConversationMembers lists the participants of a direct
	// conversation, ascending (empty for a missing one).
	ConversationMembers(ctx context.Context, realmID, conversationID int64) ([]int64, error)
	// ConversationMembersOf lists the participants of each of the
	// conversations, ascending, by conversation (missing ones left out).
	ConversationMembersOf(ctx context.Context, realmID int64, conversationIDs []int64) (map[int64][]int64, error)
	// CreateMessage inserts m (setting m.ID, unless it is set: an ID
	// from ReserveMessageIDs) and the readers' rows, whose MessageID it
	// sets, in one transaction. A sender, channel or conversation that is
	// missing or of another realm gives ErrNotFound.
	CreateMessage(ctx context.Context, m *Message, readers []UserMessage) error
	// ReserveMessageIDs returns n new message IDs, ascending and above
	// every ID given so far, for messages the enclosing transaction
	// creates; IDs it does not use are never given again. It returns nil
	// where the database gives each message its ID as it is inserted
	// (CreateMessage with m.ID zero), which costs nothing more there.
	ReserveMessageIDs(ctx context.Context, n int) ([]int64, error)
	// GetMessage returns the realm's message with that ID.
	GetMessage(ctx context.Context, realmID, messageID int64) (*Message, error)
	// GetMessagesByID returns the realm's messages with these IDs,
	// ascending; missing IDs are left out.
	GetMessagesByID(ctx context.Context, realmID int64, ids []int64) ([]Message, error)
	// ListUserMessages returns the user's rows for these messages, by
	// message ID; messages without a row are left out.
	ListUserMessages(ctx context.Context, realmID, userID int64, messageIDs []int64) ([]UserMessage, error)
	// ListFlaggedMessageIDs returns, ascending, the IDs of the messages
	// whose row for the user has the flag (FlagStarred: the starred
	// messages of the registration snapshot).
	ListFlaggedMessageIDs(ctx context.Context, realmID, userID, flag int64) ([]int64, error)
	// ListRecentDirectMessages returns the user's newest direct messages,
	// at most limit, newest first, with their conversations.
	ListRecentDirectMessages(ctx context.Context, realmID, userID int64, limit int) ([]DirectMessageRef, error)
	// MaxMessageID is the greatest message ID in the Store (0 when there
	// are none): every message sent later has a greater one.
	MaxMessageID(ctx context.Context) (int64, error)
	// NewestReceivedMessage returns the ID of the newest message the user
	// received (0 when none): the greatest among the messages they have a
	// row for, those they sent, and the channels' messages within spans
	// (their subscription periods). One statement of index seeks, one per
	// span and two more: its cost follows the user's periods, not the
	// messages.
	NewestReceivedMessage(ctx context.Context, realmID, userID int64, spans []ChannelSpan) (int64, error)
	// ListChannelTopics returns the channel's topics, newest first: each
	// topic (compared case-insensitively) that has a message within one of
	// the spans of this channel (any message when spans is nil; none when
	// it is empty), with the newest such message's ID and the topic's name
	// as that message spells it. Its cost follows the channel's topics
	// (index seeks per topic and span), not its messages.
	ListChannelTopics(ctx context.Context, realmID, streamID int64, spans []ChannelSpan) ([]ChannelTopic, error)
	// AddReadRange marks the channel's messages with IDs in [first, last]
	// read for the user: the range is merged with the user's ranges of
	// the channel that overlap it or that no message of the channel
	// separates from it, so the ranges stay few.
	AddReadRange(ctx context.Context, realmID, userID, streamID, first, last int64) error
	// ExtendReadRange is AddReadRange(messageID, messageID) for the newest
	// message of the channel (its sender's own, as it is sent): on
	// PostgreSQL one statement that reads nothing back, so that it travels
	// with the rest of its transaction.
	ExtendReadRange(ctx context.Context, realmID, userID, streamID, messageID int64) error
	// ListReadRanges returns the user's ranges of the channel that
	// intersect [lo, hi], by first ID.
	ListReadRanges(ctx context.Context, realmID, userID, streamID, lo, hi int64) ([]ReadRange, error)
	// ListReadRangesOf is ListReadRanges for several channels at once, by
	// channel then first ID.
	ListReadRangesOf(ctx context.Context, realmID, userID int64, streamIDs []int64, lo, hi int64) ([]ReadRange, error)
	// ListUserPeriods returns all the user's subscription periods, by
	// channel then ID: which channel messages they received.
	ListUserPeriods(ctx context.Context, realmID, userID int64) ([]SubscriptionPeriod, error)
	// ListMessageWindow returns the messages of w.Scope matching w.Filter
	// around w.Anchor: up to w.Before+1 with IDs at most the anchor
	// (newest first looked for, returned ascending) and up to w.After+1
	// with greater IDs (ascending). The extra one on each side tells the
	// caller whether more exist.
	ListMessageWindow(ctx context.Context, w MessageWindow) (older, newer []Message, err error)
	// ListMessageWindowState is ListMessageWindow for the messages' IDs
	// (w.IDsOnly is implied) with the reader's state of each: what a
	// window shown to its reader needs of the store besides the messages
	// themselves, read with the window (in the same statement where a
	// statement costs a round trip).
	ListMessageWindowState(ctx context.Context, w MessageWindow) (older, newer []WindowMessage, err error)
	// FirstUnreadMessage returns the ID of the oldest message of
	// w.Scope matching w.Filter that w.UserID has not read (0 when there
	// is none): a channel message no read range covers, a historical row
	// marked unread, or a direct message whose row lacks the read flag,
	// not sent by a user the reader muted. Whole channels in the scope
	// count only where a span also covers the message (one cannot have
	// an unread message one never received).
	FirstUnreadMessage(ctx context.Context, w MessageWindow) (int64, error)
	// TopicSenders lists the users who sent a message to the channel's
	// topic (compared case-insensitively), ascending.
	TopicSenders(ctx context.Context, realmID, streamID int64, topic string) ([]int64, error)
	// ChannelNeighbours returns the channel's newest message with an ID
	// below first and its oldest above last (0 where there is none).
	ChannelNeighbours(ctx context.Context, realmID, streamID, first, last int64) (prev, next int64, err error)
	// InsertUserMessages inserts rows that do not exist yet.
	InsertUserMessages(ctx context.Context, rows []UserMessage) error
	// UpdateUserMessageFlags sets the add bits and clears the remove bits
	// of the user's rows of these messages; missing rows are left alone.
	UpdateUserMessageFlags(ctx context.Context, realmID, userID int64, messageIDs []int64, add, remove int64) error
	// ReplaceReadRanges deletes the user's ranges of the channel that
	// intersect [lo, hi] and inserts ranges instead (the caller computed
	// them to cover what stays read).
	ReplaceReadRanges(ctx context.Context, realmID, userID, streamID, lo, hi int64, ranges []ReadRange) error
	// ListChannelMessagesIn returns the messages of the spans (of the
	// topic, compared case-insensitively, when topic is not nil), newest
	// first, up to limit, with only ID, StreamID, Topic, SenderID,
	// DateSent, StreamWildcard and TopicWildcard set.
	ListChannelMessagesIn(ctx context.Context, realmID int64, spans []IDSpan, topic *string, limit int) ([]Message, error)
	// ListUnreadChannelMessages returns the messages of the spans,
	// newest first, up to limit, with what unread counts need: ID,
	// channel, topic and the channel-wildcard fact. Messages of
	// exceptSenders (those the reader muted: read for them) are left out.
	ListUnreadChannelMessages(ctx context.Context, realmID int64, spans []IDSpan, exceptSenders []int64, limit int) (*UnreadChannelMessages, error)
	// ResetReadRanges makes one range [1, last] the user's whole read
	// state of each of the channels.
	ResetReadRanges(ctx context.Context, realmID, userID int64, streamIDs []int64, last int64) error
	// ListUnreadRows returns the user's unread rows, newest first, up to
	// limit: direct messages without the read flag and historical channel
	// messages marked unread (of that channel only, when streamID is not
	// nil), with the same message fields as ListChannelMessagesIn plus
	// ConversationID.
	ListUnreadRows(ctx context.Context, realmID, userID int64, streamID *int64, limit int) ([]FlaggedMessage, error)
	// ListMentionRows returns the user's rows with a mention flag
	// (mentioned or a wildcard) of messages with IDs at least minID.
	ListMentionRows(ctx context.Context, realmID, userID, minID int64) ([]UserMessage, error)
	// EditMessages applies the edit to the realm's messages with these
	// IDs (and their full-text index), in one transaction.
	EditMessages(ctx context.Context, realmID int64, ids []int64, e MessageEdit) error
	// DeleteMessages deletes the realm's messages with these IDs with
	// their rows, reactions and links to uploads.
	DeleteMessages(ctx context.Context, realmID int64, ids []int64) error
	// MessageReaders lists the users who have read the message, ascending:
	// a direct message's participants whose row has the read flag; for a
	// channel message, those who received it with a read range covering
	// it, and those with a historical row marked read.
	MessageReaders(ctx context.Context, realmID int64, m *Message) ([]int64, error)
	// ListStreamPeriods returns every user's periods of the channel that
	// cover a message ID in [lo, hi], by user then ID.
	ListStreamPeriods(ctx context.Context, realmID, streamID, lo, hi int64) ([]SubscriptionPeriod, error)
	// ListTopicPolicies returns every user's policy of the channel's topic
	// (compared case-insensitively), by user.
	ListTopicPolicies(ctx context.Context, realmID, streamID int64, topic string) ([]UserTopic, error)
	// SubscribersWhoReceived lists the channel's active subscribers
	// (active users) whose current period began before the message, so
	// that they received it, ascending.
	SubscribersWhoReceived(ctx context.Context, realmID, streamID, messageID int64) ([]int64, error)
	// MessageRowUsers lists the users who have a row for the message,
	// ascending.
	MessageRowUsers(ctx context.Context, realmID, messageID int64) ([]int64, error)
	ReactionStore
}

// ChannelTopic is a topic of a channel with its newest message.
type ChannelTopic struct {
	Name  string
	MaxID int64
}

// IDSpan is a channel's messages with First <= ID <= Last.
type IDSpan struct {
	StreamID    int64
	First, Last int64
}

// UnreadChannelMessages are channel messages as unread counts list them:
// tens of thousands for a reader far behind, so each holds no pointer
// (the garbage collector need not scan them) and names its topic by an
// index into Topics.
type UnreadChannelMessages struct {
	Messages []UnreadChannelMessage
	// Topics holds each channel's topics once per spelling: messages of
	// one channel and exact topic name the same entry, others different
	// ones (it may hold entries that no message names).
	Topics []UnreadTopic
}

// UnreadChannelMessage is a channel message as unread counts list it.
type UnreadChannelMessage struct {
	ID, StreamID int64
	// Topic indexes UnreadChannelMessages.Topics.
	Topic          int32
	StreamWildcard bool
}

// UnreadTopic is a channel's topic as its messages spell it.
type UnreadTopic struct {
	StreamID int64
	Name     string
}

// FlaggedMessage is a message with a reader's row flags.
type FlaggedMessage struct {
	Message
	Flags int64
}

// Reaction is one user's emoji reaction to a message. ReactionType is
// "unicode_emoji", "realm_emoji" or "service_extra_emoji"; EmojiCode is the
// code point string, the custom emoji's ID, or the extra emoji's name.
type Reaction struct {
	ID           int64  `bun:"id,pk,autoincrement"`
	RealmID      int64  `bun:"realm_id"`
	MessageID    int64  `bun:"message_id"`
	UserID       int64  `bun:"user_id"`
	ReactionType string `bun:"reaction_type"`
	EmojiCode    string `bun:"emoji_code"`
	EmojiName    string `bun:"emoji_name"`
}

// ReactionStore persists reactions.
type ReactionStore interface {
	// AddReaction inserts r (setting its ID); the same user, message,
	// type and code twice gives ErrConflict.
	AddReaction(ctx context.Context, r *Reaction) error
	// DeleteReaction removes the user's reaction of that type and code
	// to the message; a missing one gives ErrNotFound.
	DeleteReaction(ctx context.Context, realmID, messageID, userID int64, reactionType, emojiCode string) error
	// ListReactions returns the reactions to these messages, by message
	// then in the order they were added.
	ListReactions(ctx context.Context, realmID int64, messageIDs []int64) ([]Reaction, error)
}

// MessageWindow is a fetch of messages around an anchor.
type MessageWindow struct {
	RealmID int64
	// UserID is the reader: Scope.Direct means their direct messages.
	UserID int64
	Scope  MessageScope
	Filter MessageFilter
	Anchor int64
	// Before and After count the messages wanted on each side; the
	// anchor itself counts on the Before side.
	Before, After int
	// IDsOnly returns messages with only their ID set, which an index
	// can answer without reading the rows (callers that cache messages
	// load the rest by ID).
	IDsOnly bool
}

// WindowMessage is a message of a window with its reader's state of it.
type WindowMessage struct {
	ID int64
	// StreamID is the channel message's channel (nil: a direct message).
	StreamID *int64
	// Flags are the reader's row's flags, when HasRow says they have one.
	Flags  int64
	HasRow bool
	// InReadRange says one of the reader's read ranges of the channel
	// covers the channel message (false for a direct message).
	InReadRange bool
}

// MessageScope is what the reader may see: whole channels (shared
// history), spans of channels (what they received while subscribed), and
// their direct messages. An empty scope matches nothing.
type MessageScope struct {
	FullChannels []int64
	// PublicChannels adds every public channel whose history is shared
	// (the reference's channels:public with history).
	PublicChannels bool
	Spans          []ChannelSpan
	Direct         bool
	// Historical adds the channel messages the reader has a historical
	// row for (starred or reacted to without having received them).
	Historical bool
}

// ChannelSpan is the channel's messages with After < ID <= Through
// (Through nil: no upper bound).
type ChannelSpan struct {
	StreamID int64
	After    int64
	Through  *int64
}

// MessageFilter narrows a window; nil fields do not filter.
type MessageFilter struct {
	StreamID       *int64
	Topic          *string // compared case-insensitively (Fold)
	SenderID       *int64
	ConversationID *int64
	// DirectOnly and ChannelOnly keep one kind of message.
	DirectOnly, ChannelOnly bool
	// IDs keeps these messages only (nil: no filter).
	IDs []int64
	// Starred, Mentioned and Unread keep messages with that state for the
	// window's reader (Mentioned: a mention row, or a channel wildcard;
	// Unread: no read range covers the channel message, or the direct
	// message's row lacks the read flag; never a message whose sender the
	// reader muted). Resolved keeps topics starting
	// with "✔ ". HasLink, HasImage and HasAttachment keep messages with
	// that content.
	Starred, Mentioned, Unread, Resolved bool
	// Alerted keeps messages with the reader's alert-word flag.
	Alerted bool
	// IncludingUserIDs keeps direct messages whose conversation includes
	// each of these users; GroupDMOnly keeps conversations of three or
	// more.
	IncludingUserIDs []int64
	GroupDMOnly      bool
	// NotStreamIDs and NotSenderIDs leave out messages of these channels
	// (direct messages stay) and of these senders.
	NotStreamIDs, NotSenderIDs       []int64
	HasLink, HasImage, HasAttachment bool
	// HasReaction keeps messages with at least one reaction.
	HasReaction bool
	// Search keeps messages whose topic or content holds every word and
	// every "quoted phrase" of it, ignoring case, with the database's
	// stemming (English) where it has one.
	Search string
	// Followed keeps topics the reader follows; Muted keeps topics they
	// muted and topics of channels they muted that they did not unmute
	// or follow.
	Followed, Muted bool
	// MutedTopic keeps only topics the reader muted.
	MutedTopic bool
	// PublicChannelsOnly keeps the public channels whose history is
	// shared; WebPublicChannelsOnly the web-public channels.
	PublicChannelsOnly, WebPublicChannelsOnly bool
	// Not leaves out the messages each of these filters keeps.
	Not []MessageFilter
}

// ReadRange says that the channel's messages with IDs from FirstID to
// LastID (both included) are read by the user. A user's ranges of a
// channel never overlap: AddReadRange merges what it touches, and the
// callers of ReplaceReadRanges replace every range they change whole.
type ReadRange struct {
	RealmID  int64 `bun:"realm_id"`
	UserID   int64 `bun:"user_id,pk"`
	StreamID int64 `bun:"stream_id,pk"`
	FirstID  int64 `bun:"first_id,pk"`
	LastID   int64 `bun:"last_id"`
}
