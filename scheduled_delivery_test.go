package chat_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// failureNotice is the notification bot's text for a message scheduled at
// ts that failed with reason.
func failureNotice(ts int64, reason string) string {
	return "The message you scheduled for <time:" + time.Unix(ts, 0).UTC().Format("2006-01-02T15:04:05") +
		"+00:00> was not sent because of the following error:\n\n> " + reason + "\n\n[View scheduled messages](#scheduled)"
}

// notices are the notification bot's direct messages the user has.
func notices(t *testing.T, h *chattest.Harness, as chattest.User) []string {
	t.Helper()
	var out []string
	for _, m := range directMessages(t, h, as) {
		if strings.HasPrefix(m.SenderEmail, "notification-bot@") {
			out = append(out, m.Content)
		}
	}
	return out
}

// deliveryWorld is an organization where alice and bob share a channel.
type deliveryWorld struct {
	h                 *chattest.Harness
	alice, bob, guest chattest.User
	ch                int64
}

// A message that can no longer be sent when due is marked failed and kept
// (listed with failed true, an update event), and its author gets the
// notification bot's notice, unless the author or the organization is
// deactivated; it is never sent, nor tried again, until edited with a
// new time.
func TestScheduledDeliveryFailures(t *testing.T) {
	ctx := context.Background()
	type world = deliveryWorld
	setup := func(t *testing.T) *world {
		h := chattest.New(t)
		w := &world{h: h, alice: h.NewUser(t, chat.RoleMember), bob: h.NewUser(t, chat.RoleMember)}
		w.ch = newChannelBy(t, h, w.alice, "plans", false)
		subscribe(t, h, w.alice, "plans", w.bob.ID)
		return w
	}
	toChannel := func(w *world) chat.CreateScheduledMessageRequest {
		return chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(w.ch), Topic: ptr("t"), Content: "hello",
			ScheduledDeliveryTimestamp: in(w.h, time.Hour)}
	}
	toBob := func(w *world) chat.CreateScheduledMessageRequest {
		return chat.CreateScheduledMessageRequest{Type: "direct", To: chat.ScheduleToUsers(w.bob.ID), Content: "hello",
			ScheduledDeliveryTimestamp: in(w.h, time.Hour)}
	}
	for _, tc := range []struct {
		name   string
		as     func(w *world) chattest.User
		req    func(w *world) chat.CreateScheduledMessageRequest
		change func(t *testing.T, w *world)
		late   time.Duration // past the delivery time
		reason func(w *world) string
		told   bool
	}{
		{"channel archived", nil, toChannel, func(t *testing.T, w *world) {
			_, err := w.h.Service.ArchiveChannel(ctx, w.h.Owner.Caller, chat.ArchiveChannelRequest{StreamID: w.ch})
			require.NoError(t, err)
		}, time.Second, func(*world) string { return "Not authorized to send to channel 'plans'" }, true},
		{"posting permission lost", nil, toChannel, func(t *testing.T, w *world) {
			admins := groupID(t, w.h, chat.GroupAdministrators)
			_, err := w.h.Service.UpdateChannel(ctx, w.h.Owner.Caller, chat.UpdateChannelRequest{StreamID: w.ch,
				CanSendMessageGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &admins}}})
			require.NoError(t, err)
		}, time.Second, func(*world) string { return "You do not have permission to post in this channel." }, true},
		{"guest unsubscribed", func(w *world) chattest.User {
			w.guest = w.h.NewUser(t, chat.RoleGuest)
			subscribe(t, w.h, w.alice, "plans", w.guest.ID)
			return w.guest
		}, toChannel, func(t *testing.T, w *world) {
			_, err := w.h.Service.Unsubscribe(ctx, w.h.Owner.Caller, chat.UnsubscribeRequest{Subscriptions: []string{"plans"},
				Principals: &[]chat.Principal{{ID: w.guest.ID}}})
			require.NoError(t, err)
		}, time.Second, func(*world) string { return "Not authorized to send to channel 'plans'" }, true},
		{"recipient deactivated", nil, toBob, func(t *testing.T, w *world) { w.h.Deactivate(t, w.bob) },
			time.Second, func(w *world) string { return fmt.Sprintf("'%s' is no longer using Zulip.", w.bob.Email) }, true},
		{"too late", nil, toBob, func(*testing.T, *world) {}, 10*time.Minute + time.Second,
			func(*world) string { return "Message could not be sent at the scheduled time." }, true},
		{"author deactivated", nil, toBob, func(t *testing.T, w *world) { w.h.Deactivate(t, w.alice) },
			time.Second, func(*world) string { return "Account is deactivated" }, false},
		{"organization deactivated", nil, toChannel, func(t *testing.T, w *world) { w.h.DeactivateRealm(t) },
			time.Second, func(*world) string { return "This organization has been deactivated" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := setup(t)
			author := w.alice
			if tc.as != nil {
				author = tc.as(w)
			}
			req := tc.req(w)
			id := schedule(t, w.h, author, req)
			tc.change(t, w)
			takeEvents(t, w.h)
			w.h.Clock.Set(time.Unix(req.ScheduledDeliveryTimestamp, 0).Add(tc.late))
			assert.Zero(t, deliverDue(t, w.h))

			rec, err := w.h.Store.GetScheduledMessage(ctx, w.h.RealmID, author.ID, id)
			require.NoError(t, err)
			assert.True(t, rec.Failed)
			assert.False(t, rec.Delivered)
			assert.Equal(t, tc.reason(w), *rec.FailureMessage)
			evs := takeEvents(t, w.h)
			if !tc.told {
				assert.Empty(t, evs, "nobody to tell")
				return
			}
			up := only(t, evs, "scheduled_messages", "update")
			assert.Equal(t, []int64{author.ID}, up.To)
			assert.Equal(t, true, up.JSON["scheduled_message"].(map[string]any)["failed"])
			list := listScheduled(t, w.h, author)
			require.Len(t, list, 1, "kept")
			assert.True(t, list[0].Failed)
			assert.Equal(t, []string{failureNotice(req.ScheduledDeliveryTimestamp, tc.reason(w))}, notices(t, w.h, author))
			assert.Empty(t, channelMessages(t, w.h, w.alice, w.ch), "not sent")
			if bob, err := w.h.Store.GetUser(ctx, w.h.RealmID, w.bob.ID); err == nil && bob.IsActive {
				assert.Empty(t, directMessages(t, w.h, w.bob), "not sent")
			}

			// Not tried again; an edit needs a new time.
			w.h.Clock.Advance(time.Minute)
			assert.Zero(t, deliverDue(t, w.h))
			assert.Len(t, notices(t, w.h, author), 1, "told once")
			_, err = w.h.Service.UpdateScheduledMessage(ctx, author.Caller, chat.UpdateScheduledMessageRequest{ScheduledMessageID: id, Content: ptr("again")})
			requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Scheduled delivery time must be in the future.")
			next := in(w.h, time.Hour)
			_, err = w.h.Service.UpdateScheduledMessage(ctx, author.Caller, chat.UpdateScheduledMessageRequest{ScheduledMessageID: id, ScheduledDeliveryTimestamp: &next})
			require.NoError(t, err)
			list = listScheduled(t, w.h, author)
			require.Len(t, list, 1)
			assert.False(t, list[0].Failed, "pending again")
			assert.Equal(t, next, list[0].ScheduledDeliveryTimestamp)
		})
	}
}

