package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// visibility is who receives what in TestEventVisibilityMatrix, written
// out from the reference's rules rather than computed by the code under
// test: for each action (and the kind of channel it concerns), the
// people who receive each event kind; everyone else receives nothing.
// "member in" and "guest in" are subscribed to every channel from the
// start; the moderator joins each channel at its peer_add, after its
// first messages (so of a private channel, whose history is not shared,
// they never see those); administrators see every channel's metadata but
// not a private channel's messages; a guest sees no public channel they
// are not in, but sees web-public ones.
var visibility = map[string]map[string][]string{
	"message public":            {"message/": {"member in", "guest in"}},
	"reaction public":           {"reaction/add": {"member in", "guest in"}},
	"edit public":               {"update_message/": {"member in", "guest in"}},
	"flags public":              {"update_message_flags/add": {"member in"}},
	"channel update public":     {"stream/update": {"owner", "admin", "moderator", "member in", "member out", "guest in"}},
	"peer_add public":           {"subscription/peer_add": {"owner", "admin", "member in", "member out", "guest in"}, "subscription/add": {"moderator"}},
	"delete public":             {"delete_message/": {"moderator", "member in", "guest in"}},
	"message private":           {"message/": {"member in", "guest in"}},
	"reaction private":          {"reaction/add": {"member in", "guest in"}},
	"edit private":              {"update_message/": {"member in", "guest in"}},
	"flags private":             {"update_message_flags/add": {"member in"}},
	"channel update private":    {"stream/update": {"owner", "admin", "member in", "guest in"}},
	"peer_add private":          {"subscription/peer_add": {"owner", "admin", "member in", "guest in"}, "subscription/add": {"moderator"}},
	"delete private":            {"delete_message/": {"member in", "guest in"}},
	"message web-public":        {"message/": {"member in", "guest in"}},
	"reaction web-public":       {"reaction/add": {"member in", "guest in"}},
	"edit web-public":           {"update_message/": {"member in", "guest in"}},
	"flags web-public":          {"update_message_flags/add": {"member in"}},
	"channel update web-public": {"stream/update": {"owner", "admin", "moderator", "member in", "member out", "guest in", "guest out"}},
	"peer_add web-public":       {"subscription/peer_add": {"owner", "admin", "member in", "member out", "guest in", "guest out"}, "subscription/add": {"moderator"}},
	"delete web-public":         {"delete_message/": {"moderator", "member in", "guest in"}},
	"direct message":            {"message/": {"member in", "guest in"}},
	"typing":                    {"typing/start": {"member in", "guest in"}},
	"user group":                {"user_group/add": {"owner", "admin", "moderator", "member in", "member out", "guest in", "guest out"}},
	"realm setting":             {"realm/update": {"owner", "admin", "moderator", "member in", "member out", "guest in", "guest out"}},
	"settings":                  {"user_settings/update": {"member out"}},
}

