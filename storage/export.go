package storage

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// An organization's export is its records, kind by kind: every table
// whose rows belong to one organization and outlive the process (what is
// ephemeral, presence and the background work in flight, is left out).
// The records are this package's record types, so the export follows the
// schema: a column added to a record is exported and imported with no
// other change. Kinds lists them in the order an import inserts them
// (a record after those it refers to).

// Kind is one kind of record of an export.
type Kind struct {
	// Name is the table's name, and the records' name in an archive.
	Name string
	// New returns a pointer to a new zero record of the kind.
	New func() any
	// Key lists the columns that order the kind's records and identify
	// each: its ID ("id"), or its primary key's columns.
	Key []string
	// Refs are the columns holding IDs of other records that the
	// convention (RefOf) does not name, or names otherwise.
	Refs map[string]Ref
	// Late are columns that refer to records of the same kind under a
	// foreign key: an import writes them once every record of the kind
	// is in (a bot's owner may have joined after the bot was made).
	Late []string
}

// HasID reports whether the kind's records have an ID of their own,
// given by the database (and shifted by an import into a database that
// already has some).
func (k *Kind) HasID() bool { return len(k.Key) == 1 && k.Key[0] == "id" }

// Ref says what a column holding an ID refers to.
type Ref struct {
	// Kind is the name of the kind whose ID the column holds.
	Kind string
	// Bound: the column is a bound in that kind's ID order (the newest
	// message when a period began), not a reference to a record that must
	// exist.
	Bound bool
}

// Record types of tables that have none elsewhere (their rows are read
// and written through narrower methods).

// GroupMember is a row of user_group_members: UserID is a direct member
// of GroupID.
type GroupMember struct {
	RealmID int64 `bun:"realm_id"`
	GroupID int64 `bun:"group_id,pk"`
	UserID  int64 `bun:"user_id,pk"`
}

// GroupSubgroup is a row of user_group_subgroups: SubgroupID is a direct
// subgroup of GroupID.
type GroupSubgroup struct {
	RealmID    int64 `bun:"realm_id"`
	GroupID    int64 `bun:"group_id,pk"`
	SubgroupID int64 `bun:"subgroup_id,pk"`
}

// DirectConversation is a set of direct-message participants; MemberKey
// is their sorted IDs joined by commas.
type DirectConversation struct {
	ID        int64  `bun:"id,pk,autoincrement"`
	RealmID   int64  `bun:"realm_id"`
	MemberKey string `bun:"member_key"`
}

// ConversationMember is one participant of a direct conversation.
type ConversationMember struct {
	RealmID        int64 `bun:"realm_id"`
	ConversationID int64 `bun:"conversation_id,pk"`
	UserID         int64 `bun:"user_id,pk"`
}

// AttachmentMessage links an uploaded file to a message that links it.
type AttachmentMessage struct {
	RealmID      int64 `bun:"realm_id"`
	AttachmentID int64 `bun:"attachment_id,pk"`
	MessageID    int64 `bun:"message_id,pk"`
}

// InviteStream and InviteGroup are the channels and groups an invitation
// gives.
type InviteStream struct {
	RealmID  int64 `bun:"realm_id"`
	InviteID int64 `bun:"invite_id,pk"`
	StreamID int64 `bun:"stream_id,pk"`
}

// InviteGroup: see InviteStream.
type InviteGroup struct {
	RealmID  int64 `bun:"realm_id"`
	InviteID int64 `bun:"invite_id,pk"`
	GroupID  int64 `bun:"group_id,pk"`
}

func kind[T any](name string, key ...string) *Kind {
	return &Kind{Name: name, New: func() any { return new(T) }, Key: key}
}

func (k *Kind) with(f func(*Kind)) *Kind { f(k); return k }

// Kinds is every kind of an export, in insertion order.
var Kinds = []*Kind{
	kind[Realm]("realms", "id"),
	kind[User]("users", "id").with(func(k *Kind) { k.Late = []string{"bot_owner_id"} }),
	kind[UserGroup]("user_groups", "id"),
	kind[GroupMember]("user_group_members", "group_id", "user_id"),
	kind[GroupSubgroup]("user_group_subgroups", "group_id", "subgroup_id"),
	kind[ProfileField]("custom_profile_fields", "id"),
	kind[ProfileFieldValue]("custom_profile_field_values", "user_id", "field_id"),
	kind[EmailChange]("email_changes", "id"),
	kind[Draft]("drafts", "id"),
	kind[Stream]("streams", "id"),
	kind[ChannelEmailAddress]("channel_email_addresses", "id"),
	kind[Subscription]("subscriptions", "user_id", "stream_id"),
	kind[SubscriptionPeriod]("subscription_periods", "id"),
	kind[UserTopic]("user_topics", "user_id", "stream_id", "topic_name"),
	kind[UserStatus]("user_statuses", "user_id"),
	kind[UserMute]("user_mutes", "user_id", "muted_user_id"),
	kind[AlertWord]("alert_words", "id"),
	kind[Playground]("realm_playgrounds", "id"),
	kind[Linkifier]("realm_linkifiers", "id"),
	kind[RealmEmoji]("realm_emoji", "id"),
	kind[BotService]("bot_services", "id"),
	kind[Invite]("invites", "id"),
	kind[InviteStream]("invite_streams", "invite_id", "stream_id"),
	kind[InviteGroup]("invite_groups", "invite_id", "group_id"),
	kind[DirectConversation]("direct_conversations", "id"),
	kind[ConversationMember]("direct_conversation_members", "conversation_id", "user_id"),
	kind[Attachment]("attachments", "id"),
	kind[Message]("messages", "id"),
	kind[UserMessage]("user_messages", "user_id", "message_id"),
	kind[ReadRange]("read_ranges", "user_id", "stream_id", "first_id").with(func(k *Kind) {
		k.Refs = map[string]Ref{"first_id": {Kind: "messages", Bound: true}, "last_id": {Kind: "messages", Bound: true}}
	}),
	kind[Reaction]("reactions", "id"),
	kind[AttachmentMessage]("attachment_messages", "attachment_id", "message_id"),
	kind[ScheduledMessage]("scheduled_messages", "id"),
}

