package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/teamchat/chat/internal/archive"
	"github.com/teamchat/chat/storage"
)

// An archive from another system (the Slack importer's) holds no
// organization record, no system groups and no role memberships
// (Manifest.NewOrganization): the import makes the organization as
// CreateRealm does, with its system groups and the reference's group
// settings, and puts every imported user in the system groups of their
// role. The archive's own records (its users, channels, messages, ...)
// are loaded as from any archive, their IDs shifted past the database's.

// setRealmDefaultGroups gives a new organization the reference's group
// settings, among its system groups.
func setRealmDefaultGroups(ctx context.Context, st storage.Store, realm *storage.Realm, groups map[string]int64) error {
	// Members may create bots of every kind.
	realm.CanCreateBotsGroupID = groups[GroupMembers]
	realm.CanCreateWriteOnlyBotsGroupID = groups[GroupMembers]
	// Everyone may send and start direct messages.
	realm.DirectMessagePermissionGroupID = groups[GroupEveryone]
	realm.DirectMessageInitiatorGroupID = groups[GroupEveryone]
	// Only administrators may use wildcard mentions in large channels.
	realm.CanMentionManyUsersGroupID = groups[GroupAdministrators]
	// Message actions, as the reference creates organizations.
	realm.CanAddCustomEmojiGroupID = groups[GroupMembers]
	realm.CanDeleteAnyMessageGroupID = groups[GroupAdministrators]
	realm.CanDeleteOwnMessageGroupID = groups[GroupEveryone]
	realm.CanMoveMessagesBetweenChannelsGroupID = groups[GroupMembers]
	realm.CanMoveMessagesBetweenTopicsGroupID = groups[GroupEveryone]
	realm.CanResolveTopicsGroupID = groups[GroupEveryone]
	// Members may send email invitations; administrators create
	// reusable invitation links.
	realm.CanInviteUsersGroupID = groups[GroupMembers]
	realm.CreateMultiuseInviteGroupID = groups[GroupAdministrators]
	return st.UpdateRealm(ctx, realm, "can_create_bots_group_id", "can_create_write_only_bots_group_id",
		"direct_message_permission_group_id", "direct_message_initiator_group_id", "can_mention_many_users_group_id",
		"can_add_custom_emoji_group_id", "can_delete_any_message_group_id", "can_delete_own_message_group_id",
		"can_move_messages_between_channels_group_id", "can_move_messages_between_topics_group_id", "can_resolve_topics_group_id",
		"can_invite_users_group_id", "create_multiuse_invite_group_id")
}

// newOrganization makes the organization of a NewOrganization archive.
func (im *importer) newOrganization(ctx context.Context) error {
	raw := im.req.URL
	if raw == "" {
		raw = im.m.Realm.URL
	}
	u, host, err := parseRealmURL(raw)
	if err != nil {
		return &archive.Error{Entry: "manifest.json", Err: err}
	}
	if _, err := im.tx.GetRealmByHost(ctx, host); err == nil {
		return &archive.Error{Entry: "manifest.json", Err: fmt.Errorf("an organization is already served at %s", host)}
	}
	name := strings.TrimSpace(im.m.Realm.Name)
	if name == "" || len([]rune(name)) > 40 {
		return &archive.Error{Entry: "manifest.json", Err: fmt.Errorf("organization name %q: want 1 to 40 characters", name)}
	}
	now := im.s.nowUnix()
	realm := &storage.Realm{StringID: strings.SplitN(hostOnly(host), ".", 2)[0], Name: name, URL: u, Host: host,
		DateCreated: now, EmailAddressVisibility: EmailVisibleEveryone, AllowMessageEditing: true,
		MessageContentEditLimitSeconds:       new(int64(600)),
		MoveMessagesWithinStreamLimitSeconds: new(int64(7 * 86400)), MoveMessagesBetweenStreamsLimitSeconds: new(int64(7 * 86400)),
		MessageEditHistoryVisibilityPolicy: 1, EnableReadReceipts: true}
	if err := im.tx.CreateRealm(ctx, realm); err != nil {
		return err
	}
	groups, err := createSystemGroups(ctx, im.tx, realm.ID, now)
	if err != nil {
		return err
	}
	if err := setRealmDefaultGroups(ctx, im.tx, realm, groups); err != nil {
		return err
	}
	// The archive's paths hold its own organization ID (0 in the Slack
	// importer's).
	im.realm, im.oldRealm, im.groups = realm, im.m.Realm.ID, groups
	return nil
}

// finishNewOrganization puts the imported users in their role groups
// and checks that someone owns the organization.
func (im *importer) finishNewOrganization(ctx context.Context) error {
	byGroup := map[string][]int64{}
	owners := 0
	err := im.b.ScanRecords(ctx, im.realm.ID, storage.KindByName("users"), exportPage, func(recs []any) error {
		for _, rec := range recs {
			u := rec.(*storage.User)
			if u.Role == RoleOwner && u.IsActive && !u.IsBot {
				owners++
			}
			full := u.Role == RoleMember && im.s.isFullMember(im.realm, u)
			for _, name := range roleGroups(u.Role, full) {
				byGroup[name] = append(byGroup[name], u.ID)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if owners == 0 {
		return &archive.Error{Entry: "records/users", Err: errors.New("no active user owns the organization")}
	}
	if err := im.defaultChannelSettings(ctx); err != nil {
		return err
	}
	for name, ids := range byGroup {
		g, err := im.tx.GetGroupByName(ctx, im.realm.ID, name)
		if err != nil {
			return err
		}
		if err := im.tx.AddGroupMembers(ctx, im.realm.ID, g.ID, ids); err != nil {
			return err
		}
	}
	return nil
}

// defaultChannelSettings gives the archive's channels the reference's
// permission settings where the archive leaves them unset (0): another
// system's archive cannot name this organization's system groups. The
// setting whose default is "the creator alone" gets the administrators.
func (im *importer) defaultChannelSettings(ctx context.Context) error {
	var streams []storage.Stream
	err := im.b.ScanRecords(ctx, im.realm.ID, storage.KindByName("streams"), exportPage, func(recs []any) error {
		for _, rec := range recs {
			streams = append(streams, *rec.(*storage.Stream))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range streams {
		ch := &streams[i]
		var columns []string
		for _, d := range channelSettings {
			if f := d.field(ch); *f == 0 {
				def := d.def
				if def == "" {
					def = GroupAdministrators
				}
				*f = im.groups[def]
				columns = append(columns, d.column())
			}
		}
		if len(columns) > 0 {
			if err := im.tx.UpdateStream(ctx, ch, columns...); err != nil {
				return err
			}
		}
	}
	return nil
}
