package rest

import chat "github.com/teamchat/chat"

// routes lists every endpoint, one line each, below /api/v1.
func routes() []endpoint {
	type S = chat.Service
	return []endpoint{
		publicNoArgs("GET", "/server_settings", (*S).GetServerSettings),
		public("POST", "/fetch_api_key", (*S).FetchAPIKey),
		public("POST", "/accounts/confirm_new_email/{key}", (*S).ConfirmEmailChange),

		authedNoArgs("POST", "/users/me/api_key/regenerate", (*S).RegenerateAPIKey),
		authedNoArgs("GET", "/users/me", (*S).GetOwnUser),
		authedNoArgs("DELETE", "/users/me", (*S).DeactivateOwnUser),
		authed("GET", "/users", (*S).GetUsers),
		authed("POST", "/users", (*S).CreateUser),
		authed("GET", "/users/{user_id:int}", (*S).GetUser),
		authed("PATCH", "/users/{user_id:int}", (*S).UpdateUser),
		authed("DELETE", "/users/{user_id:int}", (*S).DeactivateUser),
		authed("POST", "/users/{user_id:int}/reactivate", (*S).ReactivateUser),
		authed("GET", "/users/{email}", (*S).GetUserByEmail),
		authed("PATCH", "/users/{email}", (*S).UpdateUserByEmail),

		authedNoArgs("GET", "/settings", (*S).GetSettings),
		authed("PATCH", "/settings", (*S).UpdateSettings),
		authed("PATCH", "/settings/display", (*S).UpdateSettings),
		authed("PATCH", "/settings/notifications", (*S).UpdateSettings),

		authedNoArgs("GET", "/drafts", (*S).GetDrafts),
		authed("POST", "/drafts", (*S).CreateDrafts),
		authed("PATCH", "/drafts/{draft_id:int}", (*S).EditDraft),
		authed("DELETE", "/drafts/{draft_id:int}", (*S).DeleteDraft),

		authed("POST", "/messages", (*S).SendMessage),
		authed("GET", "/messages", (*S).GetMessages),
		authed("GET", "/messages/matches_narrow", (*S).MatchesNarrow),
		authed("GET", "/messages/{message_id:int}", (*S).GetMessage),
		authed("PATCH", "/messages/{message_id:int}", (*S).UpdateMessage),
		authed("DELETE", "/messages/{message_id:int}", (*S).DeleteMessage),
		authed("GET", "/messages/{message_id:int}/history", (*S).GetMessageHistory),
		authed("GET", "/messages/{message_id:int}/read_receipts", (*S).GetReadReceipts),
		authed("POST", "/messages/{message_id:int}/reactions", (*S).AddReaction),
		authed("DELETE", "/messages/{message_id:int}/reactions", (*S).RemoveReaction),
		authedUpload("POST", "/user_uploads", (*S).UploadFile, func(r *chat.UploadFileRequest, f chat.FileUpload) { r.File = f },
			func(l chat.Limits) int { return l.MaxFileUploadSizeMiB }, ""),
		authed("GET", "/user_uploads/{realm_id_str}/{filename...}", (*S).GetFileTemporaryURL),
		authed("POST", "/messages/flags", (*S).UpdateMessageFlags),
		authed("POST", "/messages/flags/narrow", (*S).UpdateMessageFlagsForNarrow),
		authedNoArgs("POST", "/mark_all_as_read", (*S).MarkAllAsRead),
		authed("POST", "/mark_stream_as_read", (*S).MarkStreamAsRead),
		authed("POST", "/mark_topic_as_read", (*S).MarkTopicAsRead),

		authedNoArgs("GET", "/realm", (*S).GetRealmSettings),
		authedNoArgs("GET", "/realm/emoji", (*S).GetCustomEmoji),
		authedUpload("POST", "/realm/emoji/{emoji_name}", (*S).UploadCustomEmoji, func(r *chat.UploadCustomEmojiRequest, f chat.FileUpload) { r.File = f },
			func(l chat.Limits) int { return l.MaxEmojiFileSizeMiB }, "You must upload exactly one file."),
		authed("DELETE", "/realm/emoji/{emoji_name}", (*S).DeleteCustomEmoji),
		authed("PATCH", "/realm", (*S).UpdateRealm),
		authedNoArgs("GET", "/realm/profile_fields", (*S).GetProfileFields),
		authed("POST", "/realm/profile_fields", (*S).CreateProfileField),
		authed("PATCH", "/realm/profile_fields", (*S).ReorderProfileFields),
		authed("DELETE", "/realm/profile_fields/{field_id:int}", (*S).DeleteProfileField),

		authed("GET", "/streams", (*S).GetChannels),
		authed("GET", "/streams/{stream_id:int}", (*S).GetChannel),
		authed("PATCH", "/streams/{stream_id:int}", (*S).UpdateChannel),
		authed("DELETE", "/streams/{stream_id:int}", (*S).ArchiveChannel),
		authed("GET", "/get_stream_id", (*S).GetChannelID),
		authed("GET", "/users/me/subscriptions", (*S).GetSubscriptions),
		authed("POST", "/users/me/subscriptions", (*S).Subscribe),
		authed("DELETE", "/users/me/subscriptions", (*S).Unsubscribe),
		authed("POST", "/users/me/subscriptions/properties", (*S).UpdateSubscriptionProperties),
		authed("POST", "/user_topics", (*S).UpdateUserTopic),

		authed("GET", "/user_groups", (*S).GetUserGroups),
		authed("POST", "/user_groups/create", (*S).CreateUserGroup),
		authed("PATCH", "/user_groups/{user_group_id:int}", (*S).UpdateUserGroup),
		authed("GET", "/user_groups/{user_group_id:int}/members", (*S).GetUserGroupMembers),
		authed("POST", "/user_groups/{user_group_id:int}/members", (*S).UpdateUserGroupMembers),
		authed("GET", "/user_groups/{user_group_id:int}/members/{user_id:int}", (*S).IsUserGroupMember),
		authed("GET", "/user_groups/{user_group_id:int}/subgroups", (*S).GetUserGroupSubgroups),
		authed("POST", "/user_groups/{user_group_id:int}/subgroups", (*S).UpdateUserGroupSubgroups),
		authed("POST", "/user_groups/{user_group_id:int}/deactivate", (*S).DeactivateUserGroup),

		authed("POST", "/register", (*S).Register),
		authed("GET", "/events", (*S).GetEvents),
		authed("DELETE", "/events", (*S).DeleteEvents),
		authed("POST", "/typing", (*S).SetTyping),
		authed("POST", "/messages/{message_id:int}/typing", (*S).SetEditTyping),

		authedNoArgs("GET", "/bots", (*S).GetBots),
		authed("POST", "/bots", (*S).CreateBot),
		authed("PATCH", "/bots/{bot_id:int}", (*S).UpdateBot),
		authed("DELETE", "/bots/{bot_id:int}", (*S).DeactivateBot),
		authed("POST", "/bots/{bot_id:int}/api_key/regenerate", (*S).RegenerateBotAPIKey),
	}
}
