package mailin_test

import (
	"context"
	"fmt"
	"net/smtp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/transport/mailin"
)

// Mails posted to a channel through the listener (one SMTP connection
// each, as sending servers deliver), beside the same messages sent in
// process (the ceiling: the send path alone), in the same run:
//
//	go test -run XXX -bench Gateway -benchtime 200x ./transport/mailin
func BenchmarkGateway(b *testing.B) {
	e := newGateway(b, mailin.Options{RatePerMinute: -1})
	member := e.NewUser(b, chat.RoleMember)
	ch := e.channel(b, member, "bench", false)
	addr := e.address(b, member, ch, nil)
	body := strings.Repeat("A line of a report mailed to the channel.\n", 10)
	b.Run("smtp", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			mail := strings.ReplaceAll(plainMail("bench", fmt.Sprintf("<%d@bench>", n), body), "\n", "\r\n")
			require.NoError(b, smtp.SendMail(e.addr, nil, "ada@example.org", []string{addr}, []byte(mail)))
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "mails/s")
	})
	b.Run("in-process send", func(b *testing.B) {
		topic := "bench"
		for b.Loop() {
			_, err := e.Service.SendMessage(context.Background(), member.Caller, chat.SendMessageRequest{Type: "stream",
				To: chat.ToChannelID(ch), Topic: &topic, Content: body})
			require.NoError(b, err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
	})
}
