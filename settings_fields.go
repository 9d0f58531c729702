// The settings fields, taken from the reference's PATCH /settings parameters
// and its model defaults. Keep the four lists in step: Settings,
// DefaultSettings, SettingsPatch and settingRules.

package chat

// Settings are a user's personal settings: display, notification and
// privacy preferences (the reference's user_settings).
type Settings struct {
	TwentyFourHourTime                            bool   `json:"twenty_four_hour_time"`
	WebMarkReadOnScrollPolicy                     int    `json:"web_mark_read_on_scroll_policy"`
	WebChannelDefaultView                         int    `json:"web_channel_default_view"`
	StarredMessageCounts                          bool   `json:"starred_message_counts"`
	ReceivesTypingNotifications                   bool   `json:"receives_typing_notifications"`
	WebSuggestUpdateTimezone                      bool   `json:"web_suggest_update_timezone"`
	FluidLayoutWidth                              bool   `json:"fluid_layout_width"`
	HighContrastMode                              bool   `json:"high_contrast_mode"`
	WebFontSizePx                                 int    `json:"web_font_size_px"`
	WebLineHeightPercent                          int    `json:"web_line_height_percent"`
	ColorScheme                                   int    `json:"color_scheme"`
	EnableDraftsSynchronization                   bool   `json:"enable_drafts_synchronization"`
	TranslateEmoticons                            bool   `json:"translate_emoticons"`
	DisplayEmojiReactionUsers                     bool   `json:"display_emoji_reaction_users"`
	DefaultLanguage                               string `json:"default_language"`
	WebHomeView                                   string `json:"web_home_view"`
	WebEscapeNavigatesToHomeView                  bool   `json:"web_escape_navigates_to_home_view"`
	LeftSideUserlist                              bool   `json:"left_side_userlist"`
	Emojiset                                      string `json:"emojiset"`
	DemoteInactiveStreams                         int    `json:"demote_inactive_streams"`
	UserListStyle                                 int    `json:"user_list_style"`
	WebAnimateImagePreviews                       string `json:"web_animate_image_previews"`
	WebStreamUnreadsCountDisplayPolicy            int    `json:"web_stream_unreads_count_display_policy"`
	HideAIFeatures                                bool   `json:"hide_ai_features"`
	EnableStreamDesktopNotifications              bool   `json:"enable_stream_desktop_notifications"`
	EnableStreamEmailNotifications                bool   `json:"enable_stream_email_notifications"`
	EnableStreamPushNotifications                 bool   `json:"enable_stream_push_notifications"`
	EnableStreamAudibleNotifications              bool   `json:"enable_stream_audible_notifications"`
	NotificationSound                             string `json:"notification_sound"`
	EnableDesktopNotifications                    bool   `json:"enable_desktop_notifications"`
	EnableSounds                                  bool   `json:"enable_sounds"`
	EmailNotificationsBatchingPeriodSeconds       int    `json:"email_notifications_batching_period_seconds"`
	EnableOfflineEmailNotifications               bool   `json:"enable_offline_email_notifications"`
	EnableOfflinePushNotifications                bool   `json:"enable_offline_push_notifications"`
	EnableOnlinePushNotifications                 bool   `json:"enable_online_push_notifications"`
	EnableFollowedTopicDesktopNotifications       bool   `json:"enable_followed_topic_desktop_notifications"`
	EnableFollowedTopicEmailNotifications         bool   `json:"enable_followed_topic_email_notifications"`
	EnableFollowedTopicPushNotifications          bool   `json:"enable_followed_topic_push_notifications"`
	EnableFollowedTopicAudibleNotifications       bool   `json:"enable_followed_topic_audible_notifications"`
	EnableDigestEmails                            bool   `json:"enable_digest_emails"`
	EnableMarketingEmails                         bool   `json:"enable_marketing_emails"`
	EnableLoginEmails                             bool   `json:"enable_login_emails"`
	MessageContentInEmailNotifications            bool   `json:"message_content_in_email_notifications"`
	PMContentInDesktopNotifications               bool   `json:"pm_content_in_desktop_notifications"`
	WildcardMentionsNotify                        bool   `json:"wildcard_mentions_notify"`
	EnableFollowedTopicWildcardMentionsNotify     bool   `json:"enable_followed_topic_wildcard_mentions_notify"`
	DesktopIconCountDisplay                       int    `json:"desktop_icon_count_display"`
	RealmNameInEmailNotificationsPolicy           int    `json:"realm_name_in_email_notifications_policy"`
	AutomaticallyFollowTopicsPolicy               int    `json:"automatically_follow_topics_policy"`
	AutomaticallyUnmuteTopicsInMutedStreamsPolicy int    `json:"automatically_unmute_topics_in_muted_streams_policy"`
	AutomaticallyFollowTopicsWhereMentioned       bool   `json:"automatically_follow_topics_where_mentioned"`
	PresenceEnabled                               bool   `json:"presence_enabled"`
	EnterSends                                    bool   `json:"enter_sends"`
	SendPrivateTypingNotifications                bool   `json:"send_private_typing_notifications"`
	SendStreamTypingNotifications                 bool   `json:"send_stream_typing_notifications"`
	SendReadReceipts                              bool   `json:"send_read_receipts"`
	AllowPrivateDataExport                        bool   `json:"allow_private_data_export"`
	EmailAddressVisibility                        int    `json:"email_address_visibility"`
	WebNavigateToSentMessage                      bool   `json:"web_navigate_to_sent_message"`
}

