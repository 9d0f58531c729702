package chat

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// A window of history is the most read answer of the API, and encoding
// its hundred messages through encoding/json's reflection (and then
// checking its output again, as it does for a Marshaler's) was a third of
// the cost of GET /messages over HTTP. AppendJSON writes the same bytes
// directly; TestMessageJSONMatchesEncodingJSON holds it to
// encoding/json's output (with HTML escaping off, as the REST handler
// encodes) for every field and the corners of string escaping.

// AppendJSON appends the response's JSON object to b, exactly as
// encoding/json encodes it (without HTML escaping). Transports that know
// the method use it instead of reflection.
func (r *GetMessagesResponse) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	if r.Anchor != nil {
		b = append(b, `"anchor":`...)
		b = strconv.AppendInt(b, *r.Anchor, 10)
		b = append(b, ',')
	}
	b = appendBoolField(b, `"found_anchor":`, r.FoundAnchor)
	b = appendBoolField(b, `,"found_oldest":`, r.FoundOldest)
	b = appendBoolField(b, `,"found_newest":`, r.FoundNewest)
	b = appendBoolField(b, `,"history_limited":`, r.HistoryLimited)
	b = append(b, `,"messages":`...)
	if r.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = r.Messages[i].appendJSON(b); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func appendBoolField(b []byte, name string, v bool) []byte {
	b = append(b, name...)
	return strconv.AppendBool(b, v)
}

// appendJSON writes a fetched message as encoding/json would: the fields
// of MessageView in their order, then the flags and the search matches.
func (m *FetchedMessage) appendJSON(b []byte) ([]byte, error) {
	v := &m.MessageView
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, v.ID, 10)
	b = append(b, `,"sender_id":`...)
	b = strconv.AppendInt(b, v.SenderID, 10)
	b = append(b, `,"content":`...)
	b = appendJSONString(b, v.Content)
	b = append(b, `,"content_type":`...)
	b = appendJSONString(b, v.ContentType)
	b = append(b, `,"recipient_id":`...)
	b = strconv.AppendInt(b, v.RecipientID, 10)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, v.Timestamp, 10)
	b = append(b, `,"client":`...)
	b = appendJSONString(b, v.Client)
	b = append(b, `,"subject":`...)
	b = appendJSONString(b, v.Subject)
	b = append(b, `,"topic_links":`...)
	b = appendJSONList(b, v.TopicLinks, func(b []byte, l *TopicLink) []byte {
		b = append(b, `{"text":`...)
		b = appendJSONString(b, l.Text)
		b = append(b, `,"url":`...)
		b = appendJSONString(b, l.URL)
		return append(b, '}')
	})
	b = appendBoolField(b, `,"is_me_message":`, v.IsMeMessage)
	b = append(b, `,"reactions":`...)
	b = appendJSONList(b, v.Reactions, func(b []byte, r *Reaction) []byte {
		b = append(b, `{"emoji_name":`...)
		b = appendJSONString(b, r.EmojiName)
		b = append(b, `,"emoji_code":`...)
		b = appendJSONString(b, r.EmojiCode)
		b = append(b, `,"reaction_type":`...)
		b = appendJSONString(b, r.ReactionType)
		b = append(b, `,"user_id":`...)
		b = strconv.AppendInt(b, r.UserID, 10)
		return append(b, '}')
	})
	var err error
	b = append(b, `,"submessages":`...)
	if b, err = appendJSONValue(b, v.Submessages); err != nil {
		return nil, err
	}
	b = append(b, `,"sender_full_name":`...)
	b = appendJSONString(b, v.SenderFullName)
	b = append(b, `,"sender_email":`...)
	b = appendJSONString(b, v.SenderEmail)
	b = append(b, `,"sender_realm_str":`...)
	b = appendJSONString(b, v.SenderRealmStr)
	b = append(b, `,"display_recipient":`...)
	switch d := v.DisplayRecipient.(type) {
	case string:
		b = appendJSONString(b, d)
	case []DisplayUser:
		b = append(b, '[')
		for i, u := range d {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = strconv.AppendInt(b, u.ID, 10)
			b = append(b, `,"email":`...)
			b = appendJSONString(b, u.Email)
			b = append(b, `,"full_name":`...)
			b = appendJSONString(b, u.FullName)
			b = appendBoolField(b, `,"is_mirror_dummy":`, u.IsMirrorDummy)
			b = append(b, '}')
		}
		b = append(b, ']')
	default:
		if b, err = appendJSONValue(b, d); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"type":`...)
	b = appendJSONString(b, v.Type)
	if v.StreamID != nil {
		b = append(b, `,"stream_id":`...)
		b = strconv.AppendInt(b, *v.StreamID, 10)
	}
	b = append(b, `,"avatar_url":`...)
	if v.AvatarURL == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, *v.AvatarURL)
	}
	if len(v.EditHistory) > 0 {
		b = append(b, `,"edit_history":`...)
		if b, err = appendJSONValue(b, v.EditHistory); err != nil {
			return nil, err
		}
	}
	if v.LastEditTime != nil {
		b = append(b, `,"last_edit_timestamp":`...)
		b = strconv.AppendInt(b, *v.LastEditTime, 10)
	}
	if v.LastMovedTime != nil {
		b = append(b, `,"last_moved_timestamp":`...)
		b = strconv.AppendInt(b, *v.LastMovedTime, 10)
	}
	b = append(b, `,"flags":`...)
	b = appendJSONList(b, m.Flags, func(b []byte, f *string) []byte { return appendJSONString(b, *f) })
	if m.MatchContent != nil {
		b = append(b, `,"match_content":`...)
		b = appendJSONString(b, *m.MatchContent)
	}
	if m.MatchSubject != nil {
		b = append(b, `,"match_subject":`...)
		b = appendJSONString(b, *m.MatchSubject)
	}
	return append(b, '}'), nil
}

// appendJSONValue encodes the rarer fields (edit history, submessages)
// with encoding/json, without HTML escaping.
func appendJSONValue(b []byte, v any) ([]byte, error) {
	raw, err := marshalNoEscape(v)
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

// marshalNoEscape is json.Marshal without HTML escaping and without the
// encoder's trailing newline.
func marshalNoEscape(v any) ([]byte, error) {
	var buf jsonBuffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := buf.b
	if n := len(out); n > 0 && out[n-1] == '\n' {
		out = out[:n-1]
	}
	return out, nil
}

type jsonBuffer struct{ b []byte }

func (w *jsonBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json
// writes one with HTML escaping off: quotes, backslashes and control
// characters escaped (\b \f \n \r \t by name, the rest as \u00XX), U+2028
// and U+2029 escaped, invalid UTF-8 replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
