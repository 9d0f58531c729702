package chat

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/teamchat/chat/internal/mailtext"
	"github.com/teamchat/chat/storage"
)

// Mail in: the reference's email gateway (email_mirror.py). A host's SMTP
// listener (transport/mailin) asks CheckEmailRecipient at each RCPT and
// hands each received mail to ReceiveEmail, parsed.
//
// A mail to a channel's address is posted to the channel as the address's
// sender (the Email Gateway bot, or who asked for the address, or their
// bot), when the sender may post there (for the Email Gateway bot: who
// asked for the address), with the subject as topic (without Re:/Fwd:,
// "Email with no subject" when empty), the plain body preferred and the
// HTML one converted, the quoted reply and the signature cut unless the
// address says otherwise (a forwarded mail keeps its quotes), the From line
// first with show-sender, and every attached file uploaded as the sender
// and linked below.
//
// A reply to a missed-message email's reply address is posted into that
// email's conversation (the channel's topic the message is in now, or the
// direct conversation) as the user it was mailed to, with the same rules
// as a message they send, quotes and signature cut: within
// ReplyAddressLifetimeSeconds, ReplyAddressUses times.
//
// Exactly once: a mail is recorded with its post, in the post's
// transaction, under its recipient's token and its Message-ID (a digest
// of the mail without one), so a delivery tried again after a lost answer
// finds it posted and is accepted without a second post, and of two
// concurrent deliveries one posts. A mail that cannot be posted is refused
// with the reason (the transport turns it into an SMTP error) and logged.

// InboundEmail is a mail for the gateway, parsed by the transport.
type InboundEmail struct {
	// To is the recipient address (the envelope's RCPT TO).
	To string
	// From is the From header as written ("Name <address>"): show-sender
	// quotes it.
	From    string
	Subject string
	// MessageID is the Message-ID header; empty, the transport's Digest
	// of the raw mail stands for it.
	MessageID string
	Digest    string
	// Text and HTML are the first plain and HTML bodies, in UTF-8; nil
	// when the mail has none.
	Text, HTML *string
	// Attachments are the parts with a file name.
	Attachments []EmailAttachment
}

// EmailAttachment is a file attached to a mail.
type EmailAttachment struct {
	FileName    string
	ContentType string
	Content     []byte
}

// EmailRecipient is a gateway address as CheckEmailRecipient found it.
type EmailRecipient struct {
	RealmID int64
	// Reply is set for a missed-message email's reply address, unset for
	// a channel's address.
	Reply bool
	// Token identifies the address (a transport's rate limits count by it).
	Token string
}

// ReceiveEmailResponse says what became of a mail.
type ReceiveEmailResponse struct {
	MessageID int64
	// Duplicate: the mail was posted before (a delivery tried again).
	Duplicate bool
}

// Gateway refusals, in the reference's words where it has them.
var (
	errReplyAddressExpired = noSuch("Missed message address expired or doesn't exist.")
	errReplyAddressUsed    = refused("Missed message address out of uses.")
	errReplyMessageGone    = noSuch("The message this address replies to was deleted.")
	errEmailNoBody         = BadRequest("Unable to find plaintext or HTML message body")
	errEmailEmptyBody      = BadRequest("Email has no nonempty body sections; ignoring.")
	errGatewayOff          = noSuch("This server has no email gateway.")
	// errGatewayDuplicate rolls back a post whose mail was recorded.
	errGatewayDuplicate = errors.New("the mail was posted before")
)

// emailNoSubject is the topic of a mail without a subject.
const emailNoSubject = "Email with no subject"

// gatewayTarget is a recipient address resolved, with who posts and
// where.
type gatewayTarget struct {
	addr   gatewayAddress
	realm  *storage.Realm
	poster *storage.User // who the message is sent as
	// A channel address's row and channel, or a reply address's row and
	// message.
	channelAddr *storage.ChannelEmailAddress
	channel     *storage.Stream
	replyAddr   *storage.EmailReplyAddress
	message     *storage.Message
	internal    bool // posted by the Email Gateway bot, past the channel's rules
}

// CheckEmailRecipient checks a recipient address at RCPT time (the
// reference's validate_to_address): an address the gateway does not know,
// an expired reply address, or one whose mail could not be posted now (a
// channel archived or gone, a sender who may not post there or is
// deactivated, a message deleted) is refused.
func (s *Service) CheckEmailRecipient(ctx context.Context, address string) (*EmailRecipient, error) {
	t, err := s.reads().gatewayTarget(ctx, address)
	if err != nil {
		return nil, err
	}
	return &EmailRecipient{RealmID: t.realm.ID, Reply: t.addr.reply, Token: t.addr.token}, nil
}

