package main

import (
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two server processes on one PostgreSQL database: a client registered on
// one receives, in order, the messages sent through the other, and the
// other way round.
func TestTwoServerProcessesOnePostgres(t *testing.T) {
	db := postgresTestDB(t)
	a, key := startChild(t, db)
	require.NotEmpty(t, key, "the first server creates the organization: %q", a.out)
	b, _ := startChild(t, db)
	require.NotEqual(t, a.base, b.base)

	for _, dir := range []struct{ send, poll *child }{{a, b}, {b, a}} {
		reg, status, err := post(dir.poll.base, key, "/api/v1/register", url.Values{"event_types": {`["message"]`}})
		require.NoError(t, err)
		require.Equal(t, 200, status, "%v", reg)
		queue := reg["queue_id"].(string)

		var sent []float64
		for i := range 5 {
			body, status, err := post(dir.send.base, key, "/api/v1/messages", url.Values{"type": {"private"},
				"to": {`["owner@teamchat.localhost"]`}, "content": {fmt.Sprint("hop ", i)}})
			require.NoError(t, err)
			require.Equal(t, 200, status, "%v", body)
			sent = append(sent, body["id"].(float64))
		}
		var got []float64
		last := "-1"
		deadline := time.Now().Add(10 * time.Second)
		for len(got) < len(sent) && time.Now().Before(deadline) {
			body, status, err := get(dir.poll.base, key, "/api/v1/events", url.Values{"queue_id": {queue}, "last_event_id": {last}})
			require.NoError(t, err)
			require.Equal(t, 200, status, "%v", body)
			for _, e := range body["events"].([]any) {
				ev := e.(map[string]any)
				last = fmt.Sprint(ev["id"])
				if ev["type"] == "message" {
					got = append(got, ev["message"].(map[string]any)["id"].(float64))
				}
			}
		}
		assert.Equal(t, sent, got, "every message, in order, through the other server")
		assert.True(t, slices.IsSorted(got))
	}
}