// DefaultSettings are the settings of a new account.
var DefaultSettings = Settings{
	TwentyFourHourTime:                            false,
	WebMarkReadOnScrollPolicy:                     1,
	WebChannelDefaultView:                         1,
	StarredMessageCounts:                          true,
	ReceivesTypingNotifications:                   true,
	WebSuggestUpdateTimezone:                      true,
	FluidLayoutWidth:                              false,
	HighContrastMode:                              false,
	WebFontSizePx:                                 16,
	WebLineHeightPercent:                          140,
	ColorScheme:                                   1,
	EnableDraftsSynchronization:                   true,
	TranslateEmoticons:                            false,
	DisplayEmojiReactionUsers:                     true,
	DefaultLanguage:                               "en",
	WebHomeView:                                   "inbox",
	WebEscapeNavigatesToHomeView:                  true,
	LeftSideUserlist:                              false,
	Emojiset:                                      "google",
	DemoteInactiveStreams:                         1,
	UserListStyle:                                 3,
	WebAnimateImagePreviews:                       "on_hover",
	WebStreamUnreadsCountDisplayPolicy:            2,
	HideAIFeatures:                                false,
	EnableStreamDesktopNotifications:              false,
	EnableStreamEmailNotifications:                false,
	EnableStreamPushNotifications:                 false,
	EnableStreamAudibleNotifications:              false,
	NotificationSound:                             "zulip",
	EnableDesktopNotifications:                    true,
	EnableSounds:                                  true,
	EmailNotificationsBatchingPeriodSeconds:       120,
	EnableOfflineEmailNotifications:               true,
	EnableOfflinePushNotifications:                true,
	EnableOnlinePushNotifications:                 true,
	EnableFollowedTopicDesktopNotifications:       true,
	EnableFollowedTopicEmailNotifications:         true,
	EnableFollowedTopicPushNotifications:          true,
	EnableFollowedTopicAudibleNotifications:       true,
	EnableDigestEmails:                            true,
	EnableMarketingEmails:                         true,
	EnableLoginEmails:                             true,
	MessageContentInEmailNotifications:            true,
	PMContentInDesktopNotifications:               true,
	WildcardMentionsNotify:                        true,
	EnableFollowedTopicWildcardMentionsNotify:     true,
	DesktopIconCountDisplay:                       1,
	RealmNameInEmailNotificationsPolicy:           1,
	AutomaticallyFollowTopicsPolicy:               3,
	AutomaticallyUnmuteTopicsInMutedStreamsPolicy: 2,
	AutomaticallyFollowTopicsWhereMentioned:       true,
	PresenceEnabled:                               true,
	EnterSends:                                    false,
	SendPrivateTypingNotifications:                true,
	SendStreamTypingNotifications:                 true,
	SendReadReceipts:                              true,
	AllowPrivateDataExport:                        false,
	EmailAddressVisibility:                        1,
	WebNavigateToSentMessage:                      true,
}

