// Package storage is the persistence contract of teamchat: plain record
// types and small per-aggregate interfaces, composed into Store.
//
// The records carry `bun` struct tags so that the one implementation
// (storage/bunstore) can use them directly as models; the tags are plain
// strings, so this package does not depend on bun. Every record carries its
// realm (organization) ID, and every lookup is scoped by it.
//
// Times are UTC Unix seconds. Implementations translate driver errors into
// ErrNotFound and ErrConflict; callers never see driver errors for those cases.
package storage

import (
	"context"
	"errors"
)

// ErrNotFound is returned when a looked-up record does not exist.
var ErrNotFound = errors.New("storage: not found")

// ErrConflict is returned when a write would violate a uniqueness rule
// (an email already in use, a duplicate group name, ...).
var ErrConflict = errors.New("storage: conflict")

// ErrUnavailable is returned when the database cannot be reached (refused
// or lost connections, a timeout, a server shutting down): the request may
// succeed if tried again once it is back.
var ErrUnavailable = errors.New("storage: database unavailable")

// Store is the whole storage contract.
type Store interface {
	RealmStore
	UserStore
	GroupStore
	DraftStore
	ProfileFieldStore
	EmailChangeStore
	StreamStore
	SubscriptionStore
	UserTopicStore
	UserStatusStore
	PresenceStore
	UserMuteStore
	WebhookStore
	NotificationStore
	AlertWordStore
	MessageStore
	UploadStore
	PlaygroundStore
	LinkifierStore
	ScheduledMessageStore
	InviteStore
	QueryStore
	EventStore
	FleetStore
	// InTx runs fn inside one transaction. The Store passed to fn sees the
	// transaction's writes; fn's error (or a panic) rolls everything back.
	// Nested calls on the transaction's Store run in the same transaction.
	InTx(ctx context.Context, fn func(Store) error) error
	// Close releases the database handles.
	Close() error
}

// WriteLimiter is an optional interface of a Store whose transactions
// share a bounded connection pool: MaxConcurrentWrites is how many write
// transactions may be open at once so that reads made beside them still
// find a connection (0: no limit). The Service keeps to it.
type WriteLimiter interface {
	MaxConcurrentWrites() int
}

// Backlog is the background work waiting in a Store, for metrics.
type Backlog struct {
	// ScheduledDue counts the pending scheduled messages due at the time
	// asked about; OldestScheduledDue is the earliest due time among them
	// (Unix seconds, 0 when none).
	ScheduledDue       int64
	OldestScheduledDue int64
	// WebhooksWaiting counts the outgoing webhook deliveries in the
	// outbox (due, backing off or being attempted); OldestWebhook is the
	// creation time of the oldest (Unix seconds, 0 when none).
	WebhooksWaiting int64
	OldestWebhook   int64
}

// BacklogReader is an optional interface of a Store that can count its
// background backlog cheaply (an indexed range of the pending rows, never
// the delivered ones).
type BacklogReader interface {
	Backlog(ctx context.Context, now int64) (Backlog, error)
}

// ReadinessChecker is an optional interface of a Store that can tell
// whether it can serve: its database answers, its schema is migrated,
// and its event bus (where it has one on the database) is connected.
type ReadinessChecker interface {
	Ready(ctx context.Context) error
}

