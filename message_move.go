package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// Moving messages between channels. A channel's read state is its
// readers' ranges, and who received a message follows from their periods
// of its channel, so a move carries state over: whoever received the
// messages in both channels keeps what they had read and unread; who
// receives them only in the destination finds them read (the reference
// gives them rows marked read); who received them only in the source
// keeps their rows as read history, and sees them if the destination's
// history is shared. In a destination whose history is protected, its
// subscribers who did not receive them get historical rows, as the
// reference gives every subscriber a row. Within a channel, a topic
// move changes no one's state: ranges are per channel.

// moveState carries the readers' state of the moved messages (ids,
// ascending) from e.from to e.to; the messages are already in e.to.
func (r reads) moveState(ctx context.Context, w *writeTx, e *edit, ids []int64) error {
	realmID := e.realm.ID
	lo, hi := ids[0], ids[len(ids)-1]
	fromPeriods, err := w.ListStreamPeriods(ctx, realmID, e.from.ID, lo, hi)
	if err != nil {
		return err
	}
	toPeriods, err := w.ListStreamPeriods(ctx, realmID, e.to.ID, lo, hi)
	if err != nil {
		return err
	}
	byUser := func(ps []storage.SubscriptionPeriod) map[int64][]storage.SubscriptionPeriod {
		out := map[int64][]storage.SubscriptionPeriod{}
		for _, p := range ps {
			out[p.UserID] = append(out[p.UserID], p)
		}
		return out
	}
	from, to := byUser(fromPeriods), byUser(toPeriods)
	for _, u := range uniqueSorted(append(mapKeys(from), mapKeys(to)...)) {
		if err := r.moveUserState(ctx, w, e, u, from[u], to[u], ids); err != nil {
			return err
		}
	}
	if !e.to.HistoryPublicToSubscribers {
		return r.s.protectedHistoryRows(ctx, w, e, ids, to)
	}
	return nil
}

// moveUserState is moveState for one user with these periods of the
// source and destination channels.
func (r reads) moveUserState(ctx context.Context, w *writeTx, e *edit, userID int64, fromP, toP []storage.SubscriptionPeriod, ids []int64) error {
	realmID := e.realm.ID
	var ranges []storage.ReadRange
	if len(fromP) > 0 {
		var err error
		if ranges, err = w.ListReadRanges(ctx, realmID, userID, e.from.ID, ids[0], ids[len(ids)-1]); err != nil {
			return err
		}
	}
	var read, lost, received []int64
	for _, id := range ids {
		inFrom := periodsCover(fromP, e.from.ID, id)
		inTo := periodsCover(toP, e.to.ID, id)
		if inTo {
			received = append(received, id)
		}
		switch {
		case inTo && !(inFrom && !rangesCover(ranges, id)):
			read = append(read, id)
		case inFrom && !inTo:
			lost = append(lost, id)
		}
	}
	if len(received) > 0 {
		// Received messages keep their read state in ranges: a row
		// made history by an earlier move is a received message's row
		// again.
		if err := w.UpdateUserMessageFlags(ctx, realmID, userID, received, 0, storage.FlagRead|storage.FlagHistorical); err != nil {
			return err
		}
	}
	if len(read) > 0 {
		if err := r.s.markChannelIDsRead(ctx, w, realmID, userID, e.to.ID, toP, read); err != nil {
			return err
		}
	}
	if len(lost) > 0 {
		// Their rows (mentions, stars) stay, as read history.
		if err := w.UpdateUserMessageFlags(ctx, realmID, userID, lost, storage.FlagRead|storage.FlagHistorical, 0); err != nil {
			return err
		}
	}
	return nil
}

