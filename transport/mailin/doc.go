// Package mailin is the email gateway's SMTP listener: the inbound side
// beside transport/email, which sends. A domain's MX points at it; it
// takes mail for the gateway's addresses (a channel's, from GET
// /streams/{id}/email_address, or the reply address of a missed-message
// email) and hands each, parsed, to the Service, which posts it
// (chat.Service.ReceiveEmail).
//
//	svc := chat.New(store, chat.WithEmailGateway("mail.example.com"))
//	gw := mailin.New(svc, mailin.Options{Domain: "mail.example.com"})
//	go gw.ListenAndServe("0.0.0.0:25")
//
// At RCPT it asks the Service about the address (chat.Service.CheckEmailRecipient):
// an unknown or expired address, or one whose mail could not be posted, is
// refused there (550), and a channel address that receives more than
// Options.RatePerMinute mails a minute is told to try later (450). A mail
// over Options.MaxMessageBytes is refused (552). At DATA each recipient's
// copy is posted; a mail that cannot be posted is refused with the reason
// (550, or 451 when the server cannot tell now), and one posted before (a
// delivery tried again) is accepted again without a second post. The
// sending server learns what happened from the reply and bounces the
// refusals to the mail's author.
package mailin