// Realm is an organization. One Store can hold many.
type Realm struct {
	ID          int64  `bun:"id,pk,autoincrement"`
	StringID    string `bun:"string_id"` // subdomain-like identifier (sender_realm_str)
	Name        string `bun:"name"`
	Description string `bun:"description"` // Markdown
	// URL is the canonical organization URL (scheme://host[:port]); Host is
	// its host part as sent in HTTP Host headers, unique across realms.
	URL         string `bun:"url"`
	Host        string `bun:"host"`
	DateCreated int64  `bun:"date_created"`
	Deactivated bool   `bun:"deactivated"`
	// EmailAddressVisibility caps who may see users' real emails: 1
	// everyone, 2 members, 3 administrators, 4 nobody, 5 moderators (the
	// reference's numbering).
	EmailAddressVisibility int `bun:"email_address_visibility"`
	// WaitingPeriodThreshold is the number of days before a member becomes
	// a full member (role:fullmembers).
	WaitingPeriodThreshold int `bun:"waiting_period_threshold"`
	// NameChangesDisabled and EmailChangesDisabled stop users (other than
	// administrators) from changing their own name and email.
	NameChangesDisabled  bool `bun:"name_changes_disabled"`
	EmailChangesDisabled bool `bun:"email_changes_disabled"`
	// CanCreateBotsGroupID and CanCreateWriteOnlyBotsGroupID are the user
	// groups (named system groups, or anonymous groups) whose members may
	// create bots of any kind, and incoming-webhook bots only. Zero means
	// not set (treated as role:administrators). The store does not check
	// these IDs: callers write 0 or a group of the same realm.
	CanCreateBotsGroupID          int64 `bun:"can_create_bots_group_id"`
	CanCreateWriteOnlyBotsGroupID int64 `bun:"can_create_write_only_bots_group_id"`
	// DirectMessagePermissionGroupID and DirectMessageInitiatorGroupID are
	// the groups whose members may take part in, and start, direct
	// messages (the store does not check them either).
	DirectMessagePermissionGroupID int64 `bun:"direct_message_permission_group_id"`
	DirectMessageInitiatorGroupID  int64 `bun:"direct_message_initiator_group_id"`
	// CanMentionManyUsersGroupID may use wildcard mentions in channels
	// with many subscribers and topics with many participants.
	CanMentionManyUsersGroupID int64 `bun:"can_mention_many_users_group_id"`
	// The groups that may add custom emoji, delete any message or their
	// own, move messages between channels or topics, and resolve topics.
	CanAddCustomEmojiGroupID              int64 `bun:"can_add_custom_emoji_group_id"`
	CanDeleteAnyMessageGroupID            int64 `bun:"can_delete_any_message_group_id"`
	CanDeleteOwnMessageGroupID            int64 `bun:"can_delete_own_message_group_id"`
	CanMoveMessagesBetweenChannelsGroupID int64 `bun:"can_move_messages_between_channels_group_id"`
	CanMoveMessagesBetweenTopicsGroupID   int64 `bun:"can_move_messages_between_topics_group_id"`
	CanResolveTopicsGroupID               int64 `bun:"can_resolve_topics_group_id"`
	// CanInviteUsersGroupID may send email invitations;
	// CreateMultiuseInviteGroupID may create reusable invitation links.
	CanInviteUsersGroupID       int64 `bun:"can_invite_users_group_id"`
	CreateMultiuseInviteGroupID int64 `bun:"create_multiuse_invite_group_id"`
	// AllowMessageEditing lets senders edit their messages' content; the
	// limits are in seconds after sending (nil: none).
	AllowMessageEditing                    bool   `bun:"allow_message_editing"`
	MessageContentEditLimitSeconds         *int64 `bun:"message_content_edit_limit_seconds"`
	MessageContentDeleteLimitSeconds       *int64 `bun:"message_content_delete_limit_seconds"`
	MoveMessagesWithinStreamLimitSeconds   *int64 `bun:"move_messages_within_stream_limit_seconds"`
	MoveMessagesBetweenStreamsLimitSeconds *int64 `bun:"move_messages_between_streams_limit_seconds"`
	// MessageEditHistoryVisibilityPolicy: 1 all, 2 moves only, 3 none.
	MessageEditHistoryVisibilityPolicy int  `bun:"message_edit_history_visibility_policy"`
	EnableReadReceipts                 bool `bun:"enable_read_receipts"`
	// PresenceDisabled turns presence off for the whole organization.
	PresenceDisabled bool `bun:"presence_disabled"`
	// MandatoryTopics refuses channel messages to the empty topic.
	MandatoryTopics bool `bun:"mandatory_topics"`
}

