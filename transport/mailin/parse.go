package mailin

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"

	chat "github.com/teamchat/chat"
)

// maxParts bounds the parts of one mail (a mail of many empty parts costs
// nothing to send and much to walk).
const maxParts = 500

// wordDecoder decodes RFC 2047 headers in any charset the web knows.
var wordDecoder = &mime.WordDecoder{CharsetReader: charsetReader}

func charsetReader(charset string, r io.Reader) (io.Reader, error) {
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return nil, fmt.Errorf("charset %q: %w", charset, err)
	}
	return enc.NewDecoder().Reader(r), nil
}

// Parse reads a mail: its From, Subject and Message-ID headers, its first
// plain and HTML bodies in UTF-8 (the reference's
// get_message_part_by_type: a charset it cannot read is taken as
// US-ASCII, dropping what is not), and the parts with a file name as
// attachments. Digest is a hash of the whole mail.
func Parse(raw []byte) (chat.InboundEmail, error) {
	var m chat.InboundEmail
	sum := sha256.Sum256(raw)
	m.Digest = hex.EncodeToString(sum[:])
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return m, fmt.Errorf("not a mail: %w", err)
	}
	m.From = decodeHeader(msg.Header.Get("From"))
	m.Subject = decodeHeader(msg.Header.Get("Subject"))
	m.MessageID = strings.TrimSpace(msg.Header.Get("Message-Id"))
	w := walker{m: &m}
	if err := w.part(textproto(msg.Header), msg.Body, 0); err != nil {
		return m, err
	}
	return m, nil
}

// textproto is a mail's header as a part's.
func textproto(h mail.Header) map[string][]string { return h }

func decodeHeader(v string) string {
	out, err := wordDecoder.DecodeHeader(v)
	if err != nil {
		return v
	}
	return out
}

type walker struct {
	m     *chat.InboundEmail
	parts int
}

// part reads one part, and the parts inside a multipart one.
func (w *walker) part(header map[string][]string, body io.Reader, depth int) error {
	w.parts++
	if w.parts > maxParts || depth > 20 {
		return fmt.Errorf("more than %d parts, or nested deeper than 20", maxParts)
	}
	get := func(k string) string {
		if v := header[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	ctype, params, err := mime.ParseMediaType(get("Content-Type"))
	if err != nil {
		ctype, params = "text/plain", map[string]string{}
	}
	if strings.HasPrefix(ctype, "multipart/") && params["boundary"] != "" {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return nil // its end, or a broken one: what was read stands
			}
			if err := w.part(p.Header, p, depth+1); err != nil {
				return err
			}
		}
	}
	content, err := decodeTransfer(get("Content-Transfer-Encoding"), body)
	if err != nil {
		return err
	}
	_, dparams, _ := mime.ParseMediaType(get("Content-Disposition"))
	name := decodeHeader(dparams["filename"])
	if name == "" {
		name = decodeHeader(params["name"])
	}
	if name != "" {
		name = path.Base(strings.ReplaceAll(name, "\\", "/"))
		w.m.Attachments = append(w.m.Attachments, chat.EmailAttachment{FileName: name, ContentType: ctype, Content: content})
		return nil
	}
	switch {
	case ctype == "text/plain" && w.m.Text == nil:
		t := decodeCharset(params["charset"], content)
		w.m.Text = &t
	case ctype == "text/html" && w.m.HTML == nil:
		t := decodeCharset(params["charset"], content)
		w.m.HTML = &t
	}
	return nil
}

// decodeTransfer undoes a Content-Transfer-Encoding.
func decodeTransfer(enc string, r io.Reader) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, newlineStripper{r})
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return b, nil
}

// decodeCharset turns a body into UTF-8: by its charset, or as US-ASCII
// (keeping valid UTF-8, as most unlabelled mail is) when there is none or
// it is unknown.
func decodeCharset(charset string, b []byte) string {
	if charset != "" && !strings.EqualFold(charset, "utf-8") && !strings.EqualFold(charset, "us-ascii") {
		if enc, err := htmlindex.Get(charset); err == nil {
			if out, err := enc.NewDecoder().Bytes(b); err == nil {
				return string(out)
			}
		}
	}
	return strings.ToValidUTF8(string(b), "")
}

// newlineStripper drops line breaks from base64 text.
type newlineStripper struct{ r io.Reader }

func (n newlineStripper) Read(p []byte) (int, error) {
	for {
		k, err := n.r.Read(p)
		j := 0
		for _, c := range p[:k] {
			if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}

// ascii makes a reason fit an SMTP reply line.
func ascii(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\r' || r == '\n':
			b.WriteByte(' ')
		case r < 0x20 || r >= 0x7f || r == utf8.RuneError:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
