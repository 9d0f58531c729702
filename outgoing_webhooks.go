package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/teamchat/chat/internal/outbox"
	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// Outgoing webhooks: a message that triggers an outgoing-webhook bot (a
// non-silent mention in a channel, or any direct message it receives; never
// a bot's message) is written to an outbox in the send's own transaction,
// so a slow or dead bot never slows a send and a restart loses no
// delivery. Deliverers (RunWebhooks, started by Run, on every server)
// claim due rows for a lease, call the bot through a WebhookDeliverer (the
// HTTP side lives in transport/webhook: this package knows no HTTP), and
// then, in one transaction that also releases the row, post the bot's
// reply or the failure notice in the conversation. A claim that expires
// (its server died) is taken again by another deliverer; a reply is
// posted at most once because only the claim's holder may release it.

// Webhook interfaces (the reference's Service.interface).
const (
	WebhookInterfaceGeneric = 1
	WebhookInterfaceSlack   = 2
)

const (
	// webhookMaxAttempts counts every request of one trigger (the
	// reference's MAX_REQUEST_RETRIES = 3, plus the first).
	webhookMaxAttempts = 4
	// webhookLease is how long a claim lasts (a delivery takes at most
	// the deliverer's timeout, 10 s by default, and never more than
	// webhookAttemptBudget).
	webhookLease = 60
	// webhookAttemptBudget is how long after its claim an attempt may
	// still run: the rest of the lease is left for posting the answer, so
	// no other server takes the row while this one still works on it.
	webhookAttemptBudget = 45 * time.Second
	// webhookBatch is how many deliveries one claim takes.
	webhookBatch = 20
	// webhookWorkers is how many deliveries of a claim run at once.
	webhookWorkers = 8
	// webhookRetry is how soon RunWebhooks looks again at a due delivery
	// it did not claim (another server holds it).
	webhookRetry = 10 * time.Millisecond
	// defaultWebhookInterval is how long RunWebhooks waits at most between
	// looks at the outbox (deliveries queued by this Service wake it).
	defaultWebhookInterval = 5 * time.Second
)

// WebhookCall is one trigger to deliver to one bot service.
type WebhookCall struct {
	URL       string
	Interface int
	// Direct: the trigger is a direct message (the Slack interface has
	// none; a deliverer answers with its refusal).
	Direct bool
	// The generic payload: bot_email, bot_full_name, data (the Markdown),
	// trigger, token and the message (with rendered_content).
	BotEmail, BotFullName, Data, Trigger, Token string
	Message                                     json.RawMessage
	// What the Slack form needs besides the above.
	RealmID        int64
	RealmHost      string
	StreamID       int64
	StreamName     string
	Timestamp      int64
	SenderID       int64
	SenderFullName string
	BotID          int64
	// MessageLink is the triggering message's permalink, for the owner's
	// notice.
	MessageLink string
}

// WebhookResultKind is what a delivery attempt asks the Service to do.
type WebhookResultKind int

const (
	// WebhookReply: post Content as the bot in the conversation.
	WebhookReply WebhookResultKind = iota + 1
	// WebhookNoReply: nothing to post.
	WebhookNoReply
	// WebhookFailure: post Message as the bot in the conversation and,
	// when OwnerMessage is not empty, send it to the bot's owner.
	WebhookFailure
	// WebhookRetry: a timeout or connection error; try again after
	// Backoff, and after the last attempt act on Exhausted.
	WebhookRetry
)

// WebhookResult is the outcome of one delivery attempt.
type WebhookResult struct {
	Kind         WebhookResultKind
	Content      string
	Message      string
	OwnerMessage string
	// Exhausted is the failure to act on when a WebhookRetry was the
	// last attempt.
	Exhausted *WebhookResult
}

// WebhookDeliverer calls bot services. transport/webhook provides one
// (webhook.NewDeliverer) over its HTTP client.
type WebhookDeliverer interface {
	// Attempt makes one request of call, and returns once ctx ends: the
	// Service ends it well before the claim on the delivery expires.
	Attempt(ctx context.Context, call WebhookCall) WebhookResult
	// Backoff is the wait after the nth failed attempt (n from 1).
	Backoff(n int) time.Duration
}

// WithWebhookDeliverer sets how outgoing webhooks are delivered. Without
// one, triggers wait in the outbox (and are delivered once a Service with a
// deliverer runs).
func WithWebhookDeliverer(d WebhookDeliverer) Option {
	return func(s *Service) { s.webhookDeliverer = d }
}