// User is a human or bot account in one realm.
type User struct {
	ID      int64 `bun:"id,pk,autoincrement"`
	RealmID int64 `bun:"realm_id"`
	// Email is the real (delivery) address, case preserved; lookups by
	// email are case-insensitive.
	Email         string `bun:"email"`
	FullName      string `bun:"full_name"`
	Role          int    `bun:"role"` // 100 owner, 200 admin, 300 moderator, 400 member, 600 guest
	IsActive      bool   `bun:"is_active"`
	IsBot         bool   `bun:"is_bot"`
	BotType       *int   `bun:"bot_type"`
	BotOwnerID    *int64 `bun:"bot_owner_id"`
	Timezone      string `bun:"timezone"`
	DateJoined    int64  `bun:"date_joined"`
	PasswordHash  string `bun:"password_hash"` // empty: no password login
	APIKey        string `bun:"api_key"`
	AvatarSource  string `bun:"avatar_source"` // "G" gravatar, "U" uploaded
	AvatarVersion int    `bun:"avatar_version"`
	// CanCreateUsers is the server-granted permission to call create-user
	// without being an administrator.
	CanCreateUsers bool `bun:"can_create_users"`
	// CanChangeUserEmails is the server-granted permission (held by owners)
	// to change other users' emails.
	CanChangeUserEmails bool `bun:"can_change_user_emails"`
	// Settings is the user's personal settings as a JSON object owned by
	// package chat; keys that are absent take their defaults. Empty means {}.
	Settings string `bun:"settings"`
}

// UserGroup is a named or anonymous group of users and subgroups. System
// groups (role:owners, ...) are named and have IsSystemGroup set; anonymous
// groups back group-setting values of the {direct_members, direct_subgroups}
// form and have an empty Name.
type UserGroup struct {
	ID            int64  `bun:"id,pk,autoincrement"`
	RealmID       int64  `bun:"realm_id"`
	Name          string `bun:"name"`
	Description   string `bun:"description"`
	IsSystemGroup bool   `bun:"is_system_group"`
	CreatorID     *int64 `bun:"creator_id"`
	DateCreated   *int64 `bun:"date_created"`
	Deactivated   bool   `bun:"deactivated"`
	// The group's permission settings: the IDs of the groups (named, or
	// anonymous) whose members may add members, join, leave, manage,
	// mention the group, and remove members. 0 means not set. The store does
	// not check these IDs: callers write 0 or a group of the same realm.
	CanAddMembersGroupID    int64 `bun:"can_add_members_group_id"`
	CanJoinGroupID          int64 `bun:"can_join_group_id"`
	CanLeaveGroupID         int64 `bun:"can_leave_group_id"`
	CanManageGroupID        int64 `bun:"can_manage_group_id"`
	CanMentionGroupID       int64 `bun:"can_mention_group_id"`
	CanRemoveMembersGroupID int64 `bun:"can_remove_members_group_id"`
}

// GroupMembership is one direct membership: UserID is in GroupID.
type GroupMembership struct {
	GroupID int64
	UserID  int64
}

// GroupEdge is one direct subgroup relation: SubgroupID is in GroupID.
type GroupEdge struct {
	GroupID    int64
	SubgroupID int64
}

// Draft is a message draft kept on the server for its author.
type Draft struct {
	ID      int64  `bun:"id,pk,autoincrement"`
	RealmID int64  `bun:"realm_id"`
	UserID  int64  `bun:"user_id"`
	Type    string `bun:"type"` // "stream", "private" or "" (no recipient yet)
	// To is the JSON list of recipient IDs: [channel ID] or user IDs.
	To        string `bun:"recipients"`
	Topic     string `bun:"topic"`
	Content   string `bun:"content"`
	Timestamp int64  `bun:"timestamp"`
}

// ProfileField is a custom profile field of a realm.
type ProfileField struct {
	ID        int64  `bun:"id,pk,autoincrement"`
	RealmID   int64  `bun:"realm_id"`
	Name      string `bun:"name"`
	Hint      string `bun:"hint"`
	FieldType int    `bun:"field_type"`
	// FieldData is type-specific JSON (choices of a select field, the
	// URL pattern of an external account field); empty when unused.
	FieldData               string `bun:"field_data"`
	Order                   int    `bun:"field_order"`
	DisplayInProfileSummary bool   `bun:"display_in_profile_summary"`
	Required                bool   `bun:"required"`
	EditableByUser          bool   `bun:"editable_by_user"`
}