// SettingsPatch holds the optional settings parameters of
// UpdateSettingsRequest; each non-nil field replaces the setting of the same
// name in Settings.
type SettingsPatch struct {
	TwentyFourHourTime                            *bool   `json:"twenty_four_hour_time"`
	WebMarkReadOnScrollPolicy                     *int    `json:"web_mark_read_on_scroll_policy"`
	WebChannelDefaultView                         *int    `json:"web_channel_default_view"`
	StarredMessageCounts                          *bool   `json:"starred_message_counts"`
	ReceivesTypingNotifications                   *bool   `json:"receives_typing_notifications"`
	WebSuggestUpdateTimezone                      *bool   `json:"web_suggest_update_timezone"`
	FluidLayoutWidth                              *bool   `json:"fluid_layout_width"`
	HighContrastMode                              *bool   `json:"high_contrast_mode"`
	WebFontSizePx                                 *int    `json:"web_font_size_px"`
	WebLineHeightPercent                          *int    `json:"web_line_height_percent"`
	ColorScheme                                   *int    `json:"color_scheme"`
	EnableDraftsSynchronization                   *bool   `json:"enable_drafts_synchronization"`
	TranslateEmoticons                            *bool   `json:"translate_emoticons"`
	DisplayEmojiReactionUsers                     *bool   `json:"display_emoji_reaction_users"`
	DefaultLanguage                               *string `json:"default_language"`
	WebHomeView                                   *string `json:"web_home_view"`
	WebEscapeNavigatesToHomeView                  *bool   `json:"web_escape_navigates_to_home_view"`
	LeftSideUserlist                              *bool   `json:"left_side_userlist"`
	Emojiset                                      *string `json:"emojiset"`
	DemoteInactiveStreams                         *int    `json:"demote_inactive_streams"`
	UserListStyle                                 *int    `json:"user_list_style"`
	WebAnimateImagePreviews                       *string `json:"web_animate_image_previews"`
	WebStreamUnreadsCountDisplayPolicy            *int    `json:"web_stream_unreads_count_display_policy"`
	HideAIFeatures                                *bool   `json:"hide_ai_features"`
	EnableStreamDesktopNotifications              *bool   `json:"enable_stream_desktop_notifications"`
	EnableStreamEmailNotifications                *bool   `json:"enable_stream_email_notifications"`
	EnableStreamPushNotifications                 *bool   `json:"enable_stream_push_notifications"`
	EnableStreamAudibleNotifications              *bool   `json:"enable_stream_audible_notifications"`
	NotificationSound                             *string `json:"notification_sound"`
	EnableDesktopNotifications                    *bool   `json:"enable_desktop_notifications"`
	EnableSounds                                  *bool   `json:"enable_sounds"`
	EmailNotificationsBatchingPeriodSeconds       *int    `json:"email_notifications_batching_period_seconds"`
	EnableOfflineEmailNotifications               *bool   `json:"enable_offline_email_notifications"`
	EnableOfflinePushNotifications                *bool   `json:"enable_offline_push_notifications"`
	EnableOnlinePushNotifications                 *bool   `json:"enable_online_push_notifications"`
	EnableFollowedTopicDesktopNotifications       *bool   `json:"enable_followed_topic_desktop_notifications"`
	EnableFollowedTopicEmailNotifications         *bool   `json:"enable_followed_topic_email_notifications"`
	EnableFollowedTopicPushNotifications          *bool   `json:"enable_followed_topic_push_notifications"`
	EnableFollowedTopicAudibleNotifications       *bool   `json:"enable_followed_topic_audible_notifications"`
	EnableDigestEmails                            *bool   `json:"enable_digest_emails"`
	EnableMarketingEmails                         *bool   `json:"enable_marketing_emails"`
	EnableLoginEmails                             *bool   `json:"enable_login_emails"`
	MessageContentInEmailNotifications            *bool   `json:"message_content_in_email_notifications"`
	PMContentInDesktopNotifications               *bool   `json:"pm_content_in_desktop_notifications"`
	WildcardMentionsNotify                        *bool   `json:"wildcard_mentions_notify"`
	EnableFollowedTopicWildcardMentionsNotify     *bool   `json:"enable_followed_topic_wildcard_mentions_notify"`
	DesktopIconCountDisplay                       *int    `json:"desktop_icon_count_display"`
	RealmNameInEmailNotificationsPolicy           *int    `json:"realm_name_in_email_notifications_policy"`
	AutomaticallyFollowTopicsPolicy               *int    `json:"automatically_follow_topics_policy"`
	AutomaticallyUnmuteTopicsInMutedStreamsPolicy *int    `json:"automatically_unmute_topics_in_muted_streams_policy"`
	AutomaticallyFollowTopicsWhereMentioned       *bool   `json:"automatically_follow_topics_where_mentioned"`
	PresenceEnabled                               *bool   `json:"presence_enabled"`
	EnterSends                                    *bool   `json:"enter_sends"`
	SendPrivateTypingNotifications                *bool   `json:"send_private_typing_notifications"`
	SendStreamTypingNotifications                 *bool   `json:"send_stream_typing_notifications"`
	SendReadReceipts                              *bool   `json:"send_read_receipts"`
	AllowPrivateDataExport                        *bool   `json:"allow_private_data_export"`
	EmailAddressVisibility                        *int    `json:"email_address_visibility"`
	WebNavigateToSentMessage                      *bool   `json:"web_navigate_to_sent_message"`
}