// WithWebhookInterval sets how long RunWebhooks waits at most between looks
// at the outbox (default 5 s).
func WithWebhookInterval(d time.Duration) Option {
	return func(s *Service) { s.webhooks.Every = d }
}

func (s *Service) wakeWebhooks() { s.webhooks.Poke() }

// botService is a bot's service as GET /bots and realm_bot events show it.
type botService struct {
	BaseURL   string `json:"base_url"`
	Interface int    `json:"interface"`
	Token     string `json:"token"`
}

// serviceView is a service as clients see it.
func serviceView(svc storage.BotService) botService {
	return botService{BaseURL: svc.BaseURL, Interface: svc.Interface, Token: svc.Token}
}

// botServices lists the services of these bots, by bot.
func (r reads) botServices(ctx context.Context, realmID int64, botIDs []int64) (map[int64][]any, error) {
	list, err := r.st.ListBotServices(ctx, realmID, botIDs)
	if err != nil {
		return nil, err
	}
	out := map[int64][]any{}
	for _, svc := range list {
		out[svc.BotID] = append(out[svc.BotID], serviceView(svc))
	}
	return out, nil
}

// jsonOrPlain reads a parameter the reference takes as JSON (payload_url is
// Json[str] there, so clients send it quoted), also accepting it plain.
func jsonOrPlain(raw string) string {
	var s string
	if strings.HasPrefix(raw, `"`) && json.Unmarshal([]byte(raw), &s) == nil {
		return s
	}
	return raw
}

// checkPayloadURL is the reference's check_url for payload_url (empty is
// allowed: such a bot fails at delivery, as the reference's does).
func checkPayloadURL(name, raw string) error {
	if raw != "" && !isHTTPURL(raw) {
		return BadRequest("%s is not a URL", name)
	}
	return nil
}

// checkInterface is the reference's check_valid_interface_type.
func checkInterface(i int) error {
	if i != WebhookInterfaceGeneric && i != WebhookInterfaceSlack {
		return BadRequest("Invalid interface type")
	}
	return nil
}

// plannedWebhooks are the deliveries the message triggers (their
// MessageID unset), read before its transaction. It costs nothing when the
// message mentions no bot and is no direct message to one.
func (s *Service) plannedWebhooks(ctx context.Context, r reads, o *outgoing) ([]storage.WebhookDelivery, error) {
	if o.me.IsBot || o.internal {
		return nil, nil
	}
	var bots []*storage.User
	trigger := "mention"
	if o.msg.StreamID == nil {
		trigger = "direct_message"
		for _, u := range o.recipients {
			if u.ID != o.me.ID && isOutgoingBot(u) {
				bots = append(bots, u)
			}
		}
	} else if len(o.mentions.users) > 0 {
		users, err := r.usersByID(ctx, o.realm, mapKeys(o.mentions.users))
		if err != nil {
			return nil, err
		}
		for _, u := range users {
			if !isOutgoingBot(u) {
				continue
			}
			if o.channel.InviteOnly {
				// A private channel's message reaches only a subscribed bot.
				sub, err := r.st.GetSubscription(ctx, o.realm.ID, u.ID, o.channel.ID)
				if errors.Is(err, storage.ErrNotFound) || err == nil && !sub.Active {
					continue
				} else if err != nil {
					return nil, err
				}
			}
			bots = append(bots, u)
		}
	}
	if len(bots) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(bots))
	for i, b := range bots {
		ids[i] = b.ID
	}
	services, err := r.st.ListBotServices(ctx, o.realm.ID, ids)
	if err != nil {
		return nil, err
	}
	rows := make([]storage.WebhookDelivery, 0, len(services))
	for _, svc := range services {
		rows = append(rows, storage.WebhookDelivery{RealmID: o.realm.ID, BotID: svc.BotID, ServiceID: svc.ID, Trigger: trigger})
	}
	return rows, nil
}

// queueWebhooks writes the planned deliveries of the message in its
// transaction.
func (s *Service) queueWebhooks(ctx context.Context, w *writeTx, o *outgoing, planned []storage.WebhookDelivery) error {
	if len(planned) == 0 {
		return nil
	}
	now := s.nowUnix()
	rows := slices.Clone(planned)
	for i := range rows {
		rows[i].MessageID, rows[i].NextAttemptAt, rows[i].CreatedAt = o.msg.ID, now, now
	}
	if err := w.EnqueueWebhooks(ctx, rows); err != nil {
		return err
	}
	w.afterCommit(s.wakeWebhooks)
	return nil
}

func isOutgoingBot(u *storage.User) bool {
	return u.IsBot && u.IsActive && u.BotType != nil && *u.BotType == BotTypeOutgoingWebhook
}