// ProfileFieldValue is one user's value of one custom profile field.
type ProfileFieldValue struct {
	RealmID       int64   `bun:"realm_id"`
	UserID        int64   `bun:"user_id,pk"`
	FieldID       int64   `bun:"field_id,pk"`
	Value         string  `bun:"value"`
	RenderedValue *string `bun:"rendered_value"`
}

// EmailChange is a pending change of a user's email, waiting for the
// confirmation key sent to the new address.
type EmailChange struct {
	ID          int64  `bun:"id,pk,autoincrement"`
	RealmID     int64  `bun:"realm_id"`
	UserID      int64  `bun:"user_id"`
	NewEmail    string `bun:"new_email"`
	Key         string `bun:"confirmation_key"`
	DateCreated int64  `bun:"date_created"`
}

// Stream is a channel ("stream" is its name in storage and on the wire).
type Stream struct {
	ID                         int64  `bun:"id,pk,autoincrement"`
	RealmID                    int64  `bun:"realm_id"`
	Name                       string `bun:"name"`
	Description                string `bun:"description"`
	RenderedDescription        string `bun:"rendered_description"`
	InviteOnly                 bool   `bun:"invite_only"`
	IsWebPublic                bool   `bun:"is_web_public"`
	HistoryPublicToSubscribers bool   `bun:"history_public_to_subscribers"`
	// MessageRetentionDays: nil inherits the organization's, -1 keeps forever.
	MessageRetentionDays *int   `bun:"message_retention_days"`
	DateCreated          int64  `bun:"date_created"`
	CreatorID            *int64 `bun:"creator_id"`
	IsArchived           bool   `bun:"is_archived"`
	// IsDefault: new users of the realm are subscribed to it.
	IsDefault bool `bun:"is_default"`
	// FirstMessageID is the oldest message's ID, nil while there is none.
	FirstMessageID *int64 `bun:"first_message_id"`
	// Permission settings: IDs of the groups (named or anonymous) whose
	// members may add subscribers, remove subscribers, administer, post,
	// and subscribe themselves. The store does not check them.
	CanAddSubscribersGroupID    int64 `bun:"can_add_subscribers_group_id"`
	CanRemoveSubscribersGroupID int64 `bun:"can_remove_subscribers_group_id"`
	CanAdministerChannelGroupID int64 `bun:"can_administer_channel_group_id"`
	CanSendMessageGroupID       int64 `bun:"can_send_message_group_id"`
	CanSubscribeGroupID         int64 `bun:"can_subscribe_group_id"`
}

// Subscription is a user's membership of a channel with its personal
// settings. An unsubscribed user keeps the row with Active false (and the
// settings, restored when they come back).
type Subscription struct {
	RealmID  int64  `bun:"realm_id"`
	UserID   int64  `bun:"user_id,pk"`
	StreamID int64  `bun:"stream_id,pk"`
	Active   bool   `bun:"active"`
	Color    string `bun:"color"`
	IsMuted  bool   `bun:"is_muted"`
	PinToTop bool   `bun:"pin_to_top"`
	// Notification settings: nil inherits the user's default.
	DesktopNotifications   *bool `bun:"desktop_notifications"`
	EmailNotifications     *bool `bun:"email_notifications"`
	PushNotifications      *bool `bun:"push_notifications"`
	AudibleNotifications   *bool `bun:"audible_notifications"`
	WildcardMentionsNotify *bool `bun:"wildcard_mentions_notify"`
}

// SubscriptionPeriod is one span during which a user was subscribed to a
// channel, as message-ID bounds (which messages they received) and times.
// The open period of an active subscription has nil ends.
type SubscriptionPeriod struct {
	ID       int64 `bun:"id,pk,autoincrement"`
	RealmID  int64 `bun:"realm_id"`
	UserID   int64 `bun:"user_id"`
	StreamID int64 `bun:"stream_id"`
	// StartMessageID is the newest message ID of the realm when the period
	// began: the user received messages with greater IDs.
	StartMessageID int64  `bun:"start_message_id"`
	EndMessageID   *int64 `bun:"end_message_id"`
	StartedAt      int64  `bun:"started_at"`
	EndedAt        *int64 `bun:"ended_at"`
}

