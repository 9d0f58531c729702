package chat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/teamchat/chat/storage"
)

// The email gateway's addresses, as the reference makes them
// (email_mirror_helpers.py, at feature level 372). A channel's address
// is <name>.<token>.show-sender@<gateway domain>: the channel's name in
// ASCII (left out when it cannot be written so), a secret token of the
// (channel, creator, sender) it was made for, and options after dots (or
// "+", the older separator): show-sender puts the mail's From line first,
// include-footer keeps the signature, include-quotes the quoted text,
// prefer-html takes the HTML body over the plain one (prefer-text the
// reverse). The reply address of a missed-message email is mm<token>@<gateway
// domain>, tied to a message and its recipient. Without a gateway
// (WithEmailGateway), channels have no address ("") and notifications no
// reply address.

// WithEmailGateway turns the email gateway on: channel addresses and the
// reply addresses of missed-message emails are at domain (the reference's
// EMAIL_GATEWAY_PATTERN "%s@domain"), whose MX points at the host's SMTP
// listener (transport/mailin), which hands the mails to
// CheckEmailRecipient and ReceiveEmail.
func WithEmailGateway(domain string) Option {
	return func(s *Service) { s.gatewayDomain = strings.ToLower(strings.TrimSpace(domain)) }
}

// Reply addresses of missed-message emails work this long after the email,
// this many times (the reference's MissedMessageEmailAddress.EXPIRY_SECONDS
// and ALLOWED_USES).
const (
	ReplyAddressLifetimeSeconds = 5 * 24 * 3600
	ReplyAddressUses            = 1
)

// Address options (the reference's optional_address_tokens).
const (
	optShowSender    = "show-sender"
	optIncludeFooter = "include-footer"
	optIncludeQuotes = "include-quotes"
	optPreferText    = "prefer-text"
	optPreferHTML    = "prefer-html"
)

// emailOptions say how a mail becomes a message.
type emailOptions struct {
	showSender, includeFooter, preferText bool
	// includeQuotes is nil when the address does not say.
	includeQuotes *bool
}

// gatewayAddress is a recipient address read: a channel token with its
// options, or a reply token.
type gatewayAddress struct {
	token   string
	reply   bool
	options emailOptions
}

var errNotGatewayAddress = noSuch("Address not recognized by gateway.")

// parseGatewayAddress reads an address at the gateway's domain (the
// reference's decode_email_address and is_missed_message_address).
func (s *Service) parseGatewayAddress(address string) (gatewayAddress, error) {
	address = strings.Trim(strings.TrimSpace(address), "<>")
	at := strings.LastIndex(address, "@")
	if s.gatewayDomain == "" || at <= 0 || !strings.EqualFold(address[at+1:], s.gatewayDomain) {
		return gatewayAddress{}, errNotGatewayAddress
	}
	local := strings.ToLower(address[:at])
	if strings.HasPrefix(local, "mm") && len(local) == 34 {
		return gatewayAddress{token: local, reply: true}, nil
	}
	a := gatewayAddress{options: emailOptions{preferText: true}}
	var rest []string
	for _, part := range strings.Split(strings.ReplaceAll(local, ".", "+"), "+") {
		switch part {
		case optShowSender:
			a.options.showSender = true
		case optIncludeFooter:
			a.options.includeFooter = true
		case optIncludeQuotes:
			yes := true
			a.options.includeQuotes = &yes
		case optPreferText:
			a.options.preferText = true
		case optPreferHTML:
			a.options.preferText = false
		default:
			rest = append(rest, part)
		}
	}
	switch len(rest) {
	case 0:
		return gatewayAddress{}, errNotGatewayAddress
	case 1:
		a.token = rest[0] // [token]
	default:
		a.token = rest[1] // [name, token]
	}
	return a, nil
}

var (
	nonWord     = regexp.MustCompile(`[^\p{L}\p{N}_]+`)
	nonSlug     = regexp.MustCompile(`[^\w\s-]`)
	slugSpacing = regexp.MustCompile(`[-\s]+`)
)