// Delivery checks and renders the message as of its delivery: a mention
// of a user who joined meanwhile becomes a mention; a recipient who came
// back lets a failed message, edited with a new time, go; ten minutes
// late is still in time.
func TestScheduledDeliveryChecksAtDelivery(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, h, alice, "plans", false)

	due := in(h, time.Hour)
	schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch), Topic: ptr("t"),
		Content: "welcome @**Dana Later**", ScheduledDeliveryTimestamp: due})
	list := listScheduled(t, h, alice)
	require.Len(t, list, 1)
	assert.NotContains(t, list[0].RenderedContent, "user-mention", "nobody of that name when scheduled")
	dana := h.Provision(t, chat.ProvisionUserRequest{Email: "dana@example.com", FullName: "Dana Later"})
	h.Clock.Set(time.Unix(due, 0).Add(10 * time.Minute))
	assert.Equal(t, 1, deliverDue(t, h), "ten minutes late is in time")
	msgs := fetch(t, h, alice, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(1), NumAfter: ptr(0)}).Messages
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0].Content, fmt.Sprintf(`data-user-id="%d"`, dana.ID), "rendered when sent")

	// A failed message edited with a new time goes once the recipient is back.
	id := schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "direct", To: chat.ScheduleToUsers(bob.ID), Content: "ping",
		ScheduledDeliveryTimestamp: in(h, time.Minute)})
	h.Deactivate(t, bob)
	h.Clock.Advance(2 * time.Minute)
	assert.Zero(t, deliverDue(t, h))
	require.True(t, listScheduled(t, h, alice)[0].Failed)
	_, err := h.Service.ReactivateUser(ctx, h.Owner.Caller, chat.ReactivateUserRequest{UserID: bob.ID})
	require.NoError(t, err)
	next := in(h, time.Minute)
	_, err = h.Service.UpdateScheduledMessage(ctx, alice.Caller, chat.UpdateScheduledMessageRequest{ScheduledMessageID: id, ScheduledDeliveryTimestamp: &next})
	require.NoError(t, err)
	h.Clock.Advance(time.Minute)
	assert.Equal(t, 1, deliverDue(t, h))
	var got []string
	for _, m := range directMessages(t, h, bob) {
		got = append(got, m.Content)
	}
	assert.Equal(t, []string{"ping"}, got)
	assert.Empty(t, listScheduled(t, h, alice))
}