// ReceiveEmail posts a mail for its recipient address, once.
func (s *Service) ReceiveEmail(ctx context.Context, m InboundEmail) (*ReceiveEmailResponse, error) {
	resp, t, err := s.receiveEmail(ctx, m)
	if err != nil {
		attrs := []any{"reason", AsError(err).Msg, "kind", AsError(err).Kind.String(), "from", m.From}
		if t != nil {
			attrs = append(attrs, "realm_id", t.realm.ID, "reply", t.addr.reply)
			if t.channel != nil {
				attrs = append(attrs, "stream_id", t.channel.ID)
			}
			if t.message != nil {
				attrs = append(attrs, "message_id", t.message.ID)
			}
		}
		s.log.InfoContext(ctx, "email gateway: mail refused", attrs...)
		return nil, err
	}
	return resp, nil
}

func (s *Service) receiveEmail(ctx context.Context, m InboundEmail) (*ReceiveEmailResponse, *gatewayTarget, error) {
	t, err := s.reads().gatewayTarget(ctx, m.To)
	if err != nil {
		return nil, nil, err
	}
	key := mailKey(m)
	if dup, err := s.reads().gatewayDuplicate(ctx, t, key); err != nil || dup != nil {
		return dup, t, err
	}
	if t.replyAddr != nil && t.replyAddr.TimesUsed >= ReplyAddressUses {
		return nil, t, errReplyAddressUsed
	}
	opts := t.addr.options
	if t.addr.reply {
		opts = emailOptions{preferText: true} // quotes and signature cut, as the reference
	}
	body, err := s.emailBody(ctx, t, m, opts)
	if err != nil {
		return nil, t, err
	}
	record := func(ctx context.Context, w *writeTx, msg *storage.Message) error {
		if t.replyAddr != nil {
			if err := w.UseEmailReplyAddress(ctx, t.realm.ID, t.replyAddr.ID, ReplyAddressUses); errors.Is(err, storage.ErrNotFound) {
				return errReplyAddressUsed
			} else if err != nil {
				return err
			}
		}
		err := w.RecordGatewayReceipt(ctx, storage.GatewayReceipt{RealmID: t.realm.ID, EmailToken: t.addr.token, MessageKey: key,
			MessageID: msg.ID, ReceivedAt: s.nowUnix()})
		if errors.Is(err, storage.ErrConflict) {
			return errGatewayDuplicate
		}
		return err
	}
	id, err := s.postEmail(ctx, t, m, body, record)
	if errors.Is(err, errGatewayDuplicate) || errors.Is(err, errReplyAddressUsed) {
		// Another delivery of the same mail won.
		if dup, rerr := s.reads().gatewayDuplicate(ctx, t, key); rerr == nil && dup != nil {
			return dup, t, nil
		}
		if errors.Is(err, errGatewayDuplicate) {
			err = s.internal(ctx, "email gateway", err)
		}
	}
	if err != nil {
		return nil, t, err
	}
	s.log.InfoContext(ctx, "email gateway: mail posted", "realm_id", t.realm.ID, "message_id", id, "reply", t.addr.reply)
	return &ReceiveEmailResponse{MessageID: id}, t, nil
}

// gatewayDuplicate is the answer to a mail the address already posted
// (a delivery again of the same mail); nil when it did not.
func (r reads) gatewayDuplicate(ctx context.Context, t *gatewayTarget, key string) (*ReceiveEmailResponse, error) {
	receipt, err := r.st.GatewayReceipt(ctx, t.addr.token, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, r.s.internal(ctx, "email gateway", err)
	}
	return &ReceiveEmailResponse{MessageID: receipt.MessageID, Duplicate: true}, nil
}

// gatewayReplyTo is whom a reply to a direct message goes to: its other
// members, or the poster alone (a note to self).
func (r reads) gatewayReplyTo(ctx context.Context, t *gatewayTarget) ([]int64, error) {
	members, err := r.st.ConversationMembers(ctx, t.realm.ID, *t.message.ConversationID)
	if err != nil {
		return nil, r.s.internal(ctx, "email gateway", err)
	}
	var to []int64
	for _, id := range members {
		if id != t.poster.ID {
			to = append(to, id)
		}
	}
	if len(to) == 0 {
		to = []int64{t.poster.ID} // a note to self
	}
	return to, nil
}

// mailKey identifies a mail among its deliveries.
func mailKey(m InboundEmail) string {
	if id := strings.TrimSpace(m.MessageID); id != "" {
		if len(id) > 200 {
			sum := sha256.Sum256([]byte(id))
			return "id:" + hex.EncodeToString(sum[:])
		}
		return "id:" + id
	}
	return "digest:" + m.Digest
}