// UserTopic is a user's visibility policy for one topic of a channel
// (1 muted, 2 unmuted, 3 followed; "no policy" is the absence of a row).
type UserTopic struct {
	RealmID          int64  `bun:"realm_id"`
	UserID           int64  `bun:"user_id"`
	StreamID         int64  `bun:"stream_id"`
	TopicName        string `bun:"topic_name"`
	VisibilityPolicy int    `bun:"visibility_policy"`
	LastUpdated      int64  `bun:"last_updated"`
}

// RealmStore persists organizations.
type RealmStore interface {
	// CreateRealm inserts r and sets r.ID. A taken Host or StringID gives ErrConflict.
	CreateRealm(ctx context.Context, r *Realm) error
	GetRealm(ctx context.Context, id int64) (*Realm, error)
	// GetRealmByHost finds the realm whose Host equals host (case-insensitive).
	GetRealmByHost(ctx context.Context, host string) (*Realm, error)
	// ListRealms returns every realm ordered by ID.
	ListRealms(ctx context.Context) ([]Realm, error)
	// UpdateRealm writes the named columns of r (all columns when none are named).
	UpdateRealm(ctx context.Context, r *Realm, columns ...string) error
}

// UserStore persists accounts.
type UserStore interface {
	// CreateUser inserts u and sets u.ID. An email already used in the realm
	// (compared case-insensitively) gives ErrConflict.
	CreateUser(ctx context.Context, u *User) error
	GetUser(ctx context.Context, realmID, userID int64) (*User, error)
	// GetUserByEmail looks the user up by real email, case-insensitively.
	GetUserByEmail(ctx context.Context, realmID int64, email string) (*User, error)
	// GetRealmUser returns a user together with their realm, in one lookup
	// (the hot path of every authenticated call). A missing user, or realm,
	// gives ErrNotFound.
	GetRealmUser(ctx context.Context, realmID, userID int64) (*Realm, *User, error)
	// GetRealmUserByEmail is GetRealmUser by real email, case-insensitively.
	GetRealmUserByEmail(ctx context.Context, realmID int64, email string) (*Realm, *User, error)
	// ListUsers returns the realm's users (active and not) ordered by ID.
	ListUsers(ctx context.Context, realmID int64) ([]User, error)
	// UpdateUser writes the named columns of u (all columns when none are named).
	UpdateUser(ctx context.Context, u *User, columns ...string) error
}

// GroupStore persists user groups and their direct members and subgroups.
type GroupStore interface {
	// CreateGroup inserts g and sets g.ID. A named group whose name is taken
	// in the realm gives ErrConflict.
	CreateGroup(ctx context.Context, g *UserGroup) error
	GetGroup(ctx context.Context, realmID, groupID int64) (*UserGroup, error)
	GetGroupByName(ctx context.Context, realmID int64, name string) (*UserGroup, error)
	// ListGroups returns the realm's named groups ordered by ID.
	ListGroups(ctx context.Context, realmID int64) ([]UserGroup, error)
	// AddGroupMembers adds direct members; members already present are skipped.
	AddGroupMembers(ctx context.Context, realmID, groupID int64, userIDs []int64) error
	RemoveGroupMembers(ctx context.Context, realmID, groupID int64, userIDs []int64) error
	// GroupMembers lists the group's direct member IDs, ascending.
	GroupMembers(ctx context.Context, realmID, groupID int64) ([]int64, error)
	// AddSubgroups adds direct subgroups; subgroups already present are skipped.
	AddSubgroups(ctx context.Context, realmID, groupID int64, subgroupIDs []int64) error
	RemoveSubgroups(ctx context.Context, realmID, groupID int64, subgroupIDs []int64) error
	// Subgroups lists the group's direct subgroup IDs, ascending.
	Subgroups(ctx context.Context, realmID, groupID int64) ([]int64, error)
	// UserGroupIDs lists the groups the user is a direct member of, ascending.
	UserGroupIDs(ctx context.Context, realmID, userID int64) ([]int64, error)
	// UpdateGroup writes the named columns of g (all columns when none are
	// named). A name taken by another named group of the realm gives
	// ErrConflict; a missing group, or another realm's, ErrNotFound. The
	// store does not prevent subgroup cycles: package chat refuses them.
	UpdateGroup(ctx context.Context, g *UserGroup, columns ...string) error
	// ListGroupMemberships returns every direct membership of the realm's
	// groups (named and anonymous), ordered by group, then user.
	ListGroupMemberships(ctx context.Context, realmID int64) ([]GroupMembership, error)
	// ListGroupEdges returns every direct subgroup relation of the realm,
	// ordered by group, then subgroup.
	ListGroupEdges(ctx context.Context, realmID int64) ([]GroupEdge, error)
}