// An edit that lands after a delivery round read the message, and before
// it claimed it, is never sent in its old form: the claim names the
// version it checked, loses, and rolls its copy back; the next round
// sends the edited message.
func TestScheduledEditDuringDelivery(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	st, ok := h.Store.(interface{ OnQuery(func(string)) })
	require.True(t, ok)
	alice := h.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, h, alice, "plans", false)
	id := schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch), Topic: ptr("t"),
		Content: "old", ScheduledDeliveryTimestamp: in(h, time.Minute)})
	h.Clock.Advance(2 * time.Minute)
	var armed atomic.Bool
	armed.Store(true)
	st.OnQuery(func(q string) {
		if strings.Contains(q, `sm.scheduled_timestamp <=`) && armed.CompareAndSwap(true, false) {
			// The round has read the message: edit it now.
			_, err := h.Service.UpdateScheduledMessage(ctx, alice.Caller, chat.UpdateScheduledMessageRequest{ScheduledMessageID: id,
				Content: ptr("new")})
			assert.NoError(t, err)
		}
	})
	assert.Zero(t, deliverDue(t, h), "the old version is not sent")
	assert.Empty(t, channelMessages(t, h, alice, ch))
	assert.Equal(t, 1, deliverDue(t, h))
	msgs := channelMessages(t, h, alice, ch)
	require.Len(t, msgs, 1)
	assert.Equal(t, "new", msgs[0].Content)
}

// RunScheduler sends messages as they fall due, is woken by new ones, and
// stops with its context; Run runs it and waits for it.
func TestRunScheduler(t *testing.T) {
	h := chattest.New(t, chattest.WithServiceOptions(chat.WithSchedulerInterval(time.Hour)))
	alice := h.NewUser(t, chat.RoleMember)
	ch := newChannelBy(t, h, alice, "plans", false)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Service.Run(ctx) }()
	// The loop has looked, found nothing, and sleeps for an hour.
	require.Eventually(t, func() bool { return chat.SchedulerRounds(h.Service) >= 1 }, 5*time.Second, time.Millisecond)

	// Scheduling wakes it; it sleeps until the message is due (a second
	// on the clock it reads, which the test moves past).
	schedule(t, h, alice, chat.CreateScheduledMessageRequest{Type: "channel", To: chat.ScheduleToChannel(ch), Topic: ptr("t"),
		Content: "on time", ScheduledDeliveryTimestamp: in(h, time.Second)})
	h.Clock.Advance(2 * time.Second)
	require.Eventually(t, func() bool { return len(channelMessages(t, h, alice, ch)) == 1 }, 5*time.Second, 20*time.Millisecond)

	stop()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
	err := h.Service.RunScheduler(ctx)
	assert.ErrorIs(t, err, context.Canceled, "a stopped context stops it at once")
}
