package narrow_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/teamchat/chat/narrow"
	"github.com/teamchat/chat/storage"
)

// The flags Match reads are the store's bits: narrow names them itself,
// since it depends on no storage (the import is this test's only).
func TestFlagsAreTheStoresBits(t *testing.T) {
	for _, c := range []struct {
		name  string
		ours  narrow.Flags
		store int64
	}{
		{"read", narrow.FlagRead, storage.FlagRead},
		{"starred", narrow.FlagStarred, storage.FlagStarred},
		{"collapsed", narrow.FlagCollapsed, storage.FlagCollapsed},
		{"mentioned", narrow.FlagMentioned, storage.FlagMentioned},
		{"stream_wildcard_mentioned", narrow.FlagStreamWildcardMentioned, storage.FlagStreamWildcardMentioned},
		{"topic_wildcard_mentioned", narrow.FlagTopicWildcardMentioned, storage.FlagTopicWildcardMentioned},
		{"group_mentioned", narrow.FlagGroupMentioned, storage.FlagGroupMentioned},
		{"has_alert_word", narrow.FlagHasAlertWord, storage.FlagHasAlertWord},
		{"historical", narrow.FlagHistorical, storage.FlagHistorical},
	} {
		assert.Equal(t, c.store, int64(c.ours), c.name)
	}
}
