package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

const (
	// MaxAttempts is how many requests one trigger gets when they time out
	// or fail to connect: the first and three retries (the reference's
	// MAX_REQUEST_RETRIES = 3). Other failures are not retried.
	MaxAttempts = 4
	// DefaultTimeout bounds each attempt (the reference's
	// OUTGOING_WEBHOOK_TIMEOUT_SECONDS).
	DefaultTimeout = 10 * time.Second
	// DefaultVersion completes the User-Agent when Options.Version is
	// empty; the Service passes its own version.
	DefaultVersion = "teamchat"
	// DefaultMaxResponseBytes bounds the answer body the client reads.
	DefaultMaxResponseBytes = 1 << 20
	// maxRedirects is the redirect limit of the reference's HTTP library.
	maxRedirects = 30
)

// DefaultBackoff are the waits between attempts: after the first failed
// attempt, after the second, after the third.
var DefaultBackoff = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}

// Options configure a Client. The zero value is ready for production.
type Options struct {
	// Version completes the User-Agent header,
	// "ZulipOutgoingWebhook/<Version>" (the reference's form, which bot
	// frameworks recognize). Default DefaultVersion.
	Version string
	// Timeout bounds each attempt, from dialing to the end of the answer
	// body. Default DefaultTimeout.
	Timeout time.Duration
	// Backoff[i] is the wait after the (i+1)th failed attempt; the last
	// value serves for later ones. Default DefaultBackoff.
	Backoff []time.Duration
	// Sleep waits d or until ctx ends (returning ctx.Err()). Default: a
	// timer. Tests record the waits here instead of waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// AllowPrivate lets the client connect to any address: loopback,
	// private networks, link-local, ... For development and tests only;
	// in production a bot owner could otherwise make the server call its
	// own internal services.
	AllowPrivate bool
	// MaxResponseBytes bounds the answer body read. Default
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Logger receives one line per failed attempt. Default slog.Default().
	Logger *slog.Logger
}

// Client delivers outgoing webhook requests to bot services. It is safe
// for concurrent use.
type Client struct {
	http      *http.Client
	userAgent string
	timeout   time.Duration
	backoff   []time.Duration
	sleep     func(context.Context, time.Duration) error
	maxBody   int64
	log       *slog.Logger
	// checkAddr judges every address dialed; nil allows all
	// (AllowPrivate). Only New sets it, to checkPublic: nothing outside
	// this package can change it.
	checkAddr func(netip.AddrPort) error
}

// New returns a Client configured by o.
func New(o Options) *Client {
	c := &Client{
		userAgent: "ZulipOutgoingWebhook/" + o.Version,
		timeout:   o.Timeout,
		backoff:   o.Backoff,
		sleep:     o.Sleep,
		maxBody:   o.MaxResponseBytes,
		log:       o.Logger,
		checkAddr: checkPublic,
	}
	if o.Version == "" {
		c.userAgent = "ZulipOutgoingWebhook/" + DefaultVersion
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if len(c.backoff) == 0 {
		c.backoff = DefaultBackoff
	}
	c.backoff = append([]time.Duration(nil), c.backoff...) // not shared with the caller
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxResponseBytes
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if o.AllowPrivate {
		c.checkAddr = nil
	}
	dialer := &net.Dialer{Timeout: c.timeout, KeepAlive: 30 * time.Second, Control: c.control}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would be dialed instead of the bot, past the address check
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   c.timeout,
		ExpectContinueTimeout: time.Second,
	}
	c.http = &http.Client{Transport: transport, CheckRedirect: checkRedirect}
	return c
}

// CloseIdleConnections closes the client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// Request is one trigger to deliver to one bot service.
type Request struct {
	// URL is the service's base_url.
	URL string
	// Interface is Generic or Slack; other values are taken as Generic,
	// as the reference does.
	Interface Interface
	// Payload is the body of a Generic request.
	Payload Payload
	// Slack are the fields of a Slack request. A direct message never
	// reaches the client in Slack mode: the Service acts on
	// SlackDirectMessageOutcome instead.
	Slack SlackFields
}

// command is the triggering message's content, quoted in exception texts.
func (r *Request) command() string {
	if r.Interface == Slack {
		return r.Slack.Text
	}
	return r.Payload.Data
}

// Backoff returns the wait after the nth failed attempt (n from 1).
func (c *Client) Backoff(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > len(c.backoff) {
		n = len(c.backoff)
	}
	return c.backoff[n-1]
}

// Deliver sends r to the bot service, retrying timeouts and connection
// errors up to MaxAttempts requests in all with Backoff waits between
// them, and returns what the Service must do: never an outcome of kind
// Retry. The error is not nil only when ctx ends first (the trigger was
// not dealt with; deliver it again later).
func (c *Client) Deliver(ctx context.Context, r Request) (Outcome, error) {
	for n := 1; ; n++ {
		o, err := c.Attempt(ctx, r)
		if err != nil {
			return Outcome{}, err
		}
		o.Attempts = n
		if o.Kind != Retry {
			return o, nil
		}
		if n >= MaxAttempts {
			c.log.WarnContext(ctx, "outgoing webhook: maximum retries exceeded", "url", r.URL, "attempts", n, "err", o.Err)
			return o.Exhausted(), nil
		}
		if err := c.sleep(ctx, c.Backoff(n)); err != nil {
			return Outcome{}, err
		}
	}
}

