// Command events follows a teamchat (or Zulip) server's real-time events
// the way a robust client must: it registers an event queue, long-polls
// it, and registers again whenever the server answers BAD_EVENT_QUEUE_ID
// (the queue was collected after idling, dropped because the client fell
// behind, or lost with a server restart). Each event is printed as one
// JSON line.
//
//	go run ./examples/events -site http://127.0.0.1:9991 -email owner@teamchat.localhost -key API_KEY
//
// -types limits the event types (a comma-separated list, e.g.
// message,reaction). A client that re-registers must also reload the state
// it keeps, since events were lost in between: this one prints a
// "registered" line with the queue's state each time.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"
)

func main() {
	site := flag.String("site", "http://127.0.0.1:9991", "server URL")
	email := flag.String("email", "", "account email")
	key := flag.String("key", "", "account API key")
	types := flag.String("types", "", "comma-separated event types (default: all)")
	flag.Parse()
	if *email == "" || *key == "" {
		fmt.Fprintln(os.Stderr, "events: -email and -key are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := &client{site: strings.TrimRight(*site, "/"), email: *email, key: *key, http: &http.Client{Timeout: 90 * time.Second}}
	if *types != "" {
		c.types = strings.Split(*types, ",")
	}
	enc := json.NewEncoder(os.Stdout)
	err := c.follow(ctx, func(kind string, v any) { _ = enc.Encode(map[string]any{kind: v}) })
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "events:", err)
		os.Exit(1)
	}
}

// client talks to the server's REST API with HTTP basic auth.
type client struct {
	site, email, key string
	types            []string
	http             *http.Client
}

// apiError is an error answer of the API.
type apiError struct {
	Code, Msg string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Msg }

// call sends one request and decodes a success answer into out.
func (c *client) call(ctx context.Context, method, path string, params url.Values, out any) error {
	var body io.Reader
	target := c.site + "/api/v1" + path
	if method == http.MethodGet {
		target += "?" + params.Encode()
	} else {
		body = strings.NewReader(params.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.SetBasicAuth(c.email, c.key)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var envelope struct {
		Result string `json:"result"`
		Code   string `json:"code"`
		Msg    string `json:"msg"`
	}
	if err := json.Unmarshal(raw, &envelope); err != nil {
		return fmt.Errorf("%s %s: HTTP %d, not JSON: %.200s", method, path, resp.StatusCode, raw)
	}
	if envelope.Result != "success" {
		return &apiError{Code: envelope.Code, Msg: envelope.Msg}
	}
	return json.Unmarshal(raw, out)
}

// follow registers and polls until ctx ends, calling handle with
// ("registered", state) after each registration and ("event", event) for
// each event.
func (c *client) follow(ctx context.Context, handle func(kind string, v any)) error {
	backoff := time.Second
	for ctx.Err() == nil {
		params := url.Values{"apply_markdown": {"true"},
			"client_capabilities": {`{"notification_settings_null": true, "bulk_message_deletion": true, "user_settings_object": true, "empty_topic_name": true}`}}
		if c.types != nil {
			t, _ := json.Marshal(c.types)
			params.Set("event_types", string(t))
		}
		var state map[string]any
		if err := c.call(ctx, http.MethodPost, "/register", params, &state); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The server is down or refusing: try again, more slowly.
			fmt.Fprintln(os.Stderr, "events: register:", err, "; retrying in", backoff)
			if !sleep(ctx, backoff) {
				return ctx.Err()
			}
			backoff = min(2*backoff, time.Minute)
			continue
		}
		backoff = time.Second
		handle("registered", state)
		queue, _ := state["queue_id"].(string)
		last := int64(-1)
		if n, ok := state["last_event_id"].(float64); ok {
			last = int64(n)
		}
		err := c.poll(ctx, queue, &last, handle)
		var apiErr *apiError
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &apiErr) && apiErr.Code == "BAD_EVENT_QUEUE_ID":
			// The queue is gone: register again (and reload state).
			continue
		case err != nil:
			fmt.Fprintln(os.Stderr, "events: poll:", err, "; registering again in", backoff)
			if !sleep(ctx, backoff) {
				return ctx.Err()
			}
		}
	}
	return ctx.Err()
}

// poll long-polls the queue until an error.
func (c *client) poll(ctx context.Context, queue string, last *int64, handle func(kind string, v any)) error {
	failures := 0
	for {
		var resp struct {
			Events []map[string]any `json:"events"`
		}
		err := c.call(ctx, http.MethodGet, "/events", url.Values{"queue_id": {queue}, "last_event_id": {strconv.FormatInt(*last, 10)}}, &resp)
		var apiErr *apiError
		if errors.As(err, &apiErr) || ctx.Err() != nil {
			return err
		}
		if err != nil {
			// A network error: the queue may still be there; retry a few
			// times before starting over.
			if failures++; failures > 3 {
				return err
			}
			if !sleep(ctx, time.Duration(failures)*time.Second) {
				return ctx.Err()
			}
			continue
		}
		failures = 0
		for _, ev := range resp.Events {
			if id, ok := ev["id"].(float64); ok {
				*last = int64(id)
			}
			if ev["type"] != "heartbeat" {
				handle("event", ev)
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
