package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/teamchat/chat/narrow"
	"github.com/teamchat/chat/storage"
)

// This file compiles a narrow (package narrow's terms) into the reader's
// scope and the store's filter; message_fetch.go runs the queries.

// fetchQuery is what a narrow asks the store for: the reader's scope and
// the filter, and whether the narrow opens shared channel history.
type fetchQuery struct {
	scope  storage.MessageScope
	filter storage.MessageFilter
	// periods are the reader's subscription periods, read once.
	periods []storage.SubscriptionPeriod
	// mutingChannel is the narrow's first channel term's channel, negated
	// or not (the reference's get_channel_from_narrow_access_unchecked):
	// first_unread then skips only that channel's muted topics.
	mutingChannel *int64
	// search highlights the matches of the narrow's search, if it has one.
	search *searchHighlighter
}

// narrowUse says where a narrow is compiled: GET /messages, or
// matches_narrow (only what the reader received, and no `with`).
type narrowUse struct {
	personal bool
}

// narrowResolver looks channels and users up for narrow.Resolve, in the
// reader's organization; a store failure is kept and reported after.
type narrowResolver struct {
	ctx   context.Context
	rd    reads
	realm *storage.Realm
	me    *storage.User
	err   error
	// channels are the channels looked up, by ID.
	channels map[int64]*storage.Stream
}

func (r *narrowResolver) keep(ch *storage.Stream) {
	if r.channels == nil {
		r.channels = map[int64]*storage.Stream{}
	}
	r.channels[ch.ID] = ch
}

func (r *narrowResolver) fail(err error) {
	if r.err == nil && err != nil && !errors.Is(err, storage.ErrNotFound) && AsError(err) != errNoSuchUser {
		r.err = err
	}
}

func (r *narrowResolver) ChannelByName(name string) (int64, bool) {
	ch, err := r.rd.channelByName(r.ctx, r.realm.ID, strings.TrimSpace(name))
	r.fail(err)
	if err != nil {
		return 0, false
	}
	r.keep(ch)
	return ch.ID, true
}

func (r *narrowResolver) ChannelByID(id int64) bool {
	ch, err := r.rd.channelByID(r.ctx, r.realm.ID, id)
	r.fail(err)
	if err != nil {
		return false
	}
	r.keep(ch)
	return true
}

func (r *narrowResolver) UserByEmail(email string) (int64, bool) {
	u, err := r.rd.userByAPIOrRealEmail(r.ctx, r.realm, r.me, email)
	r.fail(err)
	if err != nil {
		return 0, false
	}
	return u.ID, true
}

func (r *narrowResolver) UserByID(id int64) bool {
	_, err := r.rd.st.GetUser(r.ctx, r.realm.ID, id)
	r.fail(err)
	return err == nil
}

// narrowError turns a narrow package error into the API's.
func narrowError(err error) error {
	var ne *narrow.Error
	if !errors.As(err, &ne) {
		return err
	}
	switch ne.Code {
	case narrow.CodeBadNarrow:
		return badNarrow(ne.Msg, ne.Desc)
	case narrow.CodeUnauthorized:
		return Unauthorized(ne.Msg)
	}
	return BadRequest("%s", ne.Msg)
}

// errNarrowNotYet answers the narrow terms the store cannot filter yet.
func errNarrowNotYet(t narrow.Term) error {
	desc := fmt.Sprintf("'%s' is not supported by this server yet", t.Operator)
	if t.Negated {
		desc = fmt.Sprintf("negated '%s' is not supported by this server yet", t.Operator)
	}
	return badNarrow("Invalid narrow operator: "+desc, desc)
}

