package bunstore

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// notExported are the tables an organization's export leaves out, and why.
var notExported = map[string]string{
	"event_payloads":         "events in flight between servers, of no organization",
	"pending_notifications":  "notifications waiting to be sent: ephemeral background work",
	"webhook_deliveries":     "outgoing webhook calls waiting: ephemeral background work",
	"presence_sequences":     "presence is ephemeral",
	"user_presences":         "presence is ephemeral",
	"servers":                "the running servers of a fleet, of no organization",
	"fleet_secrets":          "the secret the servers of a fleet share, of no organization",
	"queue_moves":            "where event queues moved between servers: event queues are ephemeral",
	"saved_event_queues":     "event queues saved for a server's restart: event queues are ephemeral",
	"email_reply_addresses":  "reply addresses of missed-message emails: valid for days, bound to the server's notifications",
	"email_gateway_received": "mails the gateway posted, kept a week against deliveries tried again",
}

// derivedColumns are the columns the store computes from a record's
// fields (bulk.go writes them on import).
var derivedColumns = map[string][]string{
	"realms":                {"upload_bytes"},
	"users":                 {"email_key", "full_name_key", "stream_notifications"},
	"streams":               {"name_key"},
	"custom_profile_fields": {"name_key"},
	"user_topics":           {"topic_key"},
	"invites":               {"email_key"},
	"messages":              {"topic_key"},
}

// The export format follows the schema: every table is a kind of record
// (or left out for a stated reason), every column of a kind's table is a
// field of its record or derived from them, and every ID column says
// what it refers to. A migration that adds a table or a column fails
// here until the export knows it.
func TestExportKindsCoverTheSchema(t *testing.T) {
	st := OpenTestSQLite(t)
	ctx := context.Background()
	rows, err := st.writer.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'messages_fts%' AND name <> 'bun_migrations' AND name <> 'bun_migration_locks'")
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, tables)
	for _, table := range tables {
		k := storage.KindByName(table)
		if k == nil {
			assert.Contains(t, notExported, table, "table %s is neither a kind of export record (storage.Kinds) nor left out with a reason", table)
			continue
		}
		var cols []string
		crow, err := st.writer.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
		require.NoError(t, err)
		for crow.Next() {
			var c string
			require.NoError(t, crow.Scan(&c))
			cols = append(cols, c)
		}
		require.NoError(t, crow.Err())
		var fields []string
		for _, c := range storage.Columns(reflect.TypeOf(k.New())) {
			fields = append(fields, c.Name)
			assert.Contains(t, cols, c.Name, "%s: the record's column %s is not in the table", table, c.Name)
			if c.Name == "id" || c.Name == "realm_id" || !strings.HasSuffix(c.Name, "_id") || c.Type.Kind() == reflect.String {
				continue
			}
			_, ok := k.RefOf(c.Name)
			assert.True(t, ok, "%s.%s holds an ID: say what it refers to (storage.Kind.Refs or RefOf)", table, c.Name)
		}
		for _, c := range cols {
			if !slices.Contains(fields, c) && !slices.Contains(derivedColumns[table], c) {
				t.Errorf("%s.%s is neither a field of %T nor a column the store derives: an export would lose it", table, c, k.New())
			}
		}
	}
	for _, k := range storage.Kinds {
		assert.Contains(t, tables, k.Name, "kind %s has no table", k.Name)
	}
}