// RunWebhooks delivers outgoing webhooks as they fall due, until ctx ends;
// then it returns ctx's error. Run starts it; several loops, on this
// server or others sharing the database, deliver each trigger once.
func (s *Service) RunWebhooks(ctx context.Context) error {
	if s.webhookDeliverer == nil {
		// Nothing to deliver with: the triggers wait for a Service that has it.
		<-ctx.Done()
		return ctx.Err()
	}
	return s.webhooks.Run(ctx)
}

// DeliverDueWebhooks claims the deliveries due now (up to one batch) and
// delivers them, several at once; it returns how many it claimed. Without a
// deliverer it does nothing. The claim itself is the one write outside the
// write path: it spans organizations and changes nothing anyone sees (what
// follows it, a retry or the answer, goes through the write path).
func (s *Service) DeliverDueWebhooks(ctx context.Context) (int, error) {
	if s.webhookDeliverer == nil {
		return 0, nil
	}
	res := s.webhooks.Pass(ctx)
	return res.Claimed, res.Err
}

// claimedWebhook is a delivery claimed for a lease, with the time its
// attempt must end by.
type claimedWebhook struct {
	row      storage.WebhookDelivery
	deadline time.Time
}

// webhookOutbox is the outbox runner's deliverer of outgoing webhooks:
// due rows are claimed for webhookLease, a batch at a time.
type webhookOutbox struct{ s *Service }

func newWebhookRunner(s *Service) *outbox.Runner[claimedWebhook] {
	return outbox.New[claimedWebhook](outbox.Config{Batch: webhookBatch, Workers: webhookWorkers, Interval: defaultWebhookInterval,
		Retry: webhookRetry, Now: func() time.Time { return s.now() }, NextDue: s.nextWebhook}, webhookOutbox{s})
}

func (o webhookOutbox) Claim(ctx context.Context, now time.Time, _ *claimedWebhook, limit int) ([]claimedWebhook, error) {
	s := o.s
	if s.webhookDeliverer == nil {
		return nil, nil
	}
	at := now.UTC().Unix()
	rows, err := s.store.ClaimWebhooks(ctx, at, at+webhookLease, randomHex(12), limit)
	if err != nil {
		return nil, s.internal(ctx, "claim webhooks", err)
	}
	deadline := time.Now().Add(s.webhookBudget)
	out := make([]claimedWebhook, len(rows))
	for i, row := range rows {
		out[i] = claimedWebhook{row: row, deadline: deadline}
	}
	return out, nil
}

// Handle makes the delivery's attempt; its failures are logged here (a
// delivery is retried when its claim runs out).
func (o webhookOutbox) Handle(ctx context.Context, c claimedWebhook) (int, error) {
	err := o.s.deliverWebhook(ctx, o.s.webhookDeliverer, c.row, c.deadline)
	if err != nil && !errors.Is(err, errWebhookClaimLost) {
		_ = o.s.internal(ctx, "deliver webhook", err)
		return 0, nil
	}
	return 1, nil
}

// nextWebhook is when the next unclaimed delivery is due.
func (s *Service) nextWebhook(ctx context.Context, now time.Time) (time.Time, bool) {
	at, ok, err := s.store.NextWebhookAt(ctx, now.UTC().Unix())
	if err != nil {
		_ = s.internal(ctx, "next webhook", err)
	}
	return time.Unix(at, 0), ok && err == nil
}

// errWebhookClaimLost rolls back what a delivery would post: its claim
// expired and another deliverer took the row.
var errWebhookClaimLost = errors.New("webhook claim lost")

// webhookJob is what one delivery reads before calling the bot.
type webhookJob struct {
	row     storage.WebhookDelivery
	realm   *storage.Realm
	bot     *storage.User
	service storage.BotService
	msg     *storage.Message
	sender  *storage.User
	channel *storage.Stream
	// participants of a direct message (the bot included).
	participants []*storage.User
}