// compileNarrow turns the narrow into the reader's scope and filter. With
// no narrow it is the combined feed: what the reader received (their
// spans of every channel) and their direct messages. A channel term opens
// the channel's whole history when the reader may read it (the
// reference's ok_to_include_history), as does channels:public for public
// channels. The store filters every operator, negated or not.
func (r reads) compileNarrow(ctx context.Context, me *storage.User, realm *storage.Realm, raw *string, use narrowUse) (*fetchQuery, error) {
	var terms []narrow.Term
	res := &narrowResolver{ctx: ctx, rd: r, realm: realm, me: me}
	if raw != nil && strings.TrimSpace(*raw) != "" {
		parsed, err := narrow.Parse(*raw)
		if err != nil {
			return nil, narrowError(err)
		}
		terms, err = narrow.Resolve(parsed, res, narrow.Options{NoWith: use.personal})
		if res.err != nil {
			return nil, r.s.internal(ctx, "get messages", res.err)
		}
		if err != nil {
			return nil, narrowError(err)
		}
	}
	q := &fetchQuery{}
	var channel *storage.Stream
	publicChannels := false
	for _, t := range terms {
		if t.Operator == "channel" && q.mutingChannel == nil {
			id := t.ChannelID
			q.mutingChannel = &id
		}
		if t.Operator == "near" || t.Operator == "in" && t.Operand.IsString("all") {
			continue // no filter, as in the reference
		}
		if t.Negated {
			var f storage.MessageFilter
			if err := r.filterTerm(ctx, realm, me, &f, t); err != nil {
				return nil, err
			}
			q.filter.Not = append(q.filter.Not, f)
			continue
		}
		switch {
		case t.Operator == "channel":
			channel = res.channels[t.ChannelID]
			if channel == nil {
				ch, err := r.channelByID(ctx, realm.ID, t.ChannelID)
				if err != nil {
					return nil, r.s.internal(ctx, "get messages", err)
				}
				channel = ch
			}
		case t.Operator == "channels" && t.Operand.IsString("public"):
			publicChannels = true
		case t.Operator == "search":
			q.search = newSearchHighlighter(t.Operand.Str)
		}
		if err := r.filterTerm(ctx, realm, me, &q.filter, t); err != nil {
			return nil, err
		}
	}
	periods, err := r.userPeriods(ctx, realm.ID, me.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get messages", err)
	}
	q.periods = periods
	spans := spansOf(periods)
	q.scope = storage.MessageScope{Spans: spans, Direct: true, Historical: true}
	subscribed := func(id int64) bool {
		for _, sp := range spans {
			if sp.StreamID == id && sp.Through == nil {
				return true
			}
		}
		return false
	}
	// The reader may read a channel's whole history when it is shared
	// with subscribers and they are one, or it is public (not to guests).
	history := func(ch *storage.Stream) bool {
		if !ch.HistoryPublicToSubscribers {
			return false
		}
		return subscribed(ch.ID) || !ch.InviteOnly && me.Role != RoleGuest || ch.IsWebPublic
	}
	if use.personal || !narrow.IncludeHistory(terms, func(int64) bool { return channel != nil && history(channel) }, me.Role != RoleGuest) {
		return q, nil
	}
	if channel != nil && history(channel) {
		q.scope.FullChannels = append(q.scope.FullChannels, channel.ID)
	}
	if publicChannels {
		q.scope.PublicChannels = true
	}
	return q, nil
}

