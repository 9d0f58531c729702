package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"

	"github.com/teamchat/chat/transport/webhook"
)

// A bot's service answers each trigger; the server's client delivers one
// and reads the outcome.
func Example() {
	bot := httptest.NewServer(webhook.NewHandler("s3cret", func(ctx context.Context, p *webhook.Payload) (string, error) {
		return "You said: " + webhook.StripMention(p.Data, p.BotFullName), nil
	}))
	defer bot.Close()

	// AllowPrivate only because the test bot listens on loopback.
	c := webhook.New(webhook.Options{AllowPrivate: true})
	defer c.CloseIdleConnections()
	o, err := c.Deliver(context.Background(), webhook.Request{
		URL:       bot.URL,
		Interface: webhook.Generic,
		Payload: webhook.Payload{
			Data:        "@**Echo** hello",
			Message:     json.RawMessage(`{"id": 1, "type": "stream", "content": "@**Echo** hello"}`),
			BotEmail:    "echo-bot@example.com",
			BotFullName: "Echo",
			Token:       "s3cret",
			Trigger:     webhook.TriggerMention,
		},
	})
	if err != nil {
		panic(err)
	}
	switch o.Kind {
	case webhook.Reply:
		fmt.Println("post as the bot:", o.Content)
	case webhook.Failure:
		fmt.Println("post as the bot:", o.Message)
		fmt.Println("tell the owner:", o.OwnerMessage("https://chat.example.com/#narrow/near/1", "Echo"))
	}
	// Output: post as the bot: You said: hello
}