// DraftStore persists drafts.
type DraftStore interface {
	// CreateDraft inserts d and sets d.ID.
	CreateDraft(ctx context.Context, d *Draft) error
	// GetDraft finds a draft of the user; another user's draft is ErrNotFound.
	GetDraft(ctx context.Context, realmID, userID, draftID int64) (*Draft, error)
	// ListDrafts returns the user's drafts, newest timestamp first (then by
	// ascending ID).
	ListDrafts(ctx context.Context, realmID, userID int64) ([]Draft, error)
	// UpdateDraft writes every column of d (matched by realm, user and ID).
	UpdateDraft(ctx context.Context, d *Draft) error
	DeleteDraft(ctx context.Context, realmID, userID, draftID int64) error
	// DeleteUserDrafts deletes every draft of the user.
	DeleteUserDrafts(ctx context.Context, realmID, userID int64) error
}

// ProfileFieldStore persists custom profile fields and their values.
type ProfileFieldStore interface {
	// CreateProfileField inserts f and sets f.ID. A name already used in
	// the realm (case-insensitively) gives ErrConflict.
	CreateProfileField(ctx context.Context, f *ProfileField) error
	GetProfileField(ctx context.Context, realmID, fieldID int64) (*ProfileField, error)
	// ListProfileFields returns the realm's fields by Order, then ID.
	ListProfileFields(ctx context.Context, realmID int64) ([]ProfileField, error)
	// UpdateProfileField writes every column of f.
	UpdateProfileField(ctx context.Context, f *ProfileField) error
	// DeleteProfileField deletes the field and all its values.
	DeleteProfileField(ctx context.Context, realmID, fieldID int64) error
	// SetProfileFieldValues inserts or replaces the given values (all of one
	// user); a value of a field or user of another realm gives ErrNotFound.
	SetProfileFieldValues(ctx context.Context, values []ProfileFieldValue) error
	// DeleteProfileFieldValues removes the user's values of the given fields.
	DeleteProfileFieldValues(ctx context.Context, realmID, userID int64, fieldIDs []int64) error
	// ListProfileFieldValues returns the values of the given users (all
	// users of the realm when userIDs is nil), ordered by user, then field.
	ListProfileFieldValues(ctx context.Context, realmID int64, userIDs []int64) ([]ProfileFieldValue, error)
}

// EmailChangeStore persists pending email changes.
type EmailChangeStore interface {
	// CreateEmailChange inserts c and sets c.ID; a user has at most one
	// pending change: creating another replaces the earlier one.
	CreateEmailChange(ctx context.Context, c *EmailChange) error
	// GetEmailChangeByKey finds a pending change by its key in the realm.
	GetEmailChangeByKey(ctx context.Context, realmID int64, key string) (*EmailChange, error)
	// DeleteEmailChange removes a pending change.
	DeleteEmailChange(ctx context.Context, realmID, id int64) error
}

// StreamStore persists channels.
type StreamStore interface {
	// CreateStream inserts c and sets c.ID. A name used by another channel
	// of the realm (compared case-insensitively) gives ErrConflict.
	CreateStream(ctx context.Context, c *Stream) error
	GetStream(ctx context.Context, realmID, streamID int64) (*Stream, error)
	// GetStreamByName finds a channel by name, case-insensitively.
	GetStreamByName(ctx context.Context, realmID int64, name string) (*Stream, error)
	// ListStreams returns every channel of the realm (archived too) by ID.
	ListStreams(ctx context.Context, realmID int64) ([]Stream, error)
	// UpdateStream writes the named columns of c (all when none are named);
	// a taken name gives ErrConflict, a missing channel ErrNotFound.
	UpdateStream(ctx context.Context, c *Stream, columns ...string) error
}

