package chat_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/internal/smtptest"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/transport/email"
)

// The cost of notifications, beside BenchmarkEventsFanout:
//
//	go test -run XXX -bench NotificationsFanout -benchtime 20x -timeout 30m .
//
// BenchmarkNotificationsFanout: a send to a 10,000-subscriber channel
// whose subscribers' settings select nothing costs the same with
// notifications on (a Service with a Notifier) as off, and queues
// nothing; with three subscribers' channel emails on, it queues three
// rows. BenchmarkNotificationsDelivery: the loop's throughput (emails
// through a local SMTP server, pushes) and lag (from when a notification
// is due to the Notifier's return).

// countingNotifier notes when each recipient's email and push returned
// (emails through SMTP when it has a mailer).
type countingNotifier struct {
	mailer *email.Sender
	mu     sync.Mutex
	emails map[int64]time.Time
	pushes map[int64]time.Time
}

func newCountingNotifier(mailer *email.Sender) *countingNotifier {
	return &countingNotifier{mailer: mailer, emails: map[int64]time.Time{}, pushes: map[int64]time.Time{}}
}

func (n *countingNotifier) NotifyEmail(ctx context.Context, e chat.EmailNotification) error {
	if n.mailer != nil {
		if err := n.mailer.NotifyEmail(ctx, e); err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.emails[e.UserID] = time.Now()
	n.mu.Unlock()
	return nil
}

func (n *countingNotifier) NotifyPush(_ context.Context, p chat.PushNotification) error {
	n.mu.Lock()
	n.pushes[p.UserID] = time.Now()
	n.mu.Unlock()
	return nil
}

func (n *countingNotifier) counts() (int, int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.emails), len(n.pushes)
}

// pendingRows claims (and so takes out of the way) every pending row of a
// kind and counts them.
func pendingRows(b *testing.B, st storage.Store, kind int) int {
	rows, err := st.ClaimNotifications(context.Background(), kind, 1<<40, 1<<41, "bench", 1<<20)
	check(b, err)
	return len(rows)
}

func BenchmarkNotificationsFanout(b *testing.B) {
	const n = 10000
	o := seedOrg(b, n)
	off := o.h.Service
	// The same organization through a Service that notifies (it shares the
	// store: it is not closed).
	on := chat.New(o.h.Store, chat.WithNotifier(newCountingNotifier(nil)))
	ch := o.channels[0]
	send := func(svc *chat.Service, topic string, i int) time.Duration {
		time.Sleep(20 * time.Millisecond) // a quiet machine before each send
		start := time.Now()
		_, err := svc.SendMessage(context.Background(), o.me, chat.SendMessageRequest{Type: "stream",
			To: chat.ToChannelID(ch), Topic: &topic, Content: "n" + strconv.Itoa(i)})
		check(b, err)
		return time.Since(start)
	}
	for i := range 5 {
		send(off, "notify-bench", i)
		send(on, "notify-bench", i)
	}
	var offs, ons []time.Duration
	b.ResetTimer()
	for i := range b.N {
		offs = append(offs, send(off, "notify-bench", i))
		ons = append(ons, send(on, "notify-bench", i))
	}
	b.StopTimer()
	queued := pendingRows(b, o.h.Store, storage.NotificationEmail) + pendingRows(b, o.h.Store, storage.NotificationPush) +
		pendingRows(b, o.h.Store, storage.NotificationFanout)
	if queued != 0 {
		b.Fatalf("%d notifications queued for a channel whose subscribers' settings select nothing", queued)
	}

	// Three subscribers turn channel emails on: three rows per send.
	ctx := context.Background()
	var users []chat.Caller
	for _, u := range orgUsers(b, o, 4) {
		if u != o.me && len(users) < 3 { // the sender is not notified of their own messages
			users = append(users, u)
		}
	}
	set := func(v *bool) {
		for _, u := range users {
			sub, err := o.h.Store.GetSubscription(ctx, o.h.RealmID, u.UserID, ch)
			check(b, err)
			sub.EmailNotifications = v
			check(b, o.h.Store.UpdateSubscription(ctx, sub, "email_notifications"))
		}
	}
	set(new(true))
	defer set(nil)
	var three []time.Duration
	for i := range b.N {
		three = append(three, send(on, "notify-bench-3", i))
	}
	if got := pendingRows(b, o.h.Store, storage.NotificationEmail); got != 3*b.N {
		b.Fatalf("%d email rows for %d sends to a channel where three subscribers have emails on", got, b.N)
	}
	b.ReportMetric(ms(percentile(offs, 0.5)), "send-off-p50-ms")
	b.ReportMetric(ms(percentile(ons, 0.5)), "send-on-p50-ms")
	b.ReportMetric(ms(percentile(offs, 0.9)), "send-off-p90-ms")
	b.ReportMetric(ms(percentile(ons, 0.9)), "send-on-p90-ms")
	b.ReportMetric(ms(percentile(three, 0.5)), "send-on-3-selected-p50-ms")
	b.ReportMetric(0, "rows-queued-when-none-selected")
	b.ReportMetric(float64(runtime.NumCPU()), "cores")
}