// deliverWebhook makes one attempt of a claimed delivery, ended at
// deadline, and acts on it. A delivery whose turn comes after the
// deadline is handed back for the next round, untried.
func (s *Service) deliverWebhook(ctx context.Context, d WebhookDeliverer, row storage.WebhookDelivery, deadline time.Time) error {
	if !time.Now().Before(deadline) {
		return s.releaseWebhook(ctx, row, row.Attempts, s.nowUnix())
	}
	job, err := s.reads().loadWebhookJob(ctx, row)
	if err != nil {
		return err
	}
	if job == nil { // the bot, its service or the message is gone
		return s.write(ctx, row.RealmID, func(w *writeTx) error {
			w.keepCallers()
			_, err := w.FinishWebhook(ctx, row.ID, row.Claim)
			return err
		})
	}
	call, err := s.webhookCall(job)
	if err != nil {
		return err
	}
	attemptCtx, cancel := context.WithDeadline(ctx, deadline)
	res := d.Attempt(attemptCtx, call)
	cancel()
	if ctx.Err() != nil {
		return nil // shutting down: the claim expires and the delivery is tried again
	}
	s.countWebhookAttempt(ctx, res.Kind)
	if res.Kind == WebhookRetry {
		attempts := row.Attempts + 1
		if attempts < webhookMaxAttempts {
			return s.releaseWebhook(ctx, row, attempts, s.now().Add(d.Backoff(attempts)).Unix())
		}
		if res.Exhausted == nil {
			res = WebhookResult{Kind: WebhookFailure, Message: "Failure! Bot is unavailable"}
		} else {
			res = *res.Exhausted
		}
	}
	// The transaction that posts (or not) also releases the row, and
	// marks the triggering message read for the bot.
	finish := func(ctx context.Context, w *writeTx, _ *storage.Message) error {
		ok, err := w.FinishWebhook(ctx, row.ID, row.Claim)
		if err != nil {
			return err
		}
		if !ok {
			return errWebhookClaimLost
		}
		_, err = s.changeFlags(ctx, w, job.realm, job.bot, true, storage.FlagRead, "read", []int64{job.msg.ID})
		if err != nil && AsError(err).Kind != KindInternal {
			err = nil // a message the bot cannot mark (it lost access since)
		}
		return err
	}
	switch {
	case res.Kind == WebhookReply && strings.TrimSpace(res.Content) != "":
		return s.postAsBot(ctx, job, res.Content, finish)
	case res.Kind == WebhookFailure:
		if err := s.postAsBot(ctx, job, res.Message, finish); err != nil {
			return err
		}
		if res.OwnerMessage != "" && job.bot.BotOwnerID != nil {
			owners, err := s.reads().usersByID(ctx, job.realm, []int64{*job.bot.BotOwnerID})
			owner := owners[*job.bot.BotOwnerID]
			if err == nil && owner == nil {
				err = storage.ErrNotFound
			}
			if err != nil {
				return err
			}
			notifier, err := s.notificationBot(ctx, job.realm)
			if err != nil {
				return err
			}
			return s.sendInternalDirect(ctx, job.realm, notifier, owner, res.OwnerMessage, nil)
		}
		return nil
	default: // no reply, or an empty one
		return s.write(ctx, job.realm.ID, func(w *writeTx) error { w.keepCallers(); return finish(ctx, w, nil) })
	}
}

// releaseWebhook hands a claimed delivery back, to be tried at next with
// attempts made so far.
func (s *Service) releaseWebhook(ctx context.Context, row storage.WebhookDelivery, attempts int, next int64) error {
	return s.write(ctx, row.RealmID, func(w *writeTx) error {
		w.keepCallers()
		_, err := w.RetryWebhook(ctx, row.ID, row.Claim, attempts, next)
		return err
	})
}

// loadWebhookJob reads what a delivery needs; nil when there is nothing
// left to deliver.
func (r reads) loadWebhookJob(ctx context.Context, row storage.WebhookDelivery) (*webhookJob, error) {
	realm, err := r.st.GetRealm(ctx, row.RealmID)
	if err != nil {
		return nil, err
	}
	bot, err := r.st.GetUser(ctx, row.RealmID, row.BotID)
	if errors.Is(err, storage.ErrNotFound) || err == nil && (!bot.IsActive || realm.Deactivated) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	services, err := r.st.ListBotServices(ctx, row.RealmID, []int64{row.BotID})
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(services, func(svc storage.BotService) bool { return svc.ID == row.ServiceID })
	if i < 0 {
		return nil, nil
	}
	msgs, err := r.st.GetMessagesByID(ctx, row.RealmID, []int64{row.MessageID})
	if err != nil || len(msgs) == 0 {
		return nil, err // a deleted message is not delivered
	}
	job := &webhookJob{row: row, realm: realm, bot: bot, service: services[i], msg: &msgs[0]}
	if job.sender, err = r.st.GetUser(ctx, row.RealmID, job.msg.SenderID); err != nil {
		return nil, err
	}
	if job.msg.StreamID != nil {
		if job.channel, err = r.st.GetStream(ctx, row.RealmID, *job.msg.StreamID); err != nil {
			return nil, err
		}
		return job, nil
	}
	ids, err := r.st.ConversationMembers(ctx, row.RealmID, *job.msg.ConversationID)
	if err != nil {
		return nil, err
	}
	users, err := r.usersByID(ctx, realm, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if u := users[id]; u != nil {
			job.participants = append(job.participants, u)
		}
	}
	return job, nil
}