// filterTerm adds one narrow term's condition to f. A negated term is
// compiled the same way into a filter of its own, which the caller
// negates.
func (r reads) filterTerm(ctx context.Context, realm *storage.Realm, me *storage.User, f *storage.MessageFilter, t narrow.Term) error {
	// Two terms on one field that disagree match nothing, as the
	// reference's conditions ANDed.
	nothing := func() { f.IDs = []int64{} }
	switch t.Operator {
	case "channel":
		id := t.ChannelID
		if f.StreamID != nil && *f.StreamID != id {
			nothing()
		}
		f.StreamID = &id
	case "channels":
		switch t.Operand.Str {
		case "public":
			f.PublicChannelsOnly = true
		case "web-public":
			f.WebPublicChannelsOnly = true
		default:
			return errNarrowNotYet(t)
		}
	case "topic":
		topic := t.Operand.Str
		if f.Topic != nil && storage.Fold(*f.Topic) != storage.Fold(topic) {
			nothing()
		}
		f.Topic = &topic
	case "sender":
		id := t.UserIDs[0]
		if f.SenderID != nil && *f.SenderID != id {
			nothing()
		}
		f.SenderID = &id
	case "dm":
		conv, err := r.st.FindDirectConversation(ctx, realm.ID, append(slices.Clone(t.UserIDs), me.ID))
		switch {
		case errors.Is(err, storage.ErrNotFound) || len(t.UserIDs) == 0:
			nothing() // no such conversation
		case err != nil:
			return r.s.internal(ctx, "get messages", err)
		default:
			if f.ConversationID != nil && *f.ConversationID != conv {
				nothing()
			}
			f.ConversationID = &conv
		}
	case "dm-including":
		id := t.UserIDs[0]
		f.DirectOnly = true
		if id != me.ID {
			f.IncludingUserIDs = append(f.IncludingUserIDs, id)
		}
	case "group-pm-with":
		id := t.UserIDs[0]
		f.DirectOnly, f.GroupDMOnly = true, true
		f.IncludingUserIDs = append(f.IncludingUserIDs, id)
	case "is":
		switch t.Operand.Str {
		case "alerted":
			f.Alerted = true
		case "dm":
			f.DirectOnly = true
		case "starred":
			f.Starred = true
		case "mentioned":
			f.Mentioned = true
		case "unread":
			f.Unread = true
		case "resolved":
			f.Resolved = true
		case "followed":
			f.Followed = true
		case "muted":
			f.Muted = true
		default:
			return errNarrowNotYet(t)
		}
	case "in":
		if !t.Operand.IsString("home") {
			return errNarrowNotYet(t)
		}
		// Home is what is not muted.
		f.Not = append(f.Not, storage.MessageFilter{Muted: true})
	case "has":
		switch t.Operand.Str {
		case "link":
			f.HasLink = true
		case "image":
			f.HasImage = true
		case "attachment":
			f.HasAttachment = true
		case "reaction":
			f.HasReaction = true
		default:
			return errNarrowNotYet(t)
		}
	case "search":
		if f.Search != "" {
			f.Search += " "
		}
		f.Search += t.Operand.Str
	case "id":
		if f.IDs == nil {
			f.IDs = []int64{t.MessageID}
		} else if !slices.Contains(f.IDs, t.MessageID) {
			nothing()
		}
	default:
		return errNarrowNotYet(t)
	}
	return nil
}

// channelReadScope is what the user may read of one channel they take
// part in: its whole history when it is shared with subscribers, else the
// spans they were subscribed for.
func (r reads) channelReadScope(ctx context.Context, realmID, userID int64, ch *storage.Stream) (storage.MessageScope, error) {
	if ch.HistoryPublicToSubscribers {
		return storage.MessageScope{FullChannels: []int64{ch.ID}}, nil
	}
	periods, err := r.st.ListSubscriptionPeriods(ctx, realmID, userID, ch.ID)
	if err != nil {
		return storage.MessageScope{}, err
	}
	return storage.MessageScope{Spans: spansOf(periods)}, nil
}

// spansOf are the channel spans the user received: their subscription
// periods.
func spansOf(periods []storage.SubscriptionPeriod) []storage.ChannelSpan {
	spans := make([]storage.ChannelSpan, len(periods))
	for i, p := range periods {
		spans[i] = storage.ChannelSpan{StreamID: p.StreamID, After: p.StartMessageID, Through: p.EndMessageID}
	}
	return spans
}

// WithTarget finds the conversation that holds a message the reader may
// read (the narrow package's MessageLocator, for the `with` operator).
func (r *narrowResolver) WithTarget(messageID int64) (narrow.Conversation, bool) {
	m, err := r.rd.st.GetMessage(r.ctx, r.realm.ID, messageID)
	r.fail(err)
	if err != nil {
		return narrow.Conversation{}, false
	}
	ok, err := r.rd.messageAccess(r.ctx, r.realm, r.me, m)
	r.fail(err)
	if err != nil || !ok {
		return narrow.Conversation{}, false
	}
	if m.StreamID != nil {
		return narrow.Conversation{ChannelID: *m.StreamID, Topic: m.Topic}, true
	}
	members, err := r.rd.st.ConversationMembers(r.ctx, r.realm.ID, *m.ConversationID)
	r.fail(err)
	if err != nil {
		return narrow.Conversation{}, false
	}
	return narrow.Conversation{DMUserIDs: members}, true
}