func BenchmarkNotificationsDelivery(b *testing.B) {
	const recipients = 200
	for range b.N {
		srv := smtptest.Start(b)
		mailer, err := email.New(email.Options{Addr: srv.Addr, From: "noreply@chat.example.com", TLS: email.TLSNone})
		check(b, err)
		counter := newCountingNotifier(mailer)
		// Real time: the lag is measured against the clock.
		h := chattest.New(b, chattest.WithServiceOptions(chat.WithNotifier(counter), chat.WithClock(time.Now),
			chat.WithNotificationInterval(100*time.Millisecond)))
		sender := h.NewUser(b, chat.RoleMember)
		var to []chattest.User
		for range recipients {
			u := h.NewUser(b, chat.RoleMember)
			_, err := h.Service.UpdateSettings(context.Background(), u.Caller, chat.UpdateSettingsRequest{
				SettingsPatch: chat.SettingsPatch{EmailNotificationsBatchingPeriodSeconds: new(1)}})
			check(b, err)
			to = append(to, u)
		}
		run := func() (stop func()) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = h.Service.RunNotifications(ctx) }()
			return func() { cancel(); <-done }
		}
		sendAll := func(round int) []time.Time {
			sent := make([]time.Time, recipients)
			for i, u := range to {
				sent[i] = time.Now()
				_, err := h.Service.SendMessage(context.Background(), sender.Caller, chat.SendMessageRequest{Type: "private",
					To: chat.ToUsers(u.ID), Content: fmt.Sprint("ping ", round, " ", i)})
				check(b, err)
			}
			return sent
		}
		waitAll := func(since time.Time) {
			for {
				e, p := counter.counts()
				if e == recipients && p == recipients {
					return
				}
				if time.Since(since) > 2*time.Minute {
					b.Fatalf("%d emails and %d pushes after 2 minutes", e, p)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}

		// Lag: the loop runs while the messages are sent. Each recipient's
		// email is due a second after their message (whole seconds: up
		// to a second sooner); a push at once.
		stop := run()
		start := time.Now()
		sent := sendAll(1)
		sending := time.Since(start)
		waitAll(start)
		stop()
		var emailLag, pushLag []time.Duration
		for i, u := range to {
			emailLag = append(emailLag, max(counter.emails[u.ID].Sub(time.Unix(sent[i].Unix()+1, 0)), 0))
			pushLag = append(pushLag, counter.pushes[u.ID].Sub(sent[i]))
		}

		// Throughput: everything is due when the loop starts.
		counter = newCountingNotifier(mailer)
		chat.SetNotifier(h.Service, counter)
		sendAll(2)
		time.Sleep(2 * time.Second)
		start = time.Now()
		stop = run()
		waitAll(start)
		drain := time.Since(start)
		stop()
		b.ReportMetric(float64(recipients)/sending.Seconds(), "sends/s")
		b.ReportMetric(float64(2*recipients)/drain.Seconds(), "notifications/s")
		b.ReportMetric(float64(recipients), "emails")
		b.ReportMetric(float64(recipients), "pushes")
		b.ReportMetric(ms(drain), "drain-ms")
		b.ReportMetric(ms(percentile(emailLag, 0.5)), "email-lag-p50-ms")
		b.ReportMetric(ms(percentile(emailLag, 0.99)), "email-lag-p99-ms")
		b.ReportMetric(ms(percentile(pushLag, 0.5)), "push-lag-p50-ms")
		b.ReportMetric(ms(percentile(pushLag, 0.99)), "push-lag-p99-ms")
		b.ReportMetric(float64(len(srv.Messages())), "smtp-messages")
		b.ReportMetric(float64(runtime.NumCPU()), "cores")
	}
}