// KindByName returns the kind of that name, or nil.
func KindByName(name string) *Kind {
	for _, k := range Kinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// RefOf says what a column of the kind refers to: the kind's own Refs,
// else the schema's naming convention (user_id, sender_id, ... refer to
// users; every *group_id to user_groups; stream_id to streams;
// message_id to messages and *_message_id to a bound among them; ...).
// ok is false for a column that holds no ID of another record.
func (k *Kind) RefOf(column string) (Ref, bool) {
	if r, ok := k.Refs[column]; ok {
		return r, true
	}
	switch column {
	case "user_id", "sender_id", "owner_id", "author_id", "creator_id", "referrer_id", "bot_id", "bot_owner_id", "muted_user_id":
		return Ref{Kind: "users"}, true
	case "stream_id":
		return Ref{Kind: "streams"}, true
	case "conversation_id":
		return Ref{Kind: "direct_conversations"}, true
	case "message_id":
		return Ref{Kind: "messages"}, true
	case "attachment_id":
		return Ref{Kind: "attachments"}, true
	case "invite_id":
		return Ref{Kind: "invites"}, true
	case "field_id":
		return Ref{Kind: "custom_profile_fields"}, true
	case "service_id":
		return Ref{Kind: "bot_services"}, true
	}
	if strings.HasSuffix(column, "group_id") {
		return Ref{Kind: "user_groups"}, true
	}
	if strings.HasSuffix(column, "_message_id") {
		return Ref{Kind: "messages", Bound: true}, true
	}
	return Ref{}, false
}

// Column is one column of a record type: its name and the field's index.
type Column struct {
	Name  string
	Index []int
	Type  reflect.Type
}

var columnsCache sync.Map // reflect.Type -> []Column

// Columns lists the columns of a record type (a struct, or a pointer to
// one) as its bun tags name them, in field order; fields tagged "-" are
// left out.
func Columns(t reflect.Type) []Column {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if c, ok := columnsCache.Load(t); ok {
		return c.([]Column)
	}
	var cols []Column
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("bun")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || name == "" || !f.IsExported() {
			continue
		}
		cols = append(cols, Column{Name: name, Index: f.Index, Type: f.Type})
	}
	columnsCache.Store(t, cols)
	return cols
}

// ColumnValue returns the field of rec (a pointer to a record) that holds
// column; it panics on a column the record does not have (a mistake in
// the caller, never in data).
func ColumnValue(rec any, column string) reflect.Value {
	v := reflect.ValueOf(rec).Elem()
	for _, c := range Columns(v.Type()) {
		if c.Name == column {
			return v.FieldByIndex(c.Index)
		}
	}
	panic(fmt.Sprintf("storage: %s has no column %q", v.Type(), column))
}

// KindStats are a kind's records in one organization.
type KindStats struct {
	Records int64
	// MaxID is the greatest ID among them (0 for kinds without IDs).
	MaxID int64
}

// BulkStore is an optional interface of a Store that exports and imports
// organizations: reading every record of a kind in key order, a page at
// a time, and writing records as they are (IDs included). The Stores
// passed to ReadSnapshot and InTx callbacks implement it too.
type BulkStore interface {
	// SchemaVersion names the newest migration applied to the database
	// ("0028_notifications") and gives its number.
	SchemaVersion(ctx context.Context) (name string, number int, err error)
	// KindStats counts the realm's records of the kind.
	KindStats(ctx context.Context, realmID int64, k *Kind) (KindStats, error)
	// ScanRecords calls fn with the realm's records of the kind in Key
	// order, at most page at a time (pointers to records).
	ScanRecords(ctx context.Context, realmID int64, k *Kind, page int, fn func(recs []any) error) error
	// ReserveIDs makes room for n IDs of the kind (a kind with IDs): it
	// returns the base, the greatest ID the database has given in the
	// kind's table (0 when none: IDs can be kept), and makes sure the IDs
	// it gives later, to anyone, exceed base+n.
	ReserveIDs(ctx context.Context, k *Kind, n int64) (base int64, err error)
	// MissingIDs returns, ascending, which of ids no record of the kind
	// in the realm has.
	MissingIDs(ctx context.Context, realmID int64, k *Kind, ids []int64) ([]int64, error)
	// InsertRecords inserts records of the kind as they are (IDs and
	// realm included), with what the store derives from them (name keys,
	// the full-text index); the Late columns are left NULL.
	InsertRecords(ctx context.Context, k *Kind, recs []any) error
	// SetLate writes the kind's Late columns of records inserted before.
	SetLate(ctx context.Context, k *Kind, recs []any) error
	// FinishImport recomputes what the store keeps per realm from the
	// realm's records (its total upload size).
	FinishImport(ctx context.Context, realmID int64) error
}