// webhookCall builds the request: the message as GET /messages shows it,
// with its Markdown as content and its HTML as rendered_content.
func (s *Service) webhookCall(job *webhookJob) (WebhookCall, error) {
	m := job.msg
	name := ""
	if job.channel != nil {
		name = job.channel.Name
	}
	avatar := gravatarURL(job.sender)
	view := messageView(job.realm, job.sender, m, name, job.participants, &avatar, nil)
	raw, err := json.Marshal(view)
	if err != nil {
		return WebhookCall{}, err
	}
	var dict map[string]json.RawMessage
	if err := json.Unmarshal(raw, &dict); err != nil {
		return WebhookCall{}, err
	}
	dict["rendered_content"] = dict["content"]
	dict["content"], _ = json.Marshal(m.Content)
	dict["content_type"] = json.RawMessage(`"text/x-markdown"`)
	msg, err := json.Marshal(dict)
	if err != nil {
		return WebhookCall{}, err
	}
	call := WebhookCall{URL: job.service.BaseURL, Interface: job.service.Interface, Direct: m.StreamID == nil,
		BotEmail: job.bot.Email, BotFullName: job.bot.FullName, Data: m.Content, Trigger: job.row.Trigger,
		Token: job.service.Token, Message: msg, RealmID: job.realm.ID, RealmHost: hostOnly(job.realm.Host),
		StreamName: name, Timestamp: m.DateSent, SenderID: job.sender.ID, SenderFullName: job.sender.FullName,
		BotID: job.bot.ID, MessageLink: s.messageLink(job)}
	if m.StreamID != nil {
		call.StreamID = *m.StreamID
	}
	return call, nil
}

// messageLink is the triggering message's permalink (the reference's
// near_message_url).
func (s *Service) messageLink(job *webhookJob) string {
	m := job.msg
	if job.channel != nil {
		return fmt.Sprintf("%s/#narrow/channel/%s/topic/%s/near/%d", job.realm.URL,
			markdown.EncodeChannel(job.channel.ID, job.channel.Name), markdown.EncodeHashComponent(m.Topic), m.ID)
	}
	var others []string
	for _, u := range job.participants {
		if u.ID != job.bot.ID {
			others = append(others, strconv.FormatInt(u.ID, 10))
		}
	}
	slug := "group"
	if len(others) == 1 {
		slug = "dm"
	}
	return fmt.Sprintf("%s/#narrow/dm/%s-%s/near/%d", job.realm.URL, strings.Join(others, ","), slug, m.ID)
}

// postAsBot posts content as the bot where the triggering message is: the
// same channel and topic (whatever the channel's posting rules, as the
// reference skips them for its bots' replies), or the same direct-message
// group. inTx runs in the post's transaction.
func (s *Service) postAsBot(ctx context.Context, job *webhookJob, content string,
	inTx func(ctx context.Context, w *writeTx, m *storage.Message) error) error {
	req := SendMessageRequest{Content: content} // cut to the length limit, as every message
	o := &outgoing{me: job.bot, realm: job.realm, client: "OutgoingWebhookResponse", req: &req, internal: true, inTx: inTx}
	var err error
	if job.channel != nil {
		if job.channel.IsArchived {
			// Nowhere to post: the delivery just ends.
			return s.write(ctx, job.realm.ID, func(w *writeTx) error { w.keepCallers(); return inTx(ctx, w, nil) })
		}
		topic := job.msg.Topic
		req.Type, req.To, req.Topic = "channel", ToChannelID(job.channel.ID), &topic
		err = s.prepareChannelMessage(ctx, o, &topic)
	} else {
		var ids []int64
		for _, u := range job.participants {
			if u.ID != job.bot.ID {
				ids = append(ids, u.ID)
			}
		}
		req.Type, req.To = "private", ToUsers(ids...)
		err = s.reads().prepareDirectMessage(ctx, o)
	}
	if err == nil {
		err = s.reads().renderOutgoing(ctx, o)
	}
	if err != nil {
		// The reply cannot be posted (a recipient deactivated, ...):
		// the delivery ends without it.
		s.log.WarnContext(ctx, "outgoing webhook reply not posted", "bot_id", job.bot.ID, "message_id", job.msg.ID, "err", err)
		return s.write(ctx, job.realm.ID, func(w *writeTx) error { w.keepCallers(); return inTx(ctx, w, nil) })
	}
	return s.storeMessage(ctx, o)
}