// The visibility matrix: for each kind of change (event types) in each
// kind of channel, with a queue for a user of every role, subscribed or
// not, every queue gets exactly the events the visibility table says its
// user may see, and so does ResolveAudience (which reads subscriptions,
// roles and groups as the database has them); the rules also hold
// outright: a private channel's events never reach a non-subscriber who
// is not an administrator, a direct message's never reach a
// non-participant, a guest hears nothing of a public channel they are
// not in.
func TestEventVisibilityMatrix(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	type person struct {
		name string
		u    chattest.User
	}
	admin := h.NewUser(t, chat.RoleAdministrator)
	mod := h.NewUser(t, chat.RoleModerator)
	in := h.NewUser(t, chat.RoleMember)     // subscribed to every channel
	out := h.NewUser(t, chat.RoleMember)    // subscribed to none
	guestIn := h.NewUser(t, chat.RoleGuest) // subscribed to every channel
	guestOut := h.NewUser(t, chat.RoleGuest)
	people := []person{{"owner", h.Owner}, {"admin", admin}, {"moderator", mod}, {"member in", in},
		{"member out", out}, {"guest in", guestIn}, {"guest out", guestOut}}

	channels := map[string]int64{}
	for _, kind := range []string{"public", "private", "web-public"} {
		name := "c-" + kind
		req := chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: name}},
			Principals: &[]chat.Principal{{ID: in.ID}, {ID: guestIn.ID}}}
		switch kind {
		case "private":
			req.InviteOnly = ptr(true)
		case "web-public":
			req.IsWebPublic = ptr(true)
		}
		_, err := h.Service.Subscribe(ctx, admin.Caller, req)
		require.NoError(t, err, kind)
		id, err := h.Service.GetChannelID(ctx, admin.Caller, chat.GetChannelIDRequest{Stream: name})
		require.NoError(t, err)
		channels[kind] = id.StreamID
		// A first message, so that deleting a later one leaves
		// first_message_id as it is (the reference then announces a null
		// first_message_id, which its own event schema does not allow).
		send(t, h, in, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id.StreamID), Topic: ptr("t"), Content: "first"})
	}

	clients := map[int64]*client{}
	for _, p := range people {
		clients[p.u.ID] = register(t, h, p.u, chat.RegisterRequest{})
	}
	h.Events.Take()
	for _, c := range clients {
		c.settle()
	}

	type action struct {
		name    string
		channel string // the channel kind it concerns ("" for none)
		dm      []int64
		run     func(t *testing.T)
	}
	var lastMsg = map[string]int64{}
	var actions []action
	for _, kind := range []string{"public", "private", "web-public"} {
		id := channels[kind]
		actions = append(actions,
			action{"message", kind, nil, func(t *testing.T) {
				lastMsg[kind] = send(t, h, in, chat.SendMessageRequest{Type: "stream", To: chat.ToChannelID(id), Topic: ptr("t"), Content: "hello @**all**"})
			}},
			action{"reaction", kind, nil, func(t *testing.T) {
				_, err := h.Service.AddReaction(ctx, in.Caller, chat.AddReactionRequest{MessageID: lastMsg[kind], EmojiName: "octopus"})
				require.NoError(t, err)
			}},
			action{"edit", kind, nil, func(t *testing.T) {
				_, err := h.Service.UpdateMessage(ctx, in.Caller, chat.UpdateMessageRequest{MessageID: lastMsg[kind], Content: ptr("edited")})
				require.NoError(t, err)
			}},
			action{"flags", kind, nil, func(t *testing.T) {
				_, err := h.Service.UpdateMessageFlags(ctx, in.Caller, chat.UpdateMessageFlagsRequest{Messages: []int64{lastMsg[kind]}, Op: "add", Flag: "starred"})
				require.NoError(t, err)
			}},
			action{"channel update", kind, nil, func(t *testing.T) {
				_, err := h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: id, Description: ptr("about " + kind)})
				require.NoError(t, err)
			}},
			action{"peer_add", kind, nil, func(t *testing.T) {
				subscribe(t, h, h.Owner, "c-"+kind, mod.ID)
			}},
			action{"delete", kind, nil, func(t *testing.T) {
				_, err := h.Service.DeleteMessage(ctx, in.Caller, chat.DeleteMessageRequest{MessageID: lastMsg[kind]})
				require.NoError(t, err)
			}},
		)
	}
	actions = append(actions,
		action{"direct message", "", []int64{in.ID, guestIn.ID}, func(t *testing.T) {
			send(t, h, in, chat.SendMessageRequest{Type: "direct", To: ptr(fmt.Sprintf("[%d]", guestIn.ID)), Content: "psst"})
		}},
		action{"typing", "", []int64{in.ID, guestIn.ID}, func(t *testing.T) {
			_, err := h.Service.SetTyping(ctx, in.Caller, chat.TypingRequest{Op: "start", To: &[]int64{guestIn.ID}})
			require.NoError(t, err)
		}},
		action{"user group", "", nil, func(t *testing.T) {
			_, err := h.Service.CreateUserGroup(ctx, h.Owner.Caller, chat.CreateUserGroupRequest{Name: "crew", Description: "d", Members: []int64{in.ID}})
			require.NoError(t, err)
		}},
		action{"realm setting", "", nil, func(t *testing.T) {
			_, err := h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{Name: ptr("Renamed")})
			require.NoError(t, err)
		}},
		action{"settings", "", []int64{out.ID}, func(t *testing.T) {
			_, err := h.Service.UpdateSettings(ctx, out.Caller, chat.UpdateSettingsRequest{SettingsPatch: chat.SettingsPatch{HighContrastMode: ptr(true)}})
			require.NoError(t, err)
		}},
	)

	byName := map[string]int64{}
	for _, p := range people {
		byName[p.name] = p.u.ID
	}
	for _, a := range actions {
		a.run(t)
		key := strings.TrimSpace(a.name + " " + a.channel)
		table, ok := visibility[key]
		require.True(t, ok, "no visibility row for %q", key)
		want := map[int64][]string{}
		for kind, names := range table {
			for _, name := range names {
				require.Contains(t, byName, name, key)
				want[byName[name]] = append(want[byName[name]], kind)
			}
		}
		// ResolveAudience agrees with the table.
		resolved := map[int64][]string{}
		for _, ev := range h.Events.Take() {
			raw, err := ev.MarshalJSON()
			require.NoError(t, err)
			if ev.Body.EventType() == "update_display_settings" || ev.Body.EventType() == "update_global_notifications" {
				continue // legacy forms: covered by TestQueueForms
			}
			to, err := h.Service.ResolveAudience(ctx, ev)
			require.NoError(t, err)
			for _, id := range to {
				resolved[id] = append(resolved[id], eventKind(raw))
			}
		}
		for _, p := range people {
			assert.ElementsMatch(t, want[p.u.ID], resolved[p.u.ID], "%s: ResolveAudience for %s", key, p.name)
		}
		// Every queue has what the table says once the writes are
		// delivered (a marker sent after them came back).
		require.NoError(t, chat.AwaitEventDelivery(h.Service, h.RealmID))
		for _, p := range people {
			var got []string
			for _, e := range clients[p.u.ID].poll() {
				if e.typ() == "update_display_settings" || e.typ() == "update_global_notifications" {
					continue
				}
				got = append(got, e.typ()+"/"+e.op())
			}
			label := fmt.Sprintf("%s in the %s channel: %s", a.name, a.channel, p.name)
			assert.ElementsMatch(t, want[p.u.ID], got, label)
			if len(got) == 0 {
				continue
			}
			switch {
			case a.dm != nil:
				assert.Contains(t, a.dm, p.u.ID, "%s: only participants hear of it", label)
			case a.channel == "private":
				assert.True(t, p.u.ID == in.ID || p.u.ID == guestIn.ID || p.u.ID == mod.ID && a.name != "message" ||
					p.u.Role <= chat.RoleAdministrator && !slices.Contains([]string{"message", "reaction", "edit", "delete", "flags"}, a.name),
					"%s: a private channel's events reach its subscribers (and administrators, for its metadata)", label)
			case a.channel == "public" && p.u.ID == guestOut.ID:
				t.Errorf("%s: a guest outside a public channel hears of it: %v", label, got)
			}
		}
	}
}

// eventKind is "type/op" of an event's JSON.
func eventKind(raw []byte) string {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	op, _ := m["op"].(string)
	return m["type"].(string) + "/" + op
}