// protectedHistoryRows gives the destination's current subscribers who
// did not receive the moved messages historical rows, so that they may
// read them in a channel whose history is protected.
func (s *Service) protectedHistoryRows(ctx context.Context, w *writeTx, e *edit, ids []int64, to map[int64][]storage.SubscriptionPeriod) error {
	subs, err := w.ListActiveSubscribers(ctx, e.realm.ID, []int64{e.to.ID})
	if err != nil {
		return err
	}
	for _, sub := range subs {
		var missing []int64
		for _, id := range ids {
			if !periodsCover(to[sub.UserID], e.to.ID, id) {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			continue
		}
		have, err := w.ListUserMessages(ctx, e.realm.ID, sub.UserID, missing)
		if err != nil {
			return err
		}
		has := map[int64]bool{}
		for _, r := range have {
			has[r.MessageID] = true
		}
		var rows []storage.UserMessage
		for _, id := range missing {
			if !has[id] {
				rows = append(rows, storage.UserMessage{RealmID: e.realm.ID, UserID: sub.UserID, MessageID: id, Flags: defaultHistoricalFlags})
			}
		}
		if err := w.InsertUserMessages(ctx, rows); err != nil {
			return err
		}
		if err := w.UpdateUserMessageFlags(ctx, e.realm.ID, sub.UserID, missing, storage.FlagRead, 0); err != nil {
			return err
		}
	}
	return nil
}

// moveTopicPolicies moves the users' policies of the old topic to the new
// one when the whole topic moved (the reference's rule: with change_all,
// or when no message of it is left), merging with policies of the
// destination topic: the more visible one wins.
func (s *Service) moveTopicPolicies(ctx context.Context, w *writeTx, e *edit, moved []int64) error {
	realmID := e.realm.ID
	newTopic := e.msg.Topic
	if e.topic != nil {
		newTopic = *e.topic
	}
	if e.mode != "change_all" {
		left, err := w.reads().topicTail(ctx, realmID, e.from.ID, e.msg.Topic, 1)
		if err != nil || len(left) > 0 {
			return err
		}
	}
	old, err := w.ListTopicPolicies(ctx, realmID, e.from.ID, e.msg.Topic)
	if err != nil || len(old) == 0 {
		return err
	}
	target, err := w.ListTopicPolicies(ctx, realmID, e.to.ID, newTopic)
	if err != nil {
		return err
	}
	targetPolicy := map[int64]int{}
	for _, t := range target {
		targetPolicy[t.UserID] = t.VisibilityPolicy
	}
	targetHasMessages := false
	if prior, err := w.reads().topicTail(ctx, realmID, e.to.ID, newTopic, len(moved)+1); err != nil {
		return err
	} else {
		targetHasMessages = len(prior) > len(moved)
	}
	now := s.nowUnix()
	for _, p := range old {
		if err := w.DeleteUserTopic(ctx, realmID, p.UserID, e.from.ID, e.msg.Topic); err != nil {
			return err
		}
		w.emit(toUsers(p.UserID), UserTopicEvent{StreamID: e.from.ID, TopicName: e.msg.Topic, LastUpdated: now, VisibilityPolicy: TopicPolicyNone})
		policy := p.VisibilityPolicy
		if targetHasMessages {
			policy = mergedPolicy(policy, targetPolicy[p.UserID])
		}
		if policy == targetPolicy[p.UserID] && (e.from != e.to || !strings.EqualFold(newTopic, e.msg.Topic)) {
			continue
		}
		if policy == TopicPolicyNone {
			err = w.DeleteUserTopic(ctx, realmID, p.UserID, e.to.ID, newTopic)
		} else {
			err = w.SetUserTopic(ctx, &storage.UserTopic{RealmID: realmID, UserID: p.UserID, StreamID: e.to.ID,
				TopicName: newTopic, VisibilityPolicy: policy, LastUpdated: now})
		}
		if err != nil {
			return err
		}
		w.emit(toUsers(p.UserID), UserTopicEvent{StreamID: e.to.ID, TopicName: newTopic, LastUpdated: now, VisibilityPolicy: policy})
	}
	return nil
}

// mergedPolicy is the reference's get_visibility_policy_after_merge.
func mergedPolicy(a, b int) int {
	switch {
	case a == b:
		return a
	case a == TopicPolicyUnmuted || b == TopicPolicyUnmuted:
		return TopicPolicyUnmuted
	}
	return TopicPolicyNone
}

// resolveUndoGrace is how soon a resolve undone deletes its notice
// instead of sending another (the reference's
// RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS).
const resolveUndoGrace = 60

// sendEditNotices sends the notification bot's messages about the edit:
// a resolved or unresolved topic, or a move to the old and new threads,
// in the reference's words.
func (s *Service) sendEditNotices(ctx context.Context, e *edit, moved []int64) error {
	bot, err := s.notificationBot(ctx, e.realm)
	if err != nil {
		return err
	}
	mention := fmt.Sprintf("@_**%s|%d**", e.me.FullName, e.me.ID)
	newTopic := e.msg.Topic
	if e.topic != nil {
		newTopic = *e.topic
	}
	if (e.resolved || e.unresolved) && e.to == e.from && e.content == nil {
		if undone, err := s.undoResolveNotice(ctx, e, bot, newTopic); err != nil || undone {
			return err
		}
		text := "%s has marked this topic as resolved."
		if e.unresolved {
			text = "%s has marked this topic as unresolved."
		}
		return s.sendInternal(ctx, e.realm, bot, e.to, newTopic, fmt.Sprintf(text, mention), storage.MessageResolveNotice)
	}
	n := len(moved)
	oldLink := fmt.Sprintf("#**%s>%s**", e.from.Name, e.msg.Topic)
	newLink := fmt.Sprintf("#**%s>%s**", e.to.Name, newTopic)
	all := e.mode == "change_all"
	if !all {
		left, err := s.reads().topicTail(ctx, e.realm.ID, e.from.ID, e.msg.Topic, 1)
		if err != nil {
			return err
		}
		all = len(left) == 0
	}
	if e.notifyNew && (e.to != e.from || !e.resolved && !e.unresolved) {
		prior, err := s.reads().topicTail(ctx, e.realm.ID, e.to.ID, newTopic, n+1)
		if err != nil {
			return err
		}
		var text string
		switch {
		case len(prior) <= n && all:
			text = fmt.Sprintf("This topic was moved here from %s by %s.", oldLink, mention)
		case n == 1:
			link := fmt.Sprintf("%s/#narrow/channel/%s/topic/%s/near/%d", e.realm.URL, markdown.EncodeChannel(e.to.ID, e.to.Name),
				markdown.EncodeHashComponent(newTopic), e.msg.ID)
			text = fmt.Sprintf("[A message](%s) was moved here from %s by %s.", link, oldLink, mention)
		default:
			text = fmt.Sprintf("%d messages were moved here from %s by %s.", n, oldLink, mention)
		}
		if err := s.sendInternal(ctx, e.realm, bot, e.to, newTopic, text, storage.MessageNormal); err != nil {
			return err
		}
	}
	if e.notifyOld {
		var text string
		switch {
		case all:
			text = fmt.Sprintf("This topic was moved to %s by %s.", newLink, mention)
		case n == 1:
			text = fmt.Sprintf("A message was moved from this topic to %s by %s.", newLink, mention)
		default:
			text = fmt.Sprintf("%d messages were moved from this topic to %s by %s.", n, newLink, mention)
		}
		return s.sendInternal(ctx, e.realm, bot, e.from, e.msg.Topic, text, storage.MessageNormal)
	}
	return nil
}

// undoResolveNotice deletes the notification bot's notice that the topic
// was resolved (or unresolved) when it is still the topic's last message
// and younger than resolveUndoGrace, and says whether it did: a resolve
// undone at once leaves no notice. The notice is looked for again under
// the write lock, so that a message sent meanwhile keeps it.
func (s *Service) undoResolveNotice(ctx context.Context, e *edit, bot *storage.User, topic string) (bool, error) {
	notice, err := s.reads().resolveNotice(ctx, e.realm.ID, e.to.ID, topic, bot.ID)
	if err != nil || notice == nil {
		return false, err
	}
	undone := false
	err = s.write(ctx, e.realm.ID, func(w *writeTx) error {
		notice, err := w.reads().resolveNotice(ctx, e.realm.ID, e.to.ID, topic, bot.ID)
		if undone = notice != nil; err != nil || !undone {
			return err
		}
		w.keepCallers()
		return s.deleteMessagesIn(ctx, w, e.realm, bot, notice)
	})
	return undone, err
}

// resolveNotice is the topic's last message if it is a resolve notice of
// the bot younger than resolveUndoGrace; nil otherwise.
func (r reads) resolveNotice(ctx context.Context, realmID, channelID int64, topic string, botID int64) (*storage.Message, error) {
	last, err := r.topicTail(ctx, realmID, channelID, topic, 1)
	if err != nil || len(last) == 0 || last[0].SenderID != botID || r.s.nowUnix()-last[0].DateSent > resolveUndoGrace {
		return nil, err
	}
	full, err := r.st.GetMessage(ctx, realmID, last[0].ID)
	if errors.Is(err, storage.ErrNotFound) || err == nil && full.Type != storage.MessageResolveNotice {
		return nil, nil
	}
	return full, err
}

// topicTail is the last n messages of a channel's topic.
func (r reads) topicTail(ctx context.Context, realmID, channelID int64, topic string, n int) ([]storage.Message, error) {
	return r.st.ListChannelMessagesIn(ctx, realmID, []storage.IDSpan{{StreamID: channelID, First: 1, Last: noUpperID}}, &topic, n)
}

// sendInternal sends a message as a system bot to a channel's topic,
// whatever the channel's posting rules (the reference's
// internal_send_stream_message).
func (s *Service) sendInternal(ctx context.Context, realm *storage.Realm, bot *storage.User, ch *storage.Stream, topic, content string, kind int) error {
	_, err := s.sendInternalMessage(ctx, realm, bot, ch, topic, content, kind, nil)
	return err
}

// sendInternalMessage is sendInternal returning the message's ID; inTx,
// when not nil, runs in the message's write transaction (outgoing.inTx).
func (s *Service) sendInternalMessage(ctx context.Context, realm *storage.Realm, bot *storage.User, ch *storage.Stream, topic, content string, kind int,
	inTx func(ctx context.Context, w *writeTx, m *storage.Message) error) (int64, error) {
	to := ToChannelID(ch.ID)
	req := SendMessageRequest{Type: "channel", To: to, Topic: &topic, Content: content}
	o := &outgoing{me: bot, realm: realm, client: "Internal", req: &req, internal: true, inTx: inTx}
	if err := s.prepareChannelMessage(ctx, o, &topic); err != nil {
		return 0, err
	}
	o.msg.Type = kind
	if err := s.reads().renderOutgoing(ctx, o); err != nil {
		return 0, err
	}
	if err := s.storeMessage(ctx, o); err != nil {
		return 0, err
	}
	return o.msg.ID, nil
}