// Attempt sends r once. A timeout or connection error gives an outcome
// of kind Retry (see Retry); any other result is final. Attempts is 1.
// The error is not nil only when ctx ends first. Deliver runs the whole
// retry loop; Attempt is for a caller that keeps the attempts count and
// schedules retries itself (an outbox table surviving restarts).
func (c *Client) Attempt(ctx context.Context, r Request) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	o, err := c.attempt(ctx, &r)
	if err != nil {
		return Outcome{}, err
	}
	o.Attempts = 1
	switch {
	case o.Kind == Retry:
		c.log.InfoContext(ctx, "outgoing webhook: attempt failed, retrying", "url", r.URL, "err", o.Err)
	case o.Kind == Failure && o.StatusCode != 0:
		body := o.Body
		if len(body) > 1000 {
			body = body[:1000]
		}
		c.log.WarnContext(ctx, "outgoing webhook: bot answered an error", "url", r.URL, "status", o.StatusCode, "body", string(body))
	case o.Kind == Failure:
		c.log.ErrorContext(ctx, "outgoing webhook: request failed", "url", r.URL, "err", o.Err)
	}
	return o, nil
}

func (c *Client) attempt(ctx context.Context, r *Request) (Outcome, error) {
	target, kind, err := checkURL(r.URL)
	if err != nil {
		return exceptionFailure(kind, r.command(), err), nil
	}
	var body []byte
	var contentType string
	if r.Interface == Slack {
		body, contentType = []byte(r.Slack.Encode()), "application/x-www-form-urlencoded"
	} else {
		if body, err = json.Marshal(&r.Payload); err != nil {
			return exceptionFailure("InvalidJSONError", r.command(), err), nil
		}
		contentType = "application/json"
	}

	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return exceptionFailure("InvalidURL", r.command(), err), nil
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")

	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportFailure(ctx, r, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return c.transportFailure(ctx, r, err)
	}
	if int64(len(data)) > c.maxBody {
		data = data[:c.maxBody]
		if resp.StatusCode/100 == 2 {
			return exceptionFailure("ContentTooLarge", r.command(),
				fmt.Errorf("the response body exceeds %d bytes", c.maxBody)), nil
		}
	}
	if resp.StatusCode/100 != 2 {
		return statusFailure(resp.StatusCode, data), nil
	}
	return successOutcome(r.Interface, resp.StatusCode, data), nil
}

// transportFailure classifies an error of the request or of reading the
// answer, as the reference's HTTP library would.
func (c *Client) transportFailure(ctx context.Context, r *Request, err error) (Outcome, error) {
	if ctx.Err() != nil {
		return Outcome{}, ctx.Err()
	}
	var ne net.Error
	switch {
	case errors.Is(err, ErrForbiddenAddress):
		return disallowedFailure(err), nil
	case errors.Is(err, errTooManyRedirects):
		return exceptionFailure("TooManyRedirects", r.command(), err), nil
	case errors.Is(err, errRedirectScheme):
		return exceptionFailure("InvalidSchema", r.command(), err), nil
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return retryTimeout(c.timeout, err), nil
	}
	// Refused, reset, closed early, DNS failures, TLS failures: the
	// reference's ConnectionError family.
	return retryConnection(err), nil
}

var (
	errTooManyRedirects = fmt.Errorf("stopped after %d redirects", maxRedirects)
	errRedirectScheme   = errors.New("redirect to a URL that is not http or https")
)

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errTooManyRedirects
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("%w: %s", errRedirectScheme, req.URL.Redacted())
	}
	return nil
}

// checkURL validates a service URL, naming the failure as the reference's
// HTTP library would (MissingSchema, InvalidSchema, InvalidURL).
func checkURL(raw string) (string, string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return "", "InvalidURL", err
	}
	switch {
	case u.Scheme == "":
		return "", "MissingSchema", fmt.Errorf("invalid URL %q: no scheme supplied", raw)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", "InvalidSchema", fmt.Errorf("no connection adapters were found for %q", raw)
	case u.Host == "" || u.Hostname() == "":
		return "", "InvalidURL", fmt.Errorf("invalid URL %q: no host supplied", raw)
	}
	return raw, "", nil
}

// successOutcome reads a 2xx answer (process_success_response and the
// interfaces' process_success in the reference).
func successOutcome(iface Interface, status int, body []byte) Outcome {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if !json.Valid(body) || dec.Decode(&v) != nil {
		return replyFailure(msgInvalidJSON, status, body)
	}
	if s, ok := v.(string); ok && s == "" {
		// Bot servers before 2021-05 answered the JSON string "" to mean
		// "no response required".
		return Outcome{Kind: NoReply, StatusCode: status, Body: body}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return replyFailure(msgInvalidFormat, status, body)
	}
	o := Outcome{Kind: NoReply, StatusCode: status, Body: body}
	var content any
	var has bool
	if iface == Slack {
		content, has = obj["text"]
	} else {
		if truthy(obj["response_not_required"]) {
			return o
		}
		if content, has = obj["response_string"]; !has { // deprecated, read first as the reference does
			if content, has = obj["content"]; has {
				if w, ok := obj["widget_content"]; ok {
					o.WidgetContent, _ = json.Marshal(w)
				}
			}
		}
	}
	text, ok := contentText(content)
	if !has || !ok || strings.TrimSpace(text) == "" {
		o.WidgetContent = nil
		return o
	}
	o.Kind, o.Content = Reply, text
	return o
}

// contentText turns the reply's content into text: a string as it is,
// another JSON value in its JSON form (the reference applies Python's
// str(), which spells true as True), null as no content.
func contentText(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	}
	b, err := json.Marshal(v)
	return string(b), err == nil
}

// truthy is Python's truth value of a JSON value.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