// SubscriptionStore persists subscriptions and their history.
type SubscriptionStore interface {
	// Subscribe makes sub active: it inserts the row (with sub's settings)
	// or reactivates an inactive one (keeping its stored settings, and
	// copying them into sub), and opens a period starting at the newest
	// message ID (MaxMessageID, read in the same transaction) and now.
	// Subscribing an active subscription gives ErrConflict, and leaves an
	// enclosing transaction usable.
	Subscribe(ctx context.Context, sub *Subscription, now int64) error
	// Unsubscribe deactivates an active subscription and closes its open
	// period (if any) at the newest message ID (read in the same
	// transaction) and now. A missing or inactive one gives ErrNotFound.
	Unsubscribe(ctx context.Context, realmID, userID, streamID, now int64) error
	// GetSubscription returns the row, active or not.
	GetSubscription(ctx context.Context, realmID, userID, streamID int64) (*Subscription, error)
	// ListUserSubscriptions returns the user's rows (active and not), by channel ID.
	ListUserSubscriptions(ctx context.Context, realmID, userID int64) ([]Subscription, error)
	// ListRealmSubscriptions returns the realm's active rows, by channel then user.
	ListRealmSubscriptions(ctx context.Context, realmID int64) ([]Subscription, error)
	// ListStreamSubscribers returns the IDs of the channel's active
	// subscribers, ascending (empty for a missing channel).
	ListStreamSubscribers(ctx context.Context, realmID, streamID int64) ([]int64, error)
	// UpdateSubscription writes the named setting columns of sub (color,
	// is_muted, pin_to_top and the notification columns; all of them when
	// none are named); a missing row gives ErrNotFound, any other column
	// name an error.
	UpdateSubscription(ctx context.Context, sub *Subscription, columns ...string) error
	// ListSubscriptionPeriods returns the user's periods in the channel, oldest first.
	ListSubscriptionPeriods(ctx context.Context, realmID, userID, streamID int64) ([]SubscriptionPeriod, error)
}

// UserTopicStore persists per-topic visibility policies.
type UserTopicStore interface {
	// SetUserTopic inserts or replaces the policy of (user, channel, topic);
	// topics are matched case-insensitively and keep the case last written.
	SetUserTopic(ctx context.Context, t *UserTopic) error
	// DeleteUserTopic removes the policy; a missing one is no error.
	DeleteUserTopic(ctx context.Context, realmID, userID, streamID int64, topic string) error
	// GetUserTopic returns the user's policy of the topic (compared
	// case-insensitively), or ErrNotFound when there is none.
	GetUserTopic(ctx context.Context, realmID, userID, streamID int64, topic string) (*UserTopic, error)
	// ListUserTopics returns the user's policies by channel, then by
	// lower-cased topic name in byte order.
	ListUserTopics(ctx context.Context, realmID, userID int64) ([]UserTopic, error)
}

// UserFilter selects users in FindUsers and CountUsers. Zero fields do not
// filter; every set field must match.
type UserFilter struct {
	IDs         []int64 // one of these IDs (an empty, non-nil list matches nobody)
	Role        *int
	Active      *bool
	Bot         *bool
	BotOwnerIDs []int64 // bots owned by one of these users
	// FullNames: users with one of these full names, compared
	// case-insensitively (Fold); an empty, non-nil list matches nobody.
	FullNames []string
}

