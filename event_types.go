package chat

import "encoding/json"

var jsonMarshal = json.Marshal

// The event payloads this server emits, in the reference's shapes
// (facts §2.4 and the events of its OpenAPI description). Each is a
// complete event minus the queue's "id"; "type" comes from EventType.

// RealmUserEvent: a user was added ("add", Person is a whole User) or
// changed ("update", Person holds user_id and the changed fields), or
// became inaccessible ("remove").
type RealmUserEvent struct {
	Op     string `json:"op"`
	Person any    `json:"person"`
}

func (RealmUserEvent) EventType() string { return "realm_user" }

// RealmEvent: an organization setting changed. "update" carries Property
// and Value; "update_dict" carries Property "default" and Data.
type RealmEvent struct {
	Op       string         `json:"op"`
	Property string         `json:"property,omitempty"`
	Value    any            `json:"value,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
}

func (RealmEvent) EventType() string { return "realm" }

// MarshalJSON writes "value" (which may be false or null) on updates.
func (e RealmEvent) MarshalJSON() ([]byte, error) {
	if e.Op == "update" {
		return jsonMarshal(struct {
			Op       string `json:"op"`
			Property string `json:"property"`
			Value    any    `json:"value"`
		}{e.Op, e.Property, e.Value})
	}
	type plain RealmEvent
	return jsonMarshal(plain(e))
}

// UserSettingsEvent: one of the user's own settings changed.
type UserSettingsEvent struct {
	Op       string `json:"op"`
	Property string `json:"property"`
	Value    any    `json:"value"`
	// LanguageName accompanies a default_language change.
	LanguageName *string `json:"language_name,omitempty"`
}

func (UserSettingsEvent) EventType() string { return "user_settings" }

// RealmBotEvent: a bot was added (Bot is a whole Bot), changed (user_id and
// the changed fields), deactivated ("remove": user_id and full_name) or
// deleted ("delete": user_id).
type RealmBotEvent struct {
	Op  string `json:"op"`
	Bot any    `json:"bot"`
}

func (RealmBotEvent) EventType() string { return "realm_bot" }

// CustomProfileFieldsEvent carries the organization's whole field list.
type CustomProfileFieldsEvent struct {
	Fields []ProfileField `json:"fields"`
}

func (CustomProfileFieldsEvent) EventType() string { return "custom_profile_fields" }

// StreamEvent: channels were created ("create"), deleted ("delete") or
// one property of a channel changed ("update").
type StreamEvent struct {
	Op      string    `json:"op"`
	Streams []Channel `json:"streams,omitempty"`
	// Deleted lists {stream_id} objects (the deprecated form of delete).
	Deleted   []streamRef `json:"-"`
	StreamIDs []int64     `json:"stream_ids,omitempty"`
	StreamID  int64       `json:"stream_id,omitempty"`
	Name      string      `json:"name,omitempty"`
	Property  string      `json:"property,omitempty"`
	Value     any         `json:"value,omitempty"`
	// Extra fields of an update, by property.
	RenderedDescription        *string `json:"rendered_description,omitempty"`
	HistoryPublicToSubscribers *bool   `json:"history_public_to_subscribers,omitempty"`
	IsWebPublic                *bool   `json:"is_web_public,omitempty"`
}

type streamRef struct {
	StreamID int64 `json:"stream_id"`
}

func (StreamEvent) EventType() string { return "stream" }

// MarshalJSON writes the delete form's "streams" as [{stream_id}].
func (e StreamEvent) MarshalJSON() ([]byte, error) {
	type plain StreamEvent
	if e.Op == "delete" {
		return jsonMarshal(struct {
			Op        string      `json:"op"`
			Streams   []streamRef `json:"streams"`
			StreamIDs []int64     `json:"stream_ids"`
		}{e.Op, e.Deleted, e.StreamIDs})
	}
	if e.Op == "update" {
		// An update's value may be false, 0, "" or null: always write it.
		type update struct {
			plain
			Value any `json:"value"`
		}
		return jsonMarshal(update{plain(e), e.Value})
	}
	return jsonMarshal(plain(e))
}

// SubscriptionEvent: the user subscribed ("add", Subscriptions), left
// ("remove", Removed), changed a property ("update"), or others joined or
// left channels the user can see ("peer_add"/"peer_remove").
type SubscriptionEvent struct {
	Op            string             `json:"op"`
	Subscriptions []SubscriptionInfo `json:"subscriptions,omitempty"`
	Removed       []channelNameRef   `json:"-"`
	StreamID      int64              `json:"stream_id,omitempty"`
	Property      string             `json:"property,omitempty"`
	Value         any                `json:"-"`
	StreamIDs     []int64            `json:"stream_ids,omitempty"`
	UserIDs       []int64            `json:"user_ids,omitempty"`
}

type channelNameRef struct {
	Name     string `json:"name"`
	StreamID int64  `json:"stream_id"`
}

func (SubscriptionEvent) EventType() string { return "subscription" }

// MarshalJSON writes each op's own fields.
func (e SubscriptionEvent) MarshalJSON() ([]byte, error) {
	switch e.Op {
	case "remove":
		return jsonMarshal(struct {
			Op            string           `json:"op"`
			Subscriptions []channelNameRef `json:"subscriptions"`
		}{e.Op, e.Removed})
	case "update":
		return jsonMarshal(struct {
			Op       string `json:"op"`
			StreamID int64  `json:"stream_id"`
			Property string `json:"property"`
			Value    any    `json:"value"`
		}{e.Op, e.StreamID, e.Property, e.Value})
	case "peer_add", "peer_remove":
		return jsonMarshal(struct {
			Op        string  `json:"op"`
			StreamIDs []int64 `json:"stream_ids"`
			UserIDs   []int64 `json:"user_ids"`
		}{e.Op, e.StreamIDs, e.UserIDs})
	}
	return jsonMarshal(struct {
		Op            string             `json:"op"`
		Subscriptions []SubscriptionInfo `json:"subscriptions"`
	}{e.Op, e.Subscriptions})
}

// UserTopicEvent: the user's visibility policy of a topic changed
// (policy 0 means it was removed).
type UserTopicEvent struct {
	StreamID         int64  `json:"stream_id"`
	TopicName        string `json:"topic_name"`
	LastUpdated      int64  `json:"last_updated"`
	VisibilityPolicy int    `json:"visibility_policy"`
}

func (UserTopicEvent) EventType() string { return "user_topic" }

// UserGroupEvent: a group was created ("add", Group), changed ("update",
// GroupID and Data), gained or lost members or subgroups, or was
// deactivated ("remove").
type UserGroupEvent struct {
	Op                string         `json:"op"`
	Group             *UserGroup     `json:"group,omitempty"`
	GroupID           int64          `json:"group_id,omitempty"`
	Data              map[string]any `json:"data,omitempty"`
	UserIDs           []int64        `json:"user_ids,omitempty"`
	DirectSubgroupIDs []int64        `json:"direct_subgroup_ids,omitempty"`
}

func (UserGroupEvent) EventType() string { return "user_group" }

// DraftsEvent: drafts were added ("add", Drafts), one changed ("update",
// Draft) or was removed ("remove", DraftID).
type DraftsEvent struct {
	Op      string  `json:"op"`
	Drafts  []Draft `json:"drafts,omitempty"`
	Draft   *Draft  `json:"draft,omitempty"`
	DraftID int64   `json:"draft_id,omitempty"`
}

func (DraftsEvent) EventType() string { return "drafts" }

// UpdateDisplaySettingsEvent and UpdateGlobalNotificationsEvent are the
// legacy forms of a user_settings update, still sent for the settings
// that predate it (the event queues drop them for clients that declare
// user_settings_object).
type UpdateDisplaySettingsEvent struct {
	User         string  `json:"user"`
	SettingName  string  `json:"setting_name"`
	Setting      any     `json:"setting"`
	LanguageName *string `json:"language_name,omitempty"`
}

func (UpdateDisplaySettingsEvent) EventType() string { return "update_display_settings" }

type UpdateGlobalNotificationsEvent struct {
	User             string `json:"user"`
	NotificationName string `json:"notification_name"`
	Setting          any    `json:"setting"`
}

func (UpdateGlobalNotificationsEvent) EventType() string { return "update_global_notifications" }