// channelAddressName is a channel's name as its address shows it (the
// reference: runs of non-word characters become one hyphen, then Django's
// slugify; a name that slugify would shorten, losing letters it cannot
// write in ASCII, is left out).
func channelAddressName(name string) string {
	name = nonWord.ReplaceAllString(name, "-")
	var b strings.Builder
	for _, r := range norm.NFKD.String(name) {
		if r < 0x80 {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	slug := nonSlug.ReplaceAllString(b.String(), "")
	slug = strings.Trim(slugSpacing.ReplaceAllString(slug, "-"), "-_")
	if len(slug) != len([]rune(name)) {
		return ""
	}
	return slug
}

// channelAddress is the address of a channel's token (with show-sender,
// as GET /streams/{id}/email_address gives it).
func (s *Service) channelAddress(name, token string) string {
	if s.gatewayDomain == "" {
		return ""
	}
	local := token
	if n := channelAddressName(name); n != "" {
		local = n + "." + token
	}
	return local + "." + optShowSender + "@" + s.gatewayDomain
}

// newEmailToken is a new random token (the reference's 32 hex digits).
func newEmailToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// GetStreamEmailAddressRequest is the input of GetStreamEmailAddress.
type GetStreamEmailAddressRequest struct {
	StreamID int64 `json:"stream_id"`
	// SenderID is who the channel's mails are posted as: the Email
	// Gateway bot (the default, and its ID), the caller, or a bot the
	// caller administers.
	SenderID *int64 `json:"sender_id"`
}

// GetStreamEmailAddressResponse is the success body of GetStreamEmailAddress.
type GetStreamEmailAddressResponse struct {
	// Email is the address, or "" when the server has no email gateway.
	Email string `json:"email"`
}

// GetStreamEmailAddress returns the channel's address for the caller and
// the sender (GET /streams/{stream_id}/email_address, feature level 226;
// sender_id at 335), as the reference: whoever can read the channel may
// ask (subscribed, or it is public and they are no guest, or it is
// web-public; any other or an archived channel is "Invalid channel ID"),
// and the address is the same each time for the same caller and sender.
// Whether its mails can be posted is checked when they come: the sender,
// or the caller for the Email Gateway bot, must be allowed to post there.
func (s *Service) GetStreamEmailAddress(ctx context.Context, c Caller, req GetStreamEmailAddressRequest) (*GetStreamEmailAddressResponse, error) {
	me, realm, ch, err := s.readableChannel(ctx, c, req.StreamID)
	if err != nil {
		return nil, err
	}
	if ch.IsArchived {
		return nil, errInvalidChannelID
	}
	gateway, err := s.systemBot(ctx, realm, emailGatewayBotKind)
	if err != nil {
		return nil, s.internal(ctx, "channel email address", err)
	}
	sender := gateway
	switch {
	case req.SenderID == nil || *req.SenderID == gateway.ID:
	case *req.SenderID == me.ID:
		sender = me
	default:
		if _, _, sender, err = s.reads().ownedBot(ctx, c, *req.SenderID); err != nil {
			return nil, err
		}
		if !sender.IsActive {
			return nil, noSuch("No such bot")
		}
	}
	token, err := newEmailToken()
	if err != nil {
		return nil, s.internal(ctx, "channel email address", err)
	}
	var addr *storage.ChannelEmailAddress
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		addr, err = w.ChannelEmailAddress(ctx, &storage.ChannelEmailAddress{RealmID: realm.ID, StreamID: ch.ID,
			CreatorID: me.ID, SenderID: sender.ID, EmailToken: token, DateCreated: s.nowUnix()})
		return err
	})
	if err != nil {
		return nil, s.internal(ctx, "channel email address", err)
	}
	return &GetStreamEmailAddressResponse{Email: s.channelAddress(ch.Name, addr.EmailToken)}, nil
}

// replyAddress makes the reply address of a missed-message email about
// the message for the user ("" without a gateway: the email then says not
// to reply).
func (s *Service) replyAddress(ctx context.Context, realmID, userID, messageID int64) (string, error) {
	if s.gatewayDomain == "" {
		return "", nil
	}
	token, err := newEmailToken()
	if err != nil {
		return "", err
	}
	token = "mm" + token
	err = s.write(ctx, realmID, func(w *writeTx) error {
		w.keepCallers()
		return w.CreateEmailReplyAddress(ctx, &storage.EmailReplyAddress{RealmID: realmID, MessageID: messageID, UserID: userID,
			EmailToken: token, CreatedAt: s.nowUnix()})
	})
	if err != nil {
		return "", err
	}
	return token + "@" + s.gatewayDomain, nil
}