// QueryStore answers questions about a few users, groups and channels
// without reading whole-organization tables: the cost of each call follows
// the size of its answer.
type QueryStore interface {
	// FindUsers returns the realm's users that match f, by ID.
	FindUsers(ctx context.Context, realmID int64, f UserFilter) ([]User, error)
	// CountUsers counts the realm's users that match f.
	CountUsers(ctx context.Context, realmID int64, f UserFilter) (int, error)
	// EffectiveGroupIDs lists the groups (named and anonymous) the user is
	// in, directly or through nested subgroups, ascending.
	EffectiveGroupIDs(ctx context.Context, realmID, userID int64) ([]int64, error)
	// GroupClosure lists the group and every group nested in it, ascending
	// (empty for a missing group).
	GroupClosure(ctx context.Context, realmID, groupID int64) ([]int64, error)
	// SupergroupIDs lists the groups that have groupID as a direct subgroup, ascending.
	SupergroupIDs(ctx context.Context, realmID, groupID int64) ([]int64, error)
	// GetGroupsByID returns the realm's groups (named and anonymous) with
	// these IDs, by ID; missing IDs are left out.
	GetGroupsByID(ctx context.Context, realmID int64, ids []int64) ([]UserGroup, error)
	// GetGroupsByName returns the realm's named groups whose name is
	// exactly one of names, by ID.
	GetGroupsByName(ctx context.Context, realmID int64, names []string) ([]UserGroup, error)
	// ListGroupMembershipsOf and ListGroupEdgesOf are the direct memberships
	// and subgroup relations of the given groups, by group then member.
	// Memberships of deactivated users are left out (they are kept, for a
	// reactivation, but no view shows them).
	ListGroupMembershipsOf(ctx context.Context, realmID int64, groupIDs []int64) ([]GroupMembership, error)
	ListGroupEdgesOf(ctx context.Context, realmID int64, groupIDs []int64) ([]GroupEdge, error)
	// GetStreamsByID returns the realm's channels with these IDs, by ID;
	// missing IDs are left out.
	GetStreamsByID(ctx context.Context, realmID int64, ids []int64) ([]Stream, error)
	// GetStreamsByName returns the realm's channels whose name equals one
	// of names case-insensitively (Fold), by ID.
	GetStreamsByName(ctx context.Context, realmID int64, names []string) ([]Stream, error)
	// ListDefaultStreams returns the realm's default channels, by ID.
	ListDefaultStreams(ctx context.Context, realmID int64) ([]Stream, error)
	// ListStreamsUsingGroups returns the realm's unarchived channels whose
	// permission settings name one of the groups, by ID.
	ListStreamsUsingGroups(ctx context.Context, realmID int64, groupIDs []int64) ([]Stream, error)
	// ListGroupsUsingGroups returns the realm's active named groups whose
	// permission settings name one of the groups, by ID.
	ListGroupsUsingGroups(ctx context.Context, realmID int64, groupIDs []int64) ([]UserGroup, error)
	// ListActiveSubscribers returns the active subscriptions of active
	// users to the given channels, by channel then user.
	ListActiveSubscribers(ctx context.Context, realmID int64, streamIDs []int64) ([]Subscription, error)
	// ActiveSubscribersAmong returns which of the users are active users
	// actively subscribed to the channel, ascending.
	ActiveSubscribersAmong(ctx context.Context, realmID, streamID int64, userIDs []int64) ([]int64, error)
	// CountActiveSubscribers counts the channel's active subscribers who
	// are active users, stopping at limit (the answer is at most limit).
	CountActiveSubscribers(ctx context.Context, realmID, streamID int64, limit int) (int, error)
	// RealmsByHostname returns up to limit realms whose host, without its
	// port, equals hostname (case-insensitively), by ID.
	RealmsByHostname(ctx context.Context, hostname string, limit int) ([]Realm, error)
	// FirstRealms returns up to limit realms, by ID.
	FirstRealms(ctx context.Context, limit int) ([]Realm, error)
	// LockRealm makes the enclosing transaction the only writer of the
	// realm's invariants (owners, group graph, names) until it ends, so that
	// checks and the writes they guard have the same meaning on every
	// database. It must be called inside InTx.
	LockRealm(ctx context.Context, realmID int64) error
	// LockLane makes the enclosing transaction the only writer of one lane
	// of the realm (a channel's or a conversation's messages) until it
	// ends, beside other lanes' writers but never beside a LockRealm
	// holder: it holds the realm shared and the lane exclusively. It must
	// be called inside InTx, and not after LockRealm. Holding the locks,
	// it reserves newMessages message IDs as ReserveMessageIDs does (in
	// the same round trip), and returns them.
	LockLane(ctx context.Context, realmID int64, lane uint64, newMessages int) ([]int64, error)
}