// postEmail sends the message, with record in its transaction.
func (s *Service) postEmail(ctx context.Context, t *gatewayTarget, m InboundEmail, body string,
	record func(ctx context.Context, w *writeTx, m *storage.Message) error) (int64, error) {
	if t.channelAddr != nil {
		topic := gatewayTopic(m.Subject)
		if t.internal {
			return s.sendInternalMessage(ctx, t.realm, t.poster, t.channel, topic, body, storage.MessageNormal, record)
		}
		return s.sendAsGateway(ctx, t, SendMessageRequest{Type: MessageTypeChannel, To: ToChannelID(t.channel.ID), Topic: &topic, Content: body}, record)
	}
	if t.message.StreamID != nil {
		topic := t.message.Topic
		return s.sendAsGateway(ctx, t, SendMessageRequest{Type: MessageTypeChannel, To: ToChannelID(*t.message.StreamID), Topic: &topic, Content: body}, record)
	}
	to, err := s.reads().gatewayReplyTo(ctx, t)
	if err != nil {
		return 0, err
	}
	return s.sendAsGateway(ctx, t, SendMessageRequest{Type: MessageTypeDirect, To: ToUsers(to...), Content: body}, record)
}

// sendAsGateway sends as the poster with every rule of a send, from the
// reference's "Internal" client.
func (s *Service) sendAsGateway(ctx context.Context, t *gatewayTarget, req SendMessageRequest,
	record func(ctx context.Context, w *writeTx, m *storage.Message) error) (int64, error) {
	client := "Internal"
	req.Client = &client
	resp, err := s.sendMessageAs(ctx, t.poster, t.realm, req, record)
	if err != nil {
		return 0, err
	}
	return resp.ID, nil
}

// gatewayTopic is a mail's subject as a topic (the reference's
// process_stream_message): reply and forward markers stripped,
// unprintable characters dropped, "Email with no subject" for none.
func gatewayTopic(subject string) string {
	subject = strings.Map(func(r rune) rune {
		if !isPrintable(r) {
			return -1
		}
		return r
	}, mailtext.StripSubject(subject))
	if strings.TrimSpace(subject) == "" {
		return emailNoSubject
	}
	return subject
}

// gatewayTarget resolves a recipient address and checks that its mail can
// be posted now.
func (r reads) gatewayTarget(ctx context.Context, address string) (*gatewayTarget, error) {
	if r.s.gatewayDomain == "" {
		return nil, errGatewayOff
	}
	addr, err := r.s.parseGatewayAddress(address)
	if err != nil {
		return nil, err
	}
	if addr.reply {
		return r.replyTarget(ctx, addr)
	}
	row, err := r.st.ChannelEmailAddressByToken(ctx, addr.token)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, noSuch("Bad channel token from email recipient %s", address)
	} else if err != nil {
		return nil, r.s.internal(ctx, "email gateway", err)
	}
	if row.Deactivated {
		return nil, noSuch("This channel address was deactivated.")
	}
	creator, realm, err := r.actor(ctx, Caller{RealmID: row.RealmID, UserID: row.CreatorID})
	if err != nil {
		return nil, gatewayActorError(err, "The person who made this channel address is deactivated.")
	}
	t := &gatewayTarget{addr: addr, realm: realm, channelAddr: row, poster: creator}
	if row.SenderID != row.CreatorID {
		if t.poster, _, err = r.actor(ctx, Caller{RealmID: row.RealmID, UserID: row.SenderID}); err != nil {
			return nil, gatewayActorError(err, "The sender of this channel address is deactivated.")
		}
	}
	t.internal = t.poster.IsSystemBot
	if t.channel, err = r.channelByID(ctx, realm.ID, row.StreamID); errors.Is(err, storage.ErrNotFound) {
		return nil, noSuch("The channel of this address does not exist.")
	} else if err != nil {
		return nil, r.s.internal(ctx, "email gateway", err)
	}
	// The reference's check_access_for_channel_email_address: the Email
	// Gateway bot posts where who asked for the address may.
	check := t.poster
	if t.internal {
		check = creator
	}
	if _, err := r.checkCanSendToChannel(ctx, check, t.channel); err != nil {
		return nil, err
	}
	return t, nil
}