// settingRules validate the settings that are not free booleans.
var settingRules = map[string]settingRule{
	"web_mark_read_on_scroll_policy": intChoices(1, 2, 3),
	"web_channel_default_view":       intChoices(1, 2),
	// The reference checks no range beyond its column's (a positive
	// small integer).
	"web_font_size_px":                                    intRange(0, 32767),
	"web_line_height_percent":                             intRange(0, 32767),
	"color_scheme":                                        intChoices(1, 2, 3),
	"default_language":                                    languageCode,
	"web_home_view":                                       stringChoices("recent_topics", "inbox", "all_messages"),
	"emojiset":                                            stringChoices("google", "google-blob", "twitter", "text"),
	"demote_inactive_streams":                             intChoices(1, 2, 3),
	"user_list_style":                                     intChoices(1, 2, 3),
	"web_animate_image_previews":                          stringChoices("always", "on_hover", "never"),
	"web_stream_unreads_count_display_policy":             intChoices(1, 2, 3),
	"notification_sound":                                  stringChoices("none", "zulip", "ding", "chime", "pling", "vibrate"),
	"email_notifications_batching_period_seconds":         intRange(1, 604800),
	"desktop_icon_count_display":                          intChoices(1, 2, 3, 4),
	"realm_name_in_email_notifications_policy":            intChoices(1, 2, 3),
	"automatically_follow_topics_policy":                  intChoices(1, 2, 3, 4),
	"automatically_unmute_topics_in_muted_streams_policy": intChoices(1, 2, 3, 4),
	"email_address_visibility":                            intChoices(1, 2, 3, 4, 5),
}