// replyTarget resolves a missed-message email's reply address.
func (r reads) replyTarget(ctx context.Context, addr gatewayAddress) (*gatewayTarget, error) {
	row, err := r.st.EmailReplyAddressByToken(ctx, addr.token)
	if errors.Is(err, storage.ErrNotFound) || err == nil && r.s.nowUnix() >= row.CreatedAt+ReplyAddressLifetimeSeconds {
		return nil, errReplyAddressExpired
	} else if err != nil {
		return nil, r.s.internal(ctx, "email gateway", err)
	}
	user, realm, err := r.actor(ctx, Caller{RealmID: row.RealmID, UserID: row.UserID})
	if err != nil {
		return nil, gatewayActorError(err, "The person this address replies for is deactivated.")
	}
	t := &gatewayTarget{addr: addr, realm: realm, poster: user, replyAddr: row}
	if t.message, err = r.st.GetMessage(ctx, realm.ID, row.MessageID); errors.Is(err, storage.ErrNotFound) {
		return nil, errReplyMessageGone
	} else if err != nil {
		return nil, r.s.internal(ctx, "email gateway", err)
	}
	if t.message.StreamID != nil {
		// As the reference checks replies to channel messages early.
		if t.channel, err = r.channelByID(ctx, realm.ID, *t.message.StreamID); err != nil {
			return nil, r.s.internal(ctx, "email gateway", err)
		}
		if _, err := r.checkCanSendToChannel(ctx, user, t.channel); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// gatewayActorError says why an address's user cannot act: deactivated
// (a refusal) or the database (kept as it is).
func gatewayActorError(err error, deactivated string) error {
	if e := AsError(err); e.Kind == KindUnauthenticated {
		return refused("%s", deactivated)
	}
	return err
}

// emailBody is the message a mail makes (the reference's
// construct_zulip_body): the preferred body (quotes and signature cut as
// the options say), "(No email body)" when nothing is left, the From line
// first with show-sender, the attachments' links last, cut to the longest
// message with the attachments kept.
func (s *Service) emailBody(ctx context.Context, t *gatewayTarget, m InboundEmail, o emailOptions) (string, error) {
	if m.Text == nil && m.HTML == nil {
		return "", errEmailNoBody
	}
	includeQuotes := o.includeQuotes != nil && *o.includeQuotes
	if o.includeQuotes == nil && !t.addr.reply {
		includeQuotes = mailtext.IsForwarded(m.Subject)
	}
	var text, html string
	if m.Text != nil {
		text = strings.ReplaceAll(*m.Text, "\r\n", "\n")
		if !includeQuotes {
			text = mailtext.StripQuotedText(text)
		}
	}
	if m.HTML != nil {
		html = mailtext.HTMLToMarkdown(*m.HTML, !includeQuotes)
	}
	if strings.TrimSpace(text) == "" && strings.TrimSpace(html) == "" {
		return "", errEmailEmptyBody
	}
	body := text
	if !o.preferText && strings.TrimSpace(html) != "" || strings.TrimSpace(text) == "" {
		body = html
	}
	body = strings.ReplaceAll(body, "\x00", "")
	if !o.includeFooter {
		body = mailtext.FilterFooter(body)
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	if strings.TrimSpace(body) == "" {
		body = "(No email body)"
	}
	preamble := ""
	if o.showSender {
		preamble = "From: " + m.From + "\n"
	}
	postamble, err := s.uploadAttachments(ctx, t, m.Attachments)
	if err != nil {
		return "", err
	}
	if postamble != "" {
		postamble = "\n" + postamble
	}
	room := s.limits.MaxMessageLength - len([]rune(preamble)) - len([]rune(postamble))
	return preamble + truncateRunes(body, max(room, 20), "\n[message truncated]") + postamble, nil
}

// uploadAttachments uploads the mail's files as the poster and returns
// their links, one a line (brackets left out of the names: the link text
// cannot escape them).
func (s *Service) uploadAttachments(ctx context.Context, t *gatewayTarget, files []EmailAttachment) (string, error) {
	var links []string
	for _, f := range files {
		up, err := s.UploadFile(ctx, Caller{RealmID: t.realm.ID, UserID: t.poster.ID}, UploadFileRequest{File: FileUpload{
			FileName: f.FileName, ContentType: f.ContentType, Size: int64(len(f.Content)), Content: bytes.NewReader(f.Content)}})
		if err != nil {
			return "", err
		}
		name := strings.NewReplacer("[", "", "]", "").Replace(f.FileName)
		links = append(links, fmt.Sprintf("[%s](%s)", name, up.URL))
	}
	return strings.Join(links, "\n"), nil
}

// pruneEmailGateway deletes expired reply addresses and receipts older
// than a week (a mail is not delivered again after that), in bounded
// batches.
func (s *Service) pruneEmailGateway(ctx context.Context) {
	now := s.nowUnix()
	for {
		n, err := s.store.PruneEmailGateway(ctx, now-ReplyAddressLifetimeSeconds, now-7*24*3600, 1000)
		if err != nil {
			_ = s.internal(ctx, "maintenance: prune the email gateway", err)
			return
		}
		if n == 0 || ctx.Err() != nil {
			return
		}
	}
}
